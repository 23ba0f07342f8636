//! Counters and a latency histogram, rendered as Prometheus text. One registry per server
//! (`app::App::metrics`), handed to the parts that count.
//!
//! Plain atomics and a mutex-guarded map: a handful of series, updated a few times per request,
//! do not need a metrics framework.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the upstream latency histogram.
const BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// The registry.
#[derive(Debug, Default)]
pub struct Metrics {
    http_requests: Mutex<BTreeMap<(String, u16), u64>>,
    tool_calls: Mutex<BTreeMap<(String, String), u64>>,
    rate_limited: Mutex<BTreeMap<String, u64>>,
    upstream_buckets: [AtomicU64; BUCKETS.len()],
    upstream_count: AtomicU64,
    upstream_sum_micros: AtomicU64,
}

fn bump<K: Ord>(map: &Mutex<BTreeMap<K, u64>>, key: K) {
    *map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default() += 1;
}

impl Metrics {
    /// One HTTP request answered, by route template and status.
    pub fn http_request(&self, route: &str, status: u16) {
        bump(&self.http_requests, (route.to_string(), status));
    }

    /// One tool call, by tool and outcome (`ok`, `error`, `denied`, …).
    pub fn tool_call(&self, tool: &str, outcome: &str) {
        bump(&self.tool_calls, (tool.to_string(), outcome.to_string()));
    }

    /// One request refused by a rate limit, by limit (`ip`, `credential`, `auth_failures`).
    pub fn rate_limited(&self, limit: &str) {
        bump(&self.rate_limited, limit.to_string());
    }

    /// One request to Gitea took `d`.
    pub fn upstream(&self, d: Duration) {
        let secs = d.as_secs_f64();
        for (i, le) in BUCKETS.iter().enumerate() {
            if secs <= *le {
                self.upstream_buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.upstream_count.fetch_add(1, Ordering::Relaxed);
        self.upstream_sum_micros
            .fetch_add(d.as_micros() as u64, Ordering::Relaxed);
    }

    /// Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let esc = |s: &str| {
            s.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n")
        };
        out.push_str("# HELP aegis_http_requests_total HTTP requests answered.\n# TYPE aegis_http_requests_total counter\n");
        for ((route, status), n) in self
            .http_requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "aegis_http_requests_total{{route=\"{}\",status=\"{status}\"}} {n}",
                esc(route)
            );
        }
        out.push_str("# HELP aegis_tool_calls_total Tool calls by tool and outcome.\n# TYPE aegis_tool_calls_total counter\n");
        for ((tool, outcome), n) in self
            .tool_calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "aegis_tool_calls_total{{tool=\"{}\",outcome=\"{}\"}} {n}",
                esc(tool),
                esc(outcome)
            );
        }
        out.push_str("# HELP aegis_rate_limited_total Requests refused by a rate limit.\n# TYPE aegis_rate_limited_total counter\n");
        for (limit, n) in self
            .rate_limited
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "aegis_rate_limited_total{{limit=\"{}\"}} {n}",
                esc(limit)
            );
        }
        out.push_str("# HELP aegis_upstream_request_seconds Latency of requests to Gitea.\n# TYPE aegis_upstream_request_seconds histogram\n");
        for (i, le) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "aegis_upstream_request_seconds_bucket{{le=\"{le}\"}} {}",
                self.upstream_buckets[i].load(Ordering::Relaxed)
            );
        }
        let count = self.upstream_count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "aegis_upstream_request_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(
            out,
            "aegis_upstream_request_seconds_sum {}",
            self.upstream_sum_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        let _ = writeln!(out, "aegis_upstream_request_seconds_count {count}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_a_cumulative_histogram() {
        let m = Metrics::default();
        m.http_request("/mcp/tool/call", 200);
        m.http_request("/mcp/tool/call", 200);
        m.tool_call("gitea_find_action", "ok");
        m.rate_limited("ip");
        m.upstream(Duration::from_millis(30));
        m.upstream(Duration::from_secs(20));
        let text = m.render();
        assert!(
            text.contains("aegis_http_requests_total{route=\"/mcp/tool/call\",status=\"200\"} 2")
        );
        assert!(
            text.contains("aegis_tool_calls_total{tool=\"gitea_find_action\",outcome=\"ok\"} 1")
        );
        assert!(text.contains("aegis_rate_limited_total{limit=\"ip\"} 1"));
        assert!(text.contains("aegis_upstream_request_seconds_bucket{le=\"0.025\"} 0"));
        assert!(text.contains("aegis_upstream_request_seconds_bucket{le=\"0.05\"} 1"));
        assert!(text.contains("aegis_upstream_request_seconds_bucket{le=\"+Inf\"} 2"));
        assert!(text.contains("aegis_upstream_request_seconds_count 2"));
    }
}

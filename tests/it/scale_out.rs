//! Scale-out: two replicas of the HTTP gateway behind a real HAProxy (round robin, health
//! checks), sharing one real Redis and one confirmation key file — and the same guarantees on
//! one process without Redis.
//!
//! The two-replica test needs `redis-server` and `haproxy` (Debian packages), so it is ignored
//! by a plain `cargo test`; `.ci/run` installs both and runs it with `--ignored`. Every port is
//! chosen at run time on loopback.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Captured, http_client, on_each_line};
use crate::http_gateway::Proc;
use crate::support::{FakeGitea, RepoSeed};
use aegis_gitea_mcp::http::auth::key_line;

const SERVER_TOKEN: &str = "srv-tok-scale-4e1f0c9b7a2d";
const REDIS_PASSWORD: &str = "redis-pw-Zq81mXv03LkT";
/// One key per part of the test, so that each has its own per-credential bucket.
const KEYS: [(&str, &str); 5] = [
    ("aegis-key-scale-calls-7Hq2Lm9Xv4Rt", "calls"),
    ("aegis-key-scale-confirm-3Zp6Nc1Yb8G", "confirm"),
    ("aegis-key-scale-limit-9Ws4Tb2Qe7Jx", "limit"),
    ("aegis-key-scale-outage-5Rf8Ud3Hy6Kc", "outage"),
    ("aegis-key-scale-failover-1Mn5Vg7Pa2", "failover"),
];
/// The per-credential limit the replicas enforce (requests per minute).
const RATE: usize = 30;
/// Failed authentications per minute from one address.
const AUTH_FAILURES: usize = 5;
const CONFIRM_SECRET: &str = "shared-confirmation-secret-0f3a9c5e7b1d2468";
/// How long a wait for an outside process (start, health check) may take.
const DEADLINE: Duration = Duration::from_secs(60);

fn key(part: &str) -> &'static str {
    KEYS.iter().find(|(_, l)| *l == part).expect("a key").0
}

/// A free loopback port (the listener is closed again; the caller binds it soon after).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A program of the machine's (redis-server, haproxy), its output gathered.
struct External {
    child: Child,
    output: Captured,
    lines: tokio::sync::mpsc::UnboundedReceiver<String>,
}

impl External {
    fn spawn(cmd: &mut Command) -> External {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e} (is it installed?)"));
        let output = Captured::default();
        let (tx, lines) = tokio::sync::mpsc::unbounded_channel();
        for pipe in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let sink = output.clone();
            let tx = tx.clone();
            on_each_line(pipe, move |line| {
                sink.append(line);
                let _ = tx.send(String::from_utf8_lossy(line).into_owned());
                true
            });
        }
        External {
            child,
            output,
            lines,
        }
    }

    /// Waits for a line containing `needle`.
    async fn wait_for(&mut self, needle: &str) {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) if line.contains(needle) => return,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => {
                    panic!("no line with {needle:?}; output: {}", self.output.text())
                }
            }
        }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for External {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A Redis server with a password and an append-only file, so a restart keeps the one-use
/// records (as a production Redis for this must).
struct Redis {
    port: u16,
    dir: PathBuf,
    process: Option<External>,
}

impl Redis {
    async fn start(dir: &Path) -> Redis {
        let mut r = Redis {
            port: free_port(),
            dir: dir.to_path_buf(),
            process: None,
        };
        r.restart().await;
        r
    }

    async fn restart(&mut self) {
        let mut p = External::spawn(
            Command::new("redis-server")
                .args(["--bind", "127.0.0.1", "--port"])
                .arg(self.port.to_string())
                .args(["--requirepass", REDIS_PASSWORD])
                .args([
                    "--appendonly",
                    "yes",
                    "--appendfsync",
                    "always",
                    "--save",
                    "",
                ])
                .arg("--dir")
                .arg(&self.dir),
        );
        p.wait_for("Ready to accept connections").await;
        self.process = Some(p);
    }

    fn stop(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.stop();
        }
    }

    fn url(&self) -> String {
        format!("redis://:{REDIS_PASSWORD}@127.0.0.1:{}/0", self.port)
    }
}

/// HAProxy in front of `backends`: round robin, a health check on `GET /` every 200 ms, a
/// server out after two failed checks; a stats page to see what it decided.
struct Haproxy {
    port: u16,
    stats: u16,
    _process: External,
}

impl Haproxy {
    async fn start(dir: &Path, backends: &[(&str, u16)]) -> Haproxy {
        Haproxy::start_with(dir, backends, "").await
    }

    /// The same with session stickiness on `Mcp-Session-Id` (docs/scaling.md).
    async fn start_sticky(dir: &Path, backends: &[(&str, u16)]) -> Haproxy {
        let sticky = "  stick-table type string len 64 size 100k expire 1h\n  stick store-response res.hdr(mcp-session-id)\n  stick match req.hdr(mcp-session-id)\n";
        Haproxy::start_with(dir, backends, sticky).await
    }

    async fn start_with(dir: &Path, backends: &[(&str, u16)], extra: &str) -> Haproxy {
        let (port, stats) = (free_port(), free_port());
        let servers: String = backends
            .iter()
            .map(|(name, p)| format!("  server {name} 127.0.0.1:{p} check\n"))
            .collect();
        let config = format!(
            "global\n  maxconn 512\n\
             defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n  retries 2\n  option redispatch\n  option forwardfor\n\
             frontend mcp\n  bind 127.0.0.1:{port}\n  default_backend replicas\n\
             frontend stats\n  bind 127.0.0.1:{stats}\n  stats enable\n  stats uri /stats\n\
             backend replicas\n  balance roundrobin\n  option httpchk\n  http-check send meth GET uri / ver HTTP/1.1 hdr Host localhost\n  http-check expect status 200\n  default-server inter 200ms fall 2 rise 1\n{extra}{servers}"
        );
        let file = dir.join("haproxy.cfg");
        std::fs::write(&file, config).unwrap();
        let process = External::spawn(Command::new("haproxy").arg("-db").arg("-f").arg(&file));
        let lb = Haproxy {
            port,
            stats,
            _process: process,
        };
        for (name, _) in backends {
            lb.wait_until(name, "UP").await;
        }
        lb
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The status HAProxy gives `server` (`UP`, `DOWN`, …).
    async fn status(&self, server: &str) -> Option<String> {
        let csv = http_client(Duration::from_secs(5))
            .get(format!("http://127.0.0.1:{}/stats;csv", self.stats))
            .send()
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        csv.lines()
            .find(|l| l.starts_with(&format!("replicas,{server},")))
            .and_then(|l| l.split(',').nth(17))
            .map(str::to_string)
    }

    /// Polls the stats page (bounded) until `server` has `status`.
    async fn wait_until(&self, server: &str, status: &str) {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        let mut seen = None;
        while tokio::time::Instant::now() < deadline {
            seen = self.status(server).await;
            if seen.as_deref().is_some_and(|s| s.starts_with(status)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("HAProxy never had {server} {status} (last: {seen:?})");
    }
}

/// One replica: the binary serving stateless HTTP in API-key mode.
struct Replica {
    process: Proc,
    base: String,
    port: u16,
    audit: PathBuf,
}

async fn replica(
    fake: &FakeGitea,
    dir: &Path,
    id: &str,
    redis: Option<&Redis>,
    key_file: Option<&Path>,
) -> Replica {
    let env: Vec<(&str, String)> = redis.map(|r| ("REDIS_URL", r.url())).into_iter().collect();
    replica_in(fake, dir, id, &env, key_file, true).await
}

/// A replica with `extra` settings (e.g. `REDIS_URL`).
async fn replica_in(
    fake: &FakeGitea,
    dir: &Path,
    id: &str,
    extra: &[(&str, String)],
    key_file: Option<&Path>,
    stateless: bool,
) -> Replica {
    let keys = dir.join("keys");
    if !keys.exists() {
        let lines: String = KEYS
            .iter()
            .map(|(k, l)| format!("{}\n", key_line(k, l)))
            .collect();
        std::fs::write(&keys, lines).unwrap();
    }
    let audit = dir.join(format!("audit-{id}.log"));
    let mut env: Vec<(&str, String)> = vec![
        ("GITEA_URL", fake.url()),
        ("GITEA_TOKEN", SERVER_TOKEN.into()),
        ("GITEA_SPEC", crate::common::FIXTURE.into()),
        ("AUTH_MODE", "api-key".into()),
        ("API_KEYS_FILE", keys.display().to_string()),
        ("AUDIT_LOG", audit.display().to_string()),
        ("REPLICA_ID", id.into()),
        ("RATE_LIMIT_PER_CREDENTIAL", RATE.to_string()),
        ("RATE_LIMIT_PER_IP", "100000".into()),
        // HAProxy on loopback says who the client is (option forwardfor).
        ("TRUSTED_PROXIES", "127.0.0.1".into()),
        ("AUTH_FAILURES_PER_MINUTE", AUTH_FAILURES.to_string()),
        ("LOG_LEVEL", "info".into()),
    ];
    env.extend(extra.iter().cloned());
    if let Some(f) = key_file {
        env.push(("CONFIRM_KEY_FILE", f.display().to_string()));
    }
    let args: &[&str] = if stateless {
        &["serve", "--http", "--stateless", "--listen", "127.0.0.1:0"]
    } else {
        &["serve", "--http", "--listen", "127.0.0.1:0"]
    };
    let mut process = Proc::spawn(args, &env);
    let addr = process.address().await;
    Replica {
        process,
        base: format!("http://{addr}"),
        port: addr.port(),
        audit,
    }
}

impl Replica {
    fn audit_records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// A tool call as a 2026-07-28 stateless client sends it: no session, the protocol version and
/// the client's capabilities in `_meta` and the header.
async fn mcp_call(base: &str, key: &str, id: u64, tool: &str, arguments: Value) -> (u16, Value) {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let r = http_client(Duration::from_secs(30))
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .bearer_auth(key)
        .body(msg.to_string())
        .send()
        .await
        .expect("an answer");
    let status = r.status().as_u16();
    let body = r.text().await.unwrap_or_default();
    let v: Value = serde_json::from_str(&body).unwrap_or(json!({"raw": body}));
    (status, v)
}

/// `delete(repo)` confirmed with `token`, at `base`.
async fn redeem(base: &str, key: &str, id: u64, repo: &str, token: &str) -> (u16, Value) {
    mcp_call(
        base,
        key,
        id,
        "gitea_execute_action",
        delete(repo, Some(token)),
    )
    .await
}

/// A find call at `base`.
async fn find(base: &str, key: &str, id: u64, query: &str) -> (u16, Value) {
    mcp_call(base, key, id, "gitea_find_action", json!({"query": query})).await
}

/// The tool result of a successful JSON-RPC answer.
fn result(status: u16, v: &Value) -> &Value {
    assert_eq!(status, 200, "{v}");
    assert!(v["result"]["isError"].is_boolean(), "{v}");
    &v["result"]
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn delete(repo: &str, confirm: Option<&str>) -> Value {
    let mut v = json!({"action": "gitea_repo_delete", "arguments": {"owner": "svc", "repo": repo}});
    if let Some(c) = confirm {
        v["confirm"] = json!(c);
    }
    v
}

/// A destructive call's confirmation token, from its first (unconfirmed) answer at `base`.
async fn confirmation_at(base: &str, key: &str, repo: &str) -> String {
    let (s, v) = mcp_call(base, key, 1, "gitea_execute_action", delete(repo, None)).await;
    let r = result(s, &v);
    assert_eq!(r["structuredContent"]["confirmation_required"], true, "{v}");
    r["structuredContent"]["confirm"]
        .as_str()
        .expect("a token")
        .to_string()
}

async fn fake() -> FakeGitea {
    let fake = FakeGitea::start().await;
    fake.add_token(SERVER_TOKEN, "svc", &["all"]);
    fake.seed_repo("svc", "demo");
    for r in ["victim", "victim2", "solo"] {
        fake.seed_repo("svc", r);
    }
    fake.seed_repo_with(
        "svc",
        "secret",
        RepoSeed {
            private: true,
            ..Default::default()
        },
    );
    fake.seed_issue("svc", "secret", "Rotate the keys");
    fake.seed_issue("svc", "demo", "Hello");
    fake
}

/// Sends `n` REST find calls with `key` to `base`; returns how many were let through (the rest
/// must be 429s).
async fn count_allowed(base: &str, key: &str, n: usize) -> usize {
    let http = http_client(Duration::from_secs(30));
    let mut allowed = 0;
    for _ in 0..n {
        let r = http
            .post(format!("{base}/mcp/tool/call"))
            .bearer_auth(key)
            .json(&json!({"name": "gitea_find_action", "arguments": {"query": "list issues"}}))
            .send()
            .await
            .expect("an answer");
        match r.status().as_u16() {
            200 => allowed += 1,
            429 => assert!(r.headers().contains_key("retry-after")),
            other => panic!(
                "unexpected status {other}: {}",
                r.text().await.unwrap_or_default()
            ),
        }
    }
    allowed
}

/// Sends `n` requests with a wrong key from 127.0.0.2 (so that throttling that address leaves
/// the rest of the test alone); returns how many were answered 401 before the address was
/// throttled (429).
async fn count_auth_failures(base: &str, n: usize) -> usize {
    let http = crate::common::http_client_builder()
        .timeout(Duration::from_secs(30))
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .unwrap();
    let mut unauthorized = 0;
    for _ in 0..n {
        let r = http
            .post(format!("{base}/mcp/tool/call"))
            .bearer_auth("aegis-key-wrong-000000000000")
            .json(&json!({"name": "gitea_find_action", "arguments": {"query": "x"}}))
            .send()
            .await
            .expect("an answer");
        match r.status().as_u16() {
            401 => unauthorized += 1,
            429 => {}
            other => panic!("unexpected status {other}"),
        }
    }
    unauthorized
}

async fn health(base: &str) -> (u16, Value) {
    let r = http_client(Duration::from_secs(10))
        .get(format!("{base}/health"))
        .send()
        .await
        .expect("an answer");
    let status = r.status().as_u16();
    (status, r.json().await.expect("JSON"))
}

/// `GET /metrics` at `base` (from loopback: no credentials needed).
async fn metrics_text(base: &str) -> String {
    http_client(Duration::from_secs(10))
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("an answer")
        .text()
        .await
        .expect("a body")
}

/// Polls `/health` at `base` (bounded) until its store is in `state`.
async fn wait_for_store(base: &str, state: &str) -> Value {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let (_, h) = health(base).await;
        if h["store"]["state"] == state {
            return h;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the store never became {state}: {h}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server and haproxy (Debian packages); .ci/run installs them and runs it with --ignored"]
async fn two_replicas_behind_haproxy_share_confirmations_limits_and_memory_through_redis() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("confirm.key");
    std::fs::write(&key_file, format!("{CONFIRM_SECRET}\n")).unwrap();
    let redis_dir = dir.path().join("redis");
    std::fs::create_dir(&redis_dir).unwrap();
    let mut redis = Redis::start(&redis_dir).await;
    let mut a = replica(&fake, dir.path(), "a", Some(&redis), Some(&key_file)).await;
    let b = replica(&fake, dir.path(), "b", Some(&redis), Some(&key_file)).await;
    let lb = Haproxy::start(dir.path(), &[("a", a.port), ("b", b.port)]).await;
    let through = lb.url();

    // A stateless client through the balancer: every call succeeds, and both replicas serve.
    for i in 0..10u64 {
        let (tool, args) = if i % 2 == 0 {
            ("gitea_find_action", json!({"query": "delete a repository"}))
        } else {
            (
                "gitea_execute_action",
                json!({"action": "gitea_repo_get", "arguments": {"owner": "svc", "repo": "demo"}}),
            )
        };
        let (s, v) = mcp_call(&through, key("calls"), i, tool, args).await;
        assert_eq!(result(s, &v)["isError"], false, "call {i}: {v}");
    }
    let (na, nb) = (a.audit_records().len(), b.audit_records().len());
    assert_eq!(na + nb, 10, "one audit record per call");
    assert!(na >= 3 && nb >= 3, "round robin reaches both: {na} / {nb}");
    assert!(a.audit_records().iter().all(|r| r["replica"] == "a"));
    assert!(b.audit_records().iter().all(|r| r["replica"] == "b"));

    // A confirmation issued by A is redeemed once at B; the replay is refused at A and at B.
    let token = confirmation_at(&a.base, key("confirm"), "victim").await;
    let (s, v) = redeem(&b.base, key("confirm"), 2, "victim", &token).await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    assert!(!fake.repo_exists("svc", "victim"), "deleted once");
    for (at, base) in [("A", &a.base), ("B", &b.base)] {
        let (s, v) = redeem(base, key("confirm"), 3, "victim", &token).await;
        let r = result(s, &v);
        assert_eq!(r["isError"], true, "replay at {at}: {v}");
        assert!(text(r).contains("already used"), "replay at {at}: {v}");
    }
    assert_eq!(
        fake.count("DELETE", "/repos/svc/victim"),
        1,
        "no write twice"
    );

    // The flow guard's memory is shared: a private read at A makes a write elsewhere at B wait.
    let read = json!({"action": "gitea_issue_get", "arguments": {"owner": "svc", "repo": "secret", "index": 1}});
    let (s, v) = mcp_call(&a.base, key("confirm"), 4, "gitea_execute_action", read).await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    let comment = json!({"action": "gitea_issue_create_comment", "arguments": {"owner": "svc", "repo": "demo", "index": 1, "body": {"body": "found it"}}});
    let (s, v) = mcp_call(&b.base, key("confirm"), 5, "gitea_execute_action", comment).await;
    let r = result(s, &v);
    assert_eq!(r["structuredContent"]["confirmation_required"], true, "{v}");
    assert_eq!(
        r["structuredContent"]["request"]["flow_from"],
        json!(["svc/secret"]),
        "{v}"
    );

    // The per-credential limit holds in total across the replicas (one bucket's tolerance:
    // a request may be refilled while the test runs), where two local limits would let 2R by.
    let allowed = count_allowed(&through, key("limit"), 2 * RATE).await;
    assert!(
        (RATE..=RATE + 2).contains(&allowed),
        "{allowed} of {} allowed with a limit of {RATE} per minute across two replicas",
        2 * RATE
    );
    // So does the auth-failure throttle.
    let failures = count_auth_failures(&through, 4 * AUTH_FAILURES).await;
    assert!(
        (AUTH_FAILURES..=AUTH_FAILURES + 1).contains(&failures),
        "{failures} failed authentications answered before the throttle (limit {AUTH_FAILURES})"
    );

    // Redis stops: a destructive confirmation is refused with the documented message (and the
    // token is not used up), reads are still served, /health says degraded.
    let token = confirmation_at(&a.base, key("outage"), "victim2").await;
    redis.stop();
    let (s, v) = redeem(&b.base, key("outage"), 6, "victim2", &token).await;
    let r = result(s, &v);
    assert_eq!(r["isError"], true, "{v}");
    assert_eq!(
        r["structuredContent"]["code"], "confirmation_store_unavailable",
        "{v}"
    );
    assert!(text(r).contains("nothing was sent"), "{v}");
    assert!(fake.repo_exists("svc", "victim2"));
    for i in 0..4u64 {
        let (s, v) = find(&through, key("outage"), 10 + i, "list issues").await;
        assert_eq!(
            result(s, &v)["isError"],
            false,
            "read {i} during the outage: {v}"
        );
    }
    for base in [&a.base, &b.base] {
        let (status, h) = health(base).await;
        assert_eq!(status, 200, "the replica still serves reads: {h}");
        assert_eq!(h["status"], "degraded", "{h}");
        assert_eq!(
            h["store"],
            json!({"kind": "redis", "state": "unavailable"}),
            "{h}"
        );
    }
    assert_eq!(
        lb.status("a").await.as_deref(),
        Some("UP"),
        "the balancer keeps it"
    );
    let m = metrics_text(&a.base).await;
    assert!(m.contains("aegis_store_up{kind=\"redis\"} 0"), "{m}");

    // Redis is back: the same replicas recover, and the token that was refused is redeemed.
    redis.restart().await;
    for base in [&a.base, &b.base] {
        let h = wait_for_store(base, "ok").await;
        assert_eq!(h["status"], "ok", "{h}");
    }
    let m = metrics_text(&a.base).await;
    assert!(m.contains("aegis_store_up{kind=\"redis\"} 1"), "{m}");
    let (s, v) = redeem(&b.base, key("outage"), 20, "victim2", &token).await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    assert!(!fake.repo_exists("svc", "victim2"));
    // A claim made before the restart survived it (append-only file): the first token is
    // still used up.
    let (s, v) = mcp_call(
        &a.base,
        key("confirm"),
        21,
        "gitea_execute_action",
        delete(
            "victim",
            Some(&confirmation_at(&a.base, key("confirm"), "victim").await),
        ),
    )
    .await;
    assert_eq!(result(s, &v)["isError"], true, "victim is gone: {v}");

    // One replica dies: HAProxy's health check takes it out and every call still succeeds.
    let a_output = a.process.stop();
    lb.wait_until("a", "DOWN").await;
    let before = b.audit_records().len();
    for i in 0..6u64 {
        let (s, v) = find(&through, key("failover"), 30 + i, "merge a pull request").await;
        assert_eq!(
            result(s, &v)["isError"],
            false,
            "call {i} after A died: {v}"
        );
    }
    assert_eq!(b.audit_records().len(), before + 6, "B served them all");

    // Each replica's audit log is its own chain; `audit verify` reports both.
    let out = crate::common::bin_with_empty_env()
        .args(["audit", "verify"])
        .arg(&a.audit)
        .arg(&b.audit)
        .output()
        .unwrap();
    let printed = crate::common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(
        printed.contains("replica a:") && printed.contains("replica b:"),
        "{printed}"
    );
    // Neither the Redis password nor the server token was logged.
    let mut b = b;
    let b_output = b.process.stop();
    let logs = [a_output, b_output]
        .iter()
        .map(|o| format!("{}{}", o.stdout, o.stderr))
        .collect::<String>();
    assert!(
        !logs.contains(REDIS_PASSWORD),
        "the Redis URL's password was logged"
    );
    assert!(!logs.contains(SERVER_TOKEN));
    // doctor sees the live store (run off the runtime: the fake Gitea answers on it).
    let (gitea, redis_url, key_path) = (fake.url(), redis.url(), key_file.clone());
    let doctor = tokio::task::spawn_blocking(move || {
        crate::common::bin_with_empty_env()
            .args(["doctor", "--spec", crate::common::FIXTURE])
            .env("GITEA_URL", gitea)
            .env("GITEA_TOKEN", SERVER_TOKEN)
            .env("REDIS_URL", redis_url)
            .env("CONFIRM_KEY_FILE", key_path)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let printed = crate::common::stdout(&doctor);
    assert!(printed.lines().any(|l| l.contains("shared store") && l.contains("answers; confirmations signed with")), "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_process_without_redis_keeps_the_same_guarantees() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let one = replica(&fake, dir.path(), "solo", None, None).await;

    for i in 0..4u64 {
        let (s, v) = find(&one.base, key("calls"), i, "delete a repository").await;
        assert_eq!(result(s, &v)["isError"], false, "{v}");
    }
    let token = confirmation_at(&one.base, key("confirm"), "solo").await;
    let (s, v) = redeem(&one.base, key("confirm"), 2, "solo", &token).await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    let (s, v) = redeem(&one.base, key("confirm"), 3, "solo", &token).await;
    assert!(text(result(s, &v)).contains("already used"), "{v}");
    assert_eq!(fake.count("DELETE", "/repos/svc/solo"), 1);

    let allowed = count_allowed(&one.base, key("limit"), 2 * RATE).await;
    assert!(
        (RATE..=RATE + 2).contains(&allowed),
        "{allowed} allowed, limit {RATE}"
    );
    let failures = count_auth_failures(&one.base, 4 * AUTH_FAILURES).await;
    assert!(
        (AUTH_FAILURES..=AUTH_FAILURES + 1).contains(&failures),
        "{failures}"
    );

    let (status, h) = health(&one.base).await;
    assert_eq!(status, 200, "{h}");
    assert_eq!(h["store"], json!({"kind": "memory", "state": "ok"}), "{h}");
    assert!(one.audit_records().iter().all(|r| r["replica"] == "solo"));
}

/// One JSON-RPC message posted with session `sid` (none for `initialize`) through `base`;
/// the status, the session id the answer names, and the message with `id`, from plain JSON or
/// server-sent events.
async fn session_post(base: &str, sid: Option<&str>, msg: Value) -> (u16, Option<String>, Value) {
    let mut rb = http_client(Duration::from_secs(30))
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(key("calls"))
        .body(msg.to_string());
    if let Some(sid) = sid {
        rb = rb
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let r = rb.send().await.expect("an answer");
    let status = r.status().as_u16();
    let opened = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = r.text().await.unwrap_or_default();
    let id = msg.get("id").cloned();
    let answer = std::iter::once(body.as_str())
        .chain(body.lines().filter_map(|l| l.strip_prefix("data:")))
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find(|v| id.is_some() && v.get("id") == id.as_ref())
        .unwrap_or_else(|| json!({"raw": body}));
    (status, opened, answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs haproxy (a Debian package); .ci/run installs it and runs it with --ignored"]
async fn sessions_stick_to_their_replica_through_haproxy() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let a = replica_in(&fake, dir.path(), "a", &[], None, false).await;
    let b = replica_in(&fake, dir.path(), "b", &[], None, false).await;
    let lb = Haproxy::start_sticky(dir.path(), &[("a", a.port), ("b", b.port)]).await;
    let through = lb.url();

    let mut sessions = Vec::new();
    for client in 0..4 {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": format!("client-{client}"), "version": "0"}}});
        let (status, sid, answer) = session_post(&through, None, init).await;
        assert_eq!(status, 200, "{answer}");
        let sid = sid.expect("a session id");
        let (status, _, _) = session_post(
            &through,
            Some(&sid),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        assert_eq!(status, 202);
        sessions.push(sid);
    }
    // Round robin alone would send every other request to the replica that does not know the
    // session (404); stickiness sends each to its own.
    for round in 0..3u64 {
        for sid in &sessions {
            let call = json!({"jsonrpc": "2.0", "id": 10 + round, "method": "tools/call", "params": {
                "name": "gitea_find_action", "arguments": {"query": "list issues"}}});
            let (status, _, answer) = session_post(&through, Some(sid), call).await;
            assert_eq!(status, 200, "{answer}");
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        }
    }
    let (na, nb) = (a.audit_records().len(), b.audit_records().len());
    assert_eq!(na + nb, 12);
    assert!(
        na > 0 && nb > 0,
        "sessions were spread over both replicas: {na} / {nb}"
    );
}

#[test]
fn bad_scale_out_settings_stop_the_start_naming_the_setting_and_never_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.key");
    std::fs::write(&short, "too-short\n").unwrap();
    let cases: [(&str, String, &str); 5] = [
        (
            "REDIS_URL",
            "http://user:hunter2-pw@redis.example:6379".into(),
            "REDIS_URL (--redis-url)",
        ),
        (
            "REDIS_URL",
            "redis://user:hunter2-pw@[bad".into(),
            "REDIS_URL (--redis-url)",
        ),
        (
            "CONFIRM_KEY_FILE",
            dir.path().join("missing.key").display().to_string(),
            "CONFIRM_KEY_FILE (--confirm-key-file)",
        ),
        (
            "CONFIRM_KEY_FILE",
            short.display().to_string(),
            "shorter than 32 characters",
        ),
        (
            "REPLICA_ID",
            "two words".into(),
            "REPLICA_ID (--replica-id)",
        ),
    ];
    for (var, value, expected) in cases {
        let out = crate::common::bin_with_empty_env()
            .args(["serve", "--http", "--listen", "127.0.0.1:0"])
            .env("GITEA_URL", "http://127.0.0.1:9")
            .env("GITEA_SPEC", crate::common::FIXTURE)
            .env(var, &value)
            .output()
            .unwrap();
        let err = crate::common::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{var}={value}: {err}");
        assert!(err.contains(expected), "{var}={value}: {err}");
        assert!(
            !err.contains("hunter2"),
            "{var}: the password was shown: {err}"
        );
        assert!(
            !err.contains("too-short"),
            "{var}: the secret was shown: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_starts_while_redis_is_down_serves_reads_and_refuses_confirmed_calls() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("confirm.key");
    std::fs::write(&key_file, CONFIRM_SECRET).unwrap();
    // Nothing listens on this port: every store operation fails at once.
    let down = Redis {
        port: free_port(),
        dir: dir.path().to_path_buf(),
        process: None,
    };
    let mut one = replica(&fake, dir.path(), "early", Some(&down), Some(&key_file)).await;
    let (s, v) = find(&one.base, key("calls"), 1, "list issues").await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    let token = confirmation_at(&one.base, key("confirm"), "victim").await;
    let (s, v) = redeem(&one.base, key("confirm"), 2, "victim", &token).await;
    let r = result(s, &v);
    assert_eq!(
        r["structuredContent"]["code"], "confirmation_store_unavailable",
        "{v}"
    );
    assert!(fake.repo_exists("svc", "victim"));
    assert_eq!(fake.count("DELETE", "/repos/svc/victim"), 0);
    let (status, h) = health(&one.base).await;
    assert_eq!((status, &h["status"]), (200, &json!("degraded")), "{h}");
    // Rate limits fall back to this process's own.
    let allowed = count_allowed(&one.base, key("limit"), RATE + 5).await;
    assert!((RATE..=RATE + 1).contains(&allowed), "{allowed}");
    let out = one.process.stop();
    let log = format!("{}{}", out.stdout, out.stderr);
    assert!(
        log.contains("the shared store (Redis at 127.0.0.1:") && log.contains("is unavailable"),
        "one warning names the store: {log}"
    );
    assert!(!log.contains(REDIS_PASSWORD), "the password was logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reports_a_shared_store_that_does_not_answer() {
    let fake = fake().await;
    let url = fake.url();
    let port = free_port();
    let out = tokio::task::spawn_blocking(move || {
        crate::common::bin_with_empty_env()
            .args(["doctor", "--spec", crate::common::FIXTURE])
            .env("GITEA_URL", url)
            .env("GITEA_TOKEN", SERVER_TOKEN)
            .env(
                "REDIS_URL",
                format!("redis://:{REDIS_PASSWORD}@127.0.0.1:{port}/0"),
            )
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let printed = crate::common::stdout(&out) + &crate::common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{printed}");
    let line = printed
        .lines()
        .find(|l| l.contains("shared store"))
        .unwrap_or_else(|| panic!("no shared-store check: {printed}"));
    assert!(
        line.contains(&format!("127.0.0.1:{port}")) && line.contains("does not answer"),
        "{line}"
    );
    assert!(!printed.contains(REDIS_PASSWORD), "{printed}");
}

/// A private CA and a certificate for 127.0.0.1 signed by it, made by openssl in `dir`.
fn private_ca(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "1",
        "-subj",
        "/CN=aegis test CA",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "1",
        "-extfile",
        "san.ext",
    ]);
    (
        dir.join("ca.crt"),
        dir.join("server.crt"),
        dir.join("server.key"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (a Debian package) and openssl; .ci/run installs them and runs it with --ignored"]
async fn redis_over_tls_with_a_private_ca_and_a_password() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key_pem) = private_ca(dir.path());
    let port = free_port();
    let mut redis = External::spawn(
        Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", "0", "--tls-port"])
            .arg(port.to_string())
            .arg("--tls-cert-file")
            .arg(&cert)
            .arg("--tls-key-file")
            .arg(&key_pem)
            .arg("--tls-ca-cert-file")
            .arg(&ca)
            .args(["--tls-auth-clients", "no", "--requirepass", REDIS_PASSWORD])
            .args(["--save", "", "--appendonly", "no"]),
    );
    redis.wait_for("Ready to accept connections").await;
    let url = format!("rediss://:{REDIS_PASSWORD}@127.0.0.1:{port}/0");
    let key_file = dir.path().join("confirm.key");
    std::fs::write(&key_file, CONFIRM_SECRET).unwrap();

    // Trusting the private CA: the store answers, and a confirmation is recorded there once.
    let trusted = [
        ("REDIS_URL", url.clone()),
        ("REDIS_CA_FILE", ca.display().to_string()),
    ];
    let mut one = replica_in(&fake, dir.path(), "tls", &trusted, Some(&key_file), true).await;
    let (status, h) = health(&one.base).await;
    assert_eq!(status, 200, "{h}");
    assert_eq!(h["store"], json!({"kind": "redis", "state": "ok"}), "{h}");
    let token = confirmation_at(&one.base, key("confirm"), "victim").await;
    let (s, v) = redeem(&one.base, key("confirm"), 2, "victim", &token).await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    let (s, v) = redeem(&one.base, key("confirm"), 3, "victim", &token).await;
    assert!(text(result(s, &v)).contains("already used"), "{v}");

    // Without the CA the server's certificate is not trusted: the store is unavailable, and
    // confirmed calls fail closed.
    let untrusted = [("REDIS_URL", url.clone())];
    let mut other = replica_in(
        &fake,
        dir.path(),
        "no-ca",
        &untrusted,
        Some(&key_file),
        true,
    )
    .await;
    let (_, h) = health(&other.base).await;
    assert_eq!(h["store"]["state"], "unavailable", "{h}");
    let token = confirmation_at(&other.base, key("outage"), "victim2").await;
    let (s, v) = redeem(&other.base, key("outage"), 4, "victim2", &token).await;
    assert_eq!(
        result(s, &v)["structuredContent"]["code"],
        "confirmation_store_unavailable",
        "{v}"
    );
    assert!(fake.repo_exists("svc", "victim2"));
    for p in [&mut one.process, &mut other.process] {
        let out = p.stop();
        assert!(!format!("{}{}", out.stdout, out.stderr).contains(REDIS_PASSWORD));
    }
}

#[test]
fn audit_verify_checks_each_replicas_file_and_reports_per_replica() {
    use aegis_gitea_mcp::audit::{AuditLog, Entry, Facts};
    let dir = tempfile::tempdir().unwrap();
    let facts = Facts::default();
    let entry = Entry {
        actor: "ci-bot",
        transport: "http",
        tool: "gitea_find_action",
        args_digest: "abc",
        facts: &facts,
        duration_ms: 1,
    };
    let write = |file: &str, replica: &str, n: usize| {
        let path = dir.path().join(file);
        let log = AuditLog::open(path.to_str().unwrap(), replica).unwrap();
        for _ in 0..n {
            log.record(&entry);
        }
        path
    };
    let a = write("audit-a.log", "gw-a", 3);
    let b = write("audit-b.log", "gw-b", 2);
    let verify = |files: &[&Path]| {
        let out = crate::common::bin_with_empty_env()
            .args(["audit", "verify"])
            .args(files)
            .output()
            .unwrap();
        (out.status.code(), crate::common::stdout(&out))
    };
    let (code, out) = verify(&[&a, &b]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("audit-a.log: 3 records, chain intact (replica gw-a: 3 records)"),
        "{out}"
    );
    assert!(
        out.contains("audit-b.log: 2 records, chain intact (replica gw-b: 2 records)"),
        "{out}"
    );

    // A second writer in one file breaks the chain, and is named.
    let shared = write("audit-shared.log", "gw-a", 1);
    {
        // Two processes appending to one file each continue their own chain.
        let first = AuditLog::open(shared.to_str().unwrap(), "gw-a").unwrap();
        let second = AuditLog::open(shared.to_str().unwrap(), "gw-b").unwrap();
        first.record(&entry);
        second.record(&entry);
    }
    let (code, out) = verify(&[&a, &shared]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("audit-a.log: 3 records, chain intact"),
        "{out}"
    );
    assert!(
        out.contains("audit-shared.log: record at line 3 is broken"),
        "{out}"
    );
    // The same replica id in two files is pointed out.
    let (_, out) = verify(&[&a, &shared]);
    assert!(out.contains("replica gw-a appears in 2 files"), "{out}");
    let (code, out) = verify(&[&a, &dir.path().join("missing.log")]);
    assert_eq!(code, Some(1), "{out}");
}

/// nginx in front of `backends` with the location block of docs/scaling.md, run in the
/// foreground from `dir` (its own pid file, logs and temporary paths) as one process, so that
/// stopping it leaves no worker behind.
fn nginx(dir: &Path, backends: &[u16]) -> (External, u16) {
    let port = free_port();
    let servers: String = backends
        .iter()
        .map(|p| format!("        server 127.0.0.1:{p} max_fails=2 fail_timeout=5s;\n"))
        .collect();
    let d = dir.display();
    let config = format!(
        "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log stderr notice;\nevents {{ worker_connections 256; }}\n\
         http {{\n    access_log off;\n    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi;\n    uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n\
         upstream aegis {{\n{servers}        keepalive 32;\n    }}\n\
         server {{\n        listen 127.0.0.1:{port};\n        location / {{\n\
         proxy_pass http://aegis;\n            proxy_http_version 1.1;\n            proxy_set_header Connection \"\";\n\
         proxy_set_header Host $host;\n            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n\
         proxy_buffering off;\n            proxy_read_timeout 3600s;\n            proxy_next_upstream error timeout;\n\
         }}\n    }}\n}}\n"
    );
    let file = dir.join("nginx.conf");
    std::fs::write(&file, config).unwrap();
    let process = External::spawn(
        Command::new("nginx")
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&file),
    );
    (process, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server and nginx (Debian packages); .ci/run installs them and runs it with --ignored"]
async fn stateless_round_robin_through_nginx_with_the_documented_settings() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("confirm.key");
    std::fs::write(&key_file, CONFIRM_SECRET).unwrap();
    let redis_dir = dir.path().join("redis");
    std::fs::create_dir(&redis_dir).unwrap();
    let redis = Redis::start(&redis_dir).await;
    let mut a = replica(&fake, dir.path(), "a", Some(&redis), Some(&key_file)).await;
    let b = replica(&fake, dir.path(), "b", Some(&redis), Some(&key_file)).await;
    let (_nginx, port) = nginx(dir.path(), &[a.port, b.port]);
    let through = format!("http://127.0.0.1:{port}");
    // nginx is up once it answers (bounded).
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while http_client(Duration::from_secs(2))
        .get(format!("{through}/"))
        .send()
        .await
        .is_err()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "nginx did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for i in 0..8u64 {
        let (s, v) = find(&through, key("calls"), i, "list issues").await;
        assert_eq!(result(s, &v)["isError"], false, "{v}");
    }
    let (na, nb) = (a.audit_records().len(), b.audit_records().len());
    assert_eq!(na + nb, 8);
    assert!(na > 0 && nb > 0, "round robin reaches both: {na} / {nb}");
    // A confirmation issued through nginx is redeemed once through nginx, wherever each lands.
    let token = confirmation_at(&through, key("confirm"), "victim").await;
    let (s, v) = redeem(&through, key("confirm"), 2, "victim", &token).await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    let (s, v) = redeem(&through, key("confirm"), 3, "victim", &token).await;
    assert!(text(result(s, &v)).contains("already used"), "{v}");
    // One replica dies: nginx skips it after the failed connection and calls keep succeeding.
    a.process.stop();
    for i in 0..6u64 {
        let (s, v) = find(&through, key("failover"), 10 + i, "merge a pull request").await;
        assert_eq!(
            result(s, &v)["isError"],
            false,
            "call {i} after A died: {v}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (a Debian package); .ci/run installs it and runs it with --ignored"]
async fn a_pass_through_token_verified_at_one_replica_is_known_at_the_other() {
    const ALICE: &str = "alice-tok-scale-8c2e4a6f1b3d";
    let fake = fake().await;
    fake.add_token(ALICE, "alice", &["all"]);
    let dir = tempfile::tempdir().unwrap();
    let redis_dir = dir.path().join("redis");
    std::fs::create_dir(&redis_dir).unwrap();
    let redis = Redis::start(&redis_dir).await;
    let env = [
        ("REDIS_URL", redis.url()),
        ("AUTH_MODE", "gitea-token".to_string()),
    ];
    let a = replica_in(&fake, dir.path(), "a", &env, None, true).await;
    let b = replica_in(&fake, dir.path(), "b", &env, None, true).await;
    let before = fake.count("GET", "/user");
    let (s, v) = find(&a.base, ALICE, 1, "list issues").await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    let (s, v) = find(&b.base, ALICE, 2, "list issues").await;
    assert_eq!(result(s, &v)["isError"], false, "{v}");
    assert_eq!(
        fake.count("GET", "/user") - before,
        1,
        "B found A's verification in Redis instead of asking Gitea again"
    );
    assert_eq!(b.audit_records()[0]["actor"], "alice");
    // A token Gitea refuses is never cached: each replica asks, and refuses it.
    for base in [&a.base, &b.base] {
        let (s, v) = find(base, "not-a-valid-token-000000", 3, "list issues").await;
        assert_eq!(s, 401, "{v}");
    }
    assert_eq!(fake.count("GET", "/user") - before, 3);
    // Redis holds no token, only hashes.
    let keys = Command::new("redis-cli")
        .args([
            "-p",
            &redis.port.to_string(),
            "-a",
            REDIS_PASSWORD,
            "--no-auth-warning",
        ])
        .args(["--scan", "--pattern", "aegis:*"])
        .output()
        .expect("redis-cli runs");
    let keys = String::from_utf8_lossy(&keys.stdout).into_owned();
    assert!(keys.contains("aegis:token:"), "{keys}");
    assert!(!keys.contains(ALICE) && !keys.contains("alice"), "{keys}");
}

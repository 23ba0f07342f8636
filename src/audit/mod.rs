//! The audit log: one JSON line per tool call, on every transport, hash-chained.
//!
//! Each record carries the sha256 of the record before it (`prev`) and its own hash (`hash`,
//! over `prev` and the record's other fields), so deleting or editing a line breaks the chain
//! and `aegis-gitea-mcp audit verify FILE` names the first broken record. Records never hold
//! secrets: the actor is an API-key label or a Gitea user name, and arguments are reduced to a
//! digest. See `docs/audit-logging.md`.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::digest::sha256_hex;
use crate::exec::{CallResult, Refusal, RequestLine};

/// The `prev` of the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Errors opening or verifying an audit log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened, read or written.
    #[error("audit log {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// How a call ended, for the audit record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum OutcomeKind {
    /// Gitea answered 2xx (or a local tool answered).
    #[default]
    Ok,
    /// An error result (validation, Gitea error, transport).
    Error,
    /// Withheld by policy; the reason code (`read_only`, `toolsets`, …).
    Denied(String),
    /// A dry run (requested or SAFE_MODE).
    DryRun,
    /// A destructive call waiting for its confirmation.
    ConfirmationRequired,
    /// A write was sent but no answer came (timeout, broken connection): it may or may not
    /// have been applied.
    Unknown,
}

impl OutcomeKind {
    /// The outcome's label in audit records and metrics.
    pub fn label(&self) -> &str {
        self.as_str()
    }

    fn as_str(&self) -> &str {
        match self {
            OutcomeKind::Ok => "ok",
            OutcomeKind::Error => "error",
            OutcomeKind::Denied(_) => "denied",
            OutcomeKind::DryRun => "dry-run",
            OutcomeKind::ConfirmationRequired => "confirmation-required",
            OutcomeKind::Unknown => "unknown",
        }
    }
}

/// What the executor tells the audit log about a call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    /// The action, when one was resolved.
    pub action: Option<String>,
    /// Method and path sent to (or previewed for) Gitea.
    pub request: Option<(String, String)>,
    /// How it ended.
    pub kind: OutcomeKind,
    /// Gitea's status, when a request was sent.
    pub status: Option<u16>,
    /// The non-public repositories read before this write (the flow guard's sources).
    pub flow_from: Vec<String>,
}

impl Facts {
    /// What the audit log records about a call's result.
    pub fn of(result: &CallResult) -> Facts {
        let line = |r: &RequestLine| (r.method.as_str().to_string(), r.path.clone());
        match result {
            Ok(done) => {
                Facts {
                    action: Some(done.action.as_ref().map(|a| a.to_string()).unwrap_or_else(
                        || format!("{} {}", done.request.method, done.request.path),
                    )),
                    request: Some(line(&done.request)),
                    kind: OutcomeKind::Ok,
                    status: Some(done.status),
                    flow_from: done.flow_from.clone(),
                }
            }
            Err(refusal) => {
                let action = match refusal {
                    Refusal::UnknownAction { .. }
                    | Refusal::RawDisabled
                    | Refusal::BadRaw(_)
                    | Refusal::UnknownPath { .. } => None,
                    Refusal::Withheld { target, .. }
                    | Refusal::DryRun { target, .. }
                    | Refusal::NeedsConfirmation { target, .. }
                    | Refusal::ConfirmationRefused { target, .. }
                    | Refusal::ConfirmationUnavailable { target, .. } => Some(target.clone()),
                    Refusal::InvalidArguments { action, .. }
                    | Refusal::Unbuildable { action, .. } => Some(action.to_string()),
                    Refusal::Gitea { action, .. }
                    | Refusal::Transport { action, .. }
                    | Refusal::TimedOut { action, .. }
                    | Refusal::Unanswered { action, .. }
                    | Refusal::Redirected { action, .. }
                    | Refusal::FileTooLarge { action, .. }
                    | Refusal::AnswerTooLarge { action, .. }
                    | Refusal::MalformedJson { action, .. } => {
                        action.as_ref().map(|a| a.to_string())
                    }
                };
                let kind = match refusal {
                    Refusal::Withheld { reason, .. } => OutcomeKind::Denied(reason.code().into()),
                    Refusal::DryRun { .. } => OutcomeKind::DryRun,
                    Refusal::NeedsConfirmation { .. } => OutcomeKind::ConfirmationRequired,
                    Refusal::Unanswered { .. } => OutcomeKind::Unknown,
                    _ => OutcomeKind::Error,
                };
                let flow_from = match refusal {
                    Refusal::NeedsConfirmation { preview, .. }
                    | Refusal::ConfirmationRefused { preview, .. } => preview.flow_from.clone(),
                    Refusal::Withheld {
                        reason: crate::policy::WithheldReason::FlowGuard { sources },
                        ..
                    } => sources.clone(),
                    _ => Vec::new(),
                };
                Facts {
                    action,
                    request: refusal.request().map(line),
                    kind,
                    status: refusal.status(),
                    flow_from,
                }
            }
        }
    }
}

/// One audit entry before it is chained.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Who: an API-key label, a Gitea user, or `local` for stdio.
    pub actor: &'a str,
    /// `stdio`, `http`, `rest` or `cli`.
    pub transport: &'a str,
    /// The tool called.
    pub tool: &'a str,
    /// Digest of the canonical arguments.
    pub args_digest: &'a str,
    /// What the executor reported.
    pub facts: &'a Facts,
    /// How long the call took.
    pub duration_ms: u64,
}

enum Sink {
    File(File),
    Stderr,
}

struct Chain {
    sink: Sink,
    prev: String,
}

/// An open audit log.
pub struct AuditLog {
    target: String,
    replica: String,
    chain: Mutex<Chain>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("target", &self.target)
            .finish()
    }
}

impl AuditLog {
    /// Opens `target` (`-` for stderr) for appending, continuing an existing file's chain;
    /// every record names `replica`. Each replica needs a file of its own: one chain has one
    /// writer.
    pub fn open(target: &str, replica: &str) -> Result<AuditLog, Error> {
        if target == "-" {
            return Ok(AuditLog {
                target: "stderr".into(),
                replica: replica.to_string(),
                chain: Mutex::new(Chain {
                    sink: Sink::Stderr,
                    prev: GENESIS.into(),
                }),
            });
        }
        let io = |source| Error::Io {
            path: target.to_string(),
            source,
        };
        let prev = match File::open(target) {
            Ok(f) => last_hash(BufReader::new(f))
                .map_err(io)?
                .unwrap_or_else(|| GENESIS.into()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => GENESIS.into(),
            Err(e) => return Err(io(e)),
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(target)
            .map_err(io)?;
        Ok(AuditLog {
            target: target.to_string(),
            replica: replica.to_string(),
            chain: Mutex::new(Chain {
                sink: Sink::File(file),
                prev,
            }),
        })
    }

    /// Appends one record and flushes it. A write failure is logged, never fatal to the call.
    pub fn record(&self, entry: &Entry<'_>) {
        let mut chain = self.chain.lock().unwrap_or_else(|e| e.into_inner());
        let mut body = Map::new();
        body.insert("ts".into(), json!(rfc3339_now()));
        body.insert("replica".into(), json!(self.replica));
        body.insert("actor".into(), json!(entry.actor));
        body.insert("transport".into(), json!(entry.transport));
        body.insert("tool".into(), json!(entry.tool));
        body.insert("action".into(), json!(entry.facts.action));
        body.insert(
            "method".into(),
            json!(entry.facts.request.as_ref().map(|r| &r.0)),
        );
        body.insert(
            "path".into(),
            json!(entry.facts.request.as_ref().map(|r| &r.1)),
        );
        body.insert("args_sha256".into(), json!(entry.args_digest));
        body.insert("outcome".into(), json!(entry.facts.kind.as_str()));
        if let OutcomeKind::Denied(reason) = &entry.facts.kind {
            body.insert("reason".into(), json!(reason));
        }
        body.insert("gitea_status".into(), json!(entry.facts.status));
        if !entry.facts.flow_from.is_empty() {
            body.insert("flow_from".into(), json!(entry.facts.flow_from));
        }
        body.insert("duration_ms".into(), json!(entry.duration_ms));
        body.insert("prev".into(), json!(chain.prev));
        let hash = record_hash(&body);
        body.insert("hash".into(), json!(hash));
        let line = format!("{}\n", Value::Object(body));
        let result = match &mut chain.sink {
            Sink::File(f) => f.write_all(line.as_bytes()).and_then(|_| f.flush()),
            Sink::Stderr => {
                let mut err = std::io::stderr().lock();
                err.write_all(line.as_bytes()).and_then(|_| err.flush())
            }
        };
        match result {
            Ok(()) => chain.prev = hash,
            Err(e) => tracing::error!("cannot write the audit log {}: {e}", self.target),
        }
    }
}

/// The hash of a record: sha256 over its fields without `hash`, in a fixed order.
fn record_hash(body: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = body.keys().filter(|k| *k != "hash").collect();
    keys.sort();
    let mut canonical = String::new();
    for k in keys {
        canonical.push_str(k);
        canonical.push('=');
        canonical.push_str(&body[k].to_string());
        canonical.push('\n');
    }
    sha256_hex(canonical.as_bytes())
}

fn last_hash(reader: impl BufRead) -> std::io::Result<Option<String>> {
    let mut last = None;
    for line in reader.lines() {
        let line = line?;
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            if let Some(h) = v.get("hash").and_then(Value::as_str) {
                last = Some(h.to_string());
            }
        }
    }
    Ok(last)
}

/// The result of verifying a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Records read.
    pub records: usize,
    /// The first broken record: 1-based line number and what is wrong.
    pub first_broken: Option<(usize, String)>,
    /// Records per replica id (`""` for records written before replica ids), up to the first
    /// broken record.
    pub replicas: std::collections::BTreeMap<String, usize>,
}

/// Verifies the hash chain of a log file.
pub fn verify(path: &Path) -> Result<Verification, Error> {
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let mut prev = GENESIS.to_string();
    let mut records = 0;
    let mut replicas = std::collections::BTreeMap::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io)?;
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        records += 1;
        let broken = |why: String| {
            Ok(Verification {
                records,
                first_broken: Some((n, why)),
                replicas: replicas.clone(),
            })
        };
        let body: Map<String, Value> = match serde_json::from_str(&line) {
            Ok(Value::Object(m)) => m,
            _ => return broken("not a JSON object".into()),
        };
        let Some(hash) = body.get("hash").and_then(Value::as_str) else {
            return broken("no hash".into());
        };
        if body.get("prev").and_then(Value::as_str) != Some(prev.as_str()) {
            return broken(
                "its prev does not match the record before it (a record was removed or reordered)"
                    .into(),
            );
        }
        if record_hash(&body) != hash {
            return broken("its content does not match its hash (the record was edited)".into());
        }
        prev = hash.to_string();
        let replica = body.get("replica").and_then(Value::as_str).unwrap_or("");
        *replicas.entry(replica.to_string()).or_insert(0) += 1;
    }
    Ok(Verification {
        records,
        first_broken: None,
        replicas,
    })
}

/// The current time in RFC 3339 (UTC, milliseconds).
fn rfc3339_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(facts: &Facts) -> Entry<'_> {
        Entry {
            actor: "ci-bot",
            transport: "http",
            tool: "gitea_execute_action",
            args_digest: "abc",
            facts,
            duration_ms: 3,
        }
    }

    #[test]
    fn a_chain_verifies_and_tampering_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let log = AuditLog::open(path.to_str().unwrap(), "r1").unwrap();
        let ok = Facts {
            action: Some("gitea_repo_get".into()),
            request: Some(("GET".into(), "/repos/a/b".into())),
            kind: OutcomeKind::Ok,
            status: Some(200),
            flow_from: vec![],
        };
        let denied = Facts {
            kind: OutcomeKind::Denied("read_only".into()),
            ..ok.clone()
        };
        log.record(&entry(&ok));
        log.record(&entry(&denied));
        drop(log);
        // Reopening continues the chain.
        let log = AuditLog::open(path.to_str().unwrap(), "r1").unwrap();
        log.record(&entry(&ok));
        assert_eq!(
            verify(&path).unwrap(),
            Verification {
                records: 3,
                first_broken: None,
                replicas: [("r1".to_string(), 3)].into_iter().collect(),
            }
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("\"outcome\":\"denied\"")
                && lines[1].contains("\"reason\":\"read_only\"")
        );

        let edited = text.replacen("\"gitea_status\":200", "\"gitea_status\":201", 1);
        std::fs::write(&path, &edited).unwrap();
        assert_eq!(verify(&path).unwrap().first_broken.map(|b| b.0), Some(1));

        let removed: String = [lines[0], lines[2]]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&path, removed).unwrap();
        let v = verify(&path).unwrap();
        assert_eq!(v.first_broken.as_ref().map(|b| b.0), Some(2));
        assert!(v.first_broken.unwrap().1.contains("removed"));
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }
}

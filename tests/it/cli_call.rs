//! `aegis-gitea-mcp call`, driven as a process against the fake Gitea (`tests/support`) with the
//! fixture API description.
//!
//! The fake runs on the test's multi-thread runtime; each process runs on the blocking pool so
//! the fake keeps answering. Every command starts from a clean environment for the variables
//! the binary reads; its temporary directory (where used confirmation tokens are remembered) is
//! the test's own.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{BIN, FIXTURE, bin_without_host_settings, stderr, stdout};
use crate::support::FakeGitea;
use serde_json::{Value, json};

const ALICE: &str = "tok-cli-alice-4d2f8a6c1e9b";
const READER: &str = "tok-cli-reader-7a3c5e9f1b2d";

struct Cli {
    fake: FakeGitea,
    spec: PathBuf,
    tmp: tempfile::TempDir,
}

impl Cli {
    /// A fake with alice's repository `alice/demo`.
    async fn start() -> Cli {
        let spec = PathBuf::from(FIXTURE);
        let fake = FakeGitea::start().await;
        fake.add_token(
            ALICE,
            "alice",
            &["write:repository", "write:issue", "write:user"],
        );
        fake.add_token(READER, "reader", &["read:repository", "read:issue"]);
        fake.seed_repo("alice", "demo");
        fake.clear_requests();
        Cli {
            fake,
            spec,
            tmp: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    /// `aegis-gitea-mcp call <args> --spec <fixture>` with `token`, debug logs on stderr, and
    /// extra variables `env`.
    async fn call(&self, token: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = bin_without_host_settings();
        cmd.env("GITEA_URL", self.fake.url())
            .env("GITEA_TOKEN", token)
            .env("LOG_LEVEL", "debug")
            .env("TMPDIR", self.tmp.path())
            .env("XDG_CACHE_HOME", self.tmp.path().join("cache"))
            .envs(env.iter().copied())
            .current_dir(self.tmp.path())
            .arg("call")
            .args(args)
            .arg("--spec")
            .arg(&self.spec);
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("the process task")
            .expect("the binary runs");
        // Whatever happened, the token is never printed (not even in debug logs).
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            for secret in [ALICE, READER] {
                assert!(!text.contains(secret), "the token leaked: {text}");
            }
        }
        out
    }
}

impl Cli {
    /// `call <action> --args <args>` as `token` with extra variables `env` (see [`Cli::call`]).
    async fn with_args(
        &self,
        token: &str,
        action: &str,
        args: &str,
        env: &[(&str, &str)],
    ) -> Output {
        self.call(token, &[action, "--args", args], env).await
    }

    /// `call gitea_repo_delete --args <args> --confirm <token>` as alice.
    async fn confirm_delete(&self, args: &str, token: &str) -> Output {
        self.call(
            ALICE,
            &["gitea_repo_delete", "--args", args, "--confirm", token],
            &[],
        )
        .await
    }
}

/// Asserts the exit code and returns stdout parsed as JSON.
fn result(o: &Output, code: i32) -> Value {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        stdout(o),
        stderr(o)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

/// Asserts that the process's stderr contains `needle`.
#[track_caller]
fn assert_stderr_mentions(o: &Output, needle: &str) {
    assert!(stderr(o).contains(needle), "{}", stderr(o));
}

fn delete_args() -> String {
    json!({"owner": "alice", "repo": "demo"}).to_string()
}

fn confirm_token(v: &Value) -> String {
    v["confirm"]
        .as_str()
        .expect("a confirmation token")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_successful_call_prints_the_result_json_and_exits_0() {
    let cli = Cli::start().await;
    let out = cli
        .with_args(
            ALICE,
            "gitea_repo_get",
            r#"{"owner": "alice", "repo": "demo"}"#,
            &[],
        )
        .await;
    let v = result(&out, 0);
    assert_eq!(v["status"], 200);
    assert_eq!(v["action"], "gitea_repo_get");
    assert_eq!(v["data"]["full_name"], "alice/demo");
    assert_eq!(cli.fake.count("GET", "/repos/alice/demo"), 1);

    // A write, by operationId, with the coercions of the execute tool.
    let out = cli
        .with_args(
            ALICE,
            "issueCreateIssue",
            r#"{"repo": "alice/demo", "body": {"title": "From the CLI"}}"#,
            &[],
        )
        .await;
    let v = result(&out, 0);
    assert_eq!(v["status"], 201);
    assert_eq!(v["data"]["title"], "From the CLI");
    assert_eq!(
        cli.fake.issue_state("alice", "demo", 1).as_deref(),
        Some("open")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_results_exit_1_and_usage_errors_exit_2() {
    let cli = Cli::start().await;
    // Gitea's 404.
    let out = cli
        .with_args(
            ALICE,
            "gitea_repo_get",
            r#"{"owner": "alice", "repo": "nope"}"#,
            &[],
        )
        .await;
    let v = result(&out, 1);
    assert_eq!(v["status"], 404);
    assert_stderr_mentions(&out, "Gitea answered 404");

    // Invalid arguments: refused before any request, the usage line on stderr.
    cli.fake.clear_requests();
    let out = cli
        .with_args(ALICE, "gitea_repo_get", r#"{"owner": "alice"}"#, &[])
        .await;
    let v = result(&out, 1);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("missing required argument")
    );
    assert!(
        stderr(&out).contains("gitea_repo_get arguments (* = required)"),
        "{}",
        stderr(&out)
    );
    // An unknown action.
    let out = cli.call(ALICE, &["gitea_repo_gett"], &[]).await;
    let v = result(&out, 1);
    assert_eq!(v["code"], "unknown_action");
    // Withheld for the token's scopes (the CLI reads them from GET /token).
    let out = cli
        .with_args(
            READER,
            "gitea_issue_create",
            r#"{"owner": "alice", "repo": "demo", "body": {"title": "x"}}"#,
            &[],
        )
        .await;
    let v = result(&out, 1);
    assert_eq!(v["withheld"]["code"], "token_scope");
    assert_eq!(v["withheld"]["missing_scopes"], json!(["write:issue"]));
    assert!(
        cli.fake
            .requests()
            .iter()
            .all(|r| r.method == "GET" && r.path == "/api/v1/token"),
        "only the token's scopes were read: {:?}",
        cli.fake.requests()
    );

    // Bad --args: exit 2, nothing sent.
    cli.fake.clear_requests();
    for bad in ["{owner: alice}", "[1, 2]", "\"alice/demo\"", ""] {
        let out = cli.with_args(ALICE, "gitea_repo_get", bad, &[]).await;
        assert_eq!(
            out.status.code(),
            Some(2),
            "{bad:?}: stdout {} stderr {}",
            stdout(&out),
            stderr(&out)
        );
        assert_stderr_mentions(&out, "--args");
    }
    // A bad setting: exit 2, naming the variable.
    let out = cli
        .call(ALICE, &["gitea_repo_get"], &[("READ_ONLY", "maybe")])
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_mentions(&out, "READ_ONLY");
    assert!(cli.fake.requests().is_empty(), "{:?}", cli.fake.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_calls_are_confirmed_by_a_later_process_once() {
    let cli = Cli::start().await;
    let args = delete_args();

    // A dry run: exit 0, nothing sent.
    let out = cli
        .call(
            ALICE,
            &["gitea_repo_delete", "--args", &args, "--dry-run"],
            &[],
        )
        .await;
    let v = result(&out, 0);
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["request"]["method"], "DELETE");

    // No confirmation: exit 1, the token on stdout (JSON) and stderr (text), nothing sent.
    let out = cli.with_args(ALICE, "gitea_repo_delete", &args, &[]).await;
    let v = result(&out, 1);
    assert_eq!(v["confirmation_required"], true);
    let token = confirm_token(&v);
    // The hint is for a person at a shell: the flag, not the tool argument.
    assert_stderr_mentions(&out, &format!("--confirm {token}"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("\"confirm\""), "{err}");
    assert!(cli.fake.repo_exists("alice", "demo"));
    assert_eq!(cli.fake.count("DELETE", "/repos/alice/demo"), 0);

    // A token for other arguments is refused (and a fresh one offered).
    let out = cli
        .call(
            ALICE,
            &[
                "gitea_repo_delete",
                "--args",
                r#"{"owner": "alice", "repo": "other"}"#,
                "--confirm",
                &token,
            ],
            &[],
        )
        .await;
    let v = result(&out, 1);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("issued for a different call"),
        "{v}"
    );
    assert_ne!(confirm_token(&v), token);

    // A fresh preview, then a second process confirms it: deleted.
    let out = cli.with_args(ALICE, "gitea_repo_delete", &args, &[]).await;
    let token = confirm_token(&result(&out, 1));
    let out = cli.confirm_delete(&args, &token).await;
    let v = result(&out, 0);
    assert_eq!(v["status"], 204);
    assert!(!cli.fake.repo_exists("alice", "demo"));
    assert_eq!(cli.fake.count("DELETE", "/repos/alice/demo"), 1);

    // A third process with the same token: refused, nothing sent.
    let out = cli.confirm_delete(&args, &token).await;
    let v = result(&out, 1);
    assert!(v["error"].as_str().unwrap().contains("already used"), "{v}");
    assert_eq!(cli.fake.count("DELETE", "/repos/alice/demo"), 1);

    // The used tokens are remembered by nonce in the cache directory (not the temporary
    // directory), without the Gitea token.
    assert!(
        files_in(cli.tmp.path()).is_empty(),
        "nothing in the working or temporary directory"
    );
    let records = cli.tmp.path().join("cache/aegis-gitea-mcp/confirmations");
    let files = files_in(&records);
    let nonce = token.split('.').nth(1).expect("a nonce");
    assert!(
        files.iter().any(|(_, text)| text.contains(nonce)),
        "the used token is recorded: {files:?}"
    );
    for (name, text) in &files {
        assert!(!name.contains(ALICE) && !text.contains(ALICE), "{name}");
    }

    // Records older than a token's lifetime are removed by the next run: they do not pile up.
    let stale = records.join("0123456789abcdef");
    std::fs::write(&stale, "00 1\n").expect("a stale record");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .and_then(|f| f.set_modified(old))
        .expect("age the record");
    let fresh: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    cli.with_args(ALICE, "gitea_repo_delete", &args, &[]).await;
    assert!(!stale.exists(), "the stale record is removed");
    for name in fresh {
        assert!(records.join(&name).exists(), "a live record stays: {name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_reach_the_call() {
    let cli = Cli::start().await;
    let args = delete_args();
    // CONFIRM_DESTRUCTIVE=false: deleted at once.
    cli.fake.seed_repo("alice", "gone");
    let out = cli
        .with_args(
            ALICE,
            "gitea_repo_delete",
            r#"{"owner": "alice", "repo": "gone"}"#,
            &[("CONFIRM_DESTRUCTIVE", "false")],
        )
        .await;
    assert_eq!(result(&out, 0)["status"], 204);
    assert!(!cli.fake.repo_exists("alice", "gone"));
    // READ_ONLY: withheld, exit 1.
    let out = cli
        .with_args(ALICE, "gitea_repo_delete", &args, &[("READ_ONLY", "true")])
        .await;
    assert_eq!(result(&out, 1)["withheld"]["code"], "read_only");
    // SAFE_MODE: a write is previewed (exit 0), nothing sent.
    let out = cli
        .with_args(
            ALICE,
            "gitea_issue_create",
            r#"{"owner": "alice", "repo": "demo", "body": {"title": "x"}}"#,
            &[("SAFE_MODE", "true")],
        )
        .await;
    assert_eq!(result(&out, 0)["dry_run"], true);
    assert_eq!(cli.fake.count("POST", "/repos/alice/demo/issues"), 0);
    assert!(cli.fake.repo_exists("alice", "demo"));
}

/// The files the processes wrote in their temporary directory: (name, content).
fn files_in(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_dir(dir)
        .expect("the temporary directory")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap_or_default(),
            )
        })
        .collect()
}

/// With AUDIT_LOG set, each `call` appends one chained record (transport `cli`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_are_audited_when_an_audit_log_is_configured() {
    let cli = Cli::start().await;
    let log = cli.tmp.path().join("audit.log");
    let log_env = log.display().to_string();
    let env = [("AUDIT_LOG", log_env.as_str())];
    let ok = cli
        .with_args(ALICE, "gitea_repo_get", &delete_args(), &env)
        .await;
    result(&ok, 0);
    let missing = cli
        .with_args(
            ALICE,
            "gitea_repo_get",
            r#"{"owner": "alice", "repo": "nope"}"#,
            &env,
        )
        .await;
    result(&missing, 1);
    let text = std::fs::read_to_string(&log).expect("the audit log was written");
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(records.len(), 2, "{text}");
    assert_eq!(records[0]["transport"], "cli");
    assert_eq!(records[0]["action"], "gitea_repo_get");
    assert_eq!(records[0]["outcome"], "ok");
    assert_eq!(records[1]["outcome"], "error");
    assert_eq!(records[1]["gitea_status"], 404);
    assert_eq!(
        records[1]["prev"], records[0]["hash"],
        "the second process continued the chain"
    );
    let verified = Command::new(BIN)
        .args(["audit", "verify"])
        .arg(&log)
        .output()
        .expect("audit verify runs");
    assert!(verified.status.success(), "{}", stdout(&verified));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_spellings_of_a_confirmation_are_refused() {
    let cli = Cli::start().await;
    let args = delete_args();
    let out = cli.with_args(ALICE, "gitea_repo_delete", &args, &[]).await;
    let token = confirm_token(&result(&out, 1));
    let (expiry, rest) = token[1..].split_once('.').expect("a token");
    for s in [
        format!("c0{expiry}.{rest}"),
        format!("c00{expiry}.{rest}"),
        format!("c+{expiry}.{rest}"),
    ] {
        let out = cli.confirm_delete(&args, &s).await;
        result(&out, 1);
    }
    assert_eq!(cli.fake.count("DELETE", "/repos/alice/demo"), 0);
    let out = cli.confirm_delete(&args, &token).await;
    assert_eq!(result(&out, 0)["status"], 204);
    cli.fake.seed_repo("alice", "demo");
    let again = format!("c0{expiry}.{rest}");
    for s in [&token, &again] {
        let out = cli.confirm_delete(&args, s).await;
        result(&out, 1);
    }
    assert_eq!(cli.fake.count("DELETE", "/repos/alice/demo"), 1);
}

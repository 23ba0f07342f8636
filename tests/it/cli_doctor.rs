//! `aegis-gitea-mcp doctor`, and the start-up checks `serve` logs, as processes against the
//! fake Gitea (`tests/support`).

use std::process::Output;

use crate::common::{FIXTURE, bin_without_host_settings, stderr, stdout};
use crate::support::FakeGitea;

const FULL: &str = "tok-doctor-full-3b8e1d7a9c2f";
const NARROW: &str = "tok-doctor-narrow-5c1a9e3d7b4f";

async fn fake() -> FakeGitea {
    let fake = FakeGitea::start().await;
    fake.add_token(FULL, "alice", &["all"]);
    fake.add_token(NARROW, "bob", &["read:repository", "read:user"]);
    fake
}

/// Runs the binary with `args` against `url` with `token` (if any) and extra `env`.
async fn run(url: &str, token: Option<&str>, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = bin_without_host_settings();
    cmd.env("GITEA_URL", url)
        .env("NO_PROXY", "*")
        .envs(env.iter().copied())
        .args(args);
    if let Some(t) = token {
        cmd.env("GITEA_TOKEN", t);
    }
    tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run the binary")
}

/// The line of the check `name` in a text report.
fn line<'a>(report: &'a str, name: &str) -> &'a str {
    report
        .lines()
        .find(|l| {
            l.split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ")
                .starts_with(name)
        })
        .unwrap_or_else(|| panic!("no {name:?} line in:\n{report}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_says_what_works() {
    let fake = fake().await;
    let out = run(&fake.url(), Some(FULL), &["doctor", "--spec", FIXTURE], &[]).await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        line(&text, "instance").starts_with("ok") && text.contains("1.28.0+fake"),
        "{text}"
    );
    assert!(line(&text, "token").contains("user alice"), "{text}");
    assert!(
        line(&text, "scopes").contains("enough for every action"),
        "{text}"
    );
    assert!(
        line(&text, "api description").contains("46 operations"),
        "{text}"
    );
    assert!(line(&text, "policy").contains("46 of 46"), "{text}");
    assert!(!text.contains(FULL), "the token never appears");
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_names_what_to_fix() {
    let fake = fake().await;
    // A refused token fails, with where to make a new one.
    let out = run(
        &fake.url(),
        Some("tok-doctor-wrong-0000000000"),
        &["doctor", "--spec", FIXTURE],
        &[],
    )
    .await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let token = line(&text, "token");
    assert!(
        token.starts_with("FAIL") && token.contains("refused (401)"),
        "{text}"
    );
    assert!(text.contains("/user/settings/applications"), "{text}");
    assert!(
        !text.contains("tok-doctor-wrong"),
        "the token never appears"
    );

    // Narrow scopes are a warning naming the scopes the offered actions lack.
    let out = run(
        &fake.url(),
        Some(NARROW),
        &["doctor", "--json", "--spec", FIXTURE],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let scopes = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "scopes")
        .expect("a scopes check");
    assert_eq!(scopes["status"], "warn", "{scopes}");
    let detail = scopes["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("write:repository") && detail.contains("read:issue"),
        "{detail}"
    );

    // No token and an unpinned live document: warnings, not failures.
    let served = FakeGitea::start_with_spec(std::fs::read(FIXTURE).expect("fixture")).await;
    let out = run(&served.url(), None, &["doctor"], &[]).await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(line(&text, "token").starts_with("warn"), "{text}");
    assert!(
        line(&text, "api description").contains("unpinned") && text.contains("spec pin"),
        "{text}"
    );

    // Read-only leaves no action with nothing to do.
    let out = run(
        &fake.url(),
        Some(FULL),
        &["doctor", "--spec", FIXTURE, "--read-only"],
        &[],
    )
    .await;
    assert!(
        line(&stdout(&out), "policy").contains("read-only"),
        "{}",
        stdout(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_fails_when_the_instance_cannot_be_reached() {
    let fake = FakeGitea::start().await;
    let url = fake.url();
    fake.stop().await;
    let out = run(&url, Some(FULL), &["doctor", "--spec", FIXTURE], &[]).await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let instance = line(&text, "instance");
    assert!(
        instance.starts_with("FAIL") && instance.contains("cannot reach"),
        "{text}"
    );
    assert!(text.contains("check GITEA_URL"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_logs_each_start_up_problem_and_starts_anyway() {
    let fake = fake().await;
    // stdin is empty: the stdio server starts, finds the end of its input before any
    // initialize and stops (exit 1, "connection closed"): the checks ran before it served.
    let out = run(
        &fake.url(),
        Some("tok-doctor-wrong-0000000000"),
        &["serve", "--spec", FIXTURE],
        &[],
    )
    .await;
    let err = stderr(&out);
    assert!(!err.contains("instance:"), "the instance answered: {err}");
    assert!(
        err.contains("WARN") && err.contains("token: refused (401)"),
        "{err}"
    );
    assert!(err.contains("serving MCP over stdio"), "{err}");
    assert!(
        !err.contains("tok-doctor-wrong"),
        "the token never appears: {err}"
    );

    // All well: no warning.
    let out = run(&fake.url(), Some(FULL), &["serve", "--spec", FIXTURE], &[]).await;
    let err = stderr(&out);
    assert!(!err.contains("WARN"), "{err}");

    // The instance is down but the document is a file: one line says so, and it serves.
    let url = fake.url();
    fake.stop().await;
    let out = run(&url, Some(FULL), &["serve", "--spec", FIXTURE], &[]).await;
    let err = stderr(&out);
    assert!(err.contains("instance: cannot reach"), "{err}");
    assert!(err.contains("serving MCP over stdio"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn log_settings_mean_what_they_say() {
    let fake = fake().await;
    // LOG_LEVEL=warn is warn: no info line from this server or from rmcp.
    let out = run(
        &fake.url(),
        Some(FULL),
        &["serve", "--spec", FIXTURE],
        &[("LOG_LEVEL", "warn")],
    )
    .await;
    let err = stderr(&out);
    assert!(!err.contains("INFO"), "{err}");
    // An invalid filter is a usage error that names the setting.
    let out = run(
        &fake.url(),
        Some(FULL),
        &["catalog", "--spec", FIXTURE],
        &[("LOG_LEVEL", "info,[")],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("LOG_LEVEL"), "{}", stderr(&out));
    // LOG_FORMAT=json: every log line is a JSON object.
    let out = run(
        &fake.url(),
        Some(FULL),
        &["serve", "--spec", FIXTURE],
        &[("LOG_FORMAT", "json")],
    )
    .await;
    let err = stderr(&out);
    // The last line is the process's own error (no initialize on stdin), not a log line.
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("error: MCP initialisation failed"))
        .collect();
    assert!(!lines.is_empty(), "serve logs at info by default");
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(v["level"].is_string() && v["fields"].is_object(), "{l}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_port_in_use_names_the_address() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = taken.local_addr().expect("addr").to_string();
    let fake = fake().await;
    let out = run(
        &fake.url(),
        Some(FULL),
        &["serve", "--http", "--listen", &addr, "--spec", FIXTURE],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("cannot listen on {addr}")),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn gitea_insecure_from_the_official_server_is_honoured() {
    let out = run(
        "https://127.0.0.1:9",
        None,
        &["doctor", "--spec", FIXTURE],
        &[("GITEA_INSECURE", "true")],
    )
    .await;
    let tls = line(&stdout(&out), "tls").to_string();
    assert!(
        tls.starts_with("warn") && tls.contains("GITEA_INSECURE=true"),
        "{tls}"
    );
    let out = run(
        "https://127.0.0.1:9",
        None,
        &["doctor", "--spec", FIXTURE],
        &[],
    )
    .await;
    assert!(
        line(&stdout(&out), "tls").contains("certificates verified"),
        "{}",
        stdout(&out)
    );
}

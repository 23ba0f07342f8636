//! Execute overhead: validation + request building per call (criterion), and an end-to-end
//! `gitea_execute_action` against the fake Gitea on loopback compared with a bare reqwest call
//! of the same request in the same run (p50/p99 and the overhead ratio at p50).
//!
//! Run: `cargo bench --bench execute -- --warm-up-time 1 --measurement-time 5`

#[path = "../tests/it/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use aegis_gitea_mcp::app;
use aegis_gitea_mcp::config::{Config, GlobalArgs};
use aegis_gitea_mcp::exec::{Context, ExecConfig, args, request};
use aegis_gitea_mcp::state::State;
use aegis_gitea_mcp::tools;
use criterion::{Criterion, criterion_group};
use serde_json::json;

const SPEC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/spec/gitea-swagger.v1.json"
);

fn config(url: &str) -> Config {
    Config::from_args(&GlobalArgs {
        gitea_url: Some(aegis_gitea_mcp::config::parse_gitea_url(url).expect("a URL")),
        gitea_token: Some("tok-bench".into()),
        spec: Some(SPEC.into()),
        ..GlobalArgs::default()
    })
    .expect("config")
}

fn validate_and_build(c: &mut Criterion) {
    if !Path::new(SPEC).is_file() {
        eprintln!("skipped: {SPEC} not found");
        return;
    }
    let spec = app::load_spec_file(Path::new(SPEC), None).expect("spec");
    let state = State::new(&spec, &config("http://127.0.0.1:9").policy).expect("state");
    let (index, action) = state.catalog.lookup("gitea_issue_create").expect("action");
    let arguments = json!({"owner": "alice", "repo": "demo", "body": {"title": "Flaky test", "body": "It fails on CI", "labels": [1, 2]}});
    // Compile once, as the server does.
    args::validate(&state.validators, index, action, arguments.clone()).expect("valid");
    c.bench_function("validate + build request (gitea_issue_create)", |b| {
        // The arguments move into validation (as from the transport); their copy is setup.
        b.iter_batched(
            || arguments.clone(),
            |arguments| {
                let v = args::validate(
                    &state.validators,
                    index,
                    action,
                    std::hint::black_box(arguments),
                )
                .expect("valid");
                request::build(action, &v).expect("request")
            },
            criterion::BatchSize::SmallInput,
        )
    });
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// End-to-end execute vs a bare reqwest GET of the same URL, interleaved in one run.
fn end_to_end() {
    if !Path::new(SPEC).is_file() {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let fake = support::FakeGitea::start().await;
        fake.add_token("tok-bench", "alice", &["all"]);
        fake.seed_repo("alice", "demo");
        let cfg = config(&fake.url());
        let spec = app::load_spec_file(Path::new(SPEC), None).expect("spec");
        let state = State::new(&spec, &cfg.policy).expect("state");
        let ctx = Context::new(&cfg, ExecConfig::from_config(&cfg), Default::default()).expect("context");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let bare = reqwest::Client::new();
        let url = format!("{}/api/v1/repos/alice/demo", fake.url());
        let input = json!({"action": "gitea_repo_get", "arguments": {"owner": "alice", "repo": "demo"}});
        let serde_json::Value::Object(input) = input else { unreachable!("an object literal") };
        let (mut ours, mut plain) = (Vec::new(), Vec::new());
        let rounds = 3000;
        for i in 0..rounds + 200 {
            let t = Instant::now();
            let out = tools::execute::run(&state, &ctx, &aegis_gitea_mcp::exec::Caller::local(), input.clone()).await;
            let d_ours = t.elapsed();
            assert!(!out.is_error, "{}", out.text);
            let t = Instant::now();
            let resp = bare.get(&url).header("Authorization", "token tok-bench").send().await.expect("bare request");
            let body = resp.bytes().await.expect("body");
            let _: serde_json::Value = serde_json::from_slice(&body).expect("json");
            let d_plain = t.elapsed();
            if i >= 200 {
                // The first 200 rounds warm connections and caches.
                ours.push(d_ours);
                plain.push(d_plain);
            }
        }
        ours.sort();
        plain.sort();
        let (o50, p50) = (percentile(&ours, 0.5), percentile(&plain, 0.5));
        println!(
            "end-to-end gitea_repo_get over loopback ({rounds} calls each): execute p50 {:?} p99 {:?}; bare reqwest p50 {:?} p99 {:?}; overhead at p50 {:.1} % ({:?})",
            o50,
            percentile(&ours, 0.99),
            p50,
            percentile(&plain, 0.99),
            (o50.as_secs_f64() / p50.as_secs_f64() - 1.0) * 100.0,
            o50.saturating_sub(p50),
        );
        fake.stop().await;
    });
}

criterion_group!(benches, validate_and_build);

fn main() {
    benches();
    end_to_end();
    Criterion::default().configure_from_args().final_summary();
}

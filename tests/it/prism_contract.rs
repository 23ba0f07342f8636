//! Contract test over the whole catalog against Stoplight Prism.
//!
//! For every action of the full Gitea document (`$GITEA_SPEC_DIR/gitea-swagger.v1.json`, 482
//! operations), minimal valid arguments are generated from the action's input schema and the
//! action is executed through the library (`tools::execute::run`) against a Prism mock of the
//! same document. An action passes when Prism did not reject its request as invalid; the test
//! prints `prism contract: N/482 actions accepted` and fails listing every rejected action with
//! Prism's reasons, the arguments and the request as sent.
//!
//! Run it with:
//!
//! ```text
//! out=$(scripts/prism.sh)            # installs Node 24 + Prism 5.16.0 once, prints PRISM_URL=...
//! eval "$out"; export PRISM_URL       # (two steps, so `set -e` sees a failed start)
//! cargo test --test prism_contract -- --ignored --nocapture
//! scripts/prism.sh stop
//! ```
//!
//! `PRISM_CONTRACT_LOG=FILE` writes every action's arguments and exchanges to FILE.
//!
//! Every call goes through a recording proxy (see `support_prism`), because Prism reports most
//! violations only in the `sl-violations` response header, which a tool output does not carry.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support_prism::{
    Exchange, Judgement, RecordingProxy, describe, judge, minimal_arguments,
};
use aegis_gitea_mcp::catalog::{Action, Catalog};
use aegis_gitea_mcp::config::{Config, GlobalArgs};
use aegis_gitea_mcp::exec::{Context, ExecConfig};
use aegis_gitea_mcp::spec::Spec;
use aegis_gitea_mcp::state::State;
use aegis_gitea_mcp::tools::{ToolOutput, execute};
use serde_json::{Value, json};

/// The document Prism serves (scripts/prism.sh's default) and the test reads.
const SPEC_FILE: &str = "gitea-swagger.v1.json";
/// Calls in flight at once.
const CONCURRENCY: usize = 4;

/// What happened to one action.
struct Outcome {
    action: String,
    route: String,
    args: Value,
    judgement: Judgement,
    exchanges: Vec<Exchange>,
    output: ToolOutput,
}

fn config_for(url: &str) -> Config {
    let args = GlobalArgs {
        gitea_url: Some(aegis_gitea_mcp::config::parse_gitea_url(url).expect("a URL")),
        gitea_token: Some(aegis_gitea_mcp::config::Secret::new("prism-token")),
        // One request per call: a retry would only repeat what Prism already judged.
        gitea_retries: 0,
        // Prism's example repositories are not public, and every call here runs for one caller:
        // the flow guard would hold every write after the first read (it has tests of its own).
        flow_guard: aegis_gitea_mcp::config::FlowGuard::Off,
        ..Default::default()
    };
    Config::from_args(&args).unwrap_or_else(|e| panic!("configuration for {url}: {e}"))
}

fn load_catalog_spec() -> Spec {
    let bytes = crate::common::spec_bytes(SPEC_FILE);
    Spec::parse(&bytes).unwrap_or_else(|e| panic!("{SPEC_FILE}: {e}"))
}

/// Runs actions taken from `next` one after another through its own recording proxy.
async fn worker(
    state: &State,
    prism_url: &str,
    actions: &[Action],
    next: &AtomicUsize,
) -> Vec<Outcome> {
    let proxy = RecordingProxy::start(prism_url).await;
    let config = config_for(&proxy.url);
    let mut exec_cfg = ExecConfig::from_config(&config);
    exec_cfg.confirm_destructive = false;
    let ctx = Context::new(&config, exec_cfg, Default::default())
        .unwrap_or_else(|e| panic!("execution context for {}: {e}", proxy.url));
    let mut out = Vec::new();
    loop {
        let i = next.fetch_add(1, Ordering::SeqCst);
        let Some(action) = actions.get(i) else { break };
        let args = minimal_arguments(action);
        drop(proxy.take());
        let call = json!({"action": action.name.as_str(), "arguments": args.clone()});
        let Value::Object(call) = call else {
            unreachable!("an object literal")
        };
        let output = execute::run(state, &ctx, &aegis_gitea_mcp::exec::Caller::local(), call).await;
        let exchanges = proxy.take();
        out.push(Outcome {
            action: action.name.to_string(),
            route: format!("{} {}", action.method, action.path),
            args,
            judgement: judge(&exchanges),
            exchanges,
            output,
        });
    }
    out
}

/// Sends one request Prism must reject (an issue without its required `title`) through a
/// recording proxy and checks the judgement sees it: proves the detection works against the
/// running Prism before its silence is taken as acceptance.
async fn canary(prism_url: &str) {
    let proxy = RecordingProxy::start(prism_url).await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client");
    let answer = client
        .post(format!("{}/api/v1/repos/alice/demo/issues", proxy.url))
        .header("Authorization", "token prism-token")
        .json(&json!({"body": "no title"}))
        .send()
        .await
        .expect("canary request");
    let status = answer.status();
    let exchanges = proxy.take();
    match judge(&exchanges) {
        Judgement::Rejected(r) if r.iter().any(|r| r.contains("title")) => {}
        other => panic!(
            "Prism at {prism_url} did not reject an issue without a title as expected \
             ({status}, judged {other:?}); is it serving the /api/v1-prefixed Gitea document?\n{}",
            exchanges
                .iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

/// Panics unless something answers HTTP at `url` (any status: Prism answers 404 for `/`).
async fn require_prism(url: &str, when: &str) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("client");
    if let Err(e) = client.get(format!("{url}/")).send().await {
        panic!(
            "Prism does not answer at {url} {when}: {e} (see the log under the PEERS_DIR cache)"
        );
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Prism: run scripts/prism.sh first; .ci/run does"]
async fn every_action_is_accepted_by_prism() {
    let prism_url = std::env::var("PRISM_URL")
        .ok()
        .map(|u| u.trim().trim_end_matches('/').to_string())
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| {
            panic!(
                "PRISM_URL is not set: start the mock with `eval \"$(scripts/prism.sh)\"; \
                 export PRISM_URL` (it prints PRISM_URL=http://127.0.0.1:4010)"
            )
        });
    let spec = load_catalog_spec();
    rustls::crypto::ring::default_provider()
        .install_default()
        .ok();
    require_prism(&prism_url, "before the run").await;
    canary(&prism_url).await;
    let state = State::new(&spec, &config_for(&prism_url).policy).expect("state");
    let actions = state.catalog.actions();
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let w = || worker(&state, &prism_url, actions, &next);
    let (a, b, c, d) = tokio::join!(w(), w(), w(), w());
    const _: () = assert!(CONCURRENCY == 4, "one worker per join! arm");
    let mut outcomes: Vec<Outcome> = [a, b, c, d].into_iter().flatten().collect();
    outcomes.sort_by(|x, y| x.action.cmp(&y.action));
    assert_eq!(outcomes.len(), actions.len(), "every action ran once");
    require_prism(&prism_url, "after the run (did it crash?)").await;

    if let Some(path) = std::env::var_os("PRISM_CONTRACT_LOG") {
        let mut log = String::new();
        for o in &outcomes {
            log.push_str(&format!("{} ({}) {}\n", o.action, o.route, o.args));
            for e in &o.exchanges {
                log.push_str(&format!("  {}\n", describe(e)));
            }
        }
        std::fs::write(&path, log).unwrap_or_else(|e| panic!("PRISM_CONTRACT_LOG: {e}"));
    }
    let total = outcomes.len();
    let accepted = outcomes
        .iter()
        .filter(|o| matches!(o.judgement, Judgement::Accepted(_)))
        .count();
    let mut report = String::new();
    for o in &outcomes {
        let reasons = match &o.judgement {
            Judgement::Accepted(_) => continue,
            Judgement::Rejected(r) => {
                format!("rejected by Prism:\n      - {}", r.join("\n      - "))
            }
            Judgement::NotSent => format!(
                "no request reached Prism; the tool answered: {}",
                shorten(&o.output.text.replace('\n', " | "), 400)
            ),
            Judgement::Broken(why) => format!("broken: {why}"),
        };
        report.push_str(&format!(
            "  {} ({})\n    {reasons}\n    arguments: {}\n",
            o.action, o.route, o.args
        ));
        for e in &o.exchanges {
            report.push_str(&format!("    sent: {}\n", shorten(&describe(e), 700)));
        }
    }
    // Accepted by Prism but the tool still reported an error: not a contract failure, listed so
    // the client's handling of mock answers can be looked at.
    let tool_errors: Vec<String> = outcomes
        .iter()
        .filter(|o| matches!(o.judgement, Judgement::Accepted(_)) && o.output.is_error)
        .map(|o| {
            format!(
                "  {} (Prism answered {}): {}",
                o.action,
                match o.judgement {
                    Judgement::Accepted(s) => s,
                    _ => 0,
                },
                shorten(&o.output.text.replace('\n', " "), 200)
            )
        })
        .collect();
    if !tool_errors.is_empty() {
        println!(
            "accepted by Prism, but the tool reported an error ({}):\n{}",
            tool_errors.len(),
            tool_errors.join("\n")
        );
    }
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for e in outcomes.iter().flat_map(|o| &o.exchanges) {
        let key = e.status.map_or("none".into(), |s| s.to_string());
        *statuses.entry(key).or_default() += 1;
    }
    println!(
        "Prism's statuses: {}",
        statuses
            .iter()
            .map(|(s, n)| format!("{s}×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "prism contract: {accepted}/{total} actions accepted ({:.1} s, {CONCURRENCY} at a time)",
        started.elapsed().as_secs_f64()
    );
    assert!(
        accepted == total,
        "prism contract: {accepted}/{total} actions accepted; {} not:\n{report}",
        total - accepted
    );
}

/// The generator's output is valid for every input schema (checked without Prism), so a
/// rejection by Prism is about the request the client built, not about the arguments.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn minimal_arguments_satisfy_every_input_schema() {
    let spec = load_catalog_spec();
    let catalog = Catalog::build(&spec).expect("catalog");
    let mut bodies = 0;
    let mut files = 0;
    for a in catalog.actions() {
        let args = minimal_arguments(a);
        let v = jsonschema::validator_for(&a.input_schema)
            .unwrap_or_else(|e| panic!("{}: schema does not compile: {e}", a.name));
        if let Err(e) = v.validate(&args) {
            panic!(
                "{}: minimal arguments {args} are invalid: {e} at {}",
                a.name,
                e.instance_path()
            );
        }
        bodies += usize::from(a.body.is_some() && args.get("body").is_some());
        files += a
            .file_params()
            .filter(|p| args.get(&p.name).is_some())
            .count();
    }
    let expected = crate::common::FULL_SPECS
        .iter()
        .find(|(f, _)| *f == SPEC_FILE)
        .map(|(_, n)| *n);
    assert_eq!(Some(catalog.len()), expected, "{SPEC_FILE}");
    assert!(bodies > 100, "{bodies} bodies generated");
    assert_eq!(files, 3, "every multipart file field is filled");
}

/// The judgement rule on the answers Prism 5.16.0 really gives (recorded with curl against the
/// Gitea document).
#[test]
fn prism_answers_are_judged_by_what_prism_says() {
    let exchange =
        |status: u16, content_type: Option<&str>, violations: Option<Value>, body: &str| Exchange {
            request_line: "POST /api/v1/repos/alice/demo/issues".into(),
            request_content_type: Some("application/json".into()),
            request_body: "{}".into(),
            status: Some(status),
            content_type: content_type.map(str::to_string),
            violations,
            body: body.into(),
            failure: None,
        };
    // An operation that declares a 422: the mocked 422 has no body; the list is in the header.
    let mocked_422 = exchange(
        422,
        None,
        Some(
            json!([{"location": ["request", "body"], "severity": "Error", "code": "required",
            "message": "Request body must have required property 'title'"}]),
        ),
        "",
    );
    assert_eq!(
        judge(&[mocked_422]),
        Judgement::Rejected(vec![
            "request.body [required]: Request body must have required property 'title'".into()
        ])
    );
    // An operation without one: Prism's own problem+json.
    let problem = exchange(
        422,
        Some("application/problem+json"),
        None,
        r#"{"type":"https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY","title":"Invalid request","status":422,"detail":"Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.","validation":[{"location":["query","state"],"severity":"Error","code":"enum","message":"Request query parameter state must be equal to one of the allowed values: closed, open, all"}]}"#,
    );
    assert!(
        matches!(judge(&[problem]), Judgement::Rejected(r) if r[0].contains("query.state [enum]"))
    );
    // Response violations only (Prism's own mock does not match its schema): accepted.
    let response_only = exchange(
        200,
        Some("application/json"),
        Some(
            json!([{"location": ["response", "body"], "severity": "Error", "code": "type", "message": "x"}]),
        ),
        "{}",
    );
    assert_eq!(judge(&[response_only]), Judgement::Accepted(200));
    // A documented Gitea 422 with a JSON body and no violations is Gitea's answer, not Prism's.
    let gitea_422 = exchange(
        422,
        Some("application/json"),
        None,
        r#"{"message":"x","url":"y"}"#,
    );
    assert_eq!(judge(&[gitea_422]), Judgement::Accepted(422));
    // Prism cannot serialise a binary answer: its problem, not a rejection.
    let unknown = exchange(
        500,
        Some("application/problem+json"),
        None,
        r#"{"type":"https://stoplight.io/prism/errors#UNKNOWN","title":"Cannot find serializer for application/octet-stream","status":500,"detail":""}"#,
    );
    assert_eq!(judge(&[unknown]), Judgement::Accepted(500));
    let unrouted = exchange(
        404,
        Some("application/problem+json"),
        None,
        r#"{"type":"https://stoplight.io/prism/errors#NO_PATH_MATCHED_ERROR","title":"Route not resolved, no path matched","status":404,"detail":"The route /api/v1/x hasn't been found in the specification file"}"#,
    );
    assert!(matches!(judge(&[unrouted]), Judgement::Rejected(_)));
    assert_eq!(judge(&[]), Judgement::NotSent);
}

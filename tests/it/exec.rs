//! The execute capability end to end: `gitea_execute_action` and `gitea_api_request` against the
//! stateful fake Gitea (`tests/it/support`), over the fixture API description.
//!
//! Every harness records every tool output it produced; when it is dropped it checks that no
//! token (nor any other secret a test used) appears in any of them.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::common::{b64, fixture_spec};
use crate::support::{FakeGitea, Fault};
use aegis_gitea_mcp::config::{Config, GlobalArgs};
use aegis_gitea_mcp::exec::{Caller, Context, ExecConfig};
use aegis_gitea_mcp::state::State;
use aegis_gitea_mcp::tools::{self, ToolOutput};
use serde_json::{Value, json};

// ---- secrets ----------------------------------------------------------------------------------

/// Alice: an admin-capable user with write scopes.
const ALICE: &str = "tok-alice-7f3c9e1d5b2a";
/// Bob: a second user (reviews, sudo target).
const BOB: &str = "tok-bob-2a8e6f4c0d9e";
/// A token with read scopes only.
const READER: &str = "tok-reader-9b1d3f5a7c4e";
/// A token the fake does not know (401).
const BOGUS: &str = "tok-bogus-5e7a9c1b3d6f";
/// A password sent in a body (must be redacted in previews).
const PASSWORD: &str = "pw-hunter2-c0ffee";
/// Secret data of an Actions secret (must be redacted in previews).
const SECRET_DATA: &str = "s3cr3t-data-deadbeef";

/// Strings that must never appear in a tool output or a log line.
const SECRETS: [&str; 6] = [ALICE, BOB, READER, BOGUS, PASSWORD, SECRET_DATA];

const WRITE_SCOPES: [&str; 4] = [
    "write:repository",
    "write:issue",
    "write:user",
    "write:organization",
];

fn assert_no_secret(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "a secret leaked into {what}: {text}");
    }
}

// ---- the harness ------------------------------------------------------------------------------

/// An executor for `config`, built the way the server builds one.
fn executor(config: &Config) -> Context {
    Context::new(config, ExecConfig::from_config(config), Default::default()).expect("an executor")
}

struct Harness {
    fake: FakeGitea,
    args: GlobalArgs,
    state: State,
    /// Alice's executor.
    ctx: Context,
    outputs: Mutex<Vec<ToolOutput>>,
}

impl Harness {
    /// A fake Gitea with tokens for alice, bob and a read-only reader, and an executor
    /// configured by `settings` (alice's token).
    async fn start(settings: impl FnOnce(&mut GlobalArgs)) -> Harness {
        let spec = fixture_spec();
        let path = PathBuf::from(crate::common::FIXTURE);
        let fake = FakeGitea::start().await;
        fake.add_token(ALICE, "alice", &WRITE_SCOPES);
        fake.add_token(BOB, "bob", &WRITE_SCOPES);
        fake.add_token(
            READER,
            "reader",
            &["read:repository", "read:issue", "read:user"],
        );
        let mut args = GlobalArgs {
            gitea_url: Some(aegis_gitea_mcp::config::parse_gitea_url(&fake.url()).expect("a URL")),
            gitea_token: Some(aegis_gitea_mcp::config::Secret::new(ALICE)),
            spec: Some(path),
            ..GlobalArgs::default()
        };
        settings(&mut args);
        let config = Config::from_args(&args).expect("a valid configuration");
        let state = State::new(spec, &config.policy).expect("the state builds");
        let ctx = executor(&config);
        Harness {
            fake,
            args,
            state,
            ctx,
            outputs: Mutex::new(Vec::new()),
        }
    }

    /// [`Harness::start`] with alice's repository `alice/demo`, the request log then cleared.
    async fn with_demo(settings: impl FnOnce(&mut GlobalArgs)) -> Harness {
        let h = Harness::start(settings).await;
        h.fake.seed_repo("alice", "demo");
        h.fake.clear_requests();
        h
    }

    /// Another executor with the same settings and another token.
    fn context(&self, token: &str) -> Context {
        let args = GlobalArgs {
            gitea_token: Some(aegis_gitea_mcp::config::Secret::new(token)),
            ..self.args.clone()
        };
        executor(&Config::from_args(&args).expect("a valid configuration"))
    }

    fn record(&self, out: ToolOutput) -> ToolOutput {
        self.outputs.lock().unwrap().push(out.clone());
        out
    }

    /// `gitea_execute_action` with a full input object, as alice.
    async fn execute_input(&self, input: Value) -> ToolOutput {
        self.execute_as(&self.ctx, input).await
    }

    /// `gitea_execute_action` with a full input object and an executor.
    async fn execute_as(&self, ctx: &Context, input: Value) -> ToolOutput {
        // The transport hands the tool an object; anything else is refused before the tool.
        let Value::Object(input) = input else {
            return self.record(ToolOutput::error("arguments must be an object", json!({})));
        };
        let out = tools::execute::run(&self.state, ctx, &Caller::local(), input).await;
        self.record(out)
    }

    /// `gitea_execute_action {action, arguments}` as alice.
    async fn exec(&self, action: &str, arguments: Value) -> ToolOutput {
        self.execute_input(json!({"action": action, "arguments": arguments}))
            .await
    }

    /// `gitea_api_request` as alice.
    async fn raw(&self, input: Value) -> ToolOutput {
        let Value::Object(input) = input else {
            panic!("an object")
        };
        let out = tools::raw::run(&self.state, &self.ctx, &Caller::local(), input).await;
        self.record(out)
    }

    fn usage(&self, action: &str) -> String {
        let a = self.state.catalog.get(action).expect("an action");
        aegis_gitea_mcp::render::call::usage_line(
            a.name.as_str(),
            &aegis_gitea_mcp::exec::args::usage(a),
        )
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        for out in self.outputs.lock().unwrap().iter() {
            assert_no_secret("a tool output's text", &out.text);
            assert_no_secret(
                "a tool output's structured content",
                &out.structured.to_string(),
            );
        }
    }
}

/// Checks on a tool output that hand it back, to chain after `.await`.
trait Checked {
    /// [`assert_ok_status`], then the output.
    fn ok_status(self, status: u16) -> Self;
}

impl Checked for ToolOutput {
    #[track_caller]
    fn ok_status(self, status: u16) -> ToolOutput {
        assert_ok_status(&self, status);
        self
    }
}

/// Asserts a successful answer and returns its `data`.
#[track_caller]
fn data(out: &ToolOutput) -> &Value {
    assert!(!out.is_error, "unexpected error: {}", out.text);
    assert!(
        out.structured.get("data").is_some(),
        "no data in {}",
        out.structured
    );
    &out.structured["data"]
}

#[track_caller]
fn assert_ok_status(out: &ToolOutput, status: u16) {
    assert!(!out.is_error, "unexpected error: {}", out.text);
    assert_eq!(out.structured["status"], status, "{}", out.structured);
}

/// Asserts an error result whose text mentions every one of `needles`.
#[track_caller]
fn assert_error_mentions(out: &ToolOutput, needles: &[&str]) {
    assert!(out.is_error, "expected an error, got {}", out.text);
    for n in needles {
        assert!(
            out.text.contains(n),
            "the error does not mention {n:?}: {}",
            out.text
        );
    }
}

/// Asserts an error result that mentions `needles` and carries an `error` object.
#[track_caller]
fn assert_error(out: &ToolOutput, needles: &[&str]) {
    assert_error_mentions(out, needles);
    assert!(
        out.structured.get("error").is_some(),
        "no `error` in {}",
        out.structured
    );
}

/// Like [`assert_error`] for the answers shaped after Gitea replied 2xx (malformed JSON, a file
/// over the size limit): they say what went wrong in the text and carry the status.
#[track_caller]
fn assert_failed_answer(out: &ToolOutput, needles: &[&str]) {
    assert_error_mentions(out, needles);
    assert!(out.structured["status"].is_u64(), "{}", out.structured);
}

/// The arguments naming alice's repository `alice/demo`.
fn demo() -> Value {
    json!({"owner": "alice", "repo": "demo"})
}

/// The arguments of `gitea_issue_create` for an issue titled `title` in `alice/demo`.
fn demo_issue(title: &str) -> Value {
    json!({"owner": "alice", "repo": "demo", "body": {"title": title}})
}

// ---- 1. the whole flow ------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_flow_from_creation_to_merge() {
    let h = Harness::start(|_| {}).await;
    let bob = h.context(BOB);

    // Repository.
    let out = h
        .exec(
            "gitea_user_create_current_repo",
            json!({"body": {"name": "demo", "auto_init": true, "description": "flow"}}),
        )
        .await
        .ok_status(201);
    assert_eq!(out.structured["action"], "gitea_user_create_current_repo");
    let repo = data(&out);
    assert_eq!(repo["full_name"], "alice/demo");
    assert_eq!(repo["owner"]["login"], "alice");
    assert!(h.fake.repo_exists("alice", "demo"));

    // A file on main (content base64, a path with a directory).
    let out = h
        .exec(
            "gitea_repo_create_file",
            json!({"owner": "alice", "repo": "demo", "filepath": "docs/hello world.md",
                   "body": {"content": b64(b"hello\n"), "message": "Add hello"}}),
        )
        .await
        .ok_status(201);
    assert_eq!(data(&out)["content"]["path"], "docs/hello world.md");
    assert_eq!(
        h.fake.file("alice", "demo", "main", "docs/hello world.md"),
        Some(b"hello\n".to_vec())
    );
    let sent = h.fake.requests().pop().unwrap();
    assert_eq!(
        sent.path, "/api/v1/repos/alice/demo/contents/docs/hello%20world.md",
        "file paths keep their slashes, other characters are escaped"
    );

    // An issue, a comment, a label.
    let out = h
        .exec(
            "gitea_issue_create",
            json!({"owner": "alice", "repo": "demo", "body": {"title": "Crash on start", "body": "trace"}}),
        )
        .await
    .ok_status(201);
    let issue = data(&out)["number"].as_i64().expect("an issue number");
    assert_eq!(data(&out)["title"], "Crash on start");
    assert_eq!(
        h.fake.issue_state("alice", "demo", issue).as_deref(),
        Some("open")
    );

    let out = h
        .exec(
            "gitea_issue_create_comment",
            json!({"owner": "alice", "repo": "demo", "index": issue, "body": {"body": "Looking into it"}}),
        )
        .await
    .ok_status(201);
    assert_eq!(data(&out)["body"], "Looking into it");
    assert_eq!(h.fake.comments("alice", "demo", issue), ["Looking into it"]);

    let out = h
        .exec(
            "gitea_issue_create_label",
            json!({"owner": "alice", "repo": "demo", "body": {"name": "bug", "color": "#ee0701"}}),
        )
        .await
        .ok_status(201);
    let label = data(&out)["id"].as_i64().expect("a label id");
    let out = h
        .exec(
            "gitea_issue_add_label",
            json!({"owner": "alice", "repo": "demo", "index": issue, "body": {"labels": [label]}}),
        )
        .await
        .ok_status(200);
    assert_eq!(data(&out)[0]["name"], "bug");
    assert_eq!(h.fake.issue_labels("alice", "demo", issue), ["bug"]);

    // A branch with a file on it.
    h
        .exec(
            "gitea_repo_create_branch",
            json!({"owner": "alice", "repo": "demo", "body": {"new_branch_name": "feature", "old_branch_name": "main"}}),
        )
        .await
    .ok_status(201);
    assert!(h.fake.branch_exists("alice", "demo", "feature"));
    h
        .exec(
            "gitea_repo_create_file",
            json!({"owner": "alice", "repo": "demo", "filepath": "src/lib.rs",
                   "body": {"content": b64(b"pub fn fix() {}\n"), "branch": "feature", "message": "Fix"}}),
        )
        .await
    .ok_status(201);
    assert!(
        h.fake
            .file("alice", "demo", "feature", "src/lib.rs")
            .is_some()
    );
    assert!(h.fake.file("alice", "demo", "main", "src/lib.rs").is_none());

    // The pull request.
    let out = h
        .exec(
            "gitea_pull_create",
            json!({"owner": "alice", "repo": "demo",
                   "body": {"head": "feature", "base": "main", "title": "Fix the crash", "body": "Closes #1"}}),
        )
        .await
    .ok_status(201);
    let pull = data(&out)["number"].as_i64().expect("a pull number");
    assert_eq!(data(&out)["state"], "open");
    assert_eq!(data(&out)["merged"], false);
    assert_eq!(h.fake.pull_merged("alice", "demo", pull), Some(false));

    // Not merged yet: the merge check answers 404.
    let out = h
        .exec(
            "gitea_pull_is_merged",
            json!({"owner": "alice", "repo": "demo", "index": pull}),
        )
        .await;
    assert!(
        out.is_error && out.structured["status"] == 404,
        "{}",
        out.text
    );

    // Self-approval is refused by Gitea (422) and reported with its message.
    let review = json!({"owner": "alice", "repo": "demo", "index": pull,
                        "body": {"event": "APPROVED", "body": "LGTM"}});
    let out = h.exec("gitea_pull_create_review", review.clone()).await;
    assert_error(&out, &["422", "approve your own pull is not allowed"]);
    // Bob approves.
    let out = h
        .execute_as(
            &bob,
            json!({"action": "gitea_pull_create_review", "arguments": review}),
        )
        .await
        .ok_status(200);
    assert_eq!(data(&out)["state"], "APPROVED");
    assert_eq!(data(&out)["user"]["login"], "bob");
    assert_eq!(h.fake.reviews("alice", "demo", pull), ["APPROVED"]);

    // Merge.
    let out = h
        .exec(
            "gitea_pull_merge",
            json!({"owner": "alice", "repo": "demo", "index": pull, "body": {"do": "merge"}}),
        )
        .await
        .ok_status(200);
    assert!(out.text.starts_with("done"), "{}", out.text);
    assert_eq!(h.fake.pull_merged("alice", "demo", pull), Some(true));

    // Merged, seen through execute.
    h.exec(
        "gitea_pull_is_merged",
        json!({"owner": "alice", "repo": "demo", "index": pull}),
    )
    .await
    .ok_status(204);
    let out = h
        .exec(
            "gitea_pull_get",
            json!({"owner": "alice", "repo": "demo", "index": pull}),
        )
        .await
        .ok_status(200);
    assert_eq!(data(&out)["merged"], true);
    assert_eq!(data(&out)["merged_by"]["login"], "alice");
    assert_eq!(
        h.fake.file("alice", "demo", "main", "src/lib.rs"),
        Some(b"pub fn fix() {}\n".to_vec())
    );
    // Every request carried alice's token (bob's review carried bob's).
    for r in h.fake.requests() {
        let expected = if r.token_user.as_deref() == Some("bob") {
            BOB
        } else {
            ALICE
        };
        assert_eq!(
            r.header("authorization"),
            Some(format!("token {expected}").as_str())
        );
    }
}

// ---- 2. argument validation -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_are_refused_before_any_request_with_the_usage_line() {
    let h = Harness::start(|_| {}).await;
    h.fake.seed_repo("alice", "demo");
    let issues = h.fake.seed_issues("alice", "demo", 12);
    h.fake.clear_requests();
    let get_usage = h.usage("gitea_issue_get");
    let create_usage = h.usage("gitea_issue_create");

    let check = |out: &ToolOutput, usage: &str, needles: &[&str]| {
        assert_error(out, needles);
        assert!(
            out.text.ends_with(usage),
            "the error does not end with the usage line {usage:?}: {}",
            out.text
        );
        assert_eq!(out.structured["usage"], usage);
        assert!(
            out.structured["problems"]
                .as_array()
                .is_some_and(|p| !p.is_empty()),
            "{}",
            out.structured
        );
    };

    // Missing required arguments: the whole required set is listed.
    let out = h.exec("gitea_issue_get", json!({"owner": "alice"})).await;
    check(
        &out,
        &get_usage,
        &[
            "missing required argument",
            "repo",
            "required: owner, repo, index",
        ],
    );
    assert_eq!(out.structured["action"], "gitea_issue_get");
    let out = h.exec("gitea_issue_get", Value::Null).await;
    check(&out, &get_usage, &["required: owner, repo, index"]);

    // Unknown argument with a suggestion.
    let out = h
        .exec(
            "gitea_issue_get",
            json!({"owner": "alice", "repo": "demo", "indx": 1}),
        )
        .await;
    check(
        &out,
        &get_usage,
        &["unknown argument `indx`", "did you mean `index`?"],
    );
    // … also inside the body.
    let out = h
        .exec(
            "gitea_issue_create",
            json!({"owner": "alice", "repo": "demo", "body": {"titel": "x", "title": "y"}}),
        )
        .await;
    check(
        &out,
        &create_usage,
        &[
            "`body`",
            "unknown argument `titel`",
            "did you mean `title`?",
        ],
    );

    // Wrong types: the argument's path, what was expected, what was given.
    let out = h
        .exec(
            "gitea_issue_get",
            json!({"owner": "alice", "repo": "demo", "index": "twelve"}),
        )
        .await;
    check(&out, &get_usage, &["`index`", "integer", "\"twelve\""]);
    let out = h
        .exec(
            "gitea_issue_create",
            json!({"owner": "alice", "repo": "demo", "body": {"title": 5}}),
        )
        .await;
    check(&out, &create_usage, &["`body/title`", "string", "given 5"]);
    let out = h.exec("gitea_issue_get", json!(["alice", "demo", 1])).await;
    check(&out, &get_usage, &["must be an object", "an array"]);

    // Names that would leave their path segment.
    for (owner, repo) in [
        ("al/ice", "demo"),
        ("..", "demo"),
        ("alice", "../admin"),
        ("alice", "de/mo"),
        (".", "demo"),
        ("alice", "demo\u{0}"),
    ] {
        let out = h
            .exec(
                "gitea_issue_get",
                json!({"owner": owner, "repo": repo, "index": 1}),
            )
            .await;
        check(&out, &get_usage, &["does not match"]);
    }
    assert!(
        h.fake.requests().is_empty(),
        "a refused call reached Gitea: {:?}",
        h.fake.requests()
    );

    // The unambiguous fixes: "12" for an integer, `repo: "owner/name"` without owner.
    let out = h
        .exec(
            "gitea_issue_get",
            json!({"owner": "alice", "repo": "demo", "index": "12"}),
        )
        .await
        .ok_status(200);
    assert_eq!(data(&out)["number"], issues[11]);
    assert_eq!(
        h.fake.requests().pop().unwrap().path,
        "/api/v1/repos/alice/demo/issues/12"
    );
    let out = h
        .exec("gitea_issue_get", json!({"repo": "alice/demo", "index": 3}))
        .await
        .ok_status(200);
    assert_eq!(data(&out)["title"], "Issue 3");
    assert_eq!(
        h.fake.requests().pop().unwrap().path,
        "/api/v1/repos/alice/demo/issues/3"
    );
    // "owner/name" is not split when the owner is given: then it is an error.
    h.fake.clear_requests();
    let out = h
        .exec(
            "gitea_issue_get",
            json!({"owner": "alice", "repo": "alice/demo", "index": 3}),
        )
        .await;
    check(&out, &get_usage, &["does not match"]);
    assert!(h.fake.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_level_mistakes_are_errors_without_requests() {
    let h = Harness::start(|_| {}).await;
    for input in [
        json!({}),
        json!({"action": ""}),
        json!({"action": 5}),
        json!({"action": "gitea_repo_get", "argumnets": {}}),
        json!({"action": "gitea_repo_get", "dry_run": "maybe"}),
        json!({"action": "gitea_repo_get", "confirm": 12}),
        json!("gitea_repo_get"),
    ] {
        let out = h.execute_input(input.clone()).await;
        assert!(out.is_error, "{input}: {}", out.text);
        assert!(out.structured.get("error").is_some());
    }
    let out = h
        .execute_input(json!({"action": "gitea_repo_get", "argumnets": {}}))
        .await;
    assert!(
        out.text.contains("did you mean `arguments`?"),
        "{}",
        out.text
    );
    assert!(h.fake.requests().is_empty());
}

// ---- 3. unknown and withheld actions ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_actions_get_suggestions_and_operation_ids_work() {
    let h = Harness::with_demo(|_| {}).await;
    let out = h.exec("gitea_repo_gett", demo()).await;
    assert_error(&out, &["unknown action", "gitea_repo_gett", "did you mean"]);
    assert_eq!(out.structured["code"], "unknown_action");
    let suggestions: Vec<&str> = out.structured["suggestions"]
        .as_array()
        .expect("suggestions")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(suggestions.contains(&"gitea_repo_get"), "{suggestions:?}");
    assert!(h.fake.requests().is_empty());

    // The operationId names the same action.
    let out = h.exec("repoGet", demo()).await.ok_status(200);
    assert_eq!(out.structured["action"], "gitea_repo_get");
}

/// Asserts that `out` is a refusal of `action` for the policy reason `code`, naming `needle`.
#[track_caller]
fn assert_withheld(out: &ToolOutput, action: &str, code: &str, needle: &str) {
    assert_error(out, &[action, "withheld", needle]);
    assert_eq!(out.structured["action"], action, "{}", out.structured);
    assert_eq!(
        out.structured["withheld"]["code"], code,
        "{}",
        out.structured
    );
    assert!(
        out.structured["withheld"]["who_can_change"]
            .as_str()
            .is_some_and(|w| !w.is_empty()),
        "{}",
        out.structured
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_withholds_writes_on_execute_and_raw() {
    let h = Harness::with_demo(|a| a.read_only = true).await;
    let out = h.exec("gitea_issue_create", demo_issue("x")).await;
    assert_withheld(&out, "gitea_issue_create", "read_only", "READ_ONLY");
    // Even a dry run or a confirmed destructive call: the policy comes first.
    let out = h
        .execute_input(json!({"action": "gitea_repo_delete", "arguments": {"owner": "alice", "repo": "demo"}, "dry_run": true}))
        .await;
    assert_withheld(&out, "gitea_repo_delete", "read_only", "READ_ONLY");
    let out = h
        .raw(json!({"method": "POST", "path": "/repos/alice/demo/issues", "body": {"title": "x"}}))
        .await;
    assert_withheld(&out, "gitea_issue_create", "read_only", "READ_ONLY");
    let out = h
        .raw(json!({"method": "DELETE", "path": "/repos/alice/demo"}))
        .await;
    assert_withheld(&out, "gitea_repo_delete", "read_only", "READ_ONLY");
    assert!(h.fake.requests().is_empty(), "{:?}", h.fake.requests());
    // Reads still work, on both tools.
    h.exec("gitea_repo_get", demo()).await.ok_status(200);
    h.raw(json!({"method": "GET", "path": "/repos/alice/demo"}))
        .await
        .ok_status(200);
    assert_eq!(h.fake.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_tools_by_name_operation_id_and_domain() {
    for (entry, action, raw_method, raw_path) in [
        (
            "gitea_repo_delete",
            "gitea_repo_delete",
            "DELETE",
            "/repos/alice/demo",
        ),
        (
            "repoDelete",
            "gitea_repo_delete",
            "DELETE",
            "/repos/alice/demo",
        ),
        (
            "issue",
            "gitea_issue_create",
            "POST",
            "/repos/alice/demo/issues",
        ),
    ] {
        let h = Harness::with_demo(|a| {
            a.disabled_tools = Some(format!("gitea_nothing_x, {entry}"));
            a.disabled_tools_allow_unknown = true;
        })
        .await;
        let arguments = if action == "gitea_issue_create" {
            demo_issue("x")
        } else {
            demo()
        };
        let out = h.exec(action, arguments.clone()).await;
        assert_withheld(&out, action, "disabled", "DISABLED_TOOLS");
        assert!(out.text.contains(entry), "{entry}: {}", out.text);
        // By operationId too.
        let op = h
            .state
            .catalog
            .get(action)
            .unwrap()
            .operation_id
            .as_str()
            .to_string();
        let out = h.exec(&op, arguments).await;
        assert_withheld(&out, action, "disabled", "DISABLED_TOOLS");
        // Raw.
        let out = h
            .raw(json!({"method": raw_method, "path": raw_path, "body": {"title": "x"}}))
            .await;
        assert_withheld(&out, action, "disabled", "DISABLED_TOOLS");
        // Prefixed with /api/v1 and a trailing slash: the same action, still withheld.
        let out = h
            .raw(json!({"method": raw_method, "path": format!("/api/v1{raw_path}/")}))
            .await;
        assert_withheld(&out, action, "disabled", "DISABLED_TOOLS");
        assert!(
            h.fake.requests().is_empty(),
            "{entry}: {:?}",
            h.fake.requests()
        );
        assert!(h.fake.repo_exists("alice", "demo"));
        // Other actions are untouched.
        h.exec("gitea_repo_get", demo()).await.ok_status(200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolsets_withhold_other_domains_on_execute_and_raw() {
    let h = Harness::with_demo(|a| a.toolsets = Some("repo,user".into())).await;
    let out = h.exec("gitea_issue_create", demo_issue("x")).await;
    assert_withheld(&out, "gitea_issue_create", "toolsets", "TOOLSETS");
    assert!(out.text.contains("issue toolset"), "{}", out.text);
    let out = h
        .raw(json!({"method": "GET", "path": "/repos/alice/demo/issues"}))
        .await;
    assert_withheld(&out, "gitea_issue_list", "toolsets", "TOOLSETS");
    assert!(h.fake.requests().is_empty());
    h.exec("gitea_repo_get", demo()).await.ok_status(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_scopes_withhold_what_the_token_cannot_do() {
    let mut h = Harness::with_demo(|a| a.gitea_token = Some(READER.into())).await;
    let scopes = h
        .ctx
        .token_scopes()
        .await
        .expect("the fake serves GET /token");
    assert_eq!(scopes, ["read:repository", "read:issue", "read:user"]);
    assert_eq!(h.fake.count("GET", "/token"), 1);
    h.state.restrict_to_token_scopes(&scopes);
    h.fake.clear_requests();

    let out = h.exec("gitea_issue_create", demo_issue("x")).await;
    assert_withheld(&out, "gitea_issue_create", "token_scope", "write:issue");
    assert_eq!(
        out.structured["withheld"]["missing_scopes"],
        json!(["write:issue"])
    );
    let out = h
        .exec(
            "gitea_user_create_current_repo",
            json!({"body": {"name": "x"}}),
        )
        .await;
    assert_withheld(
        &out,
        "gitea_user_create_current_repo",
        "token_scope",
        "write:",
    );
    let missing = out.structured["withheld"]["missing_scopes"].to_string();
    assert!(
        missing.contains("write:user") && missing.contains("write:repository"),
        "{missing}"
    );
    let out = h
        .raw(json!({"method": "POST", "path": "/repos/alice/demo/issues", "body": {"title": "x"}}))
        .await;
    assert_withheld(&out, "gitea_issue_create", "token_scope", "write:issue");
    // Admin routes need read:admin, which the token lacks.
    let out = h.exec("gitea_admin_search_users", json!({})).await;
    assert_withheld(
        &out,
        "gitea_admin_search_users",
        "token_scope",
        "read:admin",
    );
    assert!(h.fake.requests().is_empty(), "{:?}", h.fake.requests());

    // What the token can read still works.
    h.exec("gitea_repo_get", demo()).await.ok_status(200);
    h.exec("gitea_issue_list", demo()).await.ok_status(200);
}

// ---- 4. Gitea's errors ------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_errors_are_error_results_with_status_message_and_hint() {
    let h = Harness::start(|_| {}).await;
    h.fake.seed_repo("alice", "demo");
    h.fake.seed_branch("alice", "demo", "feature", None);
    h.fake
        .seed_file("alice", "demo", "feature", "x.txt", b"x\n");

    // 404: the hint points at owner/repo.
    let out = h
        .exec("gitea_repo_get", json!({"owner": "alice", "repo": "nope"}))
        .await;
    assert_error(&out, &["404", "The target couldn't be found."]);
    assert_eq!(out.structured["status"], 404);
    assert_eq!(out.structured["action"], "gitea_repo_get");
    let hint = out.structured["error"]["hint"].as_str().unwrap();
    assert!(hint.contains("owner") && hint.contains("repo"), "{hint}");
    assert_eq!(
        out.structured["error"]["message"],
        "The target couldn't be found."
    );

    // 403 for a missing scope (the scopes were not read, so Gitea decides): the hint names it.
    let reader = h.context(READER);
    let out = h
        .execute_as(
            &reader,
            json!({"action": "gitea_issue_create", "arguments": {"owner": "alice", "repo": "demo", "body": {"title": "x"}}}),
        )
        .await;
    assert_error(
        &out,
        &[
            "403",
            "token does not have at least one of required scope(s): [write:issue]",
        ],
    );
    assert_eq!(out.structured["status"], 403);
    assert!(
        out.structured["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("write:issue"),
        "{}",
        out.structured
    );
    assert_eq!(out.structured["required_scopes"], json!(["write:issue"]));
    assert_eq!(h.fake.count("POST", "/repos/alice/demo/issues"), 1);

    // 409: a second pull request for the same branches.
    let pull = json!({"owner": "alice", "repo": "demo", "body": {"head": "feature", "base": "main", "title": "One"}});
    assert_ok_status(&h.exec("gitea_pull_create", pull.clone()).await, 201);
    let out = h.exec("gitea_pull_create", pull).await;
    assert_error(
        &out,
        &["409", "pull request already exists for these targets"],
    );
    assert_eq!(out.structured["status"], 409);
    assert!(
        out.structured["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("conflict"),
        "{}",
        out.structured
    );

    // 422: Gitea's validation message is passed on.
    let out = h
        .exec(
            "gitea_issue_create",
            json!({"owner": "alice", "repo": "demo", "body": {"title": ""}}),
        )
        .await;
    assert_error(&out, &["422", "[Title]: Required"]);
    assert_eq!(out.structured["status"], 422);
    assert_eq!(out.structured["error"]["message"], "[Title]: Required");
    // No body at all (the spec does not require one): Gitea answers the same.
    let out = h.exec("gitea_issue_create", demo()).await;
    assert_error(&out, &["422", "[Title]: Required"]);

    // 401: an unknown token.
    let bogus = h.context(BOGUS);
    let out = h
        .execute_as(
            &bogus,
            json!({"action": "gitea_repo_get", "arguments": {"owner": "alice", "repo": "demo"}}),
        )
        .await;
    assert_error(&out, &["401", "invalid username, password or token"]);
    assert!(
        out.structured["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("token"),
        "{}",
        out.structured
    );
}

// ---- 5. retries -------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_retried_and_writes_are_sent_once() {
    let h = Harness::start(|_| {}).await;
    h.fake.seed_repo("alice", "demo");
    let get = || h.exec("gitea_repo_get", demo());
    let create = || {
        h.exec(
            "gitea_issue_create",
            json!({"owner": "alice", "repo": "demo", "body": {"title": "once"}}),
        )
    };

    // 502 then 503, then the answer: three attempts, success.
    h.fake.clear_requests();
    h.fake
        .inject(Fault::Status(502).on("GET", "/repos/alice/demo"));
    h.fake
        .inject(Fault::Status(503).on("GET", "/repos/alice/demo"));
    let out = get().await.ok_status(200);
    assert_eq!(data(&out)["full_name"], "alice/demo");
    assert_eq!(h.fake.count("GET", "/repos/alice/demo"), 3);
    assert_eq!(h.fake.pending_faults(), 0);

    // Retries are bounded (GITEA_RETRIES=2 by default): the last answer is reported.
    h.fake.clear_requests();
    h.fake
        .inject(Fault::Status(503).times(3).on("GET", "/repos/alice/demo"));
    let out = get().await;
    assert_error(&out, &["503"]);
    assert_eq!(out.structured["status"], 503);
    assert_eq!(h.fake.count("GET", "/repos/alice/demo"), 3);

    // 503 on a POST: sent exactly once, an error, nothing created.
    h.fake.clear_requests();
    h.fake
        .inject(Fault::Status(503).on("POST", "/repos/alice/demo/issues"));
    let out = create().await;
    assert_error(&out, &["503"]);
    assert_eq!(h.fake.count("POST", "/repos/alice/demo/issues"), 1);
    assert_eq!(h.fake.issue_state("alice", "demo", 1), None);

    // 429 with Retry-After on a GET: retried once.
    h.fake.clear_requests();
    h.fake.inject(
        Fault::TooManyRequests {
            retry_after_secs: 1,
        }
        .on("GET", "/repos/alice/demo"),
    );
    get().await.ok_status(200);
    assert_eq!(h.fake.count("GET", "/repos/alice/demo"), 2);

    // A reset connection on a POST: one request, and the model is told it may have applied.
    h.fake.clear_requests();
    h.fake
        .inject(Fault::ConnectionReset.on("POST", "/repos/alice/demo/issues"));
    let out = create().await;
    assert_error(
        &out,
        &[
            "the connection to Gitea failed",
            "may have been applied",
            "check with gitea_issue_list before repeating it",
        ],
    );
    assert_eq!(out.structured["code"], "outcome_unknown");
    assert_eq!(out.facts.kind, aegis_gitea_mcp::audit::OutcomeKind::Unknown);
    assert_eq!(h.fake.count("POST", "/repos/alice/demo/issues"), 1);
    // … on a GET: retried.
    h.fake.clear_requests();
    h.fake
        .inject(Fault::ConnectionReset.on("GET", "/repos/alice/demo"));
    get().await.ok_status(200);
    assert_eq!(h.fake.count("GET", "/repos/alice/demo"), 2);

    // Malformed JSON: an error that says so (not retried: the status was 200).
    h.fake.clear_requests();
    h.fake
        .inject(Fault::MalformedJson.on("GET", "/repos/alice/demo"));
    let out = get().await;
    assert_failed_answer(&out, &["malformed JSON", "check before repeating"]);
    assert_eq!(out.structured["status"], 200);
    assert_eq!(h.fake.count("GET", "/repos/alice/demo"), 1);

    // And with the faults gone the write works, once.
    h.fake.clear_requests();
    create().await.ok_status(201);
    assert_eq!(h.fake.count("POST", "/repos/alice/demo/issues"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_retries_when_turned_off() {
    let h = Harness::with_demo(|a| a.gitea_retries = 0).await;
    h.fake
        .inject(Fault::Status(502).on("GET", "/repos/alice/demo"));
    let out = h.exec("gitea_repo_get", demo()).await;
    assert_error(&out, &["502"]);
    assert_eq!(h.fake.count("GET", "/repos/alice/demo"), 1);
}

// ---- 6. paging --------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_reports_totals_and_the_next_page_arguments() {
    // Room for 50 whole issues, so the page is not cut.
    let h = Harness::start(|a| a.max_response_bytes = 1000000).await;
    h.fake.seed_repo("alice", "demo");
    h.fake.seed_issues("alice", "demo", 75);

    let out = h
        .exec(
            "gitea_issue_list",
            json!({"owner": "alice", "repo": "demo", "limit": 50}),
        )
        .await
        .ok_status(200);
    let first = data(&out).as_array().expect("a list").clone();
    assert_eq!(first.len(), 50);
    assert!(out.structured.get("truncated").is_none(), "{}", out.text);
    let paging = &out.structured["paging"];
    assert_eq!(paging["total_count"], 75);
    assert_eq!(paging["has_next"], true);
    assert_eq!(paging["page"], 1);
    assert_eq!(paging["limit"], 50);
    assert_eq!(
        paging["next_arguments"],
        json!({"owner": "alice", "repo": "demo", "limit": 50, "page": 2})
    );
    assert!(out.text.contains("[paging: "), "{}", out.text);

    // The next page, with exactly the arguments given.
    let next = paging["next_arguments"].clone();
    let out = h.exec("gitea_issue_list", next).await.ok_status(200);
    let second = data(&out).as_array().expect("a list").clone();
    assert_eq!(second.len(), 25);
    let paging = &out.structured["paging"];
    assert_eq!(paging["total_count"], 75);
    assert_eq!(paging["has_next"], false);
    assert_eq!(paging["page"], 2);
    assert!(paging.get("next_arguments").is_none(), "{paging}");
    let mut numbers: Vec<i64> = first
        .iter()
        .chain(&second)
        .map(|i| i["number"].as_i64().unwrap())
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=75).collect::<Vec<_>>(), "every issue once");
    let sent = h.fake.requests().pop().unwrap();
    assert_eq!(sent.query_param("page").as_deref(), Some("2"));
    assert_eq!(sent.query_param("limit").as_deref(), Some("50"));
}

// ---- 7. bounds --------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_lists_are_cut_at_whole_items_and_text_within_the_bound() {
    let h = Harness::start(|a| a.max_response_bytes = 2000).await;
    h.fake.seed_repo("alice", "demo");
    for i in 0..40 {
        h.fake
            .seed_label("alice", "demo", &format!("label-{i:02}"), "#00aabb");
    }
    let out = h
        .exec(
            "gitea_issue_list_labels",
            json!({"owner": "alice", "repo": "demo", "limit": 50}),
        )
        .await
        .ok_status(200);
    let items = data(&out).as_array().expect("a list of whole items");
    let cut = &out.structured["truncated"];
    let shown = cut["shown_items"].as_u64().expect("shown_items") as usize;
    assert!((1..40).contains(&shown), "{cut}");
    assert_eq!(items.len(), shown);
    assert_eq!(cut["total_items"], 40);
    for (i, item) in items.iter().enumerate() {
        // Whole items, in order.
        assert_eq!(item["name"], format!("label-{i:02}"));
        assert_eq!(item["color"], "00aabb");
    }
    assert!(serde_json::to_string(items).unwrap().len() <= 2000);
    // There is more than was shown (although Gitea has no next page), and the next call is
    // told to ask for fewer items.
    assert_eq!(
        out.structured["paging"]["has_next"], true,
        "{}",
        out.structured
    );
    assert_eq!(out.structured["paging"]["total_count"], 40);
    assert_eq!(
        out.structured["paging"]["next_arguments"]["limit"],
        shown as u64
    );
    assert!(
        out.text.contains(&format!("showing {shown} of 40 items")),
        "{}",
        out.text
    );

    // A diff is text, cut within the bound.
    h.fake.seed_branch("alice", "demo", "big", None);
    let long: String = (0..400).map(|i| format!("line {i}\n")).collect();
    h.fake
        .seed_file("alice", "demo", "big", "big.txt", long.as_bytes());
    let pull = h.fake.seed_pull("alice", "demo", "big", "main", "Big");
    let out = h
        .exec(
            "gitea_pull_download_diff_or_patch",
            json!({"owner": "alice", "repo": "demo", "index": pull, "diffType": "diff"}),
        )
        .await
        .ok_status(200);
    let text = out.structured["text"].as_str().expect("text");
    assert!(text.starts_with("diff --git a/big.txt b/big.txt"), "{text}");
    assert!(text.len() <= 2000);
    assert!(out.structured["truncated"]["shown_bytes"].as_u64().unwrap() <= 2000);
    assert!(out.text.contains("[cut at"), "{}", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diffs_are_text_and_files_are_bounded_binary() {
    let h = Harness::start(|a| a.max_file_size_bytes = 64).await;
    h.fake.seed_repo("alice", "demo");
    h.fake.seed_branch("alice", "demo", "feature", None);
    h.fake
        .seed_file("alice", "demo", "feature", "src/lib.rs", b"pub fn a() {}\n");
    let pull = h
        .fake
        .seed_pull("alice", "demo", "feature", "main", "Add a");

    for diff_type in ["diff", "patch"] {
        let out = h
            .exec(
                "gitea_pull_download_diff_or_patch",
                json!({"owner": "alice", "repo": "demo", "index": pull, "diffType": diff_type}),
            )
            .await
            .ok_status(200);
        let text = out.structured["text"].as_str().expect("a text answer");
        assert!(
            text.contains("diff --git a/src/lib.rs b/src/lib.rs"),
            "{text}"
        );
        assert!(text.contains("+pub fn a() {}"), "{text}");
        assert_eq!(out.text, text, "text is returned as is");
        assert!(out.structured.get("content_base64").is_none());
        assert_eq!(
            h.fake.requests().pop().unwrap().path,
            format!("/api/v1/repos/alice/demo/pulls/{pull}.{diff_type}")
        );
    }

    // A small binary file: base64.
    let small: Vec<u8> = vec![0, 159, 146, 150, 255, 1, 2, 3];
    h.fake
        .seed_file("alice", "demo", "main", "small.bin", &small);
    let out = h
        .exec(
            "gitea_repo_get_raw_file",
            json!({"owner": "alice", "repo": "demo", "filepath": "small.bin"}),
        )
        .await
        .ok_status(200);
    assert_eq!(out.structured["content_base64"], b64(&small));
    assert_eq!(out.structured["size"], small.len());

    // Over MAX_FILE_SIZE_BYTES: an error naming the size and the limit.
    let big: Vec<u8> = (0..200u32).map(|i| (i * 7 % 256) as u8).collect();
    h.fake.seed_file("alice", "demo", "main", "big.bin", &big);
    let out = h
        .exec(
            "gitea_repo_get_raw_file",
            json!({"owner": "alice", "repo": "demo", "filepath": "big.bin"}),
        )
        .await;
    assert_failed_answer(&out, &["200 bytes", "64-byte limit", "MAX_FILE_SIZE_BYTES"]);
    assert_eq!(out.structured["status"], 200);
    assert!(out.structured.get("content_base64").is_none());

    // A file path that would climb out is refused before any request.
    h.fake.clear_requests();
    for bad in ["../secret", "a/../../b", "a//b", "./x"] {
        let out = h
            .exec(
                "gitea_repo_get_raw_file",
                json!({"owner": "alice", "repo": "demo", "filepath": bad}),
            )
            .await;
        assert_error(&out, &["filepath"]);
    }
    assert!(h.fake.requests().is_empty());
}

// ---- 8. dry run and safe mode -----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_runs_show_the_request_without_sending_it_and_redact_secrets() {
    let h = Harness::with_demo(|_| {}).await;

    let out = h
        .execute_input(json!({
            "action": "gitea_issue_create",
            "arguments": {"owner": "alice", "repo": "demo", "body": {"title": "Preview me"}},
            "dry_run": true,
        }))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.structured["dry_run"], true);
    let req = &out.structured["request"];
    assert_eq!(req["method"], "POST");
    assert_eq!(
        req["url"],
        format!("{}/api/v1/repos/alice/demo/issues", h.fake.url())
    );
    assert_eq!(req["body"], json!({"title": "Preview me"}));
    assert_eq!(req["required_scopes"], json!(["write:issue"]));
    assert!(out.text.starts_with("dry run"), "{}", out.text);

    // A query and a sudo header are shown as well.
    let out = h
        .execute_input(json!({
            "action": "gitea_issue_list",
            "arguments": {"owner": "alice", "repo": "demo", "state": "all", "limit": 5, "sudo": "bob"},
            "dry_run": true,
        }))
        .await;
    let req = &out.structured["request"];
    assert_eq!(req["method"], "GET");
    assert_eq!(
        req["url"],
        format!(
            "{}/api/v1/repos/alice/demo/issues?state=all&limit=5",
            h.fake.url()
        )
    );
    assert_eq!(req["headers"]["Sudo"], "bob");

    // A password in a body is redacted.
    let out = h
        .execute_input(json!({
            "action": "gitea_admin_create_user",
            "arguments": {"body": {"username": "carol", "email": "carol@example.com", "password": PASSWORD}},
            "dry_run": true,
        }))
        .await;
    assert!(!out.is_error, "{}", out.text);
    let body = &out.structured["request"]["body"];
    assert_eq!(body["password"], "***");
    assert_eq!(body["username"], "carol");
    assert_eq!(
        out.structured["request"]["url"],
        format!("{}/api/v1/admin/users", h.fake.url())
    );

    // So is an Actions secret's `data`, in a dry run and in a confirmation preview.
    let secret = json!({"owner": "alice", "repo": "demo", "secretname": "DEPLOY_KEY",
                        "body": {"data": SECRET_DATA, "description": "deploy"}});
    let out = h
        .execute_input(json!({"action": "gitea_actions_update_repo_secret", "arguments": secret, "dry_run": true}))
        .await;
    assert_eq!(out.structured["request"]["body"]["data"], "***");
    assert_eq!(out.structured["request"]["body"]["description"], "deploy");
    assert_eq!(out.structured["request"]["method"], "PUT");
    let out = h.exec("gitea_actions_update_repo_secret", secret).await;
    assert_eq!(
        out.structured["confirmation_required"], true,
        "{}",
        out.text
    );
    assert_eq!(out.structured["request"]["body"]["data"], "***");

    // A destructive call can be previewed without a confirmation.
    let out = h
        .execute_input(json!({"action": "gitea_repo_delete", "arguments": {"owner": "alice", "repo": "demo"}, "dry_run": true}))
        .await;
    assert_eq!(out.structured["dry_run"], true);
    assert_eq!(out.structured["request"]["method"], "DELETE");
    assert!(out.structured.get("confirm").is_none());
    // Raw requests have dry runs as well.
    let out = h
        .raw(json!({"method": "POST", "path": "/repos/alice/demo/issues", "body": {"title": "raw"}, "dry_run": true}))
        .await;
    assert_eq!(out.structured["dry_run"], true);
    assert_eq!(out.structured["request"]["body"], json!({"title": "raw"}));

    assert!(
        h.fake.requests().is_empty(),
        "a dry run reached Gitea: {:?}",
        h.fake.requests()
    );
    assert!(h.fake.repo_exists("alice", "demo"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_mode_previews_writes_but_runs_reads() {
    let h = Harness::with_demo(|a| a.safe_mode = true).await;
    let out = h.exec("gitea_issue_create", demo_issue("x")).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.structured["dry_run"], true);
    assert!(
        out.structured["reason"]
            .as_str()
            .unwrap()
            .contains("SAFE_MODE"),
        "{}",
        out.structured
    );
    let out = h
        .raw(json!({"method": "POST", "path": "/repos/alice/demo/issues", "body": {"title": "x"}}))
        .await;
    assert_eq!(out.structured["dry_run"], true);
    let out = h.exec("gitea_repo_delete", demo()).await;
    assert_eq!(out.structured["dry_run"], true);
    assert!(h.fake.requests().is_empty(), "{:?}", h.fake.requests());
    assert_eq!(h.fake.issue_state("alice", "demo", 1), None);

    h.exec("gitea_repo_get", demo()).await.ok_status(200);
    h.raw(json!({"method": "GET", "path": "/repos/alice/demo"}))
        .await
        .ok_status(200);
    assert_eq!(h.fake.count("GET", "/repos/alice/demo"), 2);
}

// ---- 9. confirmation of destructive calls -----------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_calls_need_a_one_use_token_bound_to_the_arguments() {
    let h = Harness::start(|_| {}).await;
    h.fake.seed_repo("alice", "demo");
    h.fake.seed_repo("alice", "two");
    h.fake.seed_repo("alice", "three");
    h.fake.seed_repo("alice", "four");
    h.fake.clear_requests();
    let delete = |repo: &str, confirm: Option<&str>| {
        let mut input =
            json!({"action": "gitea_repo_delete", "arguments": {"owner": "alice", "repo": repo}});
        if let Some(c) = confirm {
            input["confirm"] = json!(c);
        }
        h.execute_input(input)
    };

    // No token: a preview and a token, nothing sent.
    let out = delete("demo", None).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.structured["confirmation_required"], true);
    assert_eq!(out.structured["request"]["method"], "DELETE");
    assert_eq!(
        out.structured["request"]["url"],
        format!("{}/api/v1/repos/alice/demo", h.fake.url())
    );
    assert_eq!(out.structured["expires_in_secs"], 300);
    let token = out.structured["confirm"]
        .as_str()
        .expect("a token")
        .to_string();
    assert!(out.text.contains(&token), "{}", out.text);
    assert!(h.fake.requests().is_empty());
    assert!(h.fake.repo_exists("alice", "demo"));

    // The same call with the token: deleted.
    delete("demo", Some(&token)).await.ok_status(204);
    assert!(!h.fake.repo_exists("alice", "demo"));
    assert_eq!(h.fake.count("DELETE", "/repos/alice/demo"), 1);

    // The token again: refused before any request.
    let out = delete("demo", Some(&token)).await;
    assert_error(&out, &["already used"]);
    assert_eq!(out.structured["confirmation_required"], true);
    assert_eq!(h.fake.count("DELETE", "/repos/alice/demo"), 1);

    // A token issued for other arguments: refused, with a fresh token for these.
    let out = delete("two", None).await;
    let for_two = out.structured["confirm"].as_str().unwrap().to_string();
    let out = delete("three", Some(&for_two)).await;
    assert_error(&out, &["issued for a different call"]);
    let fresh = out.structured["confirm"]
        .as_str()
        .expect("a fresh token")
        .to_string();
    assert_ne!(fresh, for_two);
    assert!(h.fake.repo_exists("alice", "two") && h.fake.repo_exists("alice", "three"));
    assert_eq!(h.fake.requests().len(), 1, "only the first delete was sent");
    // A wrong attempt stores nothing (its tag did not verify): the token still confirms the
    // call it was issued for, once.
    delete("two", Some(&for_two)).await.ok_status(204);
    assert!(!h.fake.repo_exists("alice", "two"));
    let out = delete("two", Some(&for_two)).await;
    assert_error(&out, &["already used"]);
    // The fresh token works for the arguments it was issued for.
    delete("three", Some(&fresh)).await.ok_status(204);
    assert!(!h.fake.repo_exists("alice", "three"));
    // A forged token is refused.
    let out = delete(
        "four",
        Some("c9999999999.abcdef0123456789.00000000000000000000000000000000"),
    )
    .await;
    assert_error(&out, &["issued for a different call"]);
    assert!(h.fake.repo_exists("alice", "four"));

    // Raw DELETE of the same route is destructive too.
    h.fake.clear_requests();
    let out = h
        .raw(json!({"method": "DELETE", "path": "/repos/alice/four"}))
        .await;
    assert_eq!(
        out.structured["confirmation_required"], true,
        "{}",
        out.text
    );
    assert_eq!(out.structured["action"], "gitea_repo_delete");
    let token = out.structured["confirm"].as_str().unwrap().to_string();
    assert!(h.fake.requests().is_empty());
    h.raw(json!({"method": "DELETE", "path": "/repos/alice/four", "confirm": token}))
        .await
        .ok_status(204);
    assert!(!h.fake.repo_exists("alice", "four"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_confirm_destructive_deletes_directly() {
    let h = Harness::start(|a| a.confirm_destructive = false).await;
    h.fake.seed_repo("alice", "demo");
    h.exec("gitea_repo_delete", demo()).await.ok_status(204);
    assert!(!h.fake.repo_exists("alice", "demo"));
    assert_eq!(h.fake.count("DELETE", "/repos/alice/demo"), 1);
}

// ---- 10. raw requests -------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_requests_match_the_catalog_and_refuse_tricks() {
    let h = Harness::start(|_| {}).await;
    h.fake.seed_repo("alice", "demo");
    h.fake.seed_issues("alice", "demo", 3);

    // A GET answers like the matching action.
    let raw = h
        .raw(json!({"method": "GET", "path": "/repos/alice/demo"}))
        .await;
    assert_ok_status(&raw, 200);
    assert_eq!(raw.structured["action"], "gitea_repo_get");
    let action = h.exec("gitea_repo_get", demo()).await;
    assert_eq!(data(&raw), data(&action));
    // With a query, and a body on a write.
    let out = h
        .raw(json!({"method": "get", "path": "/api/v1/repos/alice/demo/issues", "query": {"state": "all", "limit": 2}}))
        .await
    .ok_status(200);
    assert_eq!(out.structured["action"], "gitea_issue_list");
    assert_eq!(data(&out).as_array().unwrap().len(), 2);
    assert_eq!(out.structured["paging"]["total_count"], 3);
    let sent = h.fake.requests().pop().unwrap();
    assert_eq!(sent.query_param("limit").as_deref(), Some("2"));
    let out = h
        .raw(json!({"method": "POST", "path": "/repos/alice/demo/issues", "body": {"title": "raw issue"}}))
        .await
    .ok_status(201);
    assert_eq!(data(&out)["title"], "raw issue");

    // Tricks: refused before any request.
    h.fake.clear_requests();
    for path in [
        "/repos/alice/../admin/users",
        "/repos/alice/demo/../../admin/users",
        "https://evil.example/api/v1/repos/alice/demo",
        "//evil.example/api/v1/repos/alice/demo",
        "http:/repos/alice/demo",
        "/repos/alice/%2e%2e/demo",
        "/repos/alice%2Fdemo",
        "/repos/alice/demo%252F..",
        "/repos/alice/demo\\..\\x",
        "/repos/alice/demo?token=x",
        "/repos/alice/demo#x",
        "/repos/alice//demo",
        "/repos/alice/demo/%00",
        "repos/alice/demo",
        "",
        "/",
    ] {
        let out = h.raw(json!({"method": "GET", "path": path})).await;
        assert!(out.is_error, "{path:?} was accepted: {}", out.text);
        assert_eq!(out.structured["code"], "bad_path", "{path:?}: {}", out.text);
    }
    for input in [
        json!({"method": "TRACE", "path": "/repos/alice/demo"}),
        json!({"method": "GET", "path": "/repos/alice/demo", "query": {"token": "x"}}),
        json!({"method": "GET", "path": "/repos/alice/demo", "query": {"access_token": "x"}}),
        json!({"method": "GET", "path": "/repos/alice/demo", "query": "a=b"}),
        json!({"method": "GET", "path": "/repos/alice/demo", "query": {"a": {"b": 1}}}),
        json!({"method": "GET"}),
        json!({"method": "GET", "path": "/repos/alice/demo", "hdrs": {}}),
    ] {
        let out = h.raw(input.clone()).await;
        assert!(out.is_error, "{input} was accepted: {}", out.text);
    }
    // A path no catalog action matches.
    let out = h
        .raw(json!({"method": "GET", "path": "/repos/alice/demo/frobnicate/now"}))
        .await;
    assert_error(&out, &["matches no operation", "RAW_UNKNOWN_PATHS"]);
    assert_eq!(out.structured["code"], "unknown_path");
    assert!(h.fake.requests().is_empty(), "{:?}", h.fake.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_unknown_paths_can_be_allowed() {
    let h = Harness::with_demo(|a| {
        a.raw_unknown_paths = aegis_gitea_mcp::config::UnknownPaths::Allow;
        a.disabled_tools = Some("admin".into());
    })
    .await;
    let out = h
        .raw(json!({"method": "GET", "path": "/repos/alice/demo/frobnicate/now"}))
        .await;
    // Sent: the fake knows no such route either.
    assert_error(&out, &["404"]);
    assert_eq!(out.structured["status"], 404);
    assert!(out.structured.get("action").is_none());
    assert_eq!(h.fake.count("GET", "/repos/alice/demo/frobnicate/now"), 1);
    // The domain rules still apply to unknown paths.
    h.fake.clear_requests();
    let out = h
        .raw(json!({"method": "GET", "path": "/admin/frobnicate"}))
        .await;
    assert_error(&out, &["withheld", "DISABLED_TOOLS"]);
    assert!(h.fake.requests().is_empty());
    // A DELETE to an unknown path is treated as destructive.
    let out = h
        .raw(json!({"method": "DELETE", "path": "/repos/alice/demo/frobnicate/now"}))
        .await;
    assert_eq!(
        out.structured["confirmation_required"], true,
        "{}",
        out.text
    );
    assert!(h.fake.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_requests_can_be_turned_off() {
    let h = Harness::with_demo(|a| a.raw_requests = false).await;
    for input in [
        json!({"method": "GET", "path": "/repos/alice/demo"}),
        json!({"method": "POST", "path": "/repos/alice/demo/issues", "body": {"title": "x"}}),
        json!({"method": "GET", "path": "/repos/alice/demo", "dry_run": true}),
    ] {
        let out = h.raw(input).await;
        assert_error(&out, &["RAW_REQUESTS=false"]);
        assert_eq!(out.structured["code"], "raw_disabled");
    }
    assert!(h.fake.requests().is_empty());
    // The actions still work.
    h.exec("gitea_repo_get", demo()).await.ok_status(200);
}

/// BUG (src/policy `check_unknown` → `catalog::domain_for_path`): the domain of an unknown raw
/// path is computed with the rules for *templates*, which expect `{owner}/{repo}` placeholders.
/// A concrete path such as `/repos/alice/demo/issues/…` is therefore classified `repo`, not
/// `issue`, so with `RAW_UNKNOWN_PATHS=allow` neither `TOOLSETS` nor a domain entry of
/// `DISABLED_TOOLS` withholds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn unknown_raw_paths_are_held_to_their_domain() {
    let h = Harness::start(|a| {
        a.raw_unknown_paths = aegis_gitea_mcp::config::UnknownPaths::Allow;
        a.toolsets = Some("repo".into());
        a.disabled_tools = Some("pull".into());
    })
    .await;
    // Known paths are withheld …
    let out = h
        .raw(json!({"method": "GET", "path": "/repos/alice/demo/issues"}))
        .await;
    assert_withheld(&out, "gitea_issue_list", "toolsets", "TOOLSETS");
    // … and so are unknown paths of the same domains (judged by their template, not as `repo`).
    let out = h
        .raw(json!({"method": "POST", "path": "/repos/alice/demo/issues/1/frobnicate"}))
        .await;
    assert_error(&out, &["withheld", "the issue toolset", "TOOLSETS"]);
    let out = h
        .raw(json!({"method": "POST", "path": "/repos/alice/demo/pulls/1/frobnicate"}))
        .await;
    assert_error(&out, &["withheld", "the pull toolset", "TOOLSETS"]);
    // A repo path of an unknown shape in an enabled toolset does go through.
    let out = h
        .raw(json!({"method": "GET", "path": "/repos/alice/demo/frobnicate"}))
        .await;
    assert!(!out.text.contains("withheld"), "{}", out.text);
    assert_eq!(h.fake.requests().len(), 1, "{:?}", h.fake.requests());
    h.fake.clear_requests();
    assert!(h.fake.requests().is_empty(), "{:?}", h.fake.requests());
}

// ---- 11. sudo ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sudo_acts_as_another_user() {
    let h = Harness::start(|_| {}).await;
    h.fake.seed_user("alice", true);
    h.fake.seed_repo("alice", "demo");
    h.fake.clear_requests();

    let out = h
        .exec("gitea_user_get_current", json!({"sudo": "bob"}))
        .await
        .ok_status(200);
    assert_eq!(data(&out)["login"], "bob");
    let sent = h.fake.requests().pop().unwrap();
    assert_eq!(sent.header("sudo"), Some("bob"));
    assert_eq!(sent.sudo.as_deref(), Some("bob"));
    assert_eq!(sent.acting_user.as_deref(), Some("bob"));
    assert_eq!(sent.token_user.as_deref(), Some("alice"));
    assert!(sent.query_param("sudo").is_none(), "sent as a header");

    let out = h
        .exec(
            "gitea_issue_create",
            json!({"owner": "alice", "repo": "demo", "sudo": "bob", "body": {"title": "as bob"}}),
        )
        .await
        .ok_status(201);
    assert_eq!(data(&out)["user"]["login"], "bob");
    assert_eq!(
        h.fake.requests().pop().unwrap().acting_user.as_deref(),
        Some("bob")
    );

    // Without sudo, alice acts as herself; a non-admin's sudo is refused by Gitea.
    let out = h.exec("gitea_user_get_current", json!({})).await;
    assert_eq!(data(&out)["login"], "alice");
    assert!(h.fake.requests().pop().unwrap().header("sudo").is_none());
    let bob = h.context(BOB);
    let out = h
        .execute_as(
            &bob,
            json!({"action": "gitea_user_get_current", "arguments": {"sudo": "alice"}}),
        )
        .await;
    assert_error(&out, &["403", "Only administrators allowed to sudo."]);
    // A sudo value that would break out of a header is refused before any request.
    h.fake.clear_requests();
    let out = h
        .exec(
            "gitea_user_get_current",
            json!({"sudo": "bob\r\nX-Evil: 1"}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(h.fake.requests().is_empty());
}

// ---- 12. multipart ----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_attachments_are_uploaded_as_multipart() {
    let h = Harness::start(|_| {}).await;
    h.fake.seed_repo("alice", "demo");
    let release = h.fake.seed_release("alice", "demo", "v1.0.0");
    let bytes: Vec<u8> = (0..=255u8).chain([0, 0, 13, 10, 45, 45]).collect();

    let out = h
        .exec(
            "gitea_release_create_attachment",
            json!({"owner": "alice", "repo": "demo", "id": release,
                   "attachment": {"filename": "tool-linux.tar.gz", "content_base64": b64(&bytes),
                                  "content_type": "application/gzip"}}),
        )
        .await
        .ok_status(201);
    assert_eq!(data(&out)["name"], "tool-linux.tar.gz");
    assert_eq!(data(&out)["size"], bytes.len());
    let assets = h.fake.release_assets("alice", "demo", release);
    assert_eq!(assets.len(), 1);
    assert_eq!(assets[0].data, bytes, "the bytes arrive unchanged");
    assert_eq!(assets[0].content_type.as_deref(), Some("application/gzip"));
    assert_eq!(assets[0].filename.as_deref(), Some("tool-linux.tar.gz"));
    let sent = h.fake.requests().pop().unwrap();
    assert!(
        sent.header("content-type")
            .is_some_and(|c| c.starts_with("multipart/form-data; boundary=")),
        "{:?}",
        sent.header("content-type")
    );

    // With an explicit `name` (a query parameter) and no content type.
    h.exec(
        "gitea_release_create_attachment",
        json!({"owner": "alice", "repo": "demo", "id": release, "name": "notes.txt",
                   "attachment": {"filename": "local.txt", "content_base64": b64(b"notes\n")}}),
    )
    .await
    .ok_status(201);
    let assets = h.fake.release_assets("alice", "demo", release);
    assert_eq!(assets[1].name, "notes.txt");
    assert_eq!(assets[1].filename.as_deref(), Some("local.txt"));
    assert_eq!(assets[1].data, b"notes\n");
    assert_eq!(
        assets[1].content_type.as_deref(),
        Some("application/octet-stream")
    );
    assert_eq!(
        h.fake
            .requests()
            .pop()
            .unwrap()
            .query_param("name")
            .as_deref(),
        Some("notes.txt")
    );

    // Bad base64 is refused before any request.
    h.fake.clear_requests();
    let out = h
        .exec(
            "gitea_release_create_attachment",
            json!({"owner": "alice", "repo": "demo", "id": release,
                   "attachment": {"filename": "x", "content_base64": "not base64!"}}),
        )
        .await;
    assert_error(&out, &["base64"]);
    assert!(h.fake.requests().is_empty());
}

// ---- 13. secrets never surface ----------------------------------------------------------------

/// A `Write` into a shared buffer, for capturing log lines.
#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs a mix of calls (successes, retries, Gitea errors, transport errors, previews) under a
/// debug-level subscriber on a single-threaded runtime (so every task logs into the buffer),
/// then checks that no secret is in any output or log line.
#[test]
fn tokens_never_appear_in_outputs_or_logs() {
    let logs = LogBuffer::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let ran = rt.block_on(async {
        let h = Harness::start(|_| {}).await;
        h.fake.seed_user("alice", true);
        h.fake.seed_repo("alice", "demo");
        let repo = demo();
        assert_ok_status(&h.exec("gitea_repo_get", repo.clone()).await, 200);
        // A retry logs the URL.
        h.fake
            .inject(Fault::Status(502).on("GET", "/repos/alice/demo"));
        assert_ok_status(&h.exec("gitea_repo_get", repo.clone()).await, 200);
        // Errors of every kind.
        assert!(h.exec("gitea_repo_get", json!({"owner": "alice", "repo": "nope"})).await.is_error);
        h.fake
            .inject(Fault::ConnectionReset.on("POST", "/repos/alice/demo/issues"));
        let out = h
            .exec("gitea_issue_create", demo_issue("x"))
            .await;
        assert!(out.is_error && out.text.contains("may have been applied"), "{}", out.text);
        h.fake
            .inject(Fault::MalformedJson.on("GET", "/repos/alice/demo"));
        assert!(h.exec("gitea_repo_get", repo.clone()).await.is_error);
        let bogus = h.context(BOGUS);
        let out = h
            .execute_as(&bogus, json!({"action": "gitea_repo_get", "arguments": repo}))
            .await;
        assert_eq!(out.structured["status"], 401);
        let reader = h.context(READER);
        let out = h
            .execute_as(&reader, json!({"action": "gitea_issue_create", "arguments": {"owner": "alice", "repo": "demo", "body": {"title": "x"}}}))
            .await;
        assert_eq!(out.structured["status"], 403);
        assert!(reader.token_scopes().await.is_some());
        // Validation, policy, previews, raw, sudo.
        assert!(h.exec("gitea_issue_get", json!({"owner": "alice"})).await.is_error);
        assert!(h.exec("gitea_nope", json!({})).await.is_error);
        let out = h
            .execute_input(json!({"action": "gitea_admin_create_user", "dry_run": true,
                "arguments": {"body": {"username": "c", "email": "c@example.com", "password": PASSWORD}}}))
            .await;
        assert_eq!(out.structured["dry_run"], true);
        let out = h
            .exec("gitea_actions_update_repo_secret", json!({"owner": "alice", "repo": "demo", "secretname": "K", "body": {"data": SECRET_DATA}}))
            .await;
        assert_eq!(out.structured["confirmation_required"], true);
        assert!(h.raw(json!({"method": "GET", "path": "/repos/alice/../x"})).await.is_error);
        assert_ok_status(&h.raw(json!({"method": "GET", "path": "/repos/alice/demo"})).await, 200);
        assert_ok_status(&h.exec("gitea_user_get_current", json!({"sudo": "bob"})).await, 200);

        // The token was really sent (so its absence below means something) …
        assert!(
            h.fake
                .requests()
                .iter()
                .any(|r| r.header("authorization") == Some(&format!("token {ALICE}")))
        );
        // … and Debug output of the configuration and the executor hides it.
        let config = Config::from_args(&h.args).unwrap();
        assert_no_secret("Config's Debug", &format!("{config:?}"));
        assert_no_secret("Context's Debug", &format!("{:?}", h.ctx));
        true
        // The harness checks every output when dropped here.
    });
    drop(rt);
    if !ran {
        return;
    }
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).expect("UTF-8 logs");
    // The capture works (tracing's per-callsite interest cache can race with tests on other
    // threads, so no particular line is required; any debug line proves the level).
    assert!(
        logs.contains(" DEBUG "),
        "the capture saw no debug line; logs:\n{logs}"
    );
    assert_no_secret("the logs", &logs);
}

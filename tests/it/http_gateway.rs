//! The HTTP gateway's security properties, end to end: authentication (API keys, Gitea-token
//! pass-through, none only on loopback), rate limits, hostile input, DNS-rebinding and origin
//! checks, `/metrics` exposure, `/health`, secrets staying out of every output, and the audit
//! log with its hash chain.
//!
//! Most tests build the gateway in-process (`aegis_gitea_mcp::http::router`) over the fake Gitea
//! (`tests/support`) and serve it on `127.0.0.1:0` with connect info (the per-address limits and
//! the loopback rule of `/metrics` need the peer address). Tests about the process itself
//! (refusing `AUTH_MODE=none` off loopback, secrets in stdout/stderr, `audit verify`) run the
//! binary. Nothing sleeps to synchronise: the binary announces its address on stderr and every
//! wait is bounded by a deadline that fails the test. No test measures time.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::Duration;

use crate::common::{
    Captured, FIXTURE, bin_with_empty_env, fixture_spec, http_client, on_each_line, stderr, stdout,
};
use crate::support::{FakeGitea, Fault};
use aegis_gitea_mcp::app::App;
use aegis_gitea_mcp::audit::GENESIS;
use aegis_gitea_mcp::config::{Config, GlobalArgs};
use aegis_gitea_mcp::exec::{Context, ExecConfig};
use aegis_gitea_mcp::http::auth::key_line;
use aegis_gitea_mcp::http::{ApiKeys, AuthMode, GatewayConfig};
use aegis_gitea_mcp::mcp::{Server, Surface};
use aegis_gitea_mcp::spec::Spec;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

// ---- secrets and names ----------------------------------------------------------------------

/// The server's own Gitea token (user `svc`, every scope).
const SERVER_TOKEN: &str = "srv-tok-4e1f0c9b7a2d5e8f";
/// Alice's and Bob's Gitea tokens (pass-through mode).
const ALICE_TOKEN: &str = "alice-tok-8c2e4a6f1b3d5c7e";
const BOB_TOKEN: &str = "bob-tok-3f5a7c9e1d2b4f6a";
/// API keys and their labels.
const KEY_A: &str = "aegis-key-alpha-7Hq2Lm9Xv4Rt8Kw1";
const KEY_B: &str = "aegis-key-bravo-3Zp6Nc1Yb8Gf5Jd0";
const LABEL_A: &str = "ci-bot";
const LABEL_B: &str = "deploy-bot";
/// A key of the right shape that no file contains.
const WRONG_KEY: &str = "aegis-key-wrong-0000000000000000";
/// A password sent in a create-user body.
const PASSWORD: &str = "pw-Corr3ct-Horse-B4ttery";

/// The longest any single wait may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(120);

// ---- the documents ----------------------------------------------------------------------------

fn keys(pairs: &[(&str, &str)]) -> ApiKeys {
    let text: String = pairs
        .iter()
        .map(|(k, l)| format!("{}\n", key_line(k, l)))
        .collect();
    ApiKeys::parse(&text).expect("a valid keys file")
}

// ---- the in-process gateway -------------------------------------------------------------------

/// An answer, read completely.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: HeaderMap,
    body: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The answer of `POST /mcp/tool/call`: 200 with a tool result.
    fn tool_result(&self) -> Value {
        assert_eq!(self.status, 200, "{}", self.body);
        let v = self.json();
        assert!(v["isError"].is_boolean(), "{v}");
        v
    }
}

/// What a gateway is built from.
struct Setup {
    spec: &'static Spec,
    args: GlobalArgs,
    gateway: GatewayConfig,
    surface: Surface,
}

/// A gateway served in-process over its own fake Gitea, with an audit log in a temp dir.
struct Gw {
    fake: FakeGitea,
    addr: SocketAddr,
    http: reqwest::Client,
    audit: PathBuf,
    _dir: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Gw {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) fn client() -> reqwest::Client {
    http_client(DEADLINE)
}

/// A fake Gitea knowing the server's token (`svc`) and alice's and bob's.
async fn fake() -> FakeGitea {
    let fake = FakeGitea::start().await;
    fake.add_token(SERVER_TOKEN, "svc", &["all"]);
    fake.add_token(ALICE_TOKEN, "alice", &["all"]);
    fake.add_token(BOB_TOKEN, "bob", &["all"]);
    fake
}

/// API-key mode with keys A and B, limits high enough not to interfere.
fn default_gateway() -> GatewayConfig {
    let mut g = GatewayConfig::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    g.auth_mode = AuthMode::ApiKey;
    g.api_keys = Some(keys(&[(KEY_A, LABEL_A), (KEY_B, LABEL_B)]));
    g.rate_per_ip = 1_000_000;
    g.rate_per_credential = 1_000_000;
    g.auth_failures_per_minute = 100_000;
    g
}

/// The MCP protocol version the tests speak.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// An MCP `initialize` request (id 1) from a client named `client`.
fn initialize(client: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": client, "version": "0"}}})
}

/// `msg` posted to `url` as MCP over streamable HTTP (JSON in, JSON or SSE accepted), with the
/// session's headers when `session` is given and `key` as the bearer when given.
fn mcp_post_to(
    http: &reqwest::Client,
    url: String,
    session: Option<&str>,
    key: Option<&str>,
    msg: &Value,
) -> reqwest::RequestBuilder {
    let mut rb = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(msg.to_string());
    if let Some(s) = session {
        rb = rb
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", PROTOCOL_VERSION);
    }
    if let Some(k) = key {
        rb = rb.bearer_auth(k);
    }
    rb
}

/// The server the way `serve` builds it (minus the token-scope probe).
fn server(setup: &Setup) -> Server {
    let config = Config::from_args(&setup.args).expect("a valid configuration");
    let app = App::from_spec(setup.spec, &config).expect("the app builds");
    Server::new(app, setup.surface)
}

impl Gw {
    /// The fixture document, API-key mode; `tweak` adjusts the settings.
    async fn start(tweak: impl FnOnce(&mut Setup)) -> Gw {
        Gw::start_on(fake().await, fixture_spec(), PathBuf::from(FIXTURE), tweak).await
    }

    async fn start_on(
        fake: FakeGitea,
        spec: &'static Spec,
        spec_path: PathBuf,
        tweak: impl FnOnce(&mut Setup),
    ) -> Gw {
        let dir = tempfile::tempdir().expect("a temp dir");
        let audit = dir.path().join("audit.log");
        let mut setup = Setup {
            spec,
            args: GlobalArgs {
                gitea_url: Some(
                    aegis_gitea_mcp::config::parse_gitea_url(&fake.url()).expect("a URL"),
                ),
                gitea_token: Some(aegis_gitea_mcp::config::Secret::new(SERVER_TOKEN)),
                spec: Some(spec_path),
                audit_log: Some(audit.display().to_string()),
                ..GlobalArgs::default()
            },
            gateway: default_gateway(),
            surface: Surface::Dynamic,
        };
        tweak(&mut setup);
        let server = server(&setup);
        let listening = aegis_gitea_mcp::http::Listening {
            max_connections: setup.gateway.max_connections,
            header_timeout: setup.gateway.header_timeout,
            metrics: server.app().metrics.clone(),
        };
        let router =
            aegis_gitea_mcp::http::router(server, setup.gateway).expect("the gateway builds");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        // The binary's own accept loop (header timeout, connection cap).
        let task = tokio::spawn(async move {
            let _ = aegis_gitea_mcp::http::serve(router, listener, listening).await;
        });
        Gw {
            fake,
            addr,
            http: client(),
            audit,
            _dir: dir,
            task,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn send(&self, rb: reqwest::RequestBuilder) -> Resp {
        let r = rb.send().await.expect("the gateway answers");
        Resp {
            status: r.status().as_u16(),
            headers: r.headers().clone(),
            body: r.text().await.expect("a body"),
        }
    }

    async fn get(&self, path: &str, key: Option<&str>) -> Resp {
        let mut rb = self.http.get(self.url(path));
        if let Some(k) = key {
            rb = rb.bearer_auth(k);
        }
        self.send(rb).await
    }

    /// `POST /mcp/tool/call` with a bearer credential.
    async fn call(&self, key: Option<&str>, tool: &str, arguments: Value) -> Resp {
        let mut rb = self
            .http
            .post(self.url("/mcp/tool/call"))
            .json(&json!({"name": tool, "arguments": arguments}));
        if let Some(k) = key {
            rb = rb.bearer_auth(k);
        }
        self.send(rb).await
    }

    async fn find(&self, key: Option<&str>) -> Resp {
        self.call(
            key,
            "gitea_find_action",
            json!({"query": "get the current user"}),
        )
        .await
    }

    async fn execute(&self, key: Option<&str>, action: &str, arguments: Value) -> Resp {
        self.call(
            key,
            "gitea_execute_action",
            json!({"action": action, "arguments": arguments}),
        )
        .await
    }

    async fn metrics(&self) -> String {
        let r = self.get("/metrics", None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    /// The server is alive and well.
    async fn assert_alive(&self) {
        let r = self.get("/", None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["name"], "aegis-gitea-mcp");
    }

    fn audit_records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
            .collect()
    }

    // ---- MCP over streamable HTTP ----

    async fn mcp_post(&self, session: Option<&str>, key: Option<&str>, msg: &Value) -> Resp {
        let url = self.url("/mcp");
        self.send(mcp_post_to(&self.http, url, session, key, msg))
            .await
    }

    /// Opens an MCP session; returns its id.
    async fn mcp_session(&self, key: Option<&str>) -> String {
        let r = self
            .mcp_post(None, key, &initialize("http-gateway-test"))
            .await;
        assert_eq!(r.status, 200, "initialize: {}", r.body);
        let session = r
            .header("mcp-session-id")
            .expect("a session id")
            .to_string();
        let reply = messages(&r)
            .into_iter()
            .find(|m| m["id"] == 1)
            .expect("an initialize result");
        assert_eq!(reply["result"]["serverInfo"]["name"], "aegis-gitea-mcp");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self.mcp_post(Some(&session), key, &note).await;
        assert!(r.status < 300, "initialized: {} {}", r.status, r.body);
        session
    }

    /// One JSON-RPC request in a session; its response message.
    async fn mcp_request(
        &self,
        session: &str,
        key: Option<&str>,
        id: i64,
        method: &str,
        params: Value,
    ) -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let r = self.mcp_post(Some(session), key, &msg).await;
        assert_eq!(r.status, 200, "{method}: {}", r.body);
        messages(&r)
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no response to {method}: {}", r.body))
    }

    /// Opens a session as `key` and reads resource `uri` in it (request id 2); returns the
    /// response.
    async fn read_in_new_session(&self, key: &str, uri: String) -> Value {
        let session = self.mcp_session(Some(key)).await;
        let params = json!({ "uri": uri });
        self.mcp_request(&session, Some(key), 2, "resources/read", params)
            .await
    }

    /// `body` posted to `/mcp/tool/call` as JSON with key A.
    fn post_tool_call_body(&self, body: Vec<u8>) -> reqwest::RequestBuilder {
        self.http
            .post(self.url("/mcp/tool/call"))
            .bearer_auth(KEY_A)
            .header("content-type", "application/json")
            .body(body)
    }
}

/// The JSON-RPC messages of an MCP answer (a JSON body or an SSE stream).
fn messages(r: &Resp) -> Vec<Value> {
    if r.header("content-type")
        .is_some_and(|c| c.starts_with("text/event-stream"))
    {
        r.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    } else {
        serde_json::from_str(&r.body).into_iter().collect()
    }
}

/// The value of one Prometheus series (0 when absent).
fn metric(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// Sends raw bytes on a new connection and reads until the server closes it.
async fn raw_http(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(request).await.expect("write the request");
    String::from_utf8_lossy(&until_closed(&mut s).await).into_owned()
}

/// A raw HTTP/1.1 request: `request_line`, `Host: host`, `headers` (each line ending in CRLF),
/// `Connection: close`, a blank line, then `body`.
fn raw_request(request_line: &str, host: &str, headers: &str, body: &str) -> Vec<u8> {
    format!("{request_line}\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n{body}")
        .into_bytes()
}

/// The status code of a raw HTTP/1.1 answer.
fn status_line(answer: &str) -> u16 {
    answer
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"))
}

fn assert_unauthorized(r: &Resp, what: &str) {
    assert_eq!(r.status, 401, "{what}: {}", r.body);
    let challenge = r
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("{what}: no WWW-Authenticate"));
    assert!(challenge.starts_with("Bearer "), "{what}: {challenge}");
    assert_eq!(r.json()["error"], "authentication required", "{what}");
}

fn assert_retry_after(r: &Resp) {
    let secs: u64 = r
        .header("retry-after")
        .expect("Retry-After on a 429")
        .parse()
        .expect("Retry-After in whole seconds");
    assert!(secs >= 1, "Retry-After {secs}");
}

// ---- API keys ---------------------------------------------------------------------------------

#[test]
fn api_key_check_accepts_exactly_the_stored_keys() {
    let k = keys(&[(KEY_A, LABEL_A), (KEY_B, LABEL_B)]);
    assert_eq!(k.check(KEY_A), Some(LABEL_A));
    assert_eq!(k.check(KEY_B), Some(LABEL_B));
    // Same length, one character different (first, middle, last).
    for i in [0, KEY_A.len() / 2, KEY_A.len() - 1] {
        let mut wrong = KEY_A.as_bytes().to_vec();
        wrong[i] = if wrong[i] == b'x' { b'y' } else { b'x' };
        assert_eq!(k.check(std::str::from_utf8(&wrong).unwrap()), None, "{i}");
    }
    // Every proper prefix, longer strings, case and whitespace variants, nothing.
    for n in 0..KEY_A.len() {
        assert_eq!(k.check(&KEY_A[..n]), None, "prefix of {n}");
    }
    for longer in [
        format!("{KEY_A}x"),
        format!("{KEY_A}{KEY_A}"),
        format!("{KEY_A} "),
        format!(" {KEY_A}"),
        format!("{KEY_A}\0"),
    ] {
        assert_eq!(k.check(&longer), None, "{longer:?}");
    }
    assert_eq!(k.check(&KEY_A.to_ascii_uppercase()), None);
    assert_eq!(k.check(WRONG_KEY), None);
    // The stored hash itself is not a key.
    let hash = key_line(KEY_A, LABEL_A);
    let hash = hash.split_whitespace().next().unwrap();
    assert_eq!(k.check(hash), None);
    // A file of one key knows only that key.
    assert_eq!(keys(&[(KEY_B, LABEL_B)]).check(KEY_A), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_key_mode_accepts_only_a_current_key() {
    // Keys come from a file, as in production.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys");
    std::fs::write(
        &file,
        format!(
            "# team keys\n{}\n{}\n",
            key_line(KEY_A, LABEL_A),
            key_line(KEY_B, LABEL_B)
        ),
    )
    .unwrap();
    let gw = Gw::start(|s| s.gateway.api_keys = Some(ApiKeys::load(&file).unwrap())).await;

    // Missing.
    assert_unauthorized(&gw.find(None).await, "no credential");
    // Malformed: another scheme, a scheme alone, non-ASCII, a value with a space.
    for (what, value) in [
        ("Basic", HeaderValue::from_static("Basic x")),
        (
            "Basic with the key",
            HeaderValue::from_str(&format!("Basic {KEY_A}")).unwrap(),
        ),
        ("Bearer alone", HeaderValue::from_static("Bearer")),
        (
            "token scheme",
            HeaderValue::from_str(&format!("token {KEY_A}")).unwrap(),
        ),
        (
            "non-ASCII",
            HeaderValue::from_bytes("Bearer clé-ключ".as_bytes()).unwrap(),
        ),
        (
            "key and more",
            HeaderValue::from_str(&format!("Bearer {KEY_A} x")).unwrap(),
        ),
        ("key as scheme", HeaderValue::from_str(KEY_A).unwrap()),
    ] {
        let rb = gw
            .http
            .post(gw.url("/mcp/tool/call"))
            .header("authorization", value)
            .json(&json!({"name": "gitea_find_action", "arguments": {"query": "x"}}));
        assert_unauthorized(&gw.send(rb).await, what);
    }
    // Wrong key.
    assert_unauthorized(&gw.find(Some(WRONG_KEY)).await, "wrong key");
    // The server's own Gitea token is not an API key.
    assert_unauthorized(&gw.find(Some(SERVER_TOKEN)).await, "Gitea token");
    // Other authenticated endpoints: /mcp and /metrics from a non-loopback client need a key too.
    let r = gw
        .mcp_post(
            None,
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        )
        .await;
    assert_unauthorized(&r, "/mcp without a key");
    assert!(
        gw.audit_records().is_empty(),
        "refused requests reach no tool"
    );

    // Right key: 200, the call runs and is recorded under the key's label.
    let r = gw.find(Some(KEY_A)).await;
    let v = r.tool_result();
    assert_eq!(v["isError"], false, "{v}");
    let r = gw
        .execute(Some(KEY_B), "gitea_user_get_current", json!({}))
        .await;
    let v = r.tool_result();
    assert_eq!(v["isError"], false, "{v}");
    assert_eq!(v["structuredContent"]["data"]["login"], "svc", "{v}");
    let records = gw.audit_records();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0]["actor"], LABEL_A);
    assert_eq!(records[0]["tool"], "gitea_find_action");
    assert_eq!(records[1]["actor"], LABEL_B);
    // The scheme is case-insensitive.
    let rb = gw
        .http
        .post(gw.url("/mcp/tool/call"))
        .header("authorization", format!("bEaReR {KEY_A}"))
        .json(&json!({"name": "gitea_find_action", "arguments": {"query": "x"}}));
    assert_eq!(gw.send(rb).await.status, 200);

    // Revoked: a gateway built from a file without key A refuses it and still takes B.
    std::fs::write(&file, format!("{}\n", key_line(KEY_B, LABEL_B))).unwrap();
    let revoked = Gw::start(|s| s.gateway.api_keys = Some(ApiKeys::load(&file).unwrap())).await;
    assert_unauthorized(&revoked.find(Some(KEY_A)).await, "revoked key");
    assert_eq!(
        revoked.find(Some(KEY_B)).await.tool_result()["isError"],
        false
    );
    assert_eq!(revoked.audit_records().len(), 1);
    assert_eq!(revoked.audit_records()[0]["actor"], LABEL_B);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_list_is_public_only_when_configured() {
    let open = Gw::start(|_| {}).await;
    let r = open.get("/mcp/tools", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.json()["tools"].as_array().is_some_and(|t| t.len() == 3));
    let closed = Gw::start(|s| s.gateway.public_tool_list = false).await;
    assert_unauthorized(&closed.get("/mcp/tools", None).await, "private tool list");
    assert_eq!(closed.get("/mcp/tools", Some(KEY_A)).await.status, 200);
    // Always public: name/version, health, the OpenAPI document.
    for path in ["/", "/health", "/openapi.json"] {
        assert_eq!(closed.get(path, None).await.status, 200, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_string_key_needs_the_opt_in() {
    let body = json!({"name": "gitea_find_action", "arguments": {"query": "list issues"}});
    let off = Gw::start(|_| {}).await;
    let rb = off
        .http
        .post(off.url(&format!("/mcp/tool/call?api_key={KEY_A}")))
        .json(&body);
    assert_unauthorized(&off.send(rb).await, "?api_key= without ALLOW_QUERY_API_KEY");

    let on = Gw::start(|s| s.gateway.allow_query_api_key = true).await;
    let rb = on
        .http
        .post(on.url(&format!("/mcp/tool/call?x=1&api_key={KEY_A}")))
        .json(&body);
    let r = on.send(rb).await;
    assert_eq!(r.tool_result()["isError"], false);
    let rb = on
        .http
        .post(on.url(&format!("/mcp/tool/call?api_key={WRONG_KEY}")))
        .json(&body);
    assert_unauthorized(&on.send(rb).await, "wrong ?api_key=");
    assert_eq!(on.audit_records()[0]["actor"], LABEL_A);
}

// ---- pass-through --------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_through_runs_each_call_under_the_callers_token() {
    let gw = Gw::start(|s| {
        s.gateway.auth_mode = AuthMode::GiteaToken;
        s.gateway.api_keys = None;
    })
    .await;
    gw.fake.clear_requests();

    for (token, login) in [
        (ALICE_TOKEN, "alice"),
        (BOB_TOKEN, "bob"),
        (ALICE_TOKEN, "alice"),
    ] {
        let r = gw
            .execute(Some(token), "gitea_user_get_current", json!({}))
            .await;
        let v = r.tool_result();
        assert_eq!(v["isError"], false, "{v}");
        assert_eq!(v["structuredContent"]["data"]["login"], login, "{v}");
    }
    // `Authorization: token …` (Gitea's own scheme) works too.
    let rb = gw
        .http
        .post(gw.url("/mcp/tool/call"))
        .header("authorization", format!("token {BOB_TOKEN}"))
        .json(&json!({"name": "gitea_execute_action",
            "arguments": {"action": "gitea_user_get_current", "arguments": {}}}));
    let v = gw.send(rb).await.tool_result();
    assert_eq!(v["structuredContent"]["data"]["login"], "bob", "{v}");

    // Over MCP (streamable HTTP) as bob.
    let session = gw.mcp_session(Some(BOB_TOKEN)).await;
    let reply = gw
        .mcp_request(
            &session,
            Some(BOB_TOKEN),
            2,
            "tools/call",
            json!({"name": "gitea_execute_action",
                "arguments": {"action": "gitea_user_get_current", "arguments": {}}}),
        )
        .await;
    assert_eq!(
        reply["result"]["structuredContent"]["data"]["login"], "bob",
        "{reply}"
    );

    // An invalid token is refused before any tool runs; a missing one too.
    assert_unauthorized(
        &gw.execute(
            Some("not-a-gitea-token"),
            "gitea_user_get_current",
            json!({}),
        )
        .await,
        "invalid Gitea token",
    );
    assert_unauthorized(
        &gw.execute(None, "gitea_user_get_current", json!({})).await,
        "no token",
    );

    // Upstream: every request went out under the caller's own token, never the server's.
    let sent = gw.fake.requests();
    assert!(!sent.is_empty());
    for r in &sent {
        assert_ne!(r.token_user.as_deref(), Some("svc"), "{r:?}");
        let auth = r.header("authorization").unwrap_or("");
        assert!(!auth.contains(SERVER_TOKEN), "{r:?}");
    }
    let users: Vec<&str> = sent
        .iter()
        .filter(|r| r.path == "/api/v1/user" && r.status == Some(200))
        .filter_map(|r| r.token_user.as_deref())
        .collect();
    assert!(
        users.contains(&"alice") && users.contains(&"bob"),
        "{users:?}"
    );
    // The invalid token was tried once upstream (and refused there), nothing else.
    assert!(
        sent.iter()
            .filter(|r| r.token_user.is_none())
            .all(|r| r.path == "/api/v1/user" && r.status == Some(401)),
        "{sent:?}"
    );

    // The audit log names the Gitea users and the transports.
    let records = gw.audit_records();
    let who: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["actor"].as_str().unwrap(),
                r["transport"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        who,
        [
            ("alice", "rest"),
            ("bob", "rest"),
            ("alice", "rest"),
            ("bob", "rest"),
            ("bob", "http")
        ]
    );
}

// ---- AUTH_MODE=none ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_authentication_is_refused_off_loopback() {
    let fake = fake().await;
    let setup = |listen: &str, mode: AuthMode, keys: Option<ApiKeys>| {
        let mut g = default_gateway();
        g.listen = listen.parse().unwrap();
        g.auth_mode = mode;
        g.api_keys = keys;
        let s = Setup {
            spec: fixture_spec(),
            args: GlobalArgs {
                gitea_url: Some(
                    aegis_gitea_mcp::config::parse_gitea_url(&fake.url()).expect("a URL"),
                ),
                gitea_token: Some(aegis_gitea_mcp::config::Secret::new(SERVER_TOKEN)),
                spec: Some(PathBuf::from(FIXTURE)),
                ..GlobalArgs::default()
            },
            gateway: g,
            surface: Surface::Dynamic,
        };
        aegis_gitea_mcp::http::router(server(&s), s.gateway)
    };
    for listen in ["0.0.0.0:8080", "[::]:8080", "192.0.2.10:80"] {
        let Err(err) = setup(listen, AuthMode::None, None) else {
            panic!("AUTH_MODE=none on {listen} must be refused");
        };
        assert!(err.to_string().contains("AUTH_MODE"), "{err}");
    }
    // API-key mode without keys is refused too.
    let Err(err) = setup("127.0.0.1:8080", AuthMode::ApiKey, None) else {
        panic!("api-key mode without keys must be refused");
    };
    assert!(err.to_string().contains("API_KEYS_FILE"), "{err}");
    // Loopback without authentication, and authenticated modes anywhere, are fine.
    assert!(setup("127.0.0.1:8080", AuthMode::None, None).is_ok());
    assert!(setup("[::1]:8080", AuthMode::None, None).is_ok());
    assert!(setup("0.0.0.0:8080", AuthMode::GiteaToken, None).is_ok());
    assert!(
        setup(
            "0.0.0.0:8080",
            AuthMode::ApiKey,
            Some(keys(&[(KEY_A, LABEL_A)]))
        )
        .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_exits_2_for_no_authentication_off_loopback() {
    let fake = fake().await;
    let mut p = Proc::spawn(
        &["serve", "--http", "--listen", "0.0.0.0:0"],
        &[
            ("GITEA_URL", fake.url()),
            ("GITEA_TOKEN", SERVER_TOKEN.into()),
            ("GITEA_SPEC", FIXTURE.into()),
            ("AUTH_MODE", "none".into()),
        ],
    );
    let (status, out) = p.wait_exit().await;
    assert_eq!(status.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("AUTH_MODE"), "{}", out.stderr);
    assert!(out.stderr.contains("loopback"), "{}", out.stderr);
}

// ---- rate limits ------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_address_limit_refuses_the_fourth_request_of_one_address_only() {
    // Behind a trusted proxy (127.0.0.1), clients are told apart by X-Forwarded-For.
    let gw = Gw::start(|s| {
        s.gateway.rate_per_ip = 3;
        s.gateway.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    })
    .await;
    let from = |ip: &'static str| gw.http.get(gw.url("/")).header("x-forwarded-for", ip);
    let before = metric(
        &gw.metrics().await,
        "aegis_rate_limited_total{limit=\"ip\"}",
    );
    for i in 0..3 {
        assert_eq!(
            gw.send(from("203.0.113.7")).await.status,
            200,
            "request {i}"
        );
    }
    let r = gw.send(from("203.0.113.7")).await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert_retry_after(&r);
    assert!(r.json()["error"].as_str().unwrap().contains("rate limit"));
    // Authenticated or not, the address stays limited.
    let r = gw.send(from("203.0.113.7").bearer_auth(KEY_A)).await;
    assert_eq!(r.status, 429);
    // Other addresses are unaffected (the proxy's own, below, too).
    assert_eq!(gw.send(from("203.0.113.8")).await.status, 200);
    assert_eq!(gw.send(from("2001:db8::1")).await.status, 200);
    gw.assert_alive().await;
    let after = metric(
        &gw.metrics().await,
        "aegis_rate_limited_total{limit=\"ip\"}",
    );
    assert!(after > before, "{before} → {after}");

    // Without a trusted proxy, X-Forwarded-For cannot buy a fresh allowance.
    let direct = Gw::start(|s| s.gateway.rate_per_ip = 3).await;
    for (i, ip) in ["198.51.100.1", "198.51.100.2", "198.51.100.3"]
        .iter()
        .enumerate()
    {
        let rb = direct
            .http
            .get(direct.url("/"))
            .header("x-forwarded-for", *ip);
        assert_eq!(direct.send(rb).await.status, 200, "request {i}");
    }
    let rb = direct
        .http
        .get(direct.url("/"))
        .header("x-forwarded-for", "198.51.100.4");
    let r = direct.send(rb).await;
    assert_eq!(r.status, 429, "spoofed X-Forwarded-For escaped the limit");
    assert_retry_after(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_credential_limit_refuses_one_key_and_not_the_other() {
    let gw = Gw::start(|s| s.gateway.rate_per_credential = 3).await;
    for i in 0..3 {
        assert_eq!(gw.find(Some(KEY_A)).await.status, 200, "request {i}");
    }
    let r = gw.find(Some(KEY_A)).await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert_retry_after(&r);
    assert!(r.json()["error"].as_str().unwrap().contains("credential"));
    for i in 0..3 {
        let r = gw.find(Some(KEY_B)).await;
        assert_eq!(r.tool_result()["isError"], false, "key B, request {i}");
    }
    // Refused calls run no tool.
    assert_eq!(gw.audit_records().len(), 6);
    let m = gw.metrics().await;
    assert!(
        metric(&m, "aegis_rate_limited_total{limit=\"credential\"}") >= 1,
        "{m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_authentications_are_throttled() {
    let gw = Gw::start(|s| s.gateway.auth_failures_per_minute = 2).await;
    let series = "aegis_rate_limited_total{limit=\"auth_failures\"}";
    let before = metric(&gw.metrics().await, series);
    assert_unauthorized(&gw.find(Some(WRONG_KEY)).await, "failure 1");
    assert_unauthorized(&gw.find(Some("another-wrong-key")).await, "failure 2");
    let r = gw.find(Some("a-third-wrong-key")).await;
    assert_eq!(r.status, 429, "the third failure is throttled: {}", r.body);
    assert_retry_after(&r);
    let r = gw.find(None).await;
    assert_eq!(r.status, 429, "still throttled: {}", r.body);
    let after = metric(&gw.metrics().await, series);
    assert!(after >= before + 2, "{series}: {before} → {after}");
    gw.assert_alive().await;
}

/// A throttled address must not be able to keep testing credentials: while it is over its
/// failure budget its credentials are not checked at all (otherwise a right guess answers 200
/// and a wrong one 429, and the limit slows nobody down), and in pass-through mode no token is
/// sent to Gitea for verification.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_address_cannot_keep_guessing() {
    let gw = Gw::start(|s| s.gateway.auth_failures_per_minute = 2).await;
    for _ in 0..3 {
        gw.find(Some(WRONG_KEY)).await;
    }
    assert_eq!(gw.find(Some(WRONG_KEY)).await.status, 429);
    let r = gw.find(Some(KEY_A)).await;
    assert_eq!(
        r.status, 429,
        "a throttled address learns that its guess is right (got {} instead of 429)",
        r.status
    );

    let pass = Gw::start(|s| {
        s.gateway.auth_mode = AuthMode::GiteaToken;
        s.gateway.api_keys = None;
        s.gateway.auth_failures_per_minute = 2;
    })
    .await;
    for i in 0..3 {
        pass.execute(
            Some(format!("bogus-{i}").as_str()),
            "gitea_user_get_current",
            json!({}),
        )
        .await;
    }
    let verified = pass.fake.count("GET", "/api/v1/user");
    let r = pass
        .execute(Some("bogus-next"), "gitea_user_get_current", json!({}))
        .await;
    assert_eq!(r.status, 429);
    assert_eq!(
        pass.fake.count("GET", "/api/v1/user"),
        verified,
        "a throttled address still makes the gateway verify its tokens with Gitea"
    );
}

// ---- hostile input ----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_are_refused_with_4xx() {
    let gw = Gw::start(|s| {
        s.gateway.max_body_bytes = 4096;
        s.gateway.http.max_body_bytes = 4096;
    })
    .await;
    let post = |body: Vec<u8>| gw.post_tool_call_body(body);
    // Too large: declared and streamed (chunked, no Content-Length).
    let big = format!(
        "{{\"name\":\"gitea_find_action\",\"arguments\":{{\"query\":\"{}\"}}}}",
        "a".repeat(8192)
    );
    let r = gw.send(post(big.clone().into_bytes())).await;
    assert_eq!(r.status, 413, "{}", r.body);
    let mut chunked = format!(
        "POST /mcp/tool/call HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY_A}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    for c in big.as_bytes().chunks(1000) {
        chunked.push_str(&format!(
            "{:x}\r\n{}\r\n",
            c.len(),
            String::from_utf8_lossy(c)
        ));
    }
    chunked.push_str("0\r\n\r\n");
    let answer = raw_http(gw.addr, chunked.as_bytes()).await;
    assert_eq!(status_line(&answer), 413, "chunked: {answer}");
    // The MCP endpoint has the same limit.
    let huge =
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "b".repeat(8192)}});
    let r = gw.mcp_post(None, Some(KEY_A), &huge).await;
    assert_eq!(r.status, 413, "/mcp: {}", r.body);

    // The rest fits any limit: a gateway with the default one (1 MiB).
    let gw = Gw::start(|_| {}).await;
    let post = |body: Vec<u8>| gw.post_tool_call_body(body);
    // Deeply nested JSON, at the top and inside the arguments.
    let deep = "[".repeat(10_000);
    let r = gw.send(post(deep.into_bytes())).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let nested = format!(
        "{{\"name\":\"gitea_find_action\",\"arguments\":{{\"query\":{}1{}}}}}",
        "[".repeat(1500),
        "]".repeat(1500)
    );
    let r = gw.send(post(nested.into_bytes())).await;
    assert_eq!(r.status, 400, "{}", r.body);
    // Invalid UTF-8 inside a string and as the whole body.
    let mut bad = b"{\"name\":\"gitea_find_action\",\"arguments\":{\"query\":\"".to_vec();
    bad.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28]);
    bad.extend_from_slice(b"\"}}");
    let r = gw.send(post(bad)).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = gw.send(post(vec![0xc0, 0xaf, 0xff])).await;
    assert_eq!(r.status, 400, "{}", r.body);
    // Not the expected shape.
    for body in [
        "",
        "null",
        "[]",
        "\"gitea_find_action\"",
        "{\"name\": 5}",
        "{\"name\": \"gitea_find_action\", \"arguments\": [1]}",
        "{\"name\": \"gitea_find_action\", \"arguments\": \"query\"}",
    ] {
        let r = gw.send(post(body.as_bytes().to_vec())).await;
        assert_eq!(r.status, 400, "{body:?}: {}", r.body);
        assert!(r.json()["error"].is_string(), "{body:?}");
    }
    // Unknown tools are 404 with a hint, hostile names included.
    let r = gw
        .call(Some(KEY_A), "../../etc/passwd\u{0}", json!({}))
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    gw.assert_alive().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers_get_431() {
    let gw = Gw::start(|_| {}).await;
    // One large header.
    let rb = gw
        .http
        .get(gw.url("/"))
        .header("x-filler", "a".repeat(17 * 1024));
    let r = gw.send(rb).await;
    assert_eq!(r.status, 431, "{}", r.body);
    // Many headers adding up to more than 16 KiB, on an authenticated route with a good key.
    let mut rb = gw
        .http
        .post(gw.url("/mcp/tool/call"))
        .bearer_auth(KEY_A)
        .json(&json!({"name": "gitea_find_action", "arguments": {"query": "x"}}));
    for i in 0..40 {
        rb = rb.header(format!("x-filler-{i}"), "b".repeat(500));
    }
    let r = gw.send(rb).await;
    assert_eq!(r.status, 431, "{}", r.body);
    // A huge credential is not even looked at.
    let r = gw.find(Some("k".repeat(20 * 1024).as_str())).await;
    assert_eq!(r.status, 431, "{}", r.body);
    assert!(gw.audit_records().is_empty());
    gw.assert_alive().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_raw_requests_get_400_and_the_server_stays_up() {
    let gw = Gw::start(|_| {}).await;
    let host = format!("127.0.0.1:{}", gw.addr.port());
    let get = |headers: &str| raw_request("GET / HTTP/1.1", &host, headers, "");
    let post = |headers: &str, body: &str| {
        raw_request("POST /mcp/tool/call HTTP/1.1", &host, headers, body)
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "bare CR in a header value (CRLF injection)",
            get("X-Test: a\rInjected: b\r\n"),
        ),
        (
            "bare CR inside the Authorization value",
            post(
                &format!("Authorization: Bearer {KEY_A}\rX-Admin: 1\r\nContent-Length: 2\r\n"),
                "{}",
            ),
        ),
        ("NUL in a header value", get("X-Test: a\0b\r\n")),
        (
            "obsolete line folding",
            get("X-Test: a\r\n Injected: b\r\n"),
        ),
        ("a space in a header name", get("X Test: a\r\n")),
        (
            "CRLF in the request target",
            raw_request("GET /\r\nX-Injected: 1 HTTP/1.1", &host, "", ""),
        ),
        (
            "two different Content-Lengths",
            post("Content-Length: 2\r\nContent-Length: 40\r\n", "{}"),
        ),
        ("a bogus Content-Length", post("Content-Length: -1\r\n", "")),
        (
            "not HTTP at all",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n".to_vec(),
        ),
    ];
    for (what, bytes) in &cases {
        let answer = raw_http(gw.addr, bytes).await;
        assert_eq!(status_line(&answer), 400, "{what}: {answer}");
        assert!(!answer.contains("Injected"), "{what}: {answer}");
    }
    // A well-formed raw request on the same server still works.
    let ok = raw_http(gw.addr, &get("")).await;
    assert_eq!(status_line(&ok), 200, "{ok}");
    assert!(gw.audit_records().is_empty());
    gw.assert_alive().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_traversal_never_reaches_gitea() {
    let gw = Gw::start(|_| {}).await;
    gw.fake.seed_repo("alice", "demo");
    gw.fake.clear_requests();
    let paths = [
        "/repos/alice/demo/../../admin/users",
        "/../admin/users",
        "/api/v1/../../admin/users",
        "/repos/alice/demo/%2e%2e/%2e%2e/admin/users",
        "/repos/alice/demo/%2E%2E/%2E%2E/version",
        "/repos/alice/demo/..%2f..%2fversion",
        "/repos/alice/demo/.%2e/.%2e/version",
        "/repos/alice/demo/%252e%252e/version",
        "/repos/alice\\..\\..\\version",
        "/repos/alice/demo/./../../version",
        "/repos/alice/demo/%00/version",
        "//evil.example.com/api/v1/version",
        "http://evil.example.com/api/v1/version",
        "/repos/alice/demo?sudo=admin",
        "/repos/alice/demo#x",
    ];
    for path in paths {
        for method in ["GET", "DELETE"] {
            let r = gw
                .call(
                    Some(KEY_A),
                    "gitea_api_request",
                    json!({"method": method, "path": path}),
                )
                .await;
            let v = r.tool_result();
            assert_eq!(v["isError"], true, "{method} {path}: {v}");
        }
    }
    // Actions: parameters cannot leave their path segment either.
    for owner in ["..", "../admin", "alice/../..", ".", "a/b"] {
        let r = gw
            .execute(
                Some(KEY_A),
                "gitea_repo_get",
                json!({"owner": owner, "repo": "demo"}),
            )
            .await;
        let v = r.tool_result();
        assert_eq!(v["isError"], true, "owner {owner:?}: {v}");
    }
    for filepath in ["../../../admin/users", "a/../../..", "..", "docs/./../../x"] {
        let r = gw
            .execute(
                Some(KEY_A),
                "gitea_repo_get_raw_file",
                json!({"owner": "alice", "repo": "demo", "filepath": filepath}),
            )
            .await;
        let v = r.tool_result();
        assert_eq!(v["isError"], true, "filepath {filepath:?}: {v}");
    }
    // Resources (MCP over HTTP).
    let session = gw.mcp_session(Some(KEY_A)).await;
    for (i, uri) in [
        "gitea://repo/../admin",
        "gitea://repo/alice/..",
        "gitea://repo/alice/%2e%2e",
        "gitea://owner/..%2fadmin",
        "gitea://repo/alice/demo/issue/1/../../../../admin",
    ]
    .iter()
    .enumerate()
    {
        let reply = gw
            .mcp_request(
                &session,
                Some(KEY_A),
                10 + i as i64,
                "resources/read",
                json!({"uri": uri}),
            )
            .await;
        assert!(reply["error"].is_object(), "{uri}: {reply}");
    }
    let sent = gw.fake.requests();
    assert!(
        sent.is_empty(),
        "requests reached Gitea: {:?}",
        sent.iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect::<Vec<_>>()
    );
    // Encoded dots and backslashes in a value are literal characters, escaped: Gitea decodes them
    // once and sees `%2e%2e` or `..\admin` inside one segment, never `..`.
    for (action, args, expected) in [
        (
            "gitea_repo_get",
            json!({"owner": "%2e%2e", "repo": "demo"}),
            "/api/v1/repos/%252e%252e/demo",
        ),
        (
            "gitea_repo_get",
            json!({"owner": "..\\admin", "repo": "demo"}),
            "/api/v1/repos/..%5Cadmin/demo",
        ),
        (
            "gitea_repo_get_raw_file",
            json!({"owner": "alice", "repo": "demo", "filepath": "%2e%2e/x"}),
            "/api/v1/repos/alice/demo/raw/%252e%252e/x",
        ),
    ] {
        gw.fake.clear_requests();
        gw.execute(Some(KEY_A), action, args).await.tool_result();
        let paths: Vec<String> = gw.fake.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, [expected]);
    }
    gw.assert_alive().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_host_gets_421_on_every_endpoint() {
    let gw = Gw::start(|_| {}).await;
    let endpoints = [
        ("GET", "/"),
        ("GET", "/health"),
        ("GET", "/openapi.json"),
        ("GET", "/metrics"),
        ("GET", "/mcp/tools"),
        ("POST", "/mcp/tool/call"),
        ("POST", "/mcp"),
        ("GET", "/mcp"),
        ("DELETE", "/mcp"),
        ("GET", "/no/such/route"),
    ];
    let body = r#"{"name":"gitea_find_action","arguments":{"query":"x"}}"#;
    for host in [
        "evil.example.com",
        "evil.example.com:80",
        "127.0.0.1.evil.example.com",
        "localhost.evil.example.com:8080",
        "[::2]:80",
    ] {
        for (method, path) in endpoints {
            let req = format!(
                "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {KEY_A}\r\n\
                 Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let answer = raw_http(gw.addr, req.as_bytes()).await;
            assert_eq!(
                status_line(&answer),
                421,
                "{method} {path} Host {host}: {answer}"
            );
        }
    }
    assert!(gw.audit_records().is_empty());
    // The same requests with an allowed Host pass the check.
    let req = format!(
        "GET / HTTP/1.1\r\nHost: localhost:{}\r\nConnection: close\r\n\r\n",
        gw.addr.port()
    );
    assert_eq!(status_line(&raw_http(gw.addr, req.as_bytes()).await), 200);

    // A configured public name is served; others still are not.
    let named = Gw::start(|s| s.gateway.http.allowed_hosts = vec!["mcp.example.org".into()]).await;
    let ask = |host: &str| {
        format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").into_bytes()
    };
    assert_eq!(
        status_line(&raw_http(named.addr, &ask("mcp.example.org")).await),
        200
    );
    assert_eq!(
        status_line(&raw_http(named.addr, &ask("mcp.example.org:443")).await),
        200
    );
    assert_eq!(
        status_line(&raw_http(named.addr, &ask("127.0.0.1")).await),
        421
    );
    assert_eq!(
        status_line(&raw_http(named.addr, &ask("evil.example.com")).await),
        421
    );
    gw.assert_alive().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_outside_the_list_gets_403() {
    let gw =
        Gw::start(|s| s.gateway.http.allowed_origins = vec!["http://localhost:3000".into()]).await;
    let call = |origin: &'static str| {
        gw.http
            .post(gw.url("/mcp/tool/call"))
            .bearer_auth(KEY_A)
            .header("origin", origin)
            .json(&json!({"name": "gitea_find_action", "arguments": {"query": "x"}}))
    };
    for origin in [
        "http://evil.example.com",
        "http://localhost:3001",
        "https://localhost:3000",
        "http://localhost:3000.evil.example.com",
        "null",
    ] {
        let r = gw.send(call(origin)).await;
        assert_eq!(r.status, 403, "{origin}: {}", r.body);
        let r = gw
            .send(gw.http.get(gw.url("/mcp/tools")).header("origin", origin))
            .await;
        assert_eq!(r.status, 403, "GET /mcp/tools from {origin}");
        let rb = gw
            .http
            .post(gw.url("/mcp"))
            .bearer_auth(KEY_A)
            .header("origin", origin)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string());
        assert_eq!(gw.send(rb).await.status, 403, "POST /mcp from {origin}");
    }
    // No Origin (not a browser) is not a foreign origin.
    let session = gw.mcp_session(Some(KEY_A)).await;
    assert!(!session.is_empty());
    let r = gw.send(call("http://localhost:3000")).await;
    assert_eq!(r.tool_result()["isError"], false);
    assert_eq!(gw.audit_records().len(), 1);
    gw.assert_alive().await;
}

/// With the defaults (AUTH_MODE=none on loopback, no ALLOWED_ORIGINS set) a web page the user
/// visits can make the browser POST to the local gateway. A `text/plain` POST is a "simple"
/// request: no CORS preflight, so the browser sends it and the call would run even though the
/// page cannot read the answer. Such a call must not reach Gitea; a page served from this
/// machine may still call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_form_post_cannot_run_a_tool() {
    let gw = Gw::start(|s| {
        s.gateway.auth_mode = AuthMode::None;
        s.gateway.api_keys = None;
    })
    .await;
    gw.fake.seed_repo("svc", "demo");
    gw.fake.clear_requests();
    let body = json!({"name": "gitea_execute_action", "arguments": {
        "action": "gitea_issue_create",
        "arguments": {"owner": "svc", "repo": "demo", "body": {"title": "planted by a web page"}}}});
    let post = |origin: &str| {
        gw.http
            .post(gw.url("/mcp/tool/call"))
            .header("origin", origin)
            .header("content-type", "text/plain;charset=UTF-8")
            .body(body.to_string())
    };
    for origin in [
        "https://evil.example.com",
        "http://evil.example.com:8080",
        "null",
    ] {
        let r = gw.send(post(origin)).await;
        let sent = gw.fake.requests();
        assert!(
            sent.is_empty(),
            "a cross-site text/plain POST from {origin} reached Gitea (answer {}): {:?}",
            r.status,
            sent.iter()
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<_>>()
        );
        assert_eq!(r.status, 403, "{origin}: {}", r.body);
    }
    assert!(gw.audit_records().is_empty());
    // A local page (any port) is allowed by default.
    let r = gw.send(post("http://localhost:5173")).await;
    assert_eq!(r.tool_result()["isError"], false, "{}", r.body);
    assert_eq!(gw.fake.count("POST", "/api/v1/repos/svc/demo/issues"), 1);
}

// ---- /metrics, /health, timeouts, sessions ---------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_open_on_loopback_only() {
    let gw = Gw::start(|s| s.gateway.trusted_proxies = vec!["127.0.0.1".parse().unwrap()]).await;
    gw.find(Some(KEY_A)).await;
    let r = gw.get("/metrics", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("text/plain"))
    );
    assert!(
        r.body
            .contains("aegis_http_requests_total{route=\"/mcp/tool/call\",status=\"200\"}")
    );
    assert!(
        r.body
            .contains("aegis_tool_calls_total{tool=\"gitea_find_action\",outcome=\"ok\"}")
    );
    // Through the (trusted) proxy for a remote client: a key is needed.
    let remote = || {
        gw.http
            .get(gw.url("/metrics"))
            .header("x-forwarded-for", "198.51.100.20")
    };
    assert_unauthorized(&gw.send(remote()).await, "remote /metrics");
    assert_unauthorized(&gw.send(remote().bearer_auth(WRONG_KEY)).await, "wrong key");
    let r = gw.send(remote().bearer_auth(KEY_B)).await;
    assert_eq!(r.status, 200);
    assert!(r.body.contains("aegis_http_requests_total"));
    // Route labels are templates, never raw paths.
    gw.get("/secret-path-abc123", None).await;
    assert!(!gw.metrics().await.contains("secret-path-abc123"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_gitea_and_the_root_does_not() {
    let gw = Gw::start(|s| {
        s.gateway.health_ttl = Duration::ZERO;
        s.args.gitea_retries = 0;
    })
    .await;
    let r = gw.get("/health", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(v["gitea_connected"], true, "{v}");
    assert_eq!(v["gitea_version"], "1.28.0+fake", "{v}");

    gw.fake.stop().await;
    let r = gw.get("/health", None).await;
    assert_eq!(r.status, 503, "{}", r.body);
    let v = r.json();
    assert_eq!(v["gitea_connected"], false, "{v}");
    assert_eq!(v["status"], "degraded", "{v}");
    assert!(!r.body.contains(&gw.fake.url()), "no upstream detail: {v}");
    gw.assert_alive().await;
    // Tools that need Gitea fail as results, not as HTTP errors; find still works.
    let v = gw
        .execute(Some(KEY_A), "gitea_user_get_current", json!({}))
        .await
        .tool_result();
    assert_eq!(v["isError"], true, "{v}");
    assert_eq!(gw.find(Some(KEY_A)).await.tool_result()["isError"], false);

    gw.fake.restart().await;
    let r = gw.get("/health", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["gitea_connected"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_answer_is_cut_off_at_the_time_limit() {
    let gw = Gw::start(|s| s.gateway.request_timeout = Duration::from_secs(1)).await;
    gw.fake
        .inject(Fault::Delay(Duration::from_secs(600)).on("GET", "/user"));
    let r = gw
        .execute(Some(KEY_A), "gitea_user_get_current", json!({}))
        .await;
    // The executor answers at the deadline, before the gateway's own 504.
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.tool_result();
    assert_eq!(v["isError"], true, "{v}");
    assert!(v.to_string().contains("REQUEST_TIMEOUT_SECS"), "{v}");
    gw.fake.stop().await;
    gw.assert_alive().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_refuses_new_sessions() {
    let gw = Gw::start(|s| s.gateway.max_sessions = 1).await;
    let first = gw.mcp_session(Some(KEY_A)).await;
    let r = gw.mcp_post(None, Some(KEY_B), &initialize("second")).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.header("retry-after"), Some("5"));
    // The open session keeps working.
    let reply = gw
        .mcp_request(&first, Some(KEY_A), 2, "tools/list", json!({}))
        .await;
    assert_eq!(reply["result"]["tools"].as_array().map(Vec::len), Some(3));
}

// ---- the audit log ----------------------------------------------------------------------------

const AUDIT_FIELDS: [&str; 14] = [
    "ts",
    "replica",
    "actor",
    "transport",
    "tool",
    "action",
    "method",
    "path",
    "args_sha256",
    "outcome",
    "gitea_status",
    "duration_ms",
    "prev",
    "hash",
];

fn is_hex64(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The record hash as docs/audit-logging.md describes it: sha256 over `key=value\n` for every
/// field but `hash`, keys sorted, values in compact JSON.
fn record_hash(record: &Value) -> String {
    use sha2::{Digest, Sha256};
    let obj = record.as_object().expect("a record is an object");
    let mut keys: Vec<&String> = obj.keys().filter(|k| *k != "hash").collect();
    keys.sort();
    let mut canonical = String::new();
    for k in keys {
        canonical.push_str(&format!("{k}={}\n", obj[k]));
    }
    Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn verify_cli(path: &Path) -> (Option<i32>, String) {
    let out = bin_with_empty_env()
        .args(["audit", "verify"])
        .arg(path)
        .output()
        .expect("run audit verify");
    (
        out.status.code(),
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_call_leaves_one_chained_audit_record() {
    let gw = Gw::start(|_| {}).await;
    gw.fake.seed_repo("svc", "demo");
    let calls: Vec<(&str, Value)> = vec![
        (
            "gitea_find_action",
            json!({"query": "get the current user"}),
        ),
        (
            "gitea_execute_action",
            json!({"action": "gitea_user_get_current", "arguments": {}}),
        ),
        (
            "gitea_execute_action",
            json!({"action": "gitea_repo_get", "arguments": {"owner": "svc", "repo": "missing"}}),
        ),
        (
            "gitea_execute_action",
            json!({"action": "gitea_repo_delete", "arguments": {"owner": "svc", "repo": "demo"}}),
        ),
        (
            "gitea_execute_action",
            json!({"action": "gitea_repo_edit", "arguments": {"owner": "svc", "repo": "demo",
                "body": {"description": "x"}}, "dry_run": true}),
        ),
        ("gitea_no_such_tool", json!({"a": 1})),
    ];
    for (tool, args) in &calls {
        gw.call(Some(KEY_A), tool, args.clone()).await;
    }
    // Refused requests are not tool calls.
    gw.find(Some(WRONG_KEY)).await;
    gw.find(None).await;
    // One over MCP.
    let session = gw.mcp_session(Some(KEY_B)).await;
    gw.mcp_request(
        &session,
        Some(KEY_B),
        2,
        "tools/call",
        json!({"name": "gitea_find_action", "arguments": {"query": "merge a pull request"}}),
    )
    .await;

    let records = gw.audit_records();
    assert_eq!(records.len(), calls.len() + 1, "{records:#?}");
    let mut prev = GENESIS.to_string();
    for (i, r) in records.iter().enumerate() {
        let obj = r.as_object().unwrap();
        for f in AUDIT_FIELDS {
            assert!(obj.contains_key(f), "record {i} lacks {f}: {r}");
        }
        let extra: Vec<&String> = obj
            .keys()
            .filter(|k| !AUDIT_FIELDS.contains(&k.as_str()) && *k != "reason")
            .collect();
        assert!(
            extra.is_empty(),
            "record {i} has undocumented fields {extra:?}"
        );
        let ts = r["ts"].as_str().unwrap();
        assert!(
            ts.len() == 24 && ts.ends_with('Z') && &ts[10..11] == "T" && &ts[19..20] == ".",
            "{ts}"
        );
        assert!(r["duration_ms"].is_u64(), "{r}");
        assert!(is_hex64(&r["args_sha256"]), "{r}");
        assert!(is_hex64(&r["hash"]), "{r}");
        assert_eq!(
            r["prev"],
            prev.as_str(),
            "record {i} is chained to the one before"
        );
        prev = r["hash"].as_str().unwrap().to_string();
        for f in ["action", "method", "path"] {
            assert!(r[f].is_string() || r[f].is_null(), "{f}: {r}");
        }
        assert!(
            r["gitea_status"].is_u64() || r["gitea_status"].is_null(),
            "{r}"
        );
    }
    for (r, (tool, args)) in records.iter().zip(&calls) {
        assert_eq!(r["actor"], LABEL_A);
        assert_eq!(r["transport"], "rest");
        assert_eq!(r["tool"], *tool);
        assert_eq!(
            r["args_sha256"],
            aegis_gitea_mcp::exec::confirm::args_digest(tool, args),
            "{r}"
        );
    }
    let pick = |i: usize, f: &str| records[i][f].clone();
    assert_eq!(pick(0, "outcome"), "ok");
    assert_eq!(pick(0, "gitea_status"), Value::Null);
    assert_eq!(pick(1, "outcome"), "ok");
    assert_eq!(pick(1, "action"), "gitea_user_get_current");
    assert_eq!(pick(1, "method"), "GET");
    assert_eq!(pick(1, "gitea_status"), 200);
    assert_eq!(pick(2, "outcome"), "error");
    assert_eq!(pick(2, "gitea_status"), 404);
    assert_eq!(pick(3, "outcome"), "confirmation-required");
    assert_eq!(pick(3, "method"), "DELETE");
    assert_eq!(pick(4, "outcome"), "dry-run");
    assert_eq!(pick(5, "outcome"), "denied");
    assert_eq!(pick(5, "reason"), "unknown_tool");
    let last = records.last().unwrap();
    assert_eq!(last["transport"], "http");
    assert_eq!(last["actor"], LABEL_B);
    assert!(
        gw.fake.repo_exists("svc", "demo"),
        "the delete waited for its confirmation"
    );

    // The CLI verifies the chain, and finds an edit and a removal.
    let text = std::fs::read_to_string(&gw.audit).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (code, out) = verify_cli(&gw.audit);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!("{} records, chain intact", lines.len())),
        "{out}"
    );

    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, lines: &[String]| {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
        )
        .unwrap();
        p
    };
    let owned: Vec<String> = lines.iter().map(|l| l.to_string()).collect();

    let mut edited = owned.clone();
    edited[2] = edited[2].replacen("\"gitea_status\":404", "\"gitea_status\":200", 1);
    assert_ne!(edited[2], owned[2]);
    let (code, out) = verify_cli(&write("edited.log", &edited));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("line 3") && out.contains("edited"), "{out}");

    // The hash is what docs/audit-logging.md says it is.
    for r in &records {
        assert_eq!(r["hash"], record_hash(r), "{r}");
    }
    // Editing the actor and re-hashing that record alone breaks the next link.
    let mut forged: Value = serde_json::from_str(&owned[1]).unwrap();
    forged["actor"] = json!("someone-else");
    forged["hash"] = json!(record_hash(&forged));
    let mut rechained = owned.clone();
    rechained[1] = forged.to_string();
    let (code, out) = verify_cli(&write("forged.log", &rechained));
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("line 3") && out.contains("removed or reordered"),
        "{out}"
    );
    // An edit without re-hashing is found at the edited line.
    let mut unhashed: Value = serde_json::from_str(&owned[1]).unwrap();
    unhashed["actor"] = json!("someone-else");
    let mut edited_actor = owned.clone();
    edited_actor[1] = unhashed.to_string();
    let (code, out) = verify_cli(&write("actor.log", &edited_actor));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("line 2") && out.contains("edited"), "{out}");

    let mut removed = owned.clone();
    removed.remove(2);
    let (code, out) = verify_cli(&write("removed.log", &removed));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("line 3") && out.contains("removed"), "{out}");

    let (code, out) = verify_cli(&write("first-removed.log", &owned[1..]));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("line 1"), "{out}");

    let mut swapped = owned.clone();
    swapped.swap(3, 4);
    let (code, out) = verify_cli(&write("swapped.log", &swapped));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("line 4"), "{out}");

    // Known limit (docs/audit-logging.md): cutting off the tail leaves a valid chain.
    let (code, out) = verify_cli(&write("truncated.log", &owned[..3]));
    assert_eq!(code, Some(0), "{out}");
}

// ---- secrets, with the real binary ----------------------------------------------------------

/// What a finished process wrote.
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// The binary, with stdout and stderr collected and stderr lines streamed.
pub(crate) struct Proc {
    child: Child,
    stdout: Captured,
    stderr: Captured,
    lines: UnboundedReceiver<String>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

/// Removes ANSI colour sequences.
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl Proc {
    pub(crate) fn spawn(args: &[&str], env: &[(&str, String)]) -> Proc {
        let mut child = bin_with_empty_env()
            .env("NO_COLOR", "1")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdout = Captured::default();
        let stderr = Captured::default();
        let (tx, lines) = unbounded_channel();
        let out_reader = stdout.gather(child.stdout.take().unwrap());
        let sink = stderr.clone();
        let err_reader = on_each_line(child.stderr.take().unwrap(), move |line| {
            sink.append(line);
            let _ = tx.send(strip_ansi(&String::from_utf8_lossy(line)));
            true
        });
        Proc {
            child,
            stdout,
            stderr,
            lines,
            readers: vec![out_reader, err_reader],
        }
    }

    fn output(&self) -> Output {
        Output {
            stdout: self.stdout.text(),
            stderr: strip_ansi(&self.stderr.text()),
        }
    }

    /// Waits for the address the server announces on stderr.
    pub(crate) async fn address(&mut self) -> SocketAddr {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let line = match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) => line,
                Ok(None) => panic!("the server exited: {:?}", self.output()),
                Err(_) => panic!(
                    "the server did not announce its address: {:?}",
                    self.output()
                ),
            };
            if line.contains("serving MCP over streamable HTTP") {
                let addr = line
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("address="))
                    .unwrap_or_else(|| panic!("no address in {line:?}"));
                return addr.parse().expect("a socket address");
            }
        }
    }

    /// Waits (bounded) for the process to end by itself.
    async fn wait_exit(&mut self) -> (ExitStatus, Output) {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("the process did not exit: {:?}", self.output());
                }
            }
        }
        let status = self.child.wait().expect("wait for the process");
        self.join_readers();
        (status, self.output())
    }

    /// Ends this process (our own child, by its handle) and returns what it wrote.
    pub(crate) fn stop(&mut self) -> Output {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.join_readers();
        self.output()
    }

    fn join_readers(&mut self) {
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The binary serving HTTP in API-key mode at debug level over the full document, with the
/// key file and audit log in `dir`.
async fn spawn_gateway(fake: &FakeGitea, spec: &Path, dir: &Path) -> (Proc, String) {
    let keys_file = dir.join("keys");
    std::fs::write(&keys_file, format!("{}\n", key_line(KEY_A, LABEL_A))).unwrap();
    let mut p = Proc::spawn(
        &["serve", "--http", "--listen", "127.0.0.1:0"],
        &[
            ("GITEA_URL", fake.url()),
            ("GITEA_TOKEN", SERVER_TOKEN.into()),
            ("GITEA_SPEC", spec.display().to_string()),
            ("AUTH_MODE", "api-key".into()),
            ("API_KEYS_FILE", keys_file.display().to_string()),
            ("AUDIT_LOG", dir.join("audit.log").display().to_string()),
            ("LOG_LEVEL", "debug".into()),
        ],
    );
    let addr = p.address().await;
    (p, format!("http://{addr}"))
}

const SECRETS: [(&str, &str); 3] = [
    ("the Gitea token", SERVER_TOKEN),
    ("the API key", KEY_A),
    ("the password", PASSWORD),
];

fn assert_no_secret(what: &str, text: &str) {
    for (name, s) in SECRETS {
        if let Some(at) = text.find(s) {
            let from = text[..at]
                .char_indices()
                .rev()
                .nth(200)
                .map_or(0, |(i, _)| i);
            let to = (at + s.len() + 200).min(text.len());
            panic!(
                "{name} leaked into {what}: …{}…",
                text.get(from..to).unwrap_or(text)
            );
        }
    }
}

/// Collects every answer's status, headers and body.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    async fn send(&mut self, rb: reqwest::RequestBuilder) -> Resp {
        let r = rb.send().await.expect("the gateway answers");
        let resp = Resp {
            status: r.status().as_u16(),
            headers: r.headers().clone(),
            body: r.text().await.expect("a body"),
        };
        self.0.push(format!("{:?}\n{}", resp.headers, resp.body));
        resp
    }
}

fn create_user_args() -> Value {
    json!({"action": "gitea_admin_create_user", "dry_run": true, "arguments": {"body": {
        "username": "carol", "email": "carol@example.com", "password": PASSWORD,
        "must_change_password": false}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_appear_in_no_output_log_or_audit_record() {
    let spec = PathBuf::from(FIXTURE);
    let fake = fake().await;
    fake.seed_repo("svc", "demo");
    let dir = tempfile::tempdir().unwrap();
    let (mut p, base) = spawn_gateway(&fake, &spec, dir.path()).await;
    let http = client();
    let mut seen = Seen::default();
    let call = |key: &str, name: &str, args: Value| {
        http.post(format!("{base}/mcp/tool/call"))
            .bearer_auth(key)
            .json(&json!({"name": name, "arguments": args}))
    };

    // Success.
    assert_eq!(seen.send(http.get(format!("{base}/"))).await.status, 200);
    let r = seen
        .send(call(
            KEY_A,
            "gitea_find_action",
            json!({"query": "create a user"}),
        ))
        .await;
    assert_eq!(r.tool_result()["isError"], false);
    let r = seen
        .send(call(
            KEY_A,
            "gitea_execute_action",
            json!({"action": "gitea_user_get_current", "arguments": {}}),
        ))
        .await;
    assert_eq!(r.tool_result()["structuredContent"]["data"]["login"], "svc");
    // The dry run of a create-user action with a password: the preview redacts it.
    let r = seen
        .send(call(KEY_A, "gitea_execute_action", create_user_args()))
        .await;
    let v = r.tool_result();
    assert_eq!(v["isError"], false, "{v}");
    assert!(
        r.body.contains("carol"),
        "the preview shows the request: {v}"
    );
    // The same through a raw request.
    let r = seen
        .send(call(
            KEY_A,
            "gitea_api_request",
            json!({"method": "POST", "path": "/admin/users", "dry_run": true,
                "body": {"username": "dave", "email": "dave@example.com", "password": PASSWORD}}),
        ))
        .await;
    assert_eq!(r.tool_result()["isError"], false);
    // Tool errors: invalid arguments carrying the password, an unknown action, a Gitea 404.
    for input in [
        json!({"action": "gitea_admin_create_user", "arguments": {"body": {
            "username": "erin", "password": PASSWORD, "bogus_field": PASSWORD}}}),
        json!({"action": "gitea_no_such_action", "arguments": {"password": PASSWORD}}),
        json!({"action": "gitea_repo_get", "arguments": {"owner": "svc", "repo": "missing"}}),
    ] {
        let r = seen.send(call(KEY_A, "gitea_execute_action", input)).await;
        assert_eq!(r.tool_result()["isError"], true);
    }
    let r = seen
        .send(call(
            KEY_A,
            "gitea_no_such_tool",
            json!({"token": SERVER_TOKEN}),
        ))
        .await;
    assert_eq!(r.status, 404);
    // 401s: a wrong key, the Gitea token as a key, the key where it is not accepted.
    for rb in [
        call(WRONG_KEY, "gitea_find_action", json!({"query": "x"})),
        call(SERVER_TOKEN, "gitea_find_action", json!({"query": "x"})),
        http.post(format!("{base}/mcp/tool/call?api_key={KEY_A}"))
            .json(&json!({"name": "gitea_find_action", "arguments": {"query": "x"}})),
        http.post(format!("{base}/mcp/tool/call"))
            .header("authorization", format!("Basic {KEY_A}"))
            .json(&json!({"name": "gitea_find_action", "arguments": {"query": "x"}})),
    ] {
        assert_eq!(seen.send(rb).await.status, 401);
    }
    // MCP over HTTP: a session and a find call.
    let mcp = |session: Option<&str>, msg: &Value| {
        mcp_post_to(&http, format!("{base}/mcp"), session, Some(KEY_A), msg)
    };
    let r = seen.send(mcp(None, &initialize("secrets-test"))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let session = r.header("mcp-session-id").expect("a session").to_string();
    seen.send(mcp(
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ))
    .await;
    let r = seen
        .send(mcp(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "gitea_find_action", "arguments": {"query": "create a user"}}}),
        ))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // Metrics too.
    let r = seen.send(http.get(format!("{base}/metrics"))).await;
    assert_eq!(r.status, 200);

    let out = p.stop();
    assert!(
        out.stderr.contains("DEBUG"),
        "debug logging is on: {}",
        out.stderr
    );
    assert_no_secret("stdout", &out.stdout);
    assert_no_secret("stderr", &out.stderr);
    for (i, body) in seen.0.iter().enumerate() {
        assert_no_secret(&format!("answer {i}"), body);
    }
    let audit = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
    assert_eq!(audit.lines().count(), 9, "{audit}");
    assert_no_secret("the audit log", &audit);
    // Nothing was created by the dry runs.
    assert_eq!(fake.count("POST", "/api/v1/admin/users"), 0);
}

/// At LOG_LEVEL=debug, tool arguments sent over MCP must not reach the log: they may carry
/// passwords and secrets (rmcp logs every received request with its parameters at debug).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_logs_do_not_echo_mcp_tool_arguments() {
    let spec = PathBuf::from(FIXTURE);
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut p, base) = spawn_gateway(&fake, &spec, dir.path()).await;
    let http = client();
    let mcp = |session: Option<&str>, msg: Value| {
        mcp_post_to(&http, format!("{base}/mcp"), session, Some(KEY_A), &msg)
    };
    let r = mcp(None, initialize("secrets-test")).send().await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    r.text().await.unwrap();
    mcp(
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .send()
    .await
    .unwrap();
    let r = mcp(
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "gitea_execute_action", "arguments": create_user_args()}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let body = r.text().await.unwrap();
    assert!(body.contains("carol"), "{body}");
    let out = p.stop();
    assert_no_secret("the answer", &body);
    assert_no_secret("stdout", &out.stdout);
    assert_no_secret("stderr", &out.stderr);
    let audit = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
    assert_no_secret("the audit log", &audit);
}

/// An MCP session belongs to the credential that opened it: another key cannot use or close it
/// (it does not exist for them), the owner can.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_belongs_to_the_credential_that_opened_it() {
    let gw = Gw::start(|_| {}).await;
    let session = gw.mcp_session(Some(KEY_A)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
    let r = gw.mcp_post(Some(&session), Some(KEY_B), &ping).await;
    assert_eq!(r.status, 404, "another key: {}", r.body);
    let r = gw.mcp_post(Some(&session), Some(KEY_A), &ping).await;
    assert_eq!(r.status, 200, "the owner: {}", r.body);
    let delete = |key: &str| {
        gw.http
            .delete(gw.url("/mcp"))
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .bearer_auth(key)
    };
    assert_eq!(
        gw.send(delete(KEY_B)).await.status,
        404,
        "another key cannot close it"
    );
    let r = gw.send(delete(KEY_A)).await;
    assert!(
        r.status < 300,
        "the owner closes it: {} {}",
        r.status,
        r.body
    );
    let r = gw.mcp_post(Some(&session), Some(KEY_A), &ping).await;
    assert_eq!(r.status, 404, "a closed session is gone: {}", r.body);
}

/// Resource reads over MCP are audited too (tool `resources/read`, the reader as actor).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_reads_are_audited() {
    let gw = Gw::start(|_| {}).await;
    let session = gw.mcp_session(Some(KEY_A)).await;
    let read = json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read",
        "params": {"uri": "gitea://actions/gitea_repo_get"}});
    let r = gw.mcp_post(Some(&session), Some(KEY_A), &read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let reads: Vec<Value> = gw
        .audit_records()
        .into_iter()
        .filter(|r| r["tool"] == "resources/read")
        .collect();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert_eq!(reads[0]["outcome"], "ok");
    assert_eq!(reads[0]["transport"], "http");
    assert_ne!(reads[0]["actor"], "anonymous");
}

// ---- hardening: the holes found by attacking the server ---------------------------------------

impl Gw {
    /// `gitea_repo_get` for `owner/repo` with credential `key`.
    async fn repo_get(&self, key: &str, owner: &str, repo: &str) -> Resp {
        self.execute(
            Some(key),
            "gitea_repo_get",
            json!({"owner": owner, "repo": repo}),
        )
        .await
    }
}

/// The confirmation token in a tool result.
fn confirm_of(v: &Value) -> String {
    v["structuredContent"]["confirm"]
        .as_str()
        .unwrap_or_else(|| panic!("no confirm token in {v}"))
        .to_string()
}

/// `c<expiry>.<nonce>.<mac>` spelled differently but with the same numbers.
fn respellings(token: &str) -> Vec<String> {
    let (expiry, rest) = token[1..].split_once('.').expect("a token");
    vec![
        format!("c0{expiry}.{rest}"),
        format!("c00{expiry}.{rest}"),
        format!("c+{expiry}.{rest}"),
        format!("c{expiry}.{}", rest.to_uppercase()),
        format!(" {token} x"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_is_redeemed_once_in_one_spelling_by_its_own_caller() {
    let gw = Gw::start(|_| {}).await;
    gw.fake.seed_repo("svc", "demo");
    gw.fake.clear_requests();
    let delete = |key: &'static str, confirm: Option<String>| {
        let mut args =
            json!({"action": "gitea_repo_delete", "arguments": {"owner": "svc", "repo": "demo"}});
        if let Some(c) = confirm {
            args["confirm"] = json!(c);
        }
        gw.call(Some(key), "gitea_execute_action", args)
    };
    let v = delete(KEY_A, None).await.tool_result();
    assert_eq!(v["structuredContent"]["confirmation_required"], true, "{v}");
    let token = confirm_of(&v);
    // Another API key cannot redeem A's token.
    let v = delete(KEY_B, Some(token.clone())).await.tool_result();
    assert_eq!(v["isError"], true, "{v}");
    assert!(v.to_string().contains("issued for a different call"), "{v}");
    // Other spellings of the same token are refused before any state is touched.
    for s in respellings(&token) {
        let v = delete(KEY_A, Some(s.clone())).await.tool_result();
        assert_eq!(v["isError"], true, "{s}: {v}");
    }
    assert_eq!(gw.fake.count("DELETE", "/repos/svc/demo"), 0);
    let v = delete(KEY_A, Some(token.clone())).await.tool_result();
    assert_eq!(v["isError"], false, "{v}");
    assert_eq!(v["structuredContent"]["status"], 204);
    // Replays, in every spelling: refused, and nothing more reaches Gitea.
    gw.fake.seed_repo("svc", "demo");
    for s in respellings(&token).into_iter().chain([token.clone()]) {
        let v = delete(KEY_A, Some(s.clone())).await.tool_result();
        assert_eq!(v["isError"], true, "{s}: {v}");
    }
    assert_eq!(gw.fake.count("DELETE", "/repos/svc/demo"), 1);
    assert!(gw.fake.repo_exists("svc", "demo"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_through_resource_reads_run_under_the_callers_token() {
    let gw = Gw::start(|s| {
        s.gateway.auth_mode = AuthMode::GiteaToken;
        s.gateway.api_keys = None;
    })
    .await;
    gw.fake.seed_repo_with(
        "alice",
        "secret",
        crate::support::RepoSeed {
            private: true,
            ..Default::default()
        },
    );
    gw.fake.clear_requests();
    let read = |token| gw.read_in_new_session(token, "gitea://repo/alice/secret".into());
    // Bob cannot see alice's private repository, whatever the server's token could.
    let reply = read(BOB_TOKEN).await;
    assert_eq!(reply["error"]["code"], -32003, "{reply}");
    let reply = read(ALICE_TOKEN).await;
    let text = reply["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("alice/secret"), "{reply}");
    let reads: Vec<_> = gw
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/repos/alice/secret")
        .collect();
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert_eq!(reads[0].token_user.as_deref(), Some("bob"));
    assert_eq!(reads[1].token_user.as_deref(), Some("alice"));
    for r in gw.fake.requests() {
        assert!(
            !r.header("authorization")
                .unwrap_or("")
                .contains(SERVER_TOKEN),
            "{r:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_raw_paths_are_judged_by_their_template_family() {
    async fn raw(gw: &Gw, method: &str, path: &str) -> Resp {
        gw.call(
            Some(KEY_A),
            "gitea_api_request",
            json!({"method": method, "path": path}),
        )
        .await
    }
    // A disabled action under a catch-all spelling (a branch name with a slash).
    let gw = Gw::start(|s| {
        s.args.raw_unknown_paths = aegis_gitea_mcp::config::UnknownPaths::Allow;
        s.args.disabled_tools = Some("repoDeleteBranch".into());
        s.args.confirm_destructive = false;
    })
    .await;
    gw.fake.clear_requests();
    let v = raw(&gw, "DELETE", "/repos/acme/web/branches/feature/x")
        .await
        .tool_result();
    assert_eq!(v["isError"], true, "{v}");
    assert_eq!(
        v["structuredContent"]["withheld"]["code"], "disabled",
        "{v}"
    );
    // An unknown path that no withheld action owns still goes out (the operator allowed it).
    let v = raw(&gw, "GET", "/repos/acme/web/branches/feature/x")
        .await
        .tool_result();
    assert!(v["structuredContent"].get("withheld").is_none(), "{v}");
    let sent: Vec<String> = gw
        .fake
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(sent, ["GET /api/v1/repos/acme/web/branches/feature/x"]);

    // An owner that spells a literal of another template is still an owner.
    let gw = Gw::start(|s| {
        s.args.raw_unknown_paths = aegis_gitea_mcp::config::UnknownPaths::Allow;
        s.args.toolsets = Some("issue".into());
        s.args.confirm_destructive = false;
    })
    .await;
    gw.fake.clear_requests();
    for (method, path) in [
        ("DELETE", "/repos/issues/web/branches/x"),
        ("PATCH", "/repos/issues/web/branches/x"),
        ("DELETE", "/repos/search/web/branches/x/y"),
        ("PATCH", "/repos/migrate/web/branches/x"),
        ("DELETE", "/repos/issues/web/branches/feature/x"),
    ] {
        let v = raw(&gw, method, path).await.tool_result();
        assert_eq!(v["isError"], true, "{method} {path}: {v}");
        assert_eq!(
            v["structuredContent"]["withheld"]["code"], "toolsets",
            "{method} {path}: {v}"
        );
    }
    assert!(gw.fake.requests().is_empty(), "{:?}", gw.fake.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_that_gitea_echoes_never_reach_the_caller() {
    let gw = Gw::start(|_| {}).await;
    gw.fake.seed_repo("alice", "demo");
    for status in [200, 400, 500] {
        gw.fake
            .inject(Fault::Echo { status }.on("POST", "/repos/alice/demo/issues"));
        let r = gw
            .call(
                Some(KEY_A),
                "gitea_api_request",
                json!({"method": "POST", "path": "/repos/alice/demo/issues",
                    "body": {"title": "t", "password": PASSWORD}}),
            )
            .await;
        let v = r.tool_result();
        // The echo did arrive (the fake quoted the request) …
        assert!(r.body.contains("[redacted]"), "{status}: {}", r.body);
        // … but without the token, the API key or the password.
        for (what, secret) in [
            ("token", SERVER_TOKEN),
            ("key", KEY_A),
            ("password", PASSWORD),
        ] {
            assert!(!r.body.contains(secret), "{status}: the {what} leaked: {v}");
        }
    }
    // The same through a resource error.
    gw.fake
        .inject(Fault::Echo { status: 500 }.on("GET", "/repos/alice/demo"));
    let reply = gw
        .read_in_new_session(KEY_A, "gitea://repo/alice/demo".into())
        .await;
    assert!(reply.get("error").is_some(), "{reply}");
    assert!(!reply.to_string().contains(SERVER_TOKEN), "{reply}");

    // Pass-through: the caller's own token is scrubbed too.
    let gw = Gw::start(|s| {
        s.gateway.auth_mode = AuthMode::GiteaToken;
        s.gateway.api_keys = None;
    })
    .await;
    gw.fake.seed_repo("bob", "demo");
    gw.fake
        .inject(Fault::Echo { status: 422 }.on("GET", "/repos/bob/demo"));
    let r = gw.repo_get(BOB_TOKEN, "bob", "demo").await;
    assert!(r.body.contains("[redacted]"), "{}", r.body);
    assert!(!r.body.contains(BOB_TOKEN), "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_tools_match_operation_ids_in_any_case() {
    let gw = Gw::start(|s| s.args.disabled_tools = Some("REPODELETE, GITEA_REPO_GET".into())).await;
    gw.fake.seed_repo("alice", "demo");
    gw.fake.clear_requests();
    for action in ["gitea_repo_delete", "gitea_repo_get"] {
        let v = gw
            .execute(
                Some(KEY_A),
                action,
                json!({"owner": "alice", "repo": "demo"}),
            )
            .await
            .tool_result();
        assert_eq!(
            v["structuredContent"]["withheld"]["code"], "disabled",
            "{action}: {v}"
        );
    }
    assert!(gw.fake.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_never_follow_redirects_and_reads_keep_credentials_at_home() {
    let other = FakeGitea::start().await;
    other.seed_repo("alice", "demo");
    let gw = Gw::start(|_| {}).await;
    gw.fake.seed_repo("alice", "demo");
    let create = || {
        gw.execute(
            Some(KEY_A),
            "gitea_issue_create",
            json!({"owner": "alice", "repo": "demo", "body": {"title": "t", "body": "x"}}),
        )
    };
    // A redirect loop on a POST: sent once, answered with the redirect.
    gw.fake.clear_requests();
    gw.fake
        .inject(Fault::RedirectLoop { status: 307 }.on("POST", "/repos/alice/demo/issues"));
    let v = create().await.tool_result();
    assert_eq!(v["isError"], true, "{v}");
    assert!(v.to_string().contains("never follows a redirect"), "{v}");
    assert_eq!(gw.fake.count("POST", "/repos/alice/demo/issues"), 1);
    gw.fake.clear_faults();
    // To another origin, with every redirect status: nothing reaches the other host.
    for status in [301, 302, 303, 307, 308] {
        gw.fake.clear_requests();
        gw.fake.inject(
            Fault::Redirect {
                status,
                to: crate::support::RedirectTarget::Url(other.url()),
            }
            .on("POST", "/repos/alice/demo/issues"),
        );
        let v = create().await.tool_result();
        assert_eq!(v["isError"], true, "{status}: {v}");
        assert_eq!(
            v["structuredContent"]["location"],
            format!("{}/api/v1/repos/alice/demo/issues", other.url()),
            "{v}"
        );
        assert_eq!(
            gw.fake.count("POST", "/repos/alice/demo/issues"),
            1,
            "{status}"
        );
    }
    assert!(other.requests().is_empty(), "{:?}", other.requests());
    assert!(other.comments("alice", "demo", 1).is_empty());

    // Reads: a same-origin redirect is followed with the token …
    gw.fake.clear_requests();
    gw.fake.inject(
        Fault::Redirect {
            status: 302,
            to: crate::support::RedirectTarget::Location("/api/v1/repos/alice/demo".into()),
        }
        .on("GET", "/repos/alice/moved"),
    );
    let v = gw.repo_get(KEY_A, "alice", "moved").await.tool_result();
    assert_eq!(v["isError"], false, "{v}");
    let hops = gw.fake.requests();
    assert_eq!(hops.len(), 2, "{hops:?}");
    for r in &hops {
        assert_eq!(
            r.header("authorization"),
            Some(format!("token {SERVER_TOKEN}").as_str()),
            "{r:?}"
        );
    }
    // … a cross-origin one without Authorization or Sudo.
    gw.fake.inject(
        Fault::Redirect {
            status: 302,
            to: crate::support::RedirectTarget::Url(other.url()),
        }
        .on("GET", "/repos/alice/demo"),
    );
    let v = gw
        .execute(
            Some(KEY_A),
            "gitea_repo_get",
            json!({"owner": "alice", "repo": "demo", "sudo": "bob"}),
        )
        .await
        .tool_result();
    // The other host got no credentials, so it refuses: that answer is what comes back.
    assert_eq!(v["structuredContent"]["status"], 401, "{v}");
    let there = other.requests();
    assert_eq!(there.len(), 1, "{there:?}");
    assert!(there[0].header("authorization").is_none(), "{:?}", there[0]);
    assert!(there[0].sudo.is_none(), "{:?}", there[0]);
    // A read redirect loop ends with an error, not a hang.
    gw.fake
        .inject(Fault::RedirectLoop { status: 302 }.on("GET", "/repos/alice/demo"));
    let v = gw.repo_get(KEY_A, "alice", "demo").await.tool_result();
    assert_eq!(v["isError"], true, "{v}");
    assert!(v.to_string().contains("redirects"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guard_arguments_of_the_wrong_type_never_become_a_write() {
    let gw = Gw::start(|s| s.surface = Surface::Individual).await;
    gw.fake.seed_repo("alice", "demo");
    gw.fake.clear_requests();
    let create = |extra: Value| {
        let mut args = json!({"owner": "alice", "repo": "demo", "body": {"title": "t"}});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        gw.call(Some(KEY_A), "gitea_issue_create", args)
    };
    for bad in [
        json!({"dry_run": "yes"}),
        json!({"dry_run": 1}),
        json!({"dry_run": "TRUE "}),
        json!({"confirm": 5}),
    ] {
        let v = create(bad.clone()).await.tool_result();
        assert_eq!(v["isError"], true, "{bad}: {v}");
    }
    let v = create(json!({"dry_run": "true"})).await.tool_result();
    assert_eq!(v["structuredContent"]["dry_run"], true, "{v}");
    assert!(gw.fake.requests().is_empty(), "{:?}", gw.fake.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_without_an_answer_is_reported_as_possibly_applied() {
    let gw = Gw::start(|s| s.gateway.request_timeout = Duration::from_secs(1)).await;
    gw.fake.seed_repo("alice", "demo");
    gw.fake.clear_requests();
    gw.fake
        .inject(Fault::Delay(Duration::from_secs(600)).on("POST", "/repos/alice/demo/issues"));
    let v = gw
        .execute(
            Some(KEY_A),
            "gitea_issue_create",
            json!({"owner": "alice", "repo": "demo", "body": {"title": "t"}}),
        )
        .await
        .tool_result();
    assert_eq!(v["isError"], true, "{v}");
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("may have been applied"), "{text}");
    assert!(text.contains("check with gitea_issue_list"), "{text}");
    assert_eq!(v["structuredContent"]["may_have_been_applied"], true);
    assert_eq!(gw.fake.count("POST", "/repos/alice/demo/issues"), 1);
    let last = gw.audit_records().pop().expect("an audit record");
    assert_eq!(last["outcome"], "unknown", "{last}");
    gw.fake.stop().await;
}

/// The size of what a model receives from a REST tool call: its text and structured copy.
fn answer_bytes(r: &Resp) -> usize {
    let v = r.json();
    v["content"][0]["text"].as_str().map_or(0, str::len) + v["structuredContent"].to_string().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_bounded_whatever_gitea_or_the_caller_sends() {
    const MAX: usize = 80_000;
    let gw = Gw::start(|s| s.gateway.max_body_bytes = 32 << 20).await;
    gw.fake.seed_repo("alice", "demo");
    // A huge Gitea error message.
    gw.fake.inject(
        Fault::HugeErrorMessage {
            status: 422,
            bytes: 900_000,
        }
        .on("GET", "/repos/alice/demo"),
    );
    let r = gw.repo_get(KEY_A, "alice", "demo").await;
    assert_eq!(r.tool_result()["isError"], true);
    assert!(answer_bytes(&r) <= MAX, "{}", answer_bytes(&r));
    // A huge body.
    gw.fake
        .inject(Fault::HugeBody { bytes: 3_000_000 }.on("GET", "/repos/alice/demo"));
    let r = gw.repo_get(KEY_A, "alice", "demo").await;
    assert!(answer_bytes(&r) <= MAX, "{}", answer_bytes(&r));
    // Caller input echoed back: a 2 MB action name, argument key, owner, method, tool name,
    // find query.
    let big = "x".repeat(2 << 20);
    let cases = [
        ("gitea_execute_action", json!({"action": big})),
        (
            "gitea_execute_action",
            json!({"action": "gitea_repo_get", "arguments": {big.clone(): 1, "owner": "a", "repo": "b"}}),
        ),
        (
            "gitea_execute_action",
            json!({"action": "gitea_repo_get", "arguments": {"owner": big, "repo": "b"}}),
        ),
        (
            "gitea_api_request",
            json!({"method": big, "path": "/repos/a/b"}),
        ),
        ("gitea_api_request", json!({"method": "GET", "path": big})),
        ("gitea_find_action", json!({"query": "y".repeat(10 << 20)})),
        (
            "gitea_find_action",
            json!({"query": "list issues", big.clone(): true}),
        ),
    ];
    for (tool, args) in cases {
        let r = gw.call(Some(KEY_A), tool, args).await;
        assert_eq!(
            r.status,
            200,
            "{tool}: {}",
            &r.body[..r.body.len().min(300)]
        );
        assert!(answer_bytes(&r) <= MAX, "{tool}: {}", answer_bytes(&r));
    }
    let r = gw.call(Some(KEY_A), &big, json!({})).await;
    assert_eq!(r.status, 404);
    assert!(r.body.len() <= 1000, "{}", r.body.len());
    // A resource with a huge body (JSON and markdown carry it): bounded in total.
    let index = gw.fake.seed_issue("alice", "demo", "big");
    gw.fake
        .set_issue_body("alice", "demo", index, &"body ".repeat(60_000));
    let reply = gw
        .read_in_new_session(KEY_A, format!("gitea://repo/alice/demo/issue/{index}"))
        .await;
    let contents = reply["result"]["contents"].as_array().expect("contents");
    let total: usize = contents
        .iter()
        .map(|c| c["text"].as_str().map_or(0, str::len))
        .sum();
    assert!(total <= MAX, "{total}");
    assert!(
        contents[0]["text"].as_str().unwrap().contains("body body"),
        "the body is shown, shortened"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_reads_from_gitea_are_bounded() {
    // /health: a 5 MB /version is not read (and not believed).
    let gw = Gw::start(|_| {}).await;
    gw.fake
        .inject(Fault::HugeBody { bytes: 5 << 20 }.on("GET", "/version"));
    let r = gw.get("/health", None).await;
    assert_eq!(r.status, 503, "{}", r.body);
    // The pass-through token check: a 5 MB /user is refused, not read.
    let gw = Gw::start(|s| {
        s.gateway.auth_mode = AuthMode::GiteaToken;
        s.gateway.api_keys = None;
    })
    .await;
    gw.fake
        .inject(Fault::HugeBody { bytes: 5 << 20 }.on("GET", "/user"));
    let r = gw
        .execute(Some(BOB_TOKEN), "gitea_user_get_current", json!({}))
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
    // The start-up scope read: unreadable scopes withhold nothing.
    let config = Config::from_args(&GlobalArgs {
        gitea_url: Some(aegis_gitea_mcp::config::parse_gitea_url(&gw.fake.url()).expect("a URL")),
        gitea_token: Some(aegis_gitea_mcp::config::Secret::new(SERVER_TOKEN)),
        ..GlobalArgs::default()
    })
    .unwrap();
    let ctx = Context::new(
        &config,
        ExecConfig::from_config(&config),
        Default::default(),
    )
    .unwrap();
    gw.fake
        .inject(Fault::HugeBody { bytes: 5 << 20 }.on("GET", "/token"));
    assert_eq!(ctx.token_scopes().await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_caps_hold_at_every_spelling_of_the_endpoint_and_per_credential() {
    async fn open(gw: &Gw, path: &str, key: &str) -> Resp {
        let init = initialize("cap");
        gw.send(mcp_post_to(&gw.http, gw.url(path), None, Some(key), &init))
            .await
    }
    let gw = Gw::start(|s| s.gateway.max_sessions = 1).await;
    assert_eq!(open(&gw, "/mcp", KEY_A).await.status, 200);
    for path in ["/mcp/", "/mcp", "/mcp//"] {
        let r = open(&gw, path, KEY_B).await;
        assert_eq!(r.status, 503, "{path}: {}", r.body);
    }
    let gw = Gw::start(|s| s.gateway.max_sessions_per_credential = 2).await;
    assert_eq!(open(&gw, "/mcp", KEY_A).await.status, 200);
    assert_eq!(open(&gw, "/mcp/", KEY_A).await.status, 200);
    let r = open(&gw, "/mcp", KEY_A).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body.contains("MAX_SESSIONS_PER_CREDENTIAL"), "{}", r.body);
    assert_eq!(
        open(&gw, "/mcp", KEY_B).await.status,
        200,
        "another credential still can"
    );
}

/// Reads from `s` until the server closes the connection; what it sent.
async fn until_closed(s: &mut TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        loop {
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    };
    tokio::time::timeout(DEADLINE, read)
        .await
        .expect("the server closes the connection");
    buf
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_silent_connections_are_closed_and_capped() {
    let gw = Gw::start(|s| s.gateway.header_timeout = Duration::from_secs(1)).await;
    let mut silent = Vec::new();
    let mut slow = Vec::new();
    for _ in 0..20 {
        silent.push(TcpStream::connect(gw.addr).await.unwrap());
        let mut s = TcpStream::connect(gw.addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(s);
    }
    for s in silent.iter_mut().chain(slow.iter_mut()) {
        until_closed(s).await;
    }
    // An idle keep-alive connection is closed too, after its answer.
    let mut idle = TcpStream::connect(gw.addr).await.unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let answer = until_closed(&mut idle).await;
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
    gw.assert_alive().await;

    // At most two connections: a third is closed at once, without an answer.
    let gw = Gw::start(|s| {
        s.gateway.max_connections = 2;
        s.gateway.header_timeout = Duration::from_secs(600);
    })
    .await;
    let held = [
        TcpStream::connect(gw.addr).await.unwrap(),
        TcpStream::connect(gw.addr).await.unwrap(),
    ];
    // The accept loop takes connections in order: once the third is refused, both are held.
    let mut third = TcpStream::connect(gw.addr).await.unwrap();
    let _ = third
        .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await;
    assert!(until_closed(&mut third).await.is_empty());
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tool_names_never_become_metric_labels() {
    let gw = Gw::start(|_| {}).await;
    for i in 0..50 {
        let r = gw
            .call(
                Some(KEY_A),
                &format!("no-such-tool-{i}-{}", "z".repeat(100)),
                json!({}),
            )
            .await;
        assert_eq!(r.status, 404);
    }
    let text = gw.metrics().await;
    assert!(!text.contains("no-such-tool"), "{text}");
    assert!(text.contains("tool=\"unknown_tool\""), "{text}");
}

#[tokio::test]
async fn listen_accepts_a_local_host_name() {
    let mut p = Proc::spawn(
        &["serve", "--http", "--listen", "localhost:0"],
        &[
            ("GITEA_URL", "http://127.0.0.1:9".into()),
            ("GITEA_SPEC", crate::common::FIXTURE.into()),
            ("AUTH_MODE", "none".into()),
            ("LOG_LEVEL", "info".into()),
        ],
    );
    let addr = p.address().await;
    // `none` is only allowed on loopback: the name resolved to a loopback address.
    assert!(addr.ip().is_loopback(), "{addr}");
    let root = client()
        .get(format!("http://{addr}/"))
        .send()
        .await
        .expect("answers");
    assert_eq!(root.status(), 200);
}

//! The MCP server over streamable HTTP (`serve --http`), driven as a process with reqwest:
//! sessions (initialize → `Mcp-Session-Id`, calls, DELETE → later requests 404), stateless
//! mode, DNS-rebinding protection (`Host`, and `Origin` with `ALLOWED_ORIGINS`), protocol
//! headers, body limits and concurrent requests on one session.
//!
//! Each test starts its own server on a free loopback port (bound, read and released; the
//! server binds it again) with a clean environment, waits until it answers (bounded polling),
//! and kills it by its own handle at the end. Every HTTP request has a timeout.

use std::net::TcpListener;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::{Captured, FIXTURE, bin_with_empty_env, http_client};
use crate::support::{FakeGitea, Fault};
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

const TOKEN: &str = "http-test-token";
const ACCEPT: &str = "application/json, text/event-stream";
const SESSION: &str = "mcp-session-id";

/// One `aegis-gitea-mcp serve --http` process.
struct HttpServer {
    child: Child,
    port: u16,
    stderr: Captured,
}

impl HttpServer {
    /// Starts `serve --http --listen 127.0.0.1:<free port> <extra>` with exactly `env` (plus
    /// the fixture as the document) and waits until `/mcp` answers.
    async fn start(extra: &[&str], env: &[(&str, String)]) -> HttpServer {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let mut cmd = bin_with_empty_env();
        cmd.env("GITEA_SPEC", FIXTURE)
            .env("LOG_LEVEL", "info")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .args(["serve", "--http", "--listen", &listen])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("the binary starts");
        let stderr = Captured::default();
        stderr.gather(child.stderr.take().expect("piped stderr"));
        let mut server = HttpServer {
            child,
            port,
            stderr,
        };
        server.wait_ready().await;
        server
    }

    /// Polls `GET /mcp` (any HTTP answer will do) at most 300 times, 50 ms apart.
    async fn wait_ready(&mut self) {
        let c = client();
        for _ in 0..300 {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the server exited during start-up ({status}); stderr:\n{}",
                    self.stderr()
                );
            }
            if c.get(self.url())
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "the server did not answer on {} within 15 s; stderr:\n{}",
            self.url(),
            self.stderr()
        );
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn stderr(&self) -> String {
        self.stderr.text()
    }

    /// Stops the server (by its own handle) and checks it did not panic.
    fn stop(mut self) {
        assert!(
            matches!(self.child.try_wait(), Ok(None)),
            "the server died during the test; stderr:\n{}",
            self.stderr()
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = self.stderr();
        assert!(
            !stderr.contains("panicked"),
            "the server panicked:\n{stderr}"
        );
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local address").port()
}

fn client() -> Client {
    http_client(Duration::from_secs(30))
}

/// One HTTP answer: status, headers and the JSON-RPC messages of its body (plain JSON or an
/// SSE stream's `data:` lines).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
    messages: Vec<Value>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("ASCII header").to_string())
    }

    /// The response to request `id`.
    fn response(&self, id: i64) -> &Value {
        self.messages
            .iter()
            .find(|m| m["id"] == id && m.get("method").is_none())
            .unwrap_or_else(|| {
                panic!(
                    "no response to request {id} ({}): {}",
                    self.status, self.body
                )
            })
    }

    fn result(&self, id: i64) -> &Value {
        let r = self.response(id);
        assert!(r.get("error").is_none(), "{r}");
        &r["result"]
    }
}

/// Parses a body: JSON, or `text/event-stream` whose `data:` lines carry JSON messages.
fn messages(content_type: &str, body: &str) -> Vec<Value> {
    if content_type.starts_with("text/event-stream") {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("bad SSE data ({e}): {d}")))
            .collect()
    } else if content_type.starts_with("application/json") && !body.trim().is_empty() {
        match serde_json::from_str(body) {
            Ok(Value::Array(batch)) => batch,
            Ok(v) => vec![v],
            Err(e) => panic!("bad JSON body ({e}): {body}"),
        }
    } else {
        Vec::new()
    }
}

/// A client for one server's `/mcp`.
#[derive(Clone)]
struct Endpoint {
    c: Client,
    url: String,
}

impl Endpoint {
    /// [`client`] on `server`'s URL.
    fn of(server: &HttpServer) -> Endpoint {
        Endpoint {
            c: client(),
            url: server.url(),
        }
    }

    /// POSTs `message` with the usual headers plus `headers`.
    async fn post(&self, message: &Value, headers: &[(&str, &str)]) -> Answer {
        let mut req = self
            .c
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header("accept", ACCEPT)
            .body(message.to_string());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        read(req.send().await.expect("POST /mcp")).await
    }

    /// POSTs request `id` (`method` with `params`) in `session`.
    async fn in_session(&self, session: &str, id: i64, method: &str, params: Value) -> Answer {
        self.post(&request(id, method, params), &[(SESSION, session)])
            .await
    }

    /// DELETE /mcp for `session`; the status.
    async fn delete_session(&self, session: &str) -> StatusCode {
        self.c
            .delete(&self.url)
            .header(SESSION, session)
            .send()
            .await
            .expect("DELETE /mcp")
            .status()
    }

    /// initialize + notifications/initialized; returns the session id.
    async fn open_session(&self) -> String {
        let init = self.post(&initialize_message(1), &[]).await;
        assert_eq!(init.status, StatusCode::OK, "{}", init.body);
        let session = init
            .header(SESSION)
            .unwrap_or_else(|| panic!("no Mcp-Session-Id: {:?}", init.headers));
        let note = self
            .post(&initialized_notification(), &[(SESSION, &session)])
            .await;
        assert_eq!(note.status, StatusCode::ACCEPTED, "{}", note.body);
        session
    }
}

async fn read(resp: reqwest::Response) -> Answer {
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp.text().await.expect("read the body");
    let ct = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let messages = if status.is_success() || ct.starts_with("application/json") {
        messages(&ct, &body)
    } else {
        Vec::new()
    };
    Answer {
        status,
        headers,
        body,
        messages,
    }
}

fn initialize_message(id: i64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp_http-test", "version": "1"}
        }
    })
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn initialized_notification() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

async fn fake_with_repo() -> FakeGitea {
    let fake = FakeGitea::start().await;
    fake.seed_repo("alice", "demo");
    fake.seed_issues("alice", "demo", 2);
    fake.add_token(TOKEN, "alice", &["all"]);
    fake
}

fn env_for(fake: &FakeGitea) -> Vec<(&'static str, String)> {
    vec![
        ("GITEA_URL", fake.url()),
        ("GITEA_TOKEN", TOKEN.to_string()),
    ]
}

fn tool_names(result: &Value) -> Vec<String> {
    let mut names: Vec<String> = result["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

const DYNAMIC_TOOLS: [&str; 3] = [
    "gitea_api_request",
    "gitea_execute_action",
    "gitea_find_action",
];

// ---- sessions -------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_lives_from_initialize_to_delete() {
    let fake = fake_with_repo().await;
    let server = HttpServer::start(&[], &env_for(&fake)).await;
    let mcp = Endpoint::of(&server);

    let init = mcp.post(&initialize_message(1), &[]).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    let session = init
        .header(SESSION)
        .expect("Mcp-Session-Id in session mode");
    assert!(!session.is_empty());
    let result = init.result(1);
    assert_eq!(result["serverInfo"]["name"], "aegis-gitea-mcp", "{result}");
    assert!(result["instructions"].is_string(), "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    assert!(result["capabilities"]["resources"].is_object(), "{result}");
    let s: &str = &session;
    let note = mcp.post(&initialized_notification(), &[(SESSION, s)]).await;
    assert_eq!(note.status, StatusCode::ACCEPTED, "{}", note.body);

    let list = mcp.in_session(s, 2, "tools/list", json!({})).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert_eq!(tool_names(list.result(2)), DYNAMIC_TOOLS);

    let call = mcp
        .in_session(
            s,
            3,
            "tools/call",
            json!({"name": "gitea_execute_action", "arguments": {"action": "gitea_issue_list", "arguments": {"owner": "alice", "repo": "demo"}}}),
        )
        .await;
    assert_eq!(call.status, StatusCode::OK, "{}", call.body);
    let out = call.result(3);
    assert_eq!(out["isError"], false, "{out}");
    assert_eq!(
        out["structuredContent"]["data"].as_array().unwrap().len(),
        2,
        "{out}"
    );
    assert_eq!(fake.count("GET", "/api/v1/repos/alice/demo/issues"), 1);

    // Unknown tool: an isError result, in a 200.
    let unknown = mcp
        .in_session(
            s,
            4,
            "tools/call",
            json!({"name": "test_simple_text", "arguments": {}}),
        )
        .await;
    assert_eq!(unknown.result(4)["isError"], true, "{}", unknown.body);

    let read = mcp
        .in_session(
            s,
            5,
            "resources/read",
            json!({"uri": "gitea://repo/alice/demo"}),
        )
        .await;
    let contents = &read.result(5)["contents"];
    let repo: Value = serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(repo["full_name"], "alice/demo", "{repo}");

    // A request without the session id is refused; an unknown id is 404.
    let bare = mcp.post(&request(6, "tools/list", json!({})), &[]).await;
    assert!(
        bare.status.is_client_error(),
        "{} {}",
        bare.status,
        bare.body
    );
    let other = mcp
        .post(
            &request(7, "ping", json!({})),
            &[(SESSION, "no-such-session")],
        )
        .await;
    assert_eq!(other.status, StatusCode::NOT_FOUND, "{}", other.body);

    let deleted = mcp.delete_session(s).await;
    assert!(deleted.is_success(), "{deleted}");
    let after = mcp.in_session(s, 8, "ping", json!({})).await;
    assert_eq!(after.status, StatusCode::NOT_FOUND, "{}", after.body);
    let after = mcp.in_session(s, 9, "tools/list", json!({})).await;
    assert_eq!(after.status, StatusCode::NOT_FOUND, "{}", after.body);

    // A new session works after the old one ended.
    let again = mcp.open_session().await;
    assert_ne!(again, session);
    let ping = mcp.in_session(&again, 10, "ping", json!({})).await;
    assert_eq!(ping.result(10), &json!({}));
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_on_one_session_are_all_answered() {
    let fake = fake_with_repo().await;
    // One issue answers later, so the calls finish in another order than they started.
    fake.inject(Fault::Delay(Duration::from_millis(30)).on("GET", "/repos/alice/demo/issues/2"));
    let mut env = env_for(&fake);
    env.push(("RATE_LIMIT_PER_IP", "1000000".into()));
    env.push(("RATE_LIMIT_PER_CREDENTIAL", "1000000".into()));
    let server = HttpServer::start(&[], &env).await;
    let mcp = Endpoint::of(&server);
    // Many rounds: a span entered across an await once killed a session's worker in about one
    // round in a hundred (every stream of the session then ended without its answer).
    for round in 0..200 {
        let session = mcp.open_session().await;
        let calls = (0..4).map(|i| {
            let (mcp, session) = (mcp.clone(), session.clone());
            async move {
                let msg = request(
                    100 + i,
                    "tools/call",
                    json!({"name": "gitea_execute_action", "arguments": {"action": "gitea_issue_get", "arguments": {"owner": "alice", "repo": "demo", "index": 1 + i % 2}}}),
                );
                // The conformance suite sends an older supported version on later requests.
                let answer = mcp
                    .post(
                        &msg,
                        &[(SESSION, &session), ("mcp-protocol-version", "2025-03-26")],
                    )
                    .await;
                (i, answer)
            }
        });
        let answers = futures_join_all(calls).await;
        let stderr = server.stderr();
        assert!(
            !stderr.contains("panicked"),
            "round {round}: the server panicked:\n{stderr}"
        );
        for (i, a) in answers {
            assert_eq!(a.status, StatusCode::OK, "round {round}: {}", a.body);
            let out = a.result(100 + i);
            assert_eq!(out["isError"], false, "round {round}: {out}");
            assert_eq!(
                out["structuredContent"]["data"]["title"],
                format!("Issue {}", 1 + i % 2),
                "round {round}: {out}"
            );
        }
        let closed = mcp.delete_session(&session).await;
        assert!(closed.is_success(), "round {round}: {closed}");
    }
    server.stop();
}

/// Runs futures concurrently on the runtime and collects their outputs in order.
async fn futures_join_all<F, T>(futures: impl IntoIterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.expect("task"));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_mode_answers_without_a_session() {
    let fake = fake_with_repo().await;
    let server = HttpServer::start(&["--stateless"], &env_for(&fake)).await;
    let mcp = Endpoint::of(&server);

    let init = mcp.post(&initialize_message(1), &[]).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    assert!(init.header(SESSION).is_none(), "{:?}", init.headers);
    assert!(
        init.header("content-type")
            .unwrap()
            .starts_with("application/json"),
        "stateless answers plain JSON: {:?}",
        init.headers
    );
    assert_eq!(init.result(1)["serverInfo"]["name"], "aegis-gitea-mcp");

    // Every request stands alone: no initialize needed before it.
    let list = mcp.post(&request(2, "tools/list", json!({})), &[]).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert_eq!(tool_names(list.result(2)), DYNAMIC_TOOLS);
    let call = mcp.post(&request(
            3,
            "tools/call",
            json!({"name": "gitea_execute_action", "arguments": {"action": "gitea_issue_get", "arguments": {"owner": "alice", "repo": "demo", "index": 2}}}),
        ),
        &[],
    )
    .await;
    let out = call.result(3);
    assert_eq!(out["isError"], false, "{out}");
    assert_eq!(
        out["structuredContent"]["data"]["title"], "Issue 2",
        "{out}"
    );
    let find = mcp.post(&request(
            4,
            "tools/call",
            json!({"name": "gitea_find_action", "arguments": {"query": "merge a pull request"}}),
        ),
        &[],
    )
    .await;
    assert_eq!(find.result(4)["isError"], false, "{}", find.body);
    // A session id from nowhere is not needed and does not break anything either way.
    let bad = mcp
        .post(
            &request(
                5,
                "resources/read",
                json!({"uri": "gitea://repo/alice/demo/issue/x"}),
            ),
            &[],
        )
        .await;
    assert_eq!(bad.response(5)["error"]["code"], -32602, "{}", bad.body);
    server.stop();
}

// ---- DNS rebinding, origins, headers, limits -------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_host_headers_are_refused() {
    let fake = fake_with_repo().await;
    let server = HttpServer::start(&[], &env_for(&fake)).await;
    let mcp = Endpoint::of(&server);
    let port = server.port;

    for host in [
        "evil.example.com",
        "evil.example.com:80",
        "127.0.0.1.evil.example.com",
    ] {
        let a = mcp.post(&initialize_message(1), &[("host", host)]).await;
        assert!(
            a.status.is_client_error(),
            "Host {host}: {} {}",
            a.status,
            a.body
        );
        assert!(
            a.header(SESSION).is_none(),
            "Host {host}: a session was made"
        );
    }
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "localhost".into(),
    ] {
        let a = mcp.post(&initialize_message(1), &[("host", &host)]).await;
        assert!(
            a.status.is_success(),
            "Host {host}: {} {}",
            a.status,
            a.body
        );
        assert_eq!(a.result(1)["serverInfo"]["name"], "aegis-gitea-mcp");
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_are_refused_when_allowed_origins_are_set() {
    let fake = fake_with_repo().await;
    let allowed = "http://localhost:*,http://127.0.0.1:*";
    let server = HttpServer::start(
        &[],
        &[
            ("GITEA_URL", fake.url()),
            ("GITEA_TOKEN", TOKEN.to_string()),
            ("ALLOWED_ORIGINS", allowed.to_string()),
        ],
    )
    .await;
    let mcp = Endpoint::of(&server);
    let port = server.port;

    for origin in [
        "http://evil.example.com",
        "https://localhost.evil.example.com",
        "null",
    ] {
        let a = mcp
            .post(&initialize_message(1), &[("origin", origin)])
            .await;
        assert!(
            a.status.is_client_error(),
            "Origin {origin}: {} {}",
            a.status,
            a.body
        );
        assert!(a.header(SESSION).is_none());
    }
    for origin in [
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
    ] {
        let a = mcp
            .post(&initialize_message(1), &[("origin", &origin)])
            .await;
        assert!(
            a.status.is_success(),
            "Origin {origin}: {} {}",
            a.status,
            a.body
        );
    }
    // No Origin at all (a non-browser client) is fine.
    let a = mcp.post(&initialize_message(1), &[]).await;
    assert!(a.status.is_success(), "{} {}", a.status, a.body);
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_headers_content_types_methods_and_body_limits() {
    let fake = fake_with_repo().await;
    let server = HttpServer::start(&[], &env_for(&fake)).await;
    let mcp = Endpoint::of(&server);

    // The Python SDK's first probe: a JSON-RPC error or a 4xx, never a 5xx or a hang.
    let probe = mcp
        .post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}),
            &[],
        )
        .await;
    assert!(
        probe.status.is_client_error()
            || probe
                .messages
                .iter()
                .any(|m| m["id"] == 1 && m.get("error").is_some())
            || probe.status.is_success(),
        "{} {}",
        probe.status,
        probe.body
    );
    assert!(
        !probe.status.is_server_error(),
        "{} {}",
        probe.status,
        probe.body
    );

    let session = mcp.open_session().await;
    let s: &str = &session;

    // Any supported protocol version is accepted on later requests; an unknown one is 400.
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let a = mcp
            .post(
                &request(2, "ping", json!({})),
                &[(SESSION, s), ("mcp-protocol-version", version)],
            )
            .await;
        assert_eq!(a.status, StatusCode::OK, "{version}: {}", a.body);
        assert_eq!(a.result(2), &json!({}));
    }
    let a = mcp
        .post(
            &request(3, "ping", json!({})),
            &[(SESSION, s), ("mcp-protocol-version", "1999-01-01")],
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);

    // Unknown methods: JSON-RPC -32601 inside a 200.
    for method in ["no/such/method", "prompts/list", "logging/setLevel"] {
        let a = mcp.in_session(s, 4, method, json!({})).await;
        assert_eq!(a.status, StatusCode::OK, "{method}: {}", a.body);
        assert_eq!(
            a.response(4)["error"]["code"],
            -32601,
            "{method}: {}",
            a.body
        );
    }

    // A body that is not JSON-RPC, or not JSON.
    let resp = mcp
        .c
        .post(&mcp.url)
        .header(CONTENT_TYPE, "application/json")
        .header("accept", ACCEPT)
        .header(SESSION, s)
        .body("this is not json")
        .send()
        .await
        .expect("POST");
    let a = read(resp).await;
    assert!(
        a.status.is_client_error() || a.messages.iter().any(|m| m["error"]["code"] == -32700),
        "{} {}",
        a.status,
        a.body
    );

    // Content types: a CORS-simple text/plain POST is refused (no cross-site form posts).
    let resp = mcp
        .c
        .post(&mcp.url)
        .header(CONTENT_TYPE, "text/plain")
        .header("accept", ACCEPT)
        .header(SESSION, s)
        .body(request(5, "ping", json!({})).to_string())
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // A client that accepts no event stream cannot open the GET stream.
    let resp = mcp
        .c
        .get(&mcp.url)
        .header(SESSION, s)
        .send()
        .await
        .expect("GET");
    assert!(resp.status().is_client_error(), "{}", resp.status());

    // Bodies over 1 MiB are refused with 413; the server goes on.
    let big = request(6, "ping", json!({"padding": "x".repeat(1 << 20)}));
    let a = mcp.post(&big, &[(SESSION, s)]).await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", a.body);
    let a = mcp.in_session(s, 7, "ping", json!({})).await;
    assert_eq!(a.result(7), &json!({}));
    server.stop();
}

/// The MCP transport spec (2025-11-25, "Security Warning") says servers MUST validate `Origin`
/// and answer 403 when it is present and invalid. With the default configuration (no
/// `ALLOWED_ORIGINS`) the server checks `Host` only and accepts any `Origin`
/// (`src/mcp/http.rs`: an empty list disables rmcp's Origin validation). Browsers still cannot
/// read the answer (no CORS headers; the preflight is a 405) and a CORS-simple `text/plain`
/// POST is a 415, so this is a deviation from the spec rather than an open door. Run with
/// `--ignored` to see it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origin_is_refused_by_default() {
    let fake = fake_with_repo().await;
    let server = HttpServer::start(&[], &env_for(&fake)).await;
    let mcp = Endpoint::of(&server);
    let a = mcp
        .post(
            &initialize_message(1),
            &[("origin", "http://evil.example.com")],
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.body);
    server.stop();
}

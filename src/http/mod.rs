//! The HTTP gateway: AegisGitea MCP as a shared service.
//!
//! Endpoints beside `/mcp` (streamable HTTP MCP): `GET /` (name, version), `GET /health`
//! (Gitea reachable? cached), `GET /mcp/tools`, `POST /mcp/tool/call`, `GET /metrics`
//! (Prometheus; authenticated or loopback), `GET /openapi.json`.
//!
//! One middleware ([`guard`]) applies, in order: header size cap, `Host`/`Origin` checks
//! (DNS rebinding), client address (honouring `X-Forwarded-For` only from trusted proxies),
//! per-address rate limit, authentication (API key, Gitea-token pass-through, or none on
//! loopback) with stricter throttling of failures, per-credential rate limit, session cap, and a
//! time limit for the answer to start. Errors are small JSON bodies that reveal nothing else.

pub mod auth;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use tokio::sync::Mutex as AsyncMutex;

use crate::config::Secret;
use crate::exec::{Caller, Credential};
use crate::mcp::http::HttpOptions;
use crate::mcp::{CallOrigin, Server};
use crate::store::{Limit, Refused};
pub use auth::{ApiKeys, AuthMode};
use auth::{Presented, TokenCache, TokenCheck};

/// The gateway's settings.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Where the server listens (AUTH_MODE=none is refused unless this is loopback).
    pub listen: SocketAddr,
    /// How clients authenticate.
    pub auth_mode: AuthMode,
    /// Keys for `AuthMode::ApiKey`.
    pub api_keys: Option<ApiKeys>,
    /// Accept `?api_key=` (off by default: query strings end up in logs).
    pub allow_query_api_key: bool,
    /// `GET /mcp/tools` without authentication.
    pub public_tool_list: bool,
    /// Requests per minute from one address.
    pub rate_per_ip: u32,
    /// Requests per minute with one credential.
    pub rate_per_credential: u32,
    /// Failed authentications per minute from one address before it is throttled.
    pub auth_failures_per_minute: u32,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Largest total size of the request headers.
    pub max_header_bytes: usize,
    /// Time for an answer to start.
    pub request_timeout: Duration,
    /// Most MCP sessions at once.
    pub max_sessions: usize,
    /// Most MCP sessions one credential may hold at once.
    pub max_sessions_per_credential: usize,
    /// Most open connections at once (more are closed as they arrive).
    pub max_connections: usize,
    /// Time a connection may take to send a request's headers, and may stay idle between
    /// requests (slow or silent clients are disconnected).
    pub header_timeout: Duration,
    /// Reverse proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<IpAddr>,
    /// How long a `/health` answer is reused.
    pub health_ttl: Duration,
    /// MCP transport options (sessions, allowed hosts and origins).
    pub http: HttpOptions,
}

impl GatewayConfig {
    /// Defaults for `listen`.
    pub fn new(listen: SocketAddr) -> GatewayConfig {
        GatewayConfig {
            listen,
            auth_mode: AuthMode::None,
            api_keys: None,
            allow_query_api_key: false,
            public_tool_list: true,
            rate_per_ip: 600,
            rate_per_credential: 600,
            auth_failures_per_minute: 10,
            max_body_bytes: 1 << 20,
            max_header_bytes: 16 * 1024,
            request_timeout: Duration::from_secs(120),
            max_sessions: 256,
            max_sessions_per_credential: 32,
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            trusted_proxies: Vec::new(),
            health_ttl: Duration::from_secs(5),
            http: HttpOptions::default(),
        }
    }
}

/// Errors building the gateway.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

struct Gateway {
    server: Server,
    cfg: GatewayConfig,
    per_ip: Limit,
    per_credential: Limit,
    auth_failures: Limit,
    /// Which credential opened each MCP session.
    session_owners: std::sync::Mutex<std::collections::HashMap<String, String>>,
    tokens: TokenCache,
    health: AsyncMutex<Option<(Instant, u16, Value)>>,
    sessions: Option<Arc<LocalSessionManager>>,
}

impl Gateway {
    /// True when `actor` opened session `sid`, or when the gateway never saw it opened (then the
    /// MCP layer answers for it: unknown sessions are its business).
    fn owns_session(&self, sid: &str, actor: &str) -> bool {
        let owners = self
            .session_owners
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        owners.get(sid).is_none_or(|owner| owner == actor)
    }

    /// Records that `actor` opened `sid`, forgetting sessions the MCP layer has closed.
    async fn bind_session(&self, sid: &str, actor: &str) {
        let live: Option<std::collections::HashSet<String>> = match &self.sessions {
            Some(m)
                if self
                    .session_owners
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .len()
                    >= 2 * self.cfg.max_sessions =>
            {
                Some(
                    m.sessions
                        .read()
                        .await
                        .keys()
                        .map(|k| k.to_string())
                        .collect(),
                )
            }
            _ => None,
        };
        let mut owners = self
            .session_owners
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(live) = live {
            owners.retain(|k, _| live.contains(k));
        }
        owners.insert(sid.to_string(), actor.to_string());
    }

    /// Forgets a closed session.
    fn unbind_session(&self, sid: &str) {
        self.session_owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(sid);
    }
}

/// Builds the gateway router around `server`.
pub fn router(server: Server, cfg: GatewayConfig) -> Result<Router, Error> {
    match cfg.auth_mode {
        AuthMode::None if !cfg.listen.ip().is_loopback() => {
            return Err(Error(format!(
                "AUTH_MODE=none is only allowed on a loopback address, not {}: set AUTH_MODE=api-key (with API_KEYS_FILE) or gitea-token, or listen on 127.0.0.1",
                cfg.listen
            )));
        }
        AuthMode::ApiKey if cfg.api_keys.as_ref().is_none_or(ApiKeys::is_empty) => {
            return Err(Error(
                "AUTH_MODE=api-key needs API_KEYS_FILE with at least one key".into(),
            ));
        }
        _ => {}
    }
    let (mcp, sessions) = crate::mcp::http::router(server.clone(), &cfg.http);
    let gateway = Arc::new(Gateway {
        per_ip: Limit::per_minute("ip", cfg.rate_per_ip),
        per_credential: Limit::per_minute("credential", cfg.rate_per_credential),
        auth_failures: Limit::per_minute("auth_failures", cfg.auth_failures_per_minute),
        session_owners: std::sync::Mutex::new(std::collections::HashMap::new()),
        tokens: TokenCache::new(Duration::from_secs(60)),
        health: AsyncMutex::new(None),
        sessions,
        server,
        cfg,
    });
    let api = Router::new()
        .route("/", get(root))
        .route("/health", get(health))
        .route("/mcp/tools", get(tools_list))
        .route(
            "/mcp/tool/call",
            post(tool_call).layer(DefaultBodyLimit::max(gateway.cfg.max_body_bytes)),
        )
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .with_state(gateway.clone());
    Ok(api
        .merge(mcp)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(gateway, guard)))
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

fn too_many(retry_after: Duration, what: &str) -> Response {
    let secs = retry_after.as_secs().max(1);
    let mut r = error(
        StatusCode::TOO_MANY_REQUESTS,
        &format!("rate limit exceeded ({what}); retry after {secs} s"),
    );
    if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

fn unauthorized(mode: AuthMode) -> Response {
    let mut r = error(StatusCode::UNAUTHORIZED, "authentication required");
    let challenge = match mode {
        AuthMode::GiteaToken => "Bearer realm=\"aegis-gitea-mcp\", charset=\"UTF-8\"",
        _ => "Bearer realm=\"aegis-gitea-mcp\"",
    };
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    r
}

/// The endpoint a request reaches, classified once from its path the way the router
/// dispatches: `/mcp`, `/mcp/` and any other `/mcp/…` but the two REST endpoints reach the MCP
/// service, so they count as it for every check (session caps included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Root,
    Health,
    Tools,
    ToolCall,
    Metrics,
    OpenApi,
    Mcp,
    Other,
}

impl Route {
    fn of(path: &str) -> Route {
        match path {
            "/" => Route::Root,
            "/health" => Route::Health,
            "/mcp/tools" => Route::Tools,
            "/mcp/tool/call" => Route::ToolCall,
            "/metrics" => Route::Metrics,
            "/openapi.json" => Route::OpenApi,
            p if p == "/mcp" || p.starts_with("/mcp/") => Route::Mcp,
            _ => Route::Other,
        }
    }

    /// The label for metrics (never the raw path: it may carry names).
    fn label(self) -> &'static str {
        match self {
            Route::Root => "/",
            Route::Health => "/health",
            Route::Tools => "/mcp/tools",
            Route::ToolCall => "/mcp/tool/call",
            Route::Metrics => "/metrics",
            Route::OpenApi => "/openapi.json",
            Route::Mcp => "/mcp",
            Route::Other => "other",
        }
    }
}

/// True when the `Host` header names an allowed host (an entry without a port allows any port).
fn host_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let host = host.trim().to_ascii_lowercase();
    let (name, _port) = split_host_port(&host);
    allowed.iter().any(|a| {
        let a = a.trim().to_ascii_lowercase();
        a == host || a == name || (a.starts_with('[') && a.trim_matches(['[', ']']) == name)
    })
}

fn split_host_port(host: &str) -> (&str, Option<&str>) {
    if let Some(rest) = host.strip_prefix('[') {
        // [::1]:8080
        return match rest.split_once(']') {
            Some((name, tail)) => (name, tail.strip_prefix(':')),
            None => (host, None),
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            (name, Some(port))
        }
        _ => (host, None),
    }
}

fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    if allowed.is_empty() {
        return true;
    }
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    allowed.iter().any(|a| {
        let a = a.trim().trim_end_matches('/').to_ascii_lowercase();
        a == origin
            || a.strip_suffix(":*")
                .is_some_and(|base| origin == base || origin.starts_with(&format!("{base}:")))
    })
}

/// The client's address: the peer, or — when the peer is a trusted proxy — the last address in
/// `X-Forwarded-For` that is not a trusted proxy.
fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let Some(xff) = headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) else {
        return peer;
    };
    xff.split(',')
        .rev()
        .filter_map(|s| s.trim().parse::<IpAddr>().ok())
        .find(|ip| !trusted.contains(ip))
        .unwrap_or(peer)
}

/// Extra time the gateway gives a call beyond its deadline before it answers 504 itself: the
/// executor answers first, saying whether a write may have been applied.
const DEADLINE_GRACE: Duration = Duration::from_secs(2);

async fn guard(State(g): State<Arc<Gateway>>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = Route::of(req.uri().path());
    let facts = {
        let headers = req.headers();
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
            .unwrap_or(IpAddr::from([0, 0, 0, 0]));
        Facts {
            header_bytes: headers
                .iter()
                .map(|(k, v)| k.as_str().len() + v.len() + 4)
                .sum(),
            host_ok: host_allowed(headers, &g.cfg.http.allowed_hosts),
            origin_ok: origin_allowed(headers, &g.cfg.http.allowed_origins),
            peer,
            ip: client_ip(peer, headers, &g.cfg.trusted_proxies),
            presented: auth::presented(
                headers,
                req.uri().query(),
                g.cfg.allow_query_api_key && g.cfg.auth_mode == AuthMode::ApiKey,
                g.cfg.auth_mode == AuthMode::GiteaToken,
            ),
            opens_session: req.method() == Method::POST
                && route == Route::Mcp
                && !headers.contains_key("mcp-session-id"),
        }
    };
    let session = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let closes_session = req.method() == Method::DELETE && session.is_some();
    let deadline = started + g.cfg.request_timeout;
    let response = match guarded(&g, facts, route).await {
        // An MCP session belongs to the credential that opened it; to anyone else it does not
        // exist (the same answer as for an unknown session).
        Ok(caller)
            if session
                .as_ref()
                .is_some_and(|sid| !g.owns_session(sid, caller.principal())) =>
        {
            Err(error(StatusCode::NOT_FOUND, "session not found"))
        }
        Ok(caller) => {
            let owner = caller.principal().to_string();
            req.extensions_mut().insert(caller.with_deadline(deadline));
            Ok(owner)
        }
        Err(r) => Err(r),
    };
    let response = match response {
        Ok(owner) => {
            match tokio::time::timeout(g.cfg.request_timeout + DEADLINE_GRACE, next.run(req)).await
            {
                Ok(r) => {
                    if r.status().is_success() {
                        match (
                            &session,
                            r.headers()
                                .get("mcp-session-id")
                                .and_then(|v| v.to_str().ok()),
                        ) {
                            (None, Some(opened)) => g.bind_session(opened, &owner).await,
                            (Some(sid), _) if closes_session => g.unbind_session(sid),
                            _ => {}
                        }
                    }
                    r
                }
                Err(_) => error(
                    StatusCode::GATEWAY_TIMEOUT,
                    "the request took too long (REQUEST_TIMEOUT_SECS); if it was a write, it may have been applied: check before repeating it",
                ),
            }
        }
        Err(r) => r,
    };
    g.server
        .app()
        .metrics
        .http_request(route.label(), response.status().as_u16());
    tracing::debug!(
        route = route.label(),
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis() as u64,
        "http request"
    );
    response
}

/// What the checks need from a request, copied so no borrow of the request (whose body is not
/// `Sync`) lives across an await.
struct Facts {
    header_bytes: usize,
    host_ok: bool,
    origin_ok: bool,
    peer: IpAddr,
    ip: IpAddr,
    presented: Presented,
    opens_session: bool,
}

/// The checks before a request reaches its handler; `Err` is the answer that stops it. On
/// success, the [`Caller`] the request acts for (put into the request's extensions, where the
/// MCP server and the REST handlers find it).
async fn guarded(g: &Gateway, facts: Facts, route: Route) -> Result<Caller, Response> {
    if facts.header_bytes > g.cfg.max_header_bytes {
        return Err(error(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "request headers are too large",
        ));
    }
    if !facts.host_ok {
        return Err(error(
            StatusCode::MISDIRECTED_REQUEST,
            "this Host is not served here",
        ));
    }
    if !facts.origin_ok {
        return Err(error(StatusCode::FORBIDDEN, "this Origin is not allowed"));
    }
    let ip = facts.ip;
    let store = &g.server.app().exec.store;
    let needs_auth = match route {
        Route::Root | Route::Health | Route::OpenApi => false,
        Route::Tools => !g.cfg.public_tool_list,
        // Metrics: from the machine itself without credentials, otherwise authenticated.
        Route::Metrics => !facts.peer.is_loopback() || ip != facts.peer,
        Route::ToolCall | Route::Mcp | Route::Other => true,
    };
    // An address that failed authentication too often is refused outright where credentials
    // are checked (checked in the same round trip as its rate limit).
    let check_block = needs_auth && g.cfg.auth_mode != AuthMode::None;
    match store.admit(&g.per_ip, &ip.to_string(), check_block).await {
        Ok(()) => {}
        Err(Refused::Limited(wait)) => {
            g.server.app().metrics.rate_limited("ip");
            return Err(too_many(wait, "per address"));
        }
        Err(Refused::Blocked(wait)) => {
            g.server.app().metrics.rate_limited("auth_failures");
            return Err(too_many(wait, "failed authentications"));
        }
    }
    if !needs_auth || g.cfg.auth_mode == AuthMode::None {
        let who = if g.cfg.auth_mode == AuthMode::None {
            "anonymous"
        } else {
            "public"
        };
        check_sessions(g, facts.opens_session, who).await?;
        return Ok(Caller::new(who, Credential::Server));
    }
    let identity = match (&facts.presented, g.cfg.auth_mode) {
        (Presented::Value(v), AuthMode::ApiKey) => g
            .cfg
            .api_keys
            .as_ref()
            .and_then(|k| k.check(v))
            .map(|label| {
                Caller::new(label, Credential::Server).with_presented(Secret::new(v.clone()))
            }),
        (Presented::Value(v), AuthMode::GiteaToken) => {
            match g.tokens.verify(&g.server.app().exec.client, store, v).await {
                TokenCheck::User(login) => {
                    Some(Caller::new(login, Credential::Own(Secret::new(v.clone()))))
                }
                TokenCheck::Invalid => None,
                TokenCheck::Unavailable(why) => {
                    tracing::warn!("cannot verify a Gitea token: {why}");
                    return Err(error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "cannot verify the token: Gitea is unavailable",
                    ));
                }
            }
        }
        _ => None,
    };
    let Some(caller) = identity else {
        if let Err(wait) = store.check(&g.auth_failures, &ip.to_string()).await {
            g.server.app().metrics.rate_limited("auth_failures");
            let wait = wait.max(Duration::from_secs(1));
            store.block(&ip.to_string(), wait).await;
            return Err(too_many(wait, "failed authentications"));
        }
        return Err(unauthorized(g.cfg.auth_mode));
    };
    if let Err(wait) = store.check(&g.per_credential, caller.principal()).await {
        g.server.app().metrics.rate_limited("credential");
        return Err(too_many(wait, "per credential"));
    }
    check_sessions(g, facts.opens_session, caller.principal()).await?;
    Ok(caller)
}

/// Refuses a new MCP session when the cap is reached, in total or for this credential.
async fn check_sessions(g: &Gateway, opens_session: bool, owner: &str) -> Result<(), Response> {
    let (true, Some(sessions)) = (opens_session, &g.sessions) else {
        return Ok(());
    };
    let live: std::collections::HashSet<String> = sessions
        .sessions
        .read()
        .await
        .keys()
        .map(|k| k.to_string())
        .collect();
    let refuse = |why: &str| {
        let mut r = error(StatusCode::SERVICE_UNAVAILABLE, why);
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        r
    };
    if live.len() >= g.cfg.max_sessions {
        return Err(refuse("too many MCP sessions; retry later"));
    }
    let mine = {
        let mut owners = g.session_owners.lock().unwrap_or_else(|e| e.into_inner());
        owners.retain(|sid, _| live.contains(sid));
        owners.values().filter(|o| o.as_str() == owner).count()
    };
    if mine >= g.cfg.max_sessions_per_credential {
        return Err(refuse(
            "too many MCP sessions for this credential (MAX_SESSIONS_PER_CREDENTIAL); close one (DELETE /mcp) or retry later",
        ));
    }
    Ok(())
}

/// How the accept loop treats connections.
#[derive(Debug, Clone)]
pub struct Listening {
    /// Most open connections at once (more are closed as they arrive).
    pub max_connections: usize,
    /// Time to send a request's headers, and to stay idle between requests.
    pub header_timeout: Duration,
    /// Where refused connections are counted.
    pub metrics: Arc<crate::metrics::Metrics>,
}

/// Serves `router` on `listener` until the process is interrupted: HTTP/1.1 with a time limit
/// for each request's headers that also closes connections idle between requests (slow or
/// silent clients cannot hold sockets), and a cap on open connections.
pub async fn serve(
    router: Router,
    listener: tokio::net::TcpListener,
    listening: Listening,
) -> std::io::Result<()> {
    let Listening {
        max_connections,
        header_timeout,
        metrics,
    } = listening;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt as _;

    tracing::info!(address = %listener.local_addr()?, "serving MCP over streamable HTTP at /mcp");
    let permits = Arc::new(tokio::sync::Semaphore::new(max_connections.max(1)));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut interrupt = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut interrupt => break,
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            metrics.rate_limited("connections");
            drop(stream);
            continue;
        };
        let service = router.clone().map_request(
            move |mut req: axum::http::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                req.map(Body::new)
            },
        );
        let service = hyper_util::service::TowerToHyperService::new(service);
        let mut stopped = stopped.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            let mut conn = std::pin::pin!(conn);
            let stop = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stop => {}
            }
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        });
    }
    let _ = stop.send(true);
    Ok(())
}

async fn root() -> Json<Value> {
    Json(json!({"name": "aegis-gitea-mcp", "version": env!("CARGO_PKG_VERSION"), "status": "ok"}))
}

async fn health(State(g): State<Arc<Gateway>>) -> Response {
    let mut cached = g.health.lock().await;
    let fresh = cached
        .as_ref()
        .filter(|(at, _, _)| at.elapsed() < g.cfg.health_ttl)
        .cloned();
    let (status, body) = match fresh {
        Some((_, status, body)) => (status, body),
        None => {
            let exec = &g.server.app().exec;
            let (status, body) = match exec
                .client
                .get_bytes(
                    "/api/v1/version",
                    exec.server_token(),
                    crate::exec::SMALL_READ_LIMIT,
                )
                .await
            {
                Ok(bytes) => {
                    let version = serde_json::from_slice::<Value>(&bytes)
                        .ok()
                        .and_then(|v| v.get("version").cloned());
                    (
                        200,
                        json!({"status": "ok", "gitea_connected": true, "gitea_version": version}),
                    )
                }
                Err(_) => (
                    503,
                    json!({"status": "degraded", "gitea_connected": false, "gitea_version": null}),
                ),
            };
            *cached = Some((Instant::now(), status, body.clone()));
            (status, body)
        }
    };
    drop(cached);
    // The store is asked every time (one PING): a replica whose confirmations are refused must
    // say so at once. It does not turn the answer into a 503: reads are still served, so a load
    // balancer checking `/health` keeps the replica.
    let store = g.server.app().exec.store.health().await;
    let mut body = body;
    body["store"] =
        json!({"kind": store.kind.as_str(), "state": if store.ok { "ok" } else { "unavailable" }});
    if !store.ok {
        body["status"] = json!("degraded");
        body["confirmations"] = json!("refused until the store is back");
    }
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
        Json(body),
    )
        .into_response()
}

async fn tools_list(State(g): State<Arc<Gateway>>) -> Json<Value> {
    Json(json!({"tools": g.server.tools()}))
}

async fn tool_call(State(g): State<Arc<Gateway>>, req: Request) -> Response {
    let Some(caller) = req.extensions().get::<Caller>().cloned() else {
        return error(StatusCode::UNAUTHORIZED, "authentication required");
    };
    let bytes: Bytes = match axum::body::to_bytes(req.into_body(), g.cfg.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => return error(StatusCode::PAYLOAD_TOO_LARGE, "request body too large"),
    };
    let mut body: serde_json::Map<String, Value> = match serde_json::from_slice(&bytes) {
        Ok(Value::Object(m)) => m,
        Ok(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "body must be {\"name\": <tool>, \"arguments\": {...}}",
            );
        }
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("body is not valid JSON: {e}"),
            );
        }
    };
    let arguments = match body.remove("arguments") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return error(StatusCode::BAD_REQUEST, "`arguments` must be an object"),
    };
    let Some(name) = body.get("name").and_then(Value::as_str) else {
        return error(
            StatusCode::BAD_REQUEST,
            "body must be {\"name\": <tool>, \"arguments\": {...}}",
        );
    };
    let origin = CallOrigin {
        caller,
        transport: "rest",
    };
    let out = g.server.call(name, arguments, &origin).await;
    if out.is_unknown_tool() {
        return error(
            StatusCode::NOT_FOUND,
            &format!(
                "unknown tool {:?}; GET /mcp/tools lists the tools",
                crate::outbound::clip(name, 100)
            ),
        );
    }
    Json(json!({
        "content": [{"type": "text", "text": out.text}],
        "isError": out.is_error,
        "structuredContent": out.structured,
    }))
    .into_response()
}

async fn metrics(State(g): State<Arc<Gateway>>) -> Response {
    let store = &g.server.app().exec.store;
    let mut text = g.server.app().metrics.render();
    text.push_str(&format!(
        "# HELP aegis_store_up Whether the shared store answered its last operation (memory: always).\n# TYPE aegis_store_up gauge\naegis_store_up{{kind=\"{}\"}} {}\n",
        store.kind().as_str(),
        u8::from(store.answering())
    ));
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such endpoint; see /openapi.json")
}

async fn openapi() -> Json<Value> {
    Json(openapi_document())
}

/// An OpenAPI 3.0 description of the gateway's REST endpoints.
pub fn openapi_document() -> Value {
    let err = json!({"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    json!({
        "openapi": "3.0.3",
        "info": {"title": "AegisGitea MCP gateway", "version": env!("CARGO_PKG_VERSION")},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
                "ToolCall": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}}},
                "ToolResult": {"type": "object", "required": ["content", "isError"], "properties": {
                    "content": {"type": "array", "items": {"type": "object"}}, "isError": {"type": "boolean"}, "structuredContent": {"type": "object"}}}
            }
        },
        "paths": {
            "/": {"get": {"summary": "Name, version, status", "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
            "/health": {"get": {"summary": "Whether Gitea answers", "responses": {
                "200": {"description": "Gitea reachable", "content": {"application/json": {"schema": {"type": "object"}}}},
                "503": {"description": "Gitea unreachable", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
            "/mcp/tools": {"get": {"summary": "The tool list", "responses": {"200": {"description": "tools", "content": {"application/json": {"schema": {"type": "object"}}}}, "401": err}}},
            "/mcp/tool/call": {"post": {"summary": "Call a tool", "security": [{"bearer": []}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ToolCall"}}}},
                "responses": {"200": {"description": "result", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ToolResult"}}}},
                    "400": err, "401": err, "404": err, "413": err, "429": err}}},
            "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": {"description": "metrics", "content": {"text/plain": {"schema": {"type": "string"}}}}, "401": err}}},
            "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "document", "content": {"application/json": {"schema": {"type": "object"}}}}}}}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        let allowed = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
            "gw.example.com:8443".to_string(),
        ];
        let h = |host: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::HOST, host.parse().unwrap());
            host_allowed(&m, &allowed)
        };
        assert!(
            h("127.0.0.1:8080") && h("localhost") && h("[::1]:9000") && h("gw.example.com:8443")
        );
        assert!(!h("evil.example.com") && !h("gw.example.com") && !h("127.0.0.1.evil.com:80"));
        let o = |origin: &str, allowed: &[&str]| {
            let mut m = HeaderMap::new();
            m.insert(header::ORIGIN, origin.parse().unwrap());
            origin_allowed(
                &m,
                &allowed.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        assert!(o("http://anything", &[]));
        assert!(o("http://localhost:3000", &["http://localhost:*"]));
        assert!(!o("http://evil.example.com", &["http://localhost:*"]));
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            "203.0.113.9, 198.51.100.7, 10.0.0.1".parse().unwrap(),
        );
        assert_eq!(
            client_ip(proxy, &h, &[proxy]),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        let stranger: IpAddr = "192.0.2.5".parse().unwrap();
        assert_eq!(client_ip(stranger, &h, &[proxy]), stranger);
    }
}

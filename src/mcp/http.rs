//! Streamable HTTP transport: the MCP server nested at `/mcp` in an axum router.
//!
//! The gateway (authentication, rate limits, REST endpoints) wraps this router; this module
//! only knows how MCP travels over HTTP: sessions (default) or stateless, and the `Host` /
//! `Origin` checks that stop DNS rebinding.

use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::Server;

/// How the MCP endpoint behaves.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// No sessions: every request stands alone (for load-balanced deployments).
    pub stateless: bool,
    /// Hosts (or host:port) accepted in the `Host` header; loopback names by default.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted from browsers (`scheme://host:port`, `:*` for any port); loopback pages
    /// by default. A request without `Origin` (not a browser) is not affected.
    pub allowed_origins: Vec<String>,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            stateless: false,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            // Browsers send Origin; only pages served from this machine may call a local server.
            // Clients that send no Origin (desktop apps, SDKs) are unaffected.
            allowed_origins: [
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
                "https://127.0.0.1:*",
                "https://[::1]:*",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            max_body_bytes: 1 << 20,
        }
    }
}

/// The router with the MCP endpoint at `/mcp`, and the session manager when sessions are on
/// (the gateway caps their number).
pub fn router(server: Server, opts: &HttpOptions) -> (Router, Option<Arc<LocalSessionManager>>) {
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(opts.allowed_hosts.clone())
        .with_max_request_body_bytes(opts.max_body_bytes);
    if !opts.allowed_origins.is_empty() {
        config = config.with_allowed_origins(opts.allowed_origins.clone());
    }
    if opts.stateless {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(true);
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        (Router::new().nest_service("/mcp", service), None)
    } else {
        let sessions = Arc::new(LocalSessionManager::default());
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
        (Router::new().nest_service("/mcp", service), Some(sessions))
    }
}

//! `aegis-gitea-mcp serve`: the MCP server over stdio (default) or streamable HTTP.

use std::net::SocketAddr;
use std::time::Duration;

use aegis_gitea_mcp::app::{App, Assembly};
use aegis_gitea_mcp::config::{self, Config};
use aegis_gitea_mcp::doctor;
use aegis_gitea_mcp::http::{ApiKeys, AuthMode, GatewayConfig};
use aegis_gitea_mcp::mcp::http::HttpOptions;
use aegis_gitea_mcp::mcp::{self, Server, Surface};

use super::{Exit, UsageError};

/// The gateway's defaults, the one place they are written (`GatewayConfig::new`).
fn gw() -> GatewayConfig {
    GatewayConfig::new(SocketAddr::from(([127, 0, 0, 1], 8080)))
}

fn surface(s: &str) -> Result<Surface, String> {
    s.parse()
}

fn auth_mode(s: &str) -> Result<AuthMode, String> {
    s.parse()
}

fn address(s: &str) -> Result<std::net::IpAddr, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{s:?} is not an IP address"))
}

/// Arguments of `serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at /mcp instead of stdio
    #[arg(long)]
    http: bool,
    /// Address to listen on with --http (an IP address or a host name, with the port)
    #[arg(
        long,
        env = "LISTEN",
        value_name = "ADDR",
        default_value = "127.0.0.1:8080"
    )]
    listen: String,
    /// No MCP sessions (for deployments behind a load balancer)
    #[arg(long, env = "STATELESS", value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = false, value_parser = config::Bool)]
    stateless: bool,
    /// Tools offered: dynamic (3 tools), individual (one per action) or both
    #[arg(long, env = "SURFACE", value_name = "SURFACE", default_value = "dynamic", value_parser = config::Parsed(surface))]
    surface: Surface,
    /// Comma-separated Host values accepted over HTTP (DNS-rebinding protection) [default: localhost,127.0.0.1,::1]
    #[arg(
        long = "allowed-hosts",
        env = "ALLOWED_HOSTS",
        value_name = "LIST",
        value_delimiter = ','
    )]
    allowed_hosts: Option<Vec<String>>,
    /// Comma-separated browser origins accepted over HTTP (scheme://host:port)
    #[arg(
        long = "allowed-origins",
        env = "ALLOWED_ORIGINS",
        value_name = "LIST",
        value_delimiter = ','
    )]
    allowed_origins: Option<Vec<String>>,
    /// How HTTP clients authenticate: none (loopback only), api-key or gitea-token
    #[arg(long = "auth-mode", env = "AUTH_MODE", value_name = "MODE", default_value = "none", value_parser = config::Parsed(auth_mode))]
    auth_mode: AuthMode,
    /// API keys (sha256 hashes, one per line with an optional label) for AUTH_MODE=api-key
    #[arg(long = "api-keys-file", env = "API_KEYS_FILE", value_name = "PATH")]
    api_keys_file: Option<std::path::PathBuf>,
    /// Accept ?api_key= (query strings end up in logs)
    #[arg(long = "allow-query-api-key", env = "ALLOW_QUERY_API_KEY", value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = gw().allow_query_api_key, value_parser = config::Bool)]
    allow_query_api_key: bool,
    /// GET /mcp/tools without authentication
    #[arg(long = "public-tool-list", env = "PUBLIC_TOOL_LIST", value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = gw().public_tool_list, value_parser = config::Bool)]
    public_tool_list: bool,
    /// Requests per minute from one address
    #[arg(long = "rate-limit-per-ip", env = "RATE_LIMIT_PER_IP", value_name = "N", default_value_t = u64::from(gw().rate_per_ip), value_parser = config::Number(1, 1_000_000))]
    rate_limit_per_ip: u64,
    /// Requests per minute with one credential
    #[arg(long = "rate-limit-per-credential", env = "RATE_LIMIT_PER_CREDENTIAL", value_name = "N", default_value_t = u64::from(gw().rate_per_credential), value_parser = config::Number(1, 1_000_000))]
    rate_limit_per_credential: u64,
    /// Failed authentications per minute from one address before it is throttled
    #[arg(long = "auth-failures-per-minute", env = "AUTH_FAILURES_PER_MINUTE", value_name = "N", default_value_t = u64::from(gw().auth_failures_per_minute), value_parser = config::Number(1, 100_000))]
    auth_failures_per_minute: u64,
    /// Largest HTTP request body in bytes
    #[arg(long = "max-body-bytes", env = "MAX_BODY_BYTES", value_name = "BYTES", default_value_t = gw().max_body_bytes as u64, value_parser = config::Number(1024, 1 << 30))]
    max_body_bytes: u64,
    /// Seconds for an HTTP answer to start (a write still unanswered then is reported as possibly applied)
    #[arg(long = "request-timeout", env = "REQUEST_TIMEOUT_SECS", value_name = "SECS", default_value_t = gw().request_timeout.as_secs(), value_parser = config::Number(1, 3600))]
    request_timeout: u64,
    /// Most MCP sessions at once
    #[arg(long = "max-sessions", env = "MAX_SESSIONS", value_name = "N", default_value_t = gw().max_sessions as u64, value_parser = config::Number(1, 100_000))]
    max_sessions: u64,
    /// Most MCP sessions one credential may hold at once
    #[arg(long = "max-sessions-per-credential", env = "MAX_SESSIONS_PER_CREDENTIAL", value_name = "N", default_value_t = gw().max_sessions_per_credential as u64, value_parser = config::Number(1, 100_000))]
    max_sessions_per_credential: u64,
    /// Most open HTTP connections at once
    #[arg(long = "max-connections", env = "MAX_CONNECTIONS", value_name = "N", default_value_t = gw().max_connections as u64, value_parser = config::Number(1, 1_000_000))]
    max_connections: u64,
    /// Seconds a connection may take to send request headers, or stay idle between requests
    #[arg(long = "header-timeout", env = "HEADER_TIMEOUT_SECS", value_name = "SECS", default_value_t = gw().header_timeout.as_secs(), value_parser = config::Number(1, 3600))]
    header_timeout: u64,
    /// Comma-separated addresses of reverse proxies whose X-Forwarded-For is believed
    #[arg(long = "trusted-proxies", env = "TRUSTED_PROXIES", value_name = "LIST", value_delimiter = ',', value_parser = config::Parsed(address))]
    trusted_proxies: Option<Vec<std::net::IpAddr>>,
}

/// Builds the server: the app (see `app::App::assemble`) over the chosen surface. A slow
/// instance holds start-up up for at most three seconds while the token's scopes are read.
pub async fn build(config: &Config, surface: Surface) -> anyhow::Result<Server> {
    let how = Assembly {
        scope_wait: Some(Duration::from_secs(3)),
        ..Assembly::default()
    };
    Ok(Server::new(App::assemble(config, how).await?, surface))
}

impl ServeArgs {
    /// `serve` with no flags (no subcommand given): stdio; the environment still applies.
    pub fn default_stdio() -> Result<ServeArgs, clap::Error> {
        use clap::{Args, FromArgMatches};
        let cmd = config::resolve_env(ServeArgs::augment_args(clap::Command::new("serve")), &|n| {
            std::env::var(n).ok()
        });
        ServeArgs::from_arg_matches(&cmd.try_get_matches_from(["serve"])?)
    }

    /// The gateway's settings (values are already checked by their parsers).
    fn gateway(&self, listen: SocketAddr) -> Result<GatewayConfig, UsageError> {
        let mut g = GatewayConfig::new(listen);
        g.auth_mode = self.auth_mode;
        if let Some(path) = &self.api_keys_file {
            g.api_keys = Some(ApiKeys::load(path).map_err(UsageError)?);
        }
        g.allow_query_api_key = self.allow_query_api_key;
        g.public_tool_list = self.public_tool_list;
        // Ranges are checked by the parsers, so the narrowing conversions cannot truncate.
        g.rate_per_ip = self.rate_limit_per_ip as u32;
        g.rate_per_credential = self.rate_limit_per_credential as u32;
        g.auth_failures_per_minute = self.auth_failures_per_minute as u32;
        g.max_body_bytes = self.max_body_bytes as usize;
        g.request_timeout = Duration::from_secs(self.request_timeout);
        g.max_sessions = self.max_sessions as usize;
        g.max_sessions_per_credential = self.max_sessions_per_credential as usize;
        g.max_connections = self.max_connections as usize;
        g.header_timeout = Duration::from_secs(self.header_timeout);
        if let Some(p) = &self.trusted_proxies {
            g.trusted_proxies = p.clone();
        }
        g.http = HttpOptions {
            stateless: self.stateless,
            max_body_bytes: g.max_body_bytes,
            ..HttpOptions::default()
        };
        let list = |v: &Vec<String>| -> Vec<String> {
            v.iter()
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        };
        if let Some(hosts) = &self.allowed_hosts {
            g.http.allowed_hosts = list(hosts);
        }
        if let Some(origins) = &self.allowed_origins {
            g.http.allowed_origins = list(origins);
        }
        Ok(g)
    }
}

/// `--listen`: an address (`127.0.0.1:8080`, `[::1]:8080`) or a host name with a port
/// (`localhost:8080`), resolved once; a name that resolves to a loopback address listens there,
/// so `localhost` stays private whatever the resolver lists first.
fn listen_address(listen: &str) -> Result<SocketAddr, UsageError> {
    if let Ok(addr) = listen.parse() {
        return Ok(addr);
    }
    let bad = |why: String| {
        UsageError(format!(
            "LISTEN (--listen) {listen:?} is not an address like 127.0.0.1:8080 or localhost:8080: {why}"
        ))
    };
    let resolved: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(listen)
        .map_err(|e| bad(e.to_string()))?
        .collect();
    resolved
        .iter()
        .find(|a| a.ip().is_loopback() && a.is_ipv4())
        .or_else(|| resolved.iter().find(|a| a.ip().is_loopback()))
        .or_else(|| resolved.first())
        .copied()
        .ok_or_else(|| bad("the name resolves to no address".into()))
}

pub async fn run(config: &Config, args: &ServeArgs) -> anyhow::Result<Exit> {
    let surface = args.surface;
    let addr: SocketAddr = if args.http {
        listen_address(&args.listen)?
    } else {
        SocketAddr::from(([127, 0, 0, 1], 0))
    };
    // Check the gateway's settings before the (slower) catalog build.
    let gateway = if args.http {
        Some(args.gateway(addr)?)
    } else {
        None
    };
    let server = build(config, surface).await?;
    // Over HTTP with pass-through tokens each client brings its own: no server token expected.
    let expect_token = !gateway
        .as_ref()
        .is_some_and(|g| g.auth_mode == AuthMode::GiteaToken);
    let exec = &server.app().exec;
    let checks = tokio::time::timeout(
        Duration::from_secs(3),
        doctor::startup(&exec.client, exec.server_token(), expect_token),
    )
    .await
    .unwrap_or_default();
    for c in checks {
        tracing::warn!("{}", c.line());
    }
    let Some(gateway) = gateway else {
        tracing::info!("serving MCP over stdio");
        mcp::serve_stdio(server).await?;
        return Ok(Exit::Ok);
    };
    let auth = match gateway.auth_mode {
        AuthMode::None => "none (loopback only)",
        AuthMode::ApiKey => "api-key (Authorization: Bearer <key> from API_KEYS_FILE)",
        AuthMode::GiteaToken => "gitea-token (each client's own Gitea token)",
    };
    // One PING at start-up: an unreachable store is warned about now, not at the first call.
    let store = exec.store.health().await;
    let shared = match &store.at {
        Some(at) => format!("{} at {at}", store.kind.as_str()),
        None => format!("{} (this process only)", store.kind.as_str()),
    };
    tracing::info!(
        url = %format!("http://{addr}/mcp"),
        auth,
        sessions = if gateway.http.stateless { "stateless" } else { "sessions" },
        replica = %config.replica_id,
        store = %shared,
        "starting the HTTP gateway"
    );
    let listening = aegis_gitea_mcp::http::Listening {
        max_connections: gateway.max_connections,
        header_timeout: gateway.header_timeout,
        metrics: server.app().metrics.clone(),
    };
    let router =
        aegis_gitea_mcp::http::router(server, gateway).map_err(|e| UsageError(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    aegis_gitea_mcp::http::serve(router, listener, listening).await?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_takes_addresses_and_local_names() {
        assert_eq!(
            listen_address("127.0.0.1:8080").unwrap(),
            SocketAddr::from(([127, 0, 0, 1], 8080))
        );
        assert_eq!(listen_address("[::1]:9").unwrap().port(), 9);
        let local = listen_address("localhost:8080").unwrap();
        assert!(local.ip().is_loopback(), "{local}");
        assert_eq!(local.port(), 8080);
        for bad in [
            "localhost",
            "8080",
            "localhost:http-alt:1",
            "127.0.0.1:99999",
            "",
        ] {
            let e = listen_address(bad).unwrap_err().to_string();
            assert!(e.contains("LISTEN (--listen)"), "{bad}: {e}");
        }
    }
}

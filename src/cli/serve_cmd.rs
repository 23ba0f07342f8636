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

/// Arguments of `serve`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at /mcp instead of stdio
    #[arg(long)]
    http: bool,
    /// Address to listen on with --http
    #[arg(
        long,
        env = "LISTEN",
        value_name = "ADDR",
        default_value = "127.0.0.1:8080"
    )]
    listen: String,
    /// No MCP sessions (for deployments behind a load balancer)
    #[arg(long, env = "STATELESS")]
    stateless: bool,
    /// Tools offered: dynamic (3 tools), individual (one per action) or both
    #[arg(
        long,
        env = "SURFACE",
        value_name = "SURFACE",
        default_value = "dynamic"
    )]
    surface: String,
    /// Comma-separated Host values accepted over HTTP (DNS-rebinding protection) [default: localhost,127.0.0.1,::1]
    #[arg(long = "allowed-hosts", env = "ALLOWED_HOSTS", value_name = "LIST")]
    allowed_hosts: Option<String>,
    /// Comma-separated browser origins accepted over HTTP (scheme://host:port)
    #[arg(long = "allowed-origins", env = "ALLOWED_ORIGINS", value_name = "LIST")]
    allowed_origins: Option<String>,
    /// How HTTP clients authenticate: none (loopback only), api-key or gitea-token [default: none]
    #[arg(long = "auth-mode", env = "AUTH_MODE", value_name = "MODE")]
    auth_mode: Option<String>,
    /// API keys (sha256 hashes, one per line with an optional label) for AUTH_MODE=api-key
    #[arg(long = "api-keys-file", env = "API_KEYS_FILE", value_name = "PATH")]
    api_keys_file: Option<std::path::PathBuf>,
    /// Accept ?api_key= (query strings end up in logs) [default: false]
    #[arg(
        long = "allow-query-api-key",
        env = "ALLOW_QUERY_API_KEY",
        value_name = "BOOL"
    )]
    allow_query_api_key: Option<String>,
    /// GET /mcp/tools without authentication [default: true]
    #[arg(
        long = "public-tool-list",
        env = "PUBLIC_TOOL_LIST",
        value_name = "BOOL"
    )]
    public_tool_list: Option<String>,
    /// Requests per minute from one address [default: 600]
    #[arg(
        long = "rate-limit-per-ip",
        env = "RATE_LIMIT_PER_IP",
        value_name = "N"
    )]
    rate_limit_per_ip: Option<String>,
    /// Requests per minute with one credential [default: 600]
    #[arg(
        long = "rate-limit-per-credential",
        env = "RATE_LIMIT_PER_CREDENTIAL",
        value_name = "N"
    )]
    rate_limit_per_credential: Option<String>,
    /// Failed authentications per minute from one address before it is throttled [default: 10]
    #[arg(
        long = "auth-failures-per-minute",
        env = "AUTH_FAILURES_PER_MINUTE",
        value_name = "N"
    )]
    auth_failures_per_minute: Option<String>,
    /// Largest HTTP request body in bytes [default: 1048576]
    #[arg(long = "max-body-bytes", env = "MAX_BODY_BYTES", value_name = "BYTES")]
    max_body_bytes: Option<String>,
    /// Seconds for an HTTP answer to start [default: 120]
    #[arg(
        long = "request-timeout",
        env = "REQUEST_TIMEOUT_SECS",
        value_name = "SECS"
    )]
    request_timeout: Option<String>,
    /// Most MCP sessions at once [default: 256]
    #[arg(long = "max-sessions", env = "MAX_SESSIONS", value_name = "N")]
    max_sessions: Option<String>,
    /// Most MCP sessions one credential may hold at once [default: 32]
    #[arg(
        long = "max-sessions-per-credential",
        env = "MAX_SESSIONS_PER_CREDENTIAL",
        value_name = "N"
    )]
    max_sessions_per_credential: Option<String>,
    /// Most open HTTP connections at once [default: 1024]
    #[arg(long = "max-connections", env = "MAX_CONNECTIONS", value_name = "N")]
    max_connections: Option<String>,
    /// Seconds a connection may take to send request headers, or stay idle between requests [default: 10]
    #[arg(
        long = "header-timeout",
        env = "HEADER_TIMEOUT_SECS",
        value_name = "SECS"
    )]
    header_timeout: Option<String>,
    /// Comma-separated addresses of reverse proxies whose X-Forwarded-For is believed
    #[arg(long = "trusted-proxies", env = "TRUSTED_PROXIES", value_name = "LIST")]
    trusted_proxies: Option<String>,
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
    /// `serve` with no flags: stdio, dynamic surface (environment variables still apply).
    pub fn default_stdio() -> ServeArgs {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        ServeArgs {
            http: false,
            listen: "127.0.0.1:8080".into(),
            stateless: false,
            surface: env("SURFACE").unwrap_or_else(|| "dynamic".into()),
            ..ServeArgs::default()
        }
    }

    /// The gateway's settings, checked; errors name the variable.
    fn gateway(&self, listen: SocketAddr) -> Result<GatewayConfig, UsageError> {
        let mut g = GatewayConfig::new(listen);
        // The same checks (and messages) as every other setting.
        let num = |v: &Option<String>, var: &'static str, flag: &'static str, default, min, max| {
            config::number(v.as_deref(), var, flag, default, min, max)
                .map_err(|e| UsageError(e.to_string()))
        };
        let flag = |v: &Option<String>, var: &'static str, flag: &'static str, default| {
            config::bool_value(v.as_deref(), var, flag, default)
                .map_err(|e| UsageError(e.to_string()))
        };
        g.auth_mode = match &self.auth_mode {
            Some(m) => m.parse().map_err(UsageError)?,
            None => AuthMode::None,
        };
        if let Some(path) = &self.api_keys_file {
            g.api_keys = Some(ApiKeys::load(path).map_err(UsageError)?);
        }
        g.allow_query_api_key = flag(
            &self.allow_query_api_key,
            "ALLOW_QUERY_API_KEY",
            "allow-query-api-key",
            false,
        )?;
        g.public_tool_list = flag(
            &self.public_tool_list,
            "PUBLIC_TOOL_LIST",
            "public-tool-list",
            true,
        )?;
        g.rate_per_ip = num(
            &self.rate_limit_per_ip,
            "RATE_LIMIT_PER_IP",
            "rate-limit-per-ip",
            600,
            1,
            1_000_000,
        )? as u32;
        g.rate_per_credential = num(
            &self.rate_limit_per_credential,
            "RATE_LIMIT_PER_CREDENTIAL",
            "rate-limit-per-credential",
            600,
            1,
            1_000_000,
        )? as u32;
        g.auth_failures_per_minute = num(
            &self.auth_failures_per_minute,
            "AUTH_FAILURES_PER_MINUTE",
            "auth-failures-per-minute",
            10,
            1,
            100_000,
        )? as u32;
        g.max_body_bytes = num(
            &self.max_body_bytes,
            "MAX_BODY_BYTES",
            "max-body-bytes",
            1 << 20,
            1024,
            1 << 30,
        )? as usize;
        g.request_timeout = Duration::from_secs(num(
            &self.request_timeout,
            "REQUEST_TIMEOUT_SECS",
            "request-timeout",
            120,
            1,
            3600,
        )?);
        g.max_sessions = num(
            &self.max_sessions,
            "MAX_SESSIONS",
            "max-sessions",
            256,
            1,
            100_000,
        )? as usize;
        g.max_sessions_per_credential = num(
            &self.max_sessions_per_credential,
            "MAX_SESSIONS_PER_CREDENTIAL",
            "max-sessions-per-credential",
            32,
            1,
            100_000,
        )? as usize;
        g.max_connections = num(
            &self.max_connections,
            "MAX_CONNECTIONS",
            "max-connections",
            1024,
            1,
            1_000_000,
        )? as usize;
        g.header_timeout = Duration::from_secs(num(
            &self.header_timeout,
            "HEADER_TIMEOUT_SECS",
            "header-timeout",
            10,
            1,
            3600,
        )?);
        if let Some(list) = list(&self.trusted_proxies) {
            g.trusted_proxies = list
                .iter()
                .map(|p| {
                    p.parse().map_err(|_| {
                        UsageError(format!("TRUSTED_PROXIES: {p:?} is not an IP address"))
                    })
                })
                .collect::<Result<_, _>>()?;
        }
        g.http = HttpOptions {
            stateless: self.stateless,
            max_body_bytes: g.max_body_bytes,
            ..HttpOptions::default()
        };
        if let Some(hosts) = list(&self.allowed_hosts) {
            g.http.allowed_hosts = hosts;
        }
        if let Some(origins) = list(&self.allowed_origins) {
            g.http.allowed_origins = origins;
        }
        Ok(g)
    }
}

fn list(v: &Option<String>) -> Option<Vec<String>> {
    v.as_ref().map(|s| {
        s.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    })
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
    let surface: Surface = args.surface.parse().map_err(UsageError)?;
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
    tracing::info!(
        url = %format!("http://{addr}/mcp"),
        auth,
        sessions = if gateway.http.stateless { "stateless" } else { "sessions" },
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

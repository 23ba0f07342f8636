//! `aegis-gitea-mcp serve`: the MCP server over stdio (default) or streamable HTTP.

use std::net::SocketAddr;
use std::time::Duration;

use aegis_gitea_mcp::app::{self, State};
use aegis_gitea_mcp::audit::AuditLog;
use aegis_gitea_mcp::config::Config;
use aegis_gitea_mcp::exec::{Context, ExecConfig};
use aegis_gitea_mcp::mcp::http::{self, HttpOptions};
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
}

/// Builds the server: document → catalog → policy (with the token's scopes) → index.
pub async fn build(config: &Config, surface: Surface) -> anyhow::Result<Server> {
    let ctx = Context::new(config, ExecConfig::from_config(config))?;
    let loaded = app::load_spec(config, &ctx.client).await?;
    let mut state = State::new(&loaded.spec, config)?;
    for w in state.policy.warnings() {
        tracing::warn!("{w}");
    }
    // Withhold what the token cannot reach, when Gitea says what that is. A slow instance does
    // not hold up start-up for long.
    match tokio::time::timeout(Duration::from_secs(3), ctx.token_scopes()).await {
        Ok(Some(scopes)) => {
            state.restrict_to_token_scopes(&scopes);
            tracing::info!(scopes = %scopes.join(","), allowed = state.policy.allowed_count(), "token scopes applied");
        }
        _ => tracing::info!(
            "token scopes not readable; a 403 will be explained with the scope the route needs"
        ),
    }
    let audit = match &config.audit_log {
        Some(target) => Some(AuditLog::open(target)?),
        None => None,
    };
    Ok(Server::new(state, ctx, surface, audit))
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
            allowed_hosts: None,
            allowed_origins: None,
        }
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

pub async fn run(config: &Config, args: &ServeArgs) -> anyhow::Result<Exit> {
    let surface: Surface = args.surface.parse().map_err(UsageError)?;
    let addr: SocketAddr = if args.http {
        args.listen.parse().map_err(|e| {
            UsageError(format!(
                "LISTEN (--listen) {:?} is not an address like 127.0.0.1:8080: {e}",
                args.listen
            ))
        })?
    } else {
        SocketAddr::from(([127, 0, 0, 1], 0))
    };
    let server = build(config, surface).await?;
    if !args.http {
        mcp::serve_stdio(server).await?;
        return Ok(Exit::Ok);
    }
    let mut opts = HttpOptions {
        stateless: args.stateless,
        ..HttpOptions::default()
    };
    if let Some(hosts) = list(&args.allowed_hosts) {
        opts.allowed_hosts = hosts;
    }
    if let Some(origins) = list(&args.allowed_origins) {
        opts.allowed_origins = origins;
    }
    http::serve(http::router(server, &opts), addr).await?;
    Ok(Exit::Ok)
}

//! Start-up: the one place where the API description is loaded (and its pin checked) and the
//! whole [`App`] is assembled from the configuration, so every command and transport is wired
//! the same way.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::audit::{self, AuditLog};
use crate::config::{Config, Secret};
use crate::exec::{self, Confirmations, Context, ExecConfig};
use crate::gitea::{self, ClientConfig, GiteaClient};
use crate::metrics::Metrics;
use crate::spec::{self, DEFAULT_PINNED_SPEC, Spec, SpecSource};
use crate::state::{self, State};

/// Errors while assembling the state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Loading the document failed.
    #[error(transparent)]
    Spec(#[from] spec::Error),
    /// Building the state (catalog, policy) failed.
    #[error(transparent)]
    State(#[from] state::Error),
    /// Talking to Gitea failed.
    #[error(transparent)]
    Gitea(#[from] gitea::Error),
    /// The executor could not be set up.
    #[error(transparent)]
    Exec(#[from] exec::Error),
    /// The audit log could not be opened.
    #[error(transparent)]
    Audit(#[from] audit::Error),
    /// The instance does not serve its API description (Gitea's `[api] ENABLE_SWAGGER = false`).
    #[error(
        "{url} answered {status}: the instance does not serve its API description \
         (Gitea's `[api] ENABLE_SWAGGER = false`?). Give the document with `--spec FILE` \
         (GITEA_SPEC), or run `aegis-gitea-mcp spec pin` on a machine that can read it and copy \
         the pinned files to {pin}"
    )]
    NoInstanceSpec {
        /// The URL asked.
        url: String,
        /// What it answered.
        status: u16,
        /// Where this server looks for a pinned document.
        pin: String,
    },
}

/// A loaded document and where it came from.
#[derive(Debug)]
pub struct LoadedSpec {
    /// The parsed document.
    pub spec: Spec,
    /// Where it was read from.
    pub source: SpecSource,
    /// Where its pin came from (`GITEA_SPEC_SHA256` or the `.sha256` file), if it is pinned.
    pub pin: Option<String>,
}

/// Largest API description read from an instance (Gitea's is about 1 MB).
pub const MAX_SPEC_BYTES: usize = 32 << 20;

/// Where this server looks for the pinned document of its instance, best first: the config
/// directory's pin, then the working directory's `spec/gitea-swagger.v1.json` (older pins).
pub fn pin_candidates(config: &Config) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = pin_location(config).into_iter().collect();
    out.push(PathBuf::from(DEFAULT_PINNED_SPEC));
    out
}

/// Where `spec pin` writes the instance's document (`None` without a config directory).
pub fn pin_location(config: &Config) -> Option<PathBuf> {
    let dir = config.config_dir.as_deref()?;
    Some(spec::pinned_spec_path(dir, &config.gitea_url))
}

/// Downloads the instance's document; a 404 (or 403) explains how to do without it.
pub async fn fetch_instance_spec(
    config: &Config,
    client: &GiteaClient,
    token: Option<&Secret>,
) -> Result<Vec<u8>, Error> {
    match client.fetch_spec(token, MAX_SPEC_BYTES).await {
        Err(gitea::Error::Status { url, status }) if matches!(status, 403 | 404) => {
            Err(Error::NoInstanceSpec {
                url,
                status,
                pin: pin_location(config).map_or_else(
                    || "a directory given with --config-dir".to_string(),
                    |p| p.display().to_string(),
                ),
            })
        }
        other => Ok(other?),
    }
}

/// Loads the API description from the configured source and checks its pin; `token` is the
/// server's own (the document is the same for every caller). Logs which document and which
/// pin are in use, and warns when the catalog follows the live instance unpinned.
pub async fn load_spec(
    config: &Config,
    client: &GiteaClient,
    token: Option<&Secret>,
) -> Result<LoadedSpec, Error> {
    let source = SpecSource::choose(config.spec.as_deref(), &pin_candidates(config));
    let bytes = match source.file() {
        Some(p) => spec::read_spec_file(p)?,
        None => fetch_instance_spec(config, client, token).await?,
    };
    let pin = spec::read_pin(config.spec_sha256.as_deref(), source.file())?;
    spec::verify_pin(&bytes, pin.as_deref())?;
    let spec = Spec::parse(&bytes)?;
    let pin_origin = match (&pin, config.spec_sha256.is_some(), source.file()) {
        (Some(_), true, _) => Some("GITEA_SPEC_SHA256".to_string()),
        (Some(_), false, Some(f)) => Some(spec::pin_path_for(f).display().to_string()),
        _ => None,
    };
    let pin_text = pin_origin.as_deref().unwrap_or("none");
    tracing::info!(
        source = %source.describe(),
        pin = %pin_text,
        sha256 = %spec.sha256,
        version = %spec.version,
        operations = spec.operations.len(),
        "loaded the API description"
    );
    match &source {
        SpecSource::Instance if pin.is_none() => tracing::warn!(
            "running unpinned: the actions follow whatever {} serves at /swagger.v1.json; pin \
             the document with `aegis-gitea-mcp spec pin` (it is then found from any directory)",
            config.gitea_url
        ),
        SpecSource::Pinned(p) if p.as_path() == Path::new(DEFAULT_PINNED_SPEC) => {
            tracing::warn!(
                "using {DEFAULT_PINNED_SPEC} in the working directory, which a client started \
                 elsewhere will not find; re-pin with `aegis-gitea-mcp spec pin` to keep it in {}",
                pin_location(config)
                    .map_or_else(|| "--config-dir".into(), |p| p.display().to_string())
            )
        }
        _ => {}
    }
    Ok(LoadedSpec {
        spec,
        source,
        pin: pin_origin,
    })
}

/// Loads a document from a file (no network), checking a pin if one is configured.
pub fn load_spec_file(path: &Path, pin: Option<&str>) -> Result<Spec, Error> {
    let bytes = spec::read_spec_file(path)?;
    let pin = spec::read_pin(pin, Some(path))?;
    spec::verify_pin(&bytes, pin.as_deref())?;
    Ok(Spec::parse(&bytes)?)
}

/// Loads the document and builds the [`State`] (for commands that call nothing: `find`,
/// `catalog`, `eval`); warns about policy entries that match nothing.
pub async fn load_state(config: &Config) -> Result<(State, LoadedSpec), Error> {
    let client = GiteaClient::new(&ClientConfig::from_config(config), Arc::default())?;
    let loaded = load_spec(config, &client, config.token.as_ref()).await?;
    let state = State::new(&loaded.spec, &config.policy)?;
    for w in state.policy.warnings() {
        tracing::warn!("{w}");
    }
    Ok((state, loaded))
}

/// Everything a running server holds, assembled once and passed down: the state, the
/// executor, the audit log and the metrics.
#[derive(Debug)]
pub struct App {
    /// Catalog, policy, index, validators.
    pub state: State,
    /// The executor (client, settings, confirmations, the server's token).
    pub exec: Context,
    /// The audit log, if configured.
    pub audit: Option<AuditLog>,
    /// Counters and histograms for `/metrics`.
    pub metrics: Arc<Metrics>,
}

/// How an [`App`] is assembled beyond the configuration.
#[derive(Debug, Default)]
pub struct Assembly {
    /// How long start-up waits for the token's scopes (`None`: the client's own timeout).
    pub scope_wait: Option<Duration>,
    /// The confirmation store; by default one whose key dies with the process.
    pub confirmations: Option<Confirmations>,
}

impl App {
    /// Document → catalog → policy (restricted to the token's scopes when Gitea says what they
    /// are) → index; the executor; the audit log.
    pub async fn assemble(config: &Config, how: Assembly) -> Result<App, Error> {
        let metrics = Arc::new(Metrics::default());
        let mut exec = Context::new(config, ExecConfig::from_config(config), metrics.clone())?;
        if let Some(c) = how.confirmations {
            exec.confirmations = Arc::new(c);
        }
        let loaded = load_spec(config, &exec.client, exec.server_token()).await?;
        let mut state = State::new(&loaded.spec, &config.policy)?;
        for w in state.policy.warnings() {
            tracing::warn!("{w}");
        }
        let scopes = match how.scope_wait {
            Some(wait) => tokio::time::timeout(wait, exec.token_scopes())
                .await
                .unwrap_or(None),
            None => exec.token_scopes().await,
        };
        match scopes {
            Some(scopes) => {
                state.restrict_to_token_scopes(&scopes);
                tracing::info!(scopes = %scopes.join(","), allowed = state.policy.allowed_count(), "token scopes applied");
            }
            None => tracing::info!(
                "token scopes not readable; a 403 will be explained with the scope the route needs"
            ),
        }
        let audit = config
            .audit_log
            .as_deref()
            .map(|target| AuditLog::open(target, &config.replica_id))
            .transpose()?;
        Ok(App {
            state,
            exec,
            audit,
            metrics,
        })
    }

    /// An app over an already loaded document, without the scope probe (tests, benchmarks).
    pub fn from_spec(spec: &Spec, config: &Config) -> Result<App, Error> {
        let metrics = Arc::new(Metrics::default());
        Ok(App {
            state: State::new(spec, &config.policy)?,
            exec: Context::new(config, ExecConfig::from_config(config), metrics.clone())?,
            audit: config
                .audit_log
                .as_deref()
                .map(|target| AuditLog::open(target, &config.replica_id))
                .transpose()?,
            metrics,
        })
    }
}

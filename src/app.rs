//! Start-up: the one place where the API description is loaded (and its pin checked) and the
//! whole [`App`] is assembled from the configuration, so every command and transport is wired
//! the same way.

use std::path::Path;
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
}

/// A loaded document and where it came from.
#[derive(Debug)]
pub struct LoadedSpec {
    /// The parsed document.
    pub spec: Spec,
    /// Where it was read from.
    pub source: SpecSource,
}

/// Largest API description read from an instance (Gitea's is about 1 MB).
pub const MAX_SPEC_BYTES: usize = 32 << 20;

/// Loads the API description from the configured source and checks its pin; `token` is the
/// server's own (the document is the same for every caller).
pub async fn load_spec(
    config: &Config,
    client: &GiteaClient,
    token: Option<&Secret>,
) -> Result<LoadedSpec, Error> {
    let source = SpecSource::choose(config.spec.as_deref(), Path::new(DEFAULT_PINNED_SPEC));
    let (bytes, pin_file) = match &source {
        SpecSource::File(p) => (spec::read_spec_file(p)?, Some(p.as_path())),
        SpecSource::Instance => (client.fetch_spec(token, MAX_SPEC_BYTES).await?, None),
    };
    let pin = spec::read_pin(config.spec_sha256.as_deref(), pin_file)?;
    spec::verify_pin(&bytes, pin.as_deref())?;
    let spec = Spec::parse(&bytes)?;
    tracing::info!(
        source = %source.describe(),
        sha256 = %spec.sha256,
        version = %spec.version,
        operations = spec.operations.len(),
        "loaded the API description"
    );
    Ok(LoadedSpec { spec, source })
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
            .map(AuditLog::open)
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
                .map(AuditLog::open)
                .transpose()?,
            metrics,
        })
    }
}

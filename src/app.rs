//! Assembles the shared state from the configuration: document → catalog → policy.
//!
//! This is the only place that decides where the API description comes from, so every command
//! and transport loads it the same way (and checks the same pin).

use std::path::Path;
use std::sync::Arc;

use crate::catalog::{self, Catalog, Scope};
use crate::config::Config;
use crate::exec::Env;
use crate::exec::args::Validators;
use crate::gitea::{self, GiteaClient};
use crate::policy::Policy;
use crate::search::{self, LazyIndex, SearchIndex};
use crate::spec::{self, DEFAULT_PINNED_SPEC, Spec, SpecSource};

/// Errors while assembling the state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Loading the document failed.
    #[error(transparent)]
    Spec(#[from] spec::Error),
    /// Building the catalog failed.
    #[error(transparent)]
    Catalog(#[from] catalog::Error),
    /// Talking to Gitea failed.
    #[error(transparent)]
    Gitea(#[from] gitea::Error),
    /// Building the search index failed.
    #[error(transparent)]
    Search(#[from] search::Error),
    /// The policy settings name actions this document does not have.
    #[error(
        "DISABLED_TOOLS (--disabled-tools): {} match no action name, operationId or domain of this API description; fix the spelling, or set DISABLED_TOOLS_ALLOW_UNKNOWN=true to accept entries for other versions",
        .0.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>().join(", ")
    )]
    UnknownDisabled(Vec<String>),
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
    token: Option<&crate::config::Secret>,
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

/// The catalog, the policy over it and the search index: built once, shared by every session.
#[derive(Debug)]
pub struct State {
    /// Every action of the document.
    pub catalog: Arc<Catalog>,
    /// The operator's filters applied to it.
    pub policy: Policy,
    /// The search index over the catalog.
    pub index: Arc<LazyIndex>,
    /// Compiled input schemas (compiled on first use).
    pub validators: Validators,
}

impl State {
    /// Builds the catalog and applies the configured policy; the search index is built in the
    /// background.
    pub fn new(spec: &Spec, config: &Config) -> Result<State, Error> {
        let catalog = Arc::new(Catalog::build(spec)?);
        let policy = Policy::new(&catalog, &config.policy);
        if !policy.unmatched_disabled().is_empty() && !config.policy.allow_unknown_disabled {
            return Err(Error::UnknownDisabled(policy.unmatched_disabled().to_vec()));
        }
        let index = LazyIndex::start(Arc::clone(&catalog));
        let validators = Validators::new(&catalog);
        Ok(State {
            catalog,
            policy,
            index,
            validators,
        })
    }

    /// The search index (waits for the background build on first use).
    pub fn search_index(&self) -> Result<&SearchIndex, search::Error> {
        self.index.wait()
    }

    /// Withholds the actions the token's scopes cannot reach (`scopes` as Gitea reports them;
    /// `all` grants everything).
    pub fn restrict_to_token_scopes(&mut self, scopes: &[String]) {
        let all = scopes.iter().any(|s| s == "all");
        let granted: Vec<Scope> = scopes.iter().filter_map(|s| Scope::parse(s)).collect();
        self.policy.restrict_to_scopes(&self.catalog, &granted, all);
    }

    /// The borrowed view the executor needs.
    pub fn exec_env(&self) -> Env<'_> {
        Env {
            catalog: &self.catalog,
            policy: &self.policy,
            validators: &self.validators,
            index: &self.index,
        }
    }
}

//! What the API description turns into, built once and shared by every session: the catalog,
//! the policy over it, the search index and the compiled input schemas. Everything downstream
//! (the executor, the tools, the resources, the transports) reads it; nothing changes it after
//! start-up but the token-scope restriction.

use std::sync::Arc;

use crate::catalog::{self, Catalog, Scope, Validators};
use crate::policy::{Policy, PolicyConfig};
use crate::search::{self, LazyIndex, SearchIndex};
use crate::spec::Spec;

/// Errors building the state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Building the catalog failed.
    #[error(transparent)]
    Catalog(#[from] catalog::Error),
    /// The policy settings name actions this document does not have.
    #[error(
        "DISABLED_TOOLS (--disabled-tools): {} match no action name, operationId or domain of this API description; fix the spelling, or set DISABLED_TOOLS_ALLOW_UNKNOWN=true to accept entries for other versions",
        .0.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>().join(", ")
    )]
    UnknownDisabled(Vec<String>),
}

/// The catalog, the policy over it, the search index and the validators.
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
    /// Builds the catalog and applies `policy`; the search index is built in the background.
    pub fn new(spec: &Spec, policy: &PolicyConfig) -> Result<State, Error> {
        let catalog = Arc::new(Catalog::build(spec)?);
        let decisions = Policy::new(&catalog, policy);
        if !decisions.unmatched_disabled().is_empty() && !policy.allow_unknown_disabled {
            return Err(Error::UnknownDisabled(
                decisions.unmatched_disabled().to_vec(),
            ));
        }
        let index = LazyIndex::start(Arc::clone(&catalog));
        let validators = Validators::new(&catalog);
        Ok(State {
            catalog,
            policy: decisions,
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
}

//! AegisGitea MCP: the whole Gitea / Forgejo API for AI agents, behind a guard.
//!
//! Data flows one way: [`spec`] (the swagger document) → [`catalog`] (one action per operation)
//! → [`search`] and [`policy`] → [`exec`] and [`tools`] → the transports ([`mcp`], [`http`]).
//! See `ARCHITECTURE.md` for the map.
//!
//! From a document to a found, policy-checked action:
//!
//! ```
//! use aegis_gitea_mcp::catalog::Catalog;
//! use aegis_gitea_mcp::policy::{Policy, PolicyConfig, WithheldReason};
//! use aegis_gitea_mcp::search::{SearchIndex, SearchOptions};
//! use aegis_gitea_mcp::spec::Spec;
//!
//! let doc = r#"{"swagger": "2.0", "info": {"title": "Gitea API", "version": "1.28"},
//!   "basePath": "/api/v1", "definitions": {}, "paths": {
//!     "/repos/{owner}/{repo}/pulls": {"post": {"operationId": "repoCreatePullRequest",
//!       "summary": "Create a pull request", "tags": ["repository"], "parameters": [
//!         {"name": "owner", "in": "path", "type": "string", "required": true},
//!         {"name": "repo", "in": "path", "type": "string", "required": true}]}},
//!     "/repos/{owner}/{repo}": {"delete": {"operationId": "repoDelete",
//!       "summary": "Delete a repository", "tags": ["repository"], "parameters": [
//!         {"name": "owner", "in": "path", "type": "string", "required": true},
//!         {"name": "repo", "in": "path", "type": "string", "required": true}]}}}}"#;
//! let spec = Spec::parse(doc.as_bytes())?;
//! let catalog = Catalog::build(&spec)?;
//! assert_eq!(catalog.get("repoCreatePullRequest").unwrap().name.as_str(), "gitea_pull_create");
//!
//! // An agent's words find the action.
//! let index = SearchIndex::build(&catalog)?;
//! let hits = index.search("open an MR", &SearchOptions::default())?;
//! assert_eq!(catalog.actions()[hits[0].action].name.as_str(), "gitea_pull_create");
//!
//! // A read-only server withholds the delete, and says why.
//! let policy = Policy::new(&catalog, &PolicyConfig { read_only: true, ..PolicyConfig::default() });
//! let delete = catalog.get("gitea_repo_delete").unwrap();
//! let index_of_delete = catalog.index_of(&delete.name).unwrap();
//! assert_eq!(policy.check(index_of_delete).unwrap_err(), WithheldReason::ReadOnly);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod app;
pub mod audit;
pub mod catalog;
pub mod config;
pub mod exec;
pub mod gitea;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod outbound;
pub mod policy;
pub mod search;
pub mod spec;
pub mod tools;

/// How many cases a property test runs: `default`, or `PROPTEST_CASES` for a longer soak.
#[cfg(test)]
pub(crate) fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

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
//! assert_eq!(catalog[hits[0].action].name.as_str(), "gitea_pull_create");
//!
//! // A read-only server withholds the delete, and says why.
//! let policy = Policy::new(&catalog, &PolicyConfig { read_only: true, ..PolicyConfig::default() });
//! let (delete, _) = catalog.lookup("gitea_repo_delete").unwrap();
//! assert_eq!(policy.check(delete).unwrap_err(), WithheldReason::ReadOnly);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod app;
pub mod audit;
pub mod catalog;
pub mod config;
pub mod digest;
pub mod doctor;
pub mod exec;
pub mod gitea;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod outbound;
pub mod policy;
pub mod render;
pub mod search;
pub mod spec;
pub mod state;
pub mod store;
pub mod tools;

/// How many cases a property test runs: `default`, or `PROPTEST_CASES` for a longer soak.
#[cfg(test)]
pub(crate) fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Strategies shared by the property tests.
#[cfg(test)]
pub(crate) mod testing {
    use proptest::prelude::*;
    use serde_json::Value;

    /// The fixture document every unit test may read.
    pub const FIXTURE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gitea-mini.swagger.json"
    );

    /// Any JSON value, a few levels deep, with hostile strings.
    pub fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            "\\PC{0,40}".prop_map(Value::String),
            "[./%a-z0-9{}]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z_]{0,10}|\\PC{0,8}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }
}

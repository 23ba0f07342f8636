//! AegisGitea MCP: the whole Gitea / Forgejo API for AI agents, behind a guard.
//!
//! Data flows one way: [`spec`] (the swagger document) → [`catalog`] (one action per operation)
//! → [`policy`] (what may be offered) → the surfaces. See `ARCHITECTURE.md` for the map.

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
pub mod policy;
pub mod search;
pub mod spec;
pub mod tools;

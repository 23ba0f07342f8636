//! The integration tests: one binary, one module per boundary, the fake Gitea compiled once.
//!
//! Tests that need the upstream swagger documents (`../shared/spec`, or `GITEA_SPEC_DIR`) are
//! `#[ignore]`d with the reason when they are absent (see `build.rs`); everything else runs on
//! the fixture in `tests/fixtures/`.

mod common;
mod support;
mod support_prism;

mod action_names;
mod bundle;
mod catalog_fixture;
mod catalog_full_spec;
mod cli_call;
mod cli_catalog;
mod cli_doctor;
mod cli_fit;
mod cli_spec_pin;
mod exec;
mod fake_gitea_selftest;
mod http_gateway;
mod layering;
mod mcp_http;
mod mcp_stdio;
mod prism_contract;
mod scale_out;
mod scopes;
mod search_documents;
mod search_queries;
mod untrusted_content;

//! Helpers shared by the integration tests: the fixture, and the upstream API descriptions.
//!
//! The upstream documents live outside the repository (they are not ours), in `$GITEA_SPEC_DIR`
//! or, by default, `../shared/spec` beside the checkout. `build.rs` sets `cfg(shared_spec)` when
//! all three are there; the tests that read them carry
//! `#[cfg_attr(not(shared_spec), ignore = "…")]`, so without them they count as ignored, never
//! as passed.

use std::path::{Path, PathBuf};

/// The fixture API description every test may use.
pub const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/gitea-mini.swagger.json"
);

/// The three documents and how many operations each one has (per `SOURCE.md`).
#[allow(dead_code)] // not every test crate walks all three
pub const FULL_SPECS: [(&str, usize); 3] = [
    ("gitea-swagger.v1.json", 482),
    ("gitea-swagger.newest.v1.json", 537),
    ("forgejo-swagger.v1.json", 506),
];

/// The directory of the upstream documents: `GITEA_SPEC_DIR`, else `../shared/spec`.
pub fn spec_dir() -> PathBuf {
    match std::env::var_os("GITEA_SPEC_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/spec"),
    }
}

/// The path of `name` in the spec directory. The tests that call it are ignored when the
/// documents are absent (`cfg(shared_spec)`, set by `build.rs`), so a missing file here fails.
pub fn spec_path(name: &str) -> PathBuf {
    let path = spec_dir().join(name);
    assert!(
        path.is_file(),
        "{name} is missing: {} does not exist (set GITEA_SPEC_DIR)",
        path.display()
    );
    path
}

/// The bytes of `name` (see [`spec_path`]).
pub fn spec_bytes(name: &str) -> Vec<u8> {
    let path = spec_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

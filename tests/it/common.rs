//! Helpers shared by the integration tests that read the full API descriptions.
//!
//! The documents live outside the repository (they are upstream files, not ours), in
//! `$GITEA_SPEC_DIR` or, by default, `../shared/spec` beside the checkout.
//!
//! * `GITEA_SPEC_DIR` set (and not empty): every requested file must exist; a missing one fails
//!   the test and names the file.
//! * Not set: a missing file prints `skipped: <file> not found (set GITEA_SPEC_DIR)` to stderr and
//!   the caller returns without asserting anything.

use std::path::{Path, PathBuf};

/// The three documents and how many operations each one has (per `SOURCE.md`).
#[allow(dead_code)] // not every test crate walks all three
pub const FULL_SPECS: [(&str, usize); 3] = [
    ("gitea-swagger.v1.json", 482),
    ("gitea-swagger.newest.v1.json", 537),
    ("forgejo-swagger.v1.json", 506),
];

/// The path of `name` in the spec directory, or `None` (after printing why) when the default
/// directory lacks it. Panics when `GITEA_SPEC_DIR` is set and the file is missing.
pub fn spec_path(name: &str) -> Option<PathBuf> {
    match std::env::var_os("GITEA_SPEC_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => {
            let path = PathBuf::from(dir).join(name);
            assert!(
                path.is_file(),
                "GITEA_SPEC_DIR is set but {name} is missing: {} does not exist",
                path.display()
            );
            Some(path)
        }
        None => {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/spec")
                .join(name);
            if path.is_file() {
                Some(path)
            } else {
                eprintln!("skipped: {name} not found (set GITEA_SPEC_DIR)");
                None
            }
        }
    }
}

/// The bytes of `name`, or `None` when it is skipped (see [`spec_path`]).
pub fn spec_bytes(name: &str) -> Option<Vec<u8>> {
    let path = spec_path(name)?;
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) => panic!("cannot read {}: {e}", path.display()),
    }
}

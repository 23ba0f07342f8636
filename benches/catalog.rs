//! Start-up cost of the catalog: parsing the full Gitea API description and building every action
//! (names, input schemas, scopes, annotations) from it.
//!
//! The document is read from `$GITEA_SPEC_DIR/gitea-swagger.v1.json` (default
//! `../shared/spec`). It is not part of the repository; without it the benchmark says so and
//! measures nothing.
//!
//! Run: `cargo bench --bench catalog -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;
use std::path::PathBuf;

use aegis_gitea_mcp::catalog::Catalog;
use aegis_gitea_mcp::spec::Spec;
use criterion::{Criterion, criterion_group, criterion_main};

const SPEC_FILE: &str = "gitea-swagger.v1.json";

fn spec_path() -> PathBuf {
    let dir = std::env::var_os("GITEA_SPEC_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec"));
    dir.join(SPEC_FILE)
}

fn catalog_benches(c: &mut Criterion) {
    let path = spec_path();
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "skipped: cannot read {} ({e}); set GITEA_SPEC_DIR to the folder holding {SPEC_FILE}",
                path.display()
            );
            return;
        }
    };
    // Fail loudly before measuring if the document cannot be used at all.
    let spec = Spec::parse(&bytes).expect("the document parses");
    let actions = Catalog::build(&spec).expect("the catalog builds").len();
    eprintln!("{SPEC_FILE}: {} bytes, {actions} actions", bytes.len());

    c.bench_function("spec parse (gitea-swagger.v1.json)", |b| {
        b.iter(|| Spec::parse(black_box(&bytes)).expect("parses"))
    });
    c.bench_function("parse + build catalog (gitea-swagger.v1.json)", |b| {
        b.iter(|| {
            let spec = Spec::parse(black_box(&bytes)).expect("parses");
            Catalog::build(&spec).expect("builds")
        })
    });
}

criterion_group!(benches, catalog_benches);
criterion_main!(benches);

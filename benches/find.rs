//! Cost of the search over the full Gitea catalog: building the index (with the committed
//! examples and model), answering a query, answering and rendering the compact cards and the
//! siblings line, and the memory the index and model hold.
//!
//! Inputs (outside the repository; without them the benchmark says so and measures nothing):
//! * `$GITEA_SPEC_DIR/gitea-swagger.v1.json` (default `../shared/spec`);
//! * `../shared/eval/find-dev.jsonl` (or `$FIND_EVAL_FILE`): the 80 dev-set queries (`q` field).
//!
//! Besides the criterion benchmarks, it prints to stdout, before them:
//! * `rss …`: resident memory of an index (average over 5 indexes kept alive, from
//!   `/proc/self/status`, Linux only);
//! * `p50=… p99=…`: per-query latency (search; search + the real `render::card` text and JSON
//!   cards, the best card's siblings and schema line) over 50 rounds of the dev queries,
//!   measured with `Instant` (1 round when run as a test, e.g. by `cargo test --benches`).
//!
//! Run: `cargo bench --bench find -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use aegis_gitea_mcp::catalog::Catalog;
use aegis_gitea_mcp::policy::Decision;
use aegis_gitea_mcp::render::card::{
    MAX_SIBLINGS, card_json, card_text, schema_text, siblings_text,
};
use aegis_gitea_mcp::search::tantivy_fields::{
    CATALOG_FIELDS, OwnFields, TantivyFields, query_terms,
};
use aegis_gitea_mcp::search::{SearchIndex, SearchOptions};
use aegis_gitea_mcp::spec::Spec;
use criterion::Criterion;

const SPEC_FILE: &str = "gitea-swagger.v1.json";
const LIMIT: usize = 5;
const ROUNDS: usize = 50;
const INDEXES_FOR_MEMORY: usize = 5;

fn spec_path() -> PathBuf {
    let dir = std::env::var_os("GITEA_SPEC_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec"));
    dir.join(SPEC_FILE)
}

fn eval_path() -> PathBuf {
    std::env::var_os("FIND_EVAL_FILE")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/eval/find-dev.jsonl")
        })
}

/// The `q` field of every JSON line of the dev set.
fn dev_queries(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let row: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("dev set line {}: {e}", i + 1));
            row["q"]
                .as_str()
                .unwrap_or_else(|| panic!("dev set line {}: no string field q", i + 1))
                .to_string()
        })
        .collect()
}

fn opts() -> SearchOptions {
    SearchOptions {
        limit: LIMIT,
        ..SearchOptions::default()
    }
}

fn search(index: &SearchIndex, q: &str) -> usize {
    index
        .search(black_box(q), &opts())
        .unwrap_or_else(|e| panic!("{q:?}: {e}"))
        .len()
}

/// Search, then the real cards of `render::card` as `gitea_find_action` renders them: a text card
/// per hit and a JSON card per hit, the first with its input schema (the tool's default), the
/// best card's siblings and the line quoting its schema, every action allowed.
fn search_and_real_cards(index: &SearchIndex, catalog: &Catalog, q: &str) -> usize {
    let hits = index
        .search(black_box(q), &opts())
        .unwrap_or_else(|e| panic!("{q:?}: {e}"));
    let mut text = String::new();
    let mut json_bytes = 0;
    for (rank, h) in hits.iter().enumerate() {
        let a = &catalog[h.action];
        card_text(&mut text, rank + 1, a, &Decision::Allowed);
        json_bytes += card_json(a, &Decision::Allowed, rank == 0)
            .to_string()
            .len();
    }
    let shown: Vec<usize> = hits.iter().map(|h| h.action.index()).collect();
    if let Some(&best) = shown.first() {
        let related = index.siblings(best, &shown, MAX_SIBLINGS);
        siblings_text(&mut text, catalog.actions(), &related);
        schema_text(&mut text, &catalog.actions()[best]);
    }
    text.len() + json_bytes
}

/// Resident set size in KiB (`VmRSS` of `/proc/self/status`), if the platform has it.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn memory_report(catalog: &Catalog) {
    let Some(before) = rss_kib() else {
        println!("rss: /proc/self/status is not available; memory not measured");
        return;
    };
    let mut kept = Vec::with_capacity(INDEXES_FOR_MEMORY);
    let mut deltas = Vec::with_capacity(INDEXES_FOR_MEMORY);
    let mut last = before;
    for _ in 0..INDEXES_FOR_MEMORY {
        kept.push(SearchIndex::build(catalog).expect("the index builds"));
        let now = rss_kib().unwrap_or(last);
        deltas.push(now.saturating_sub(last));
        last = now;
    }
    let total = last.saturating_sub(before);
    println!(
        "rss: before {before} KiB, after {INDEXES_FOR_MEMORY} indexes kept alive {last} KiB; \
         average per index {:.0} KiB ({:.1} MiB); per build {deltas:?} KiB \
         (the first build also pays one-off allocations)",
        total as f64 / INDEXES_FOR_MEMORY as f64,
        total as f64 / INDEXES_FOR_MEMORY as f64 / 1024.0,
    );
    drop(black_box(kept));
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn latency_report(label: &str, rounds: usize, queries: &[String], mut run: impl FnMut(&str)) {
    let mut samples = Vec::with_capacity(rounds * queries.len());
    for _ in 0..rounds {
        for q in queries {
            let start = Instant::now();
            run(q);
            samples.push(start.elapsed());
        }
    }
    samples.sort();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    println!(
        "{label}: p50={:.1}µs p99={:.1}µs (mean {:.1}µs, max {:.1}µs; {} samples = {rounds} rounds × {} queries, limit {LIMIT})",
        micros(percentile(&samples, 50.0)),
        micros(percentile(&samples, 99.0)),
        micros(mean),
        micros(*samples.last().expect("at least one sample")),
        samples.len(),
        queries.len(),
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let path = spec_path();
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            println!(
                "skipped: cannot read {} ({e}); set GITEA_SPEC_DIR to the folder holding {SPEC_FILE}",
                path.display()
            );
            return;
        }
    };
    let eval = eval_path();
    let queries = match std::fs::read_to_string(&eval) {
        Ok(text) => dev_queries(&text),
        Err(e) => {
            println!(
                "skipped: cannot read {} ({e}); set FIND_EVAL_FILE to the dev set",
                eval.display()
            );
            return;
        }
    };
    let spec = Spec::parse(&bytes).expect("the document parses");
    let catalog = Catalog::build(&spec).expect("the catalog builds");
    println!(
        "{SPEC_FILE}: {} actions; {}: {} queries",
        catalog.len(),
        eval.display(),
        queries.len()
    );

    // Measured before criterion allocates anything.
    memory_report(&catalog);

    let index = SearchIndex::build(&catalog).expect("the index builds");
    // Every dev query must be answerable; an error here is a bug, not a slow query.
    for q in &queries {
        search(&index, q);
    }
    // `cargo bench` passes --bench; `cargo test --benches` does not (criterion's test mode).
    let rounds = if std::env::args().any(|a| a == "--bench") {
        ROUNDS
    } else {
        1
    };
    latency_report("find", rounds, &queries, |q| {
        black_box(search(&index, q));
    });
    latency_report("find + render::card", rounds, &queries, |q| {
        black_box(search_and_real_cards(&index, &catalog, q));
    });

    // tantivy as the index (docs/search.md): the per-field BM25 of the seven catalog fields for
    // each dev query's terms, through tantivy term scorers and through bm25.rs.
    let t0 = Instant::now();
    let tantivy = TantivyFields::build(&catalog).expect("the tantivy index builds");
    let tantivy_build = t0.elapsed();
    let t0 = Instant::now();
    let own = OwnFields::build(&catalog);
    let own_build = t0.elapsed();
    println!(
        "per-field BM25 build: tantivy {:.1} ms, bm25.rs {:.1} ms",
        micros(tantivy_build) / 1000.0,
        micros(own_build) / 1000.0
    );
    let terms: Vec<Vec<String>> = queries.iter().map(|q| query_terms(q)).collect();
    let cells = catalog.len() * CATALOG_FIELDS;
    let by_query: std::collections::HashMap<&str, &Vec<String>> =
        queries.iter().map(String::as_str).zip(&terms).collect();
    latency_report("per-field BM25 via tantivy", rounds, &queries, |q| {
        let mut out = vec![0.0f32; cells];
        tantivy.score(by_query[q], &mut out).expect("scores");
        black_box(out);
    });
    latency_report("per-field BM25 via bm25.rs", rounds, &queries, |q| {
        let mut out = vec![0.0f32; cells];
        own.score(by_query[q], &mut out);
        black_box(out);
    });

    let mut c = Criterion::default().configure_from_args();
    c.bench_function("search index build (gitea-swagger.v1.json)", |b| {
        b.iter(|| SearchIndex::build(black_box(&catalog)).expect("builds"))
    });
    let all = format!("find: all {} dev queries, limit {LIMIT}", queries.len());
    c.bench_function(&all, |b| {
        b.iter(|| queries.iter().map(|q| search(&index, q)).sum::<usize>())
    });
    let real = format!(
        "find + render::card text and JSON: all {} dev queries, limit {LIMIT}",
        queries.len()
    );
    c.bench_function(&real, |b| {
        b.iter(|| {
            queries
                .iter()
                .map(|q| search_and_real_cards(&index, &catalog, q))
                .sum::<usize>()
        })
    });
    c.final_summary();
}

//! `aegis-gitea-mcp fit` and `eval --cv`, driven as processes over the mini fixture: the
//! figures of a fit on its own training needs reach the CV report and the model file, and the
//! model file's check covers them.

use std::path::Path;
use std::process::Output;

use crate::common::{FIXTURE, bin_without_host_settings, stderr, stdout};
use serde_json::Value;

/// Labelled needs over the fixture's operations (the format of `find-train.jsonl`).
const ROWS: &str = r#"{"id": "a", "q": "fetch one repository", "expect": ["repoGet"], "cat": "task"}
{"id": "b", "q": "merge the pull request", "expect": ["repoMergePullRequest"], "cat": "task"}
{"id": "c", "q": "remove a branch", "expect": ["repoDeleteBranch"], "cat": "task"}
{"id": "d", "q": "open a new issue", "expect": ["issueCreateIssue"], "cat": "task"}
{"id": "e", "q": "which branches are there", "expect": ["repoListBranches"], "cat": "terse"}
{"id": "f", "q": "show the repository", "expect": ["repoGet"], "cat": "terse"}
"#;

fn run(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = bin_without_host_settings();
    cmd.current_dir(dir)
        .args(args)
        .args(["--spec", FIXTURE])
        .output()
        .expect("the binary runs")
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("train.jsonl"), ROWS).unwrap();
    std::fs::create_dir(dir.path().join("index")).unwrap();
    dir
}

fn share(v: &Value) -> f64 {
    let x = v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"));
    assert!((0.0..=1.0).contains(&x), "{x}");
    x
}

#[test]
fn cross_validation_reports_the_fits_on_their_own_training_needs() {
    let dir = setup();
    let o = run(dir.path(), &["eval", "train.jsonl", "--cv", "3", "--json"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["report"]["overall"]["n"], 6);
    // Each need trains the fits of the two folds it is not held out of.
    assert_eq!(v["fit"]["rows"], 12, "{v}");
    let (linear, all) = (
        share(&v["fit"]["linear_recall_at_1"]),
        share(&v["fit"]["recall_at_1"]),
    );
    assert!(linear > 0.0 && all > 0.0, "{v}");

    let o = run(dir.path(), &["eval", "train.jsonl", "--cv", "3"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    let line = text
        .lines()
        .find(|l| l.contains("own training needs"))
        .unwrap_or_else(|| panic!("no training line in:\n{text}"));
    assert!(line.contains(&format!("R@1 {all:.3}")), "{line}");
    assert!(line.contains(&format!("alone {linear:.3}")), "{line}");
}

#[test]
fn the_model_file_records_its_training_fit_and_the_check_covers_it() {
    let dir = setup();
    let o = run(dir.path(), &["fit", "train.jsonl", "--out-dir", "index"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let path = dir.path().join("index/model.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let model: Value = serde_json::from_str(&text).unwrap();
    let fit = &model["provenance"]["training_fit"];
    assert!(share(&fit["recall_at_1"]) > 0.0, "{fit}");
    assert!(share(&fit["linear_recall_at_1"]) > 0.0, "{fit}");

    let check = ["fit", "train.jsonl", "--out-dir", "index", "--check"];
    let o = run(dir.path(), &check);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    // A figure the fit does not produce is stale (only that figure edited in the text).
    let figure = format!("\"recall_at_1\": {}", fit["recall_at_1"]);
    let edited = text.replacen(&figure, "\"recall_at_1\": 0.0001", 1);
    assert_ne!(edited, text, "{figure} is in the file");
    std::fs::write(&path, edited).unwrap();
    let o = run(dir.path(), &check);
    assert_eq!(o.status.code(), Some(1), "stdout: {}", stdout(&o));
}

#[test]
fn compare_pairs_runs_by_seed_and_counts_the_rows_that_moved() {
    let dir = setup();
    let mut runs = Vec::new();
    for seed in ["1", "2"] {
        let args = ["eval", "train.jsonl", "--cv", "3", "--seed", seed, "--json"];
        let o = run(dir.path(), &args);
        assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
        let file = format!("base-{seed}.json");
        std::fs::write(dir.path().join(&file), &o.stdout).unwrap();
        runs.push(serde_json::from_slice::<Value>(&o.stdout).unwrap());
    }
    // The candidate: seed 1 as it was; seed 2 also missing one row it had right.
    let mut worse = runs[1].clone();
    let missed: Vec<&str> = worse["report"]["misses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    let right = ["a", "b", "c", "d", "e", "f"]
        .into_iter()
        .find(|id| !missed.contains(id))
        .expect("the fit ranks some need right");
    worse["report"]["misses"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"id": right, "rank": 2}));
    std::fs::write(dir.path().join("cand-2.json"), worse.to_string()).unwrap();

    let args = [
        "compare",
        "--baseline",
        "base-1.json",
        "base-2.json",
        "--candidate",
        "cand-2.json",
        "base-1.json",
        "--json",
    ];
    let o = run(dir.path(), &args);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let p: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        (p["better"].as_u64(), p["worse"].as_u64()),
        (Some(0), Some(1)),
        "{p}"
    );
    assert_eq!(p["seeds"], serde_json::json!([1, 2]));
    assert_eq!(
        (p["folds"].as_u64(), p["rows"].as_u64()),
        (Some(3), Some(6))
    );
    assert_eq!(p["p_value"].as_f64(), Some(1.0));
    // Read from the misses, the baseline's R@1 is the one `eval` computed from the ranks.
    let mean = runs
        .iter()
        .map(|r| share(&r["report"]["overall"]["recall_at_1"]))
        .sum::<f64>()
        / 2.0;
    assert!(
        (share(&p["baseline_recall_at_1"]) - mean).abs() < 1e-9,
        "{p}"
    );
    let one_row = mean - share(&p["candidate_recall_at_1"]);
    assert!((one_row - 1.0 / 12.0).abs() < 1e-9, "{p}");

    let o = run(dir.path(), &args[..args.len() - 1]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(
        stdout(&o).contains("by the candidate 0, by the baseline 1"),
        "{}",
        stdout(&o)
    );

    // Runs that do not pair, and a file that is not a run, are usage errors naming why.
    for (baseline, why) in [("base-1.json", "seed 1"), ("train.jsonl", "train.jsonl")] {
        let args = [
            "compare",
            "--baseline",
            baseline,
            "--candidate",
            "base-2.json",
        ];
        let o = run(dir.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
}

/// `--save-fold-models` writes one model per fold; `--frozen-fold-models` answers the same folds
/// with them, reproducing the report without fitting (its `fit` is empty). A directory from
/// another seed, or a damaged file, is refused with the file named, not replaced by a fit.
#[test]
fn frozen_fold_models_reproduce_the_run_that_saved_them() {
    let dir = setup();
    let cv = ["eval", "train.jsonl", "--cv", "3", "--seed", "4", "--json"];
    let save = [&cv[..], &["--save-fold-models", "folds"]].concat();
    let o = run(dir.path(), &save);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let fitted: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    for f in 0..3 {
        let path = dir.path().join(format!("folds/cv-4-3-{f}.json"));
        assert!(path.is_file(), "{} missing", path.display());
    }

    let frozen = [&cv[..], &["--frozen-fold-models", "folds"]].concat();
    let o = run(dir.path(), &frozen);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let answered: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(answered["report"], fitted["report"]);
    assert_eq!(
        answered["fit"],
        serde_json::json!({"rows": 0, "linear_recall_at_1": 0.0, "recall_at_1": 0.0}),
        "nothing was fitted"
    );
    let text = [&cv[..cv.len() - 1], &["--frozen-fold-models", "folds"]].concat();
    let o = run(dir.path(), &text);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(stdout(&o).contains("saved model"), "{}", stdout(&o));

    // Another seed's folds are other folds: their models are not there.
    let other = [
        "eval",
        "train.jsonl",
        "--cv",
        "3",
        "--seed",
        "5",
        "--frozen-fold-models",
        "folds",
    ];
    let o = run(dir.path(), &other);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("cv-5-3-0.json"), "{}", stderr(&o));

    std::fs::write(dir.path().join("folds/cv-4-3-1.json"), "{\"format\": 1").unwrap();
    let o = run(dir.path(), &frozen);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("cv-4-3-1.json"), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "no report from a damaged model");
}

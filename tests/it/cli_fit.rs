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

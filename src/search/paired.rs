//! A paired comparison of two sets of cross-validated runs over the same rows and fold seeds:
//! which rows one ranks right first more often than the other, and whether that split is
//! more uneven than a refit's noise would make it (a two-sided exact sign test).
//!
//! Means over fold seeds hide how many rows moved: two runs 0.003 apart may differ on 150
//! rows, or on 5. Counting rows that moved each way, over all the seeds at once, tells a
//! change from a reshuffle (`docs/search.md`, round 34).

use std::collections::{BTreeMap, BTreeSet};

/// One cross-validated run as the comparison reads it (the JSON `eval --cv --json` prints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CvRun {
    /// Number of folds.
    pub folds: usize,
    /// The folds' seed.
    pub seed: u64,
    /// How many rows were answered.
    pub rows: usize,
    /// Ids of the rows not answered right at rank 1.
    pub missed: BTreeSet<String>,
}

#[derive(serde::Deserialize)]
struct RunJson {
    folds: usize,
    seed: u64,
    report: ReportJson,
}

#[derive(serde::Deserialize)]
struct ReportJson {
    overall: OverallJson,
    misses: Vec<MissJson>,
}

#[derive(serde::Deserialize)]
struct OverallJson {
    n: usize,
}

#[derive(serde::Deserialize)]
struct MissJson {
    id: String,
}

impl CvRun {
    /// Reads what `eval --cv --json` prints.
    pub fn from_json(text: &str) -> Result<CvRun, String> {
        let run: RunJson = serde_json::from_str(text)
            .map_err(|e| format!("not the output of `eval --cv --json`: {e}"))?;
        let missed: BTreeSet<String> = run.report.misses.into_iter().map(|m| m.id).collect();
        if missed.len() > run.report.overall.n {
            return Err(format!(
                "{} rows missed of {} answered",
                missed.len(),
                run.report.overall.n
            ));
        }
        Ok(CvRun {
            folds: run.folds,
            seed: run.seed,
            rows: run.report.overall.n,
            missed,
        })
    }

    /// Share of rows answered right at rank 1.
    pub fn recall_at_1(&self) -> f64 {
        if self.rows == 0 {
            return 0.0;
        }
        1.0 - self.missed.len() as f64 / self.rows as f64
    }
}

/// The comparison of a candidate's runs with a baseline's, seed by seed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Paired {
    /// The fold seeds compared (the baseline's order).
    pub seeds: Vec<u64>,
    /// Number of folds of every run.
    pub folds: usize,
    /// Rows of every run.
    pub rows: usize,
    /// The baseline's R@1, the mean over the seeds.
    pub baseline_recall_at_1: f64,
    /// The candidate's R@1, the mean over the seeds.
    pub candidate_recall_at_1: f64,
    /// Rows the candidate ranks right first on more seeds than the baseline.
    pub better: usize,
    /// Rows the baseline ranks right first on more seeds than the candidate.
    pub worse: usize,
    /// Two-sided exact sign test over `better` against `worse`: the probability of a split
    /// at least as uneven if each moved row were as likely to move either way.
    pub p_value: f64,
}

/// Compares `candidate` with `baseline`: one run each per fold seed, same folds and rows.
pub fn compare(baseline: &[CvRun], candidate: &[CvRun]) -> Result<Paired, String> {
    let first = baseline.first().ok_or("no baseline run")?;
    if baseline.len() != candidate.len() {
        return Err(format!(
            "{} baseline runs against {} candidate runs: one each per seed",
            baseline.len(),
            candidate.len()
        ));
    }
    let by_seed: BTreeMap<u64, &CvRun> = candidate.iter().map(|r| (r.seed, r)).collect();
    if by_seed.len() != candidate.len() {
        return Err("two candidate runs have the same seed".into());
    }
    // Per row: seeds the candidate got right minus seeds the baseline got right.
    let mut gain: BTreeMap<&str, i64> = BTreeMap::new();
    let mut seeds = Vec::with_capacity(baseline.len());
    for b in baseline {
        let c = by_seed
            .get(&b.seed)
            .ok_or_else(|| format!("no candidate run with seed {}", b.seed))?;
        if seeds.contains(&b.seed) {
            return Err(format!("two baseline runs have seed {}", b.seed));
        }
        for r in [b, *c] {
            if (r.folds, r.rows) != (first.folds, first.rows) {
                return Err(format!(
                    "seed {}: {} folds over {} rows, not {} over {} as the first baseline run",
                    r.seed, r.folds, r.rows, first.folds, first.rows
                ));
            }
        }
        seeds.push(b.seed);
        for id in &b.missed {
            *gain.entry(id).or_default() += 1;
        }
        for id in &c.missed {
            *gain.entry(id).or_default() -= 1;
        }
    }
    let better = gain.values().filter(|&&g| g > 0).count();
    let worse = gain.values().filter(|&&g| g < 0).count();
    let mean =
        |runs: &[CvRun]| runs.iter().map(CvRun::recall_at_1).sum::<f64>() / runs.len() as f64;
    Ok(Paired {
        seeds,
        folds: first.folds,
        rows: first.rows,
        baseline_recall_at_1: mean(baseline),
        candidate_recall_at_1: mean(candidate),
        better,
        worse,
        p_value: sign_test(better, worse),
    })
}

/// Two-sided exact sign test: the probability, with `a + b` fair coin flips, of a split at
/// least as uneven as `a` against `b` (1 when nothing moved).
pub fn sign_test(a: usize, b: usize) -> f64 {
    let n = a + b;
    let k = a.min(b);
    // Sum the binomial tail in log space: C(n, j) / 2^n overflows as a product for large n.
    let half = n as f64 * std::f64::consts::LN_2;
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut tail = 0.0f64;
    for j in 0..=k {
        tail += (ln_choose - half).exp();
        ln_choose += ((n - j) as f64).ln() - ((j + 1) as f64).ln();
    }
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(seed: u64, missed: &[&str]) -> CvRun {
        CvRun {
            folds: 5,
            seed,
            rows: 10,
            missed: missed.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_sign_test_matches_the_binomial_by_hand() {
        // 1 against 9: 2 × (C(10,0) + C(10,1)) / 2^10.
        assert!((sign_test(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        assert!((sign_test(9, 1) - 22.0 / 1024.0).abs() < 1e-12);
        // 0 against 5: 2 / 32.
        assert!((sign_test(0, 5) - 2.0 / 32.0).abs() < 1e-12);
        assert_eq!(sign_test(5, 5), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
        // Large counts stay finite: 60 against 140 is far from even.
        let p = sign_test(60, 140);
        assert!(p > 0.0 && p < 1e-7, "{p}");
    }

    #[test]
    fn rows_are_counted_over_all_seeds_at_once() {
        // Row a: missed by the baseline on both seeds, by the candidate on none (better).
        // Row b: missed by the candidate on one seed only (worse). Row c: missed once by
        // each, on different seeds (moved both ways: neither).
        let baseline = [run(1, &["a", "c"]), run(2, &["a"])];
        let candidate = [run(2, &["c"]), run(1, &["b"])];
        let p = compare(&baseline, &candidate).unwrap();
        assert_eq!((p.better, p.worse), (1, 1));
        assert_eq!(p.seeds, [1, 2]);
        assert!((p.baseline_recall_at_1 - 0.85).abs() < 1e-12);
        assert!((p.candidate_recall_at_1 - 0.9).abs() < 1e-12);
        assert_eq!(p.p_value, 1.0);
    }

    #[test]
    fn runs_that_do_not_pair_are_refused() {
        let err = |b: &[CvRun], c: &[CvRun]| compare(b, c).unwrap_err();
        assert!(err(&[], &[]).contains("no baseline"));
        assert!(err(&[run(1, &[])], &[run(2, &[])]).contains("seed 1"));
        assert!(err(&[run(1, &[])], &[run(1, &[]), run(2, &[])]).contains("one each"));
        assert!(
            err(&[run(1, &[]), run(1, &[])], &[run(1, &[]), run(1, &[])]).contains("same seed")
        );
        let mut other = run(1, &[]);
        other.rows = 11;
        assert!(err(&[run(1, &[])], &[other]).contains("11 rows"));
    }

    #[test]
    fn the_json_of_eval_cv_is_read() {
        let text = r#"{"folds": 5, "seed": 7, "report": {"cutoff": 20,
            "overall": {"n": 3, "recall_at_1": 0.333},
            "misses": [{"id": "x", "rank": 2}, {"id": "y", "rank": null}]},
            "fit": {"rows": 12}}"#;
        let r = CvRun::from_json(text).unwrap();
        assert_eq!((r.folds, r.seed, r.rows), (5, 7, 3));
        assert_eq!(r.missed.iter().collect::<Vec<_>>(), ["x", "y"]);
        assert!(
            CvRun::from_json("{}")
                .unwrap_err()
                .contains("eval --cv --json")
        );
        let too_many = r#"{"folds": 5, "seed": 7, "report": {"overall": {"n": 1},
            "misses": [{"id": "x"}, {"id": "y"}]}}"#;
        assert!(CvRun::from_json(too_many).is_err());
    }

    proptest! {
        #[test]
        fn the_sign_test_is_a_probability_and_symmetric(a in 0usize..3000, b in 0usize..3000) {
            let p = sign_test(a, b);
            prop_assert!((0.0..=1.0).contains(&p), "{}", p);
            prop_assert_eq!(p, sign_test(b, a));
            // A more uneven split is never more likely.
            prop_assert!(sign_test(a.min(b), a.max(b) + 1) <= p + 1e-12);
        }

        #[test]
        fn any_text_is_read_or_refused_without_a_panic(s in ".{0,200}") {
            let _ = CvRun::from_json(&s);
        }
    }
}

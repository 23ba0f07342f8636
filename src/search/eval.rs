//! Measuring search quality on a labelled set (`shared/eval/README.md` format): recall@1, @5,
//! @10, @20 and MRR, overall and per category (style), plus the misses; and the fold
//! assignment of k-fold cross-validation.

use std::collections::BTreeMap;

/// One labelled query.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct EvalRow {
    /// Stable row id.
    pub id: String,
    /// The query.
    pub q: String,
    /// Every correct operationId.
    pub expect: Vec<String>,
    /// The query's category.
    pub cat: String,
}

/// Parses a JSON Lines evaluation set. Blank lines are skipped; a bad line is an error naming it.
pub fn parse_eval_set(text: &str) -> Result<Vec<EvalRow>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Recall@k and MRR over some rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Metrics {
    /// Number of rows.
    pub n: usize,
    /// Fraction of rows whose first result is correct.
    pub recall_at_1: f64,
    /// Fraction of rows with a correct result in the top five.
    pub recall_at_5: f64,
    /// … in the top ten.
    pub recall_at_10: f64,
    /// … in the top twenty (what candidate generation must reach).
    pub recall_at_20: f64,
    /// Mean reciprocal rank of the first correct result (0 when none is returned).
    pub mrr: f64,
}

/// A row that did not rank a correct answer first.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Miss {
    /// Row id.
    pub id: String,
    /// Category.
    pub cat: String,
    /// The query.
    pub q: String,
    /// The expected operationIds.
    pub expect: Vec<String>,
    /// Rank of the first correct result, if returned.
    pub rank: Option<usize>,
    /// The top results returned.
    pub got: Vec<String>,
}

/// The result of an evaluation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EvalReport {
    /// How many results were requested per query (MRR depends on it).
    pub cutoff: usize,
    /// Metrics over all rows.
    pub overall: Metrics,
    /// Metrics per category.
    pub by_category: BTreeMap<String, Metrics>,
    /// Rows whose first result was wrong.
    pub misses: Vec<Miss>,
}

#[derive(Default)]
struct Acc {
    n: usize,
    r1: usize,
    r5: usize,
    r10: usize,
    r20: usize,
    rr: f64,
}

impl Acc {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        self.r1 += usize::from(rank == Some(1));
        self.r5 += usize::from(rank.is_some_and(|r| r <= 5));
        self.r10 += usize::from(rank.is_some_and(|r| r <= 10));
        self.r20 += usize::from(rank.is_some_and(|r| r <= 20));
        self.rr += rank.map_or(0.0, |r| 1.0 / r as f64);
    }

    fn metrics(&self) -> Metrics {
        let n = self.n.max(1) as f64;
        Metrics {
            n: self.n,
            recall_at_1: self.r1 as f64 / n,
            recall_at_5: self.r5 as f64 / n,
            recall_at_10: self.r10 as f64 / n,
            recall_at_20: self.r20 as f64 / n,
            mrr: self.rr / n,
        }
    }
}

/// Runs every row through `search` (which returns ranked operationIds, at most `cutoff`).
pub fn evaluate(
    rows: &[EvalRow],
    cutoff: usize,
    mut search: impl FnMut(&str) -> Vec<String>,
) -> EvalReport {
    let lists: Vec<Vec<String>> = rows.iter().map(|r| search(&r.q)).collect();
    score_lists(rows, cutoff, lists)
}

/// Scores ranked answers already computed, one list per row (in row order).
pub fn score_lists(rows: &[EvalRow], cutoff: usize, lists: Vec<Vec<String>>) -> EvalReport {
    let mut all = Acc::default();
    let mut cats: BTreeMap<String, Acc> = BTreeMap::new();
    let mut misses = Vec::new();
    for (row, mut ranked) in rows.iter().zip(lists) {
        ranked.truncate(cutoff);
        let rank = ranked
            .iter()
            .position(|op| row.expect.contains(op))
            .map(|i| i + 1);
        all.add(rank);
        cats.entry(row.cat.clone()).or_default().add(rank);
        if rank != Some(1) {
            misses.push(Miss {
                id: row.id.clone(),
                cat: row.cat.clone(),
                q: row.q.clone(),
                expect: row.expect.clone(),
                rank,
                got: ranked.into_iter().take(3).collect(),
            });
        }
    }
    EvalReport {
        cutoff,
        overall: all.metrics(),
        by_category: cats.into_iter().map(|(k, v)| (k, v.metrics())).collect(),
        misses,
    }
}

/// A cross-validated evaluation: each row answered by an index whose examples and weights were
/// learned without the row's fold.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CvReport {
    /// Number of folds.
    pub folds: usize,
    /// The shuffle's seed.
    pub seed: u64,
    /// Figures over every row, each answered by the model that did not see it.
    pub report: EvalReport,
    /// How well the folds' fits rank their own training needs (rows summed over the folds).
    pub fit: super::fit::TrainingFit,
    /// The model that answered each fold, in fold order (for `eval --cv --save-fold-models`).
    #[serde(skip)]
    pub models: Vec<super::Model>,
}

/// The fold of each of `n` rows: a seeded Fisher-Yates shuffle (splitmix64), then position
/// modulo `k`. The same `n`, `k` and `seed` always give the same folds.
pub fn folds(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let mut fold = vec![0; n];
    for (pos, &row) in order.iter().enumerate() {
        fold[row] = pos % k.max(1);
    }
    fold
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_are_balanced_and_reproducible() {
        let f = folds(103, 5, 7);
        assert_eq!(f, folds(103, 5, 7));
        assert_ne!(f, folds(103, 5, 8));
        for k in 0..5 {
            let n = f.iter().filter(|&&x| x == k).count();
            assert!((20..=21).contains(&n), "fold {k} has {n} rows");
        }
    }

    #[test]
    fn arithmetic_on_a_tiny_set() {
        let rows = parse_eval_set(
            r#"{"id":"a","q":"one","expect":["X"],"cat":"task"}

{"id":"b","q":"two","expect":["Y","Z"],"cat":"task"}
{"id":"c","q":"three","expect":["W"],"cat":"typo"}
{"id":"d","q":"four","expect":["V"],"cat":"typo"}"#,
        )
        .unwrap();
        let answers = |q: &str| -> Vec<String> {
            let v: &[&str] = match q {
                "one" => &["X", "A"],                       // rank 1
                "two" => &["A", "B", "Z", "Y"],             // rank 3
                "three" => &["A", "B", "C", "D", "E", "W"], // rank 6: outside the cut-off of 5
                _ => &[],                                   // not found
            };
            v.iter().map(|s| s.to_string()).collect()
        };
        let r = evaluate(&rows, 5, answers);
        assert_eq!(r.overall.n, 4);
        assert!((r.overall.recall_at_1 - 0.25).abs() < 1e-9);
        assert!((r.overall.recall_at_5 - 0.5).abs() < 1e-9);
        assert!((r.overall.mrr - (1.0 + 1.0 / 3.0) / 4.0).abs() < 1e-9);
        let task = r.by_category["task"];
        assert!((task.recall_at_1 - 0.5).abs() < 1e-9 && (task.recall_at_5 - 1.0).abs() < 1e-9);
        let typo = r.by_category["typo"];
        assert_eq!((typo.n, typo.recall_at_5), (2, 0.0));
        assert_eq!(
            r.misses.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
            ["b", "c", "d"]
        );
        assert_eq!(r.misses[0].rank, Some(3));
        assert_eq!(r.misses[1].rank, None);
    }

    #[test]
    fn bad_lines_are_named() {
        let err =
            parse_eval_set("{\"id\":\"a\",\"q\":\"x\",\"expect\":[],\"cat\":\"t\"}\nnot json")
                .unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
    }
}

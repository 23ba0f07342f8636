//! Learning the ranking from labelled needs, and measuring it by cross-validation.
//!
//! Both stages are linear scorers fitted by softmax (listwise) logistic regression: for each
//! training query, the loss is `−log Σ_pos e^s + log Σ_all e^s` over its candidates, plus an L2
//! penalty; full-batch Adam with a fixed number of steps. Everything is deterministic (fixed
//! seeds, one thread, fixed summation order), so `fit` reproduces the committed model exactly.
//!
//! Labelled needs are also indexed as examples. A training query must never see itself among
//! the examples (its example similarity would be perfect and the model would learn to trust
//! examples far too much): its features are computed with the examples of the *other* inner
//! folds only, as a query that nobody labelled meets the committed examples at run time.

use std::collections::HashMap;
use std::sync::Arc;

use super::boost::{self, BoostGroup, BoostOptions};
use super::eval::{CvReport, EvalRow, folds, score_lists};
use super::{Base, Examples, Model, SearchIndex, SearchOptions, features};
use crate::catalog::Catalog;

/// Settings of a fit. Every value is chosen by cross-validation (`docs/search.md`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FitOptions {
    /// Inner folds: how training queries are kept apart from their own examples.
    pub inner_folds: usize,
    /// Seed of the inner folds.
    pub seed: u64,
    /// L2 penalty.
    pub l2: f32,
    /// Adam steps.
    pub steps: usize,
    /// Adam step size.
    pub learning_rate: f32,
    /// Stage-one candidates re-ranked by stage two.
    pub candidates: usize,
    /// Boosted trees on top of stage two.
    pub boost: BoostOptions,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            inner_folds: 10,
            seed: 20_261_201,
            l2: 1e-3,
            steps: 300,
            learning_rate: 0.05,
            candidates: 60,
            boost: BoostOptions::default(),
        }
    }
}

/// One training query: its candidates' sparse features and which are correct.
struct Group {
    x: Vec<Vec<(u16, f32)>>,
    positive: Vec<bool>,
}

/// Fits a model on `rows` for the document of `catalog`; returns it with the examples to commit.
pub fn fit(catalog: &Catalog, rows: &[EvalRow], opts: &FitOptions) -> (Model, Examples) {
    let base = Arc::new(Base::build(catalog));
    let refs: Vec<&EvalRow> = rows.iter().collect();
    let model = fit_on(&base, &refs, opts);
    (model, Examples::from_rows(rows))
}

/// k-fold cross-validation over `rows` (folds by row, seeded): each fold is answered by an
/// index whose examples and weights come from the other folds only.
pub fn cross_validate(
    catalog: &Catalog,
    rows: &[EvalRow],
    k: usize,
    seed: u64,
    cutoff: usize,
    opts: &FitOptions,
) -> CvReport {
    cross_validate_with(catalog, rows, k, seed, cutoff, opts, |_, _| {})
}

/// [`cross_validate`], calling `inspect(row, index)` for every row with the index that answers
/// it (the model and examples of the other folds): for error analysis (`eval --cv --misses`).
pub fn cross_validate_with(
    catalog: &Catalog,
    rows: &[EvalRow],
    k: usize,
    seed: u64,
    cutoff: usize,
    opts: &FitOptions,
    mut inspect: impl FnMut(usize, &SearchIndex),
) -> CvReport {
    let base = Arc::new(Base::build(catalog));
    let fold = folds(rows.len(), k, seed);
    let mut lists: Vec<Vec<String>> = vec![Vec::new(); rows.len()];
    for f in 0..k {
        let train: Vec<&EvalRow> = rows
            .iter()
            .zip(&fold)
            .filter(|(_, x)| **x != f)
            .map(|(r, _)| r)
            .collect();
        let model = fit_on(&base, &train, opts);
        let examples = Examples::from_rows(train.iter().copied());
        let index = SearchIndex::from_base(Arc::clone(&base), &examples, model);
        let o = SearchOptions {
            limit: cutoff,
            ..SearchOptions::default()
        };
        for (i, row) in rows.iter().enumerate().filter(|(i, _)| fold[*i] == f) {
            lists[i] = ranked(&index, &row.q, &o);
            inspect(i, &index);
        }
    }
    CvReport {
        folds: k,
        seed,
        report: score_lists(rows, cutoff, lists),
    }
}

/// The operationIds an index ranks for `q`.
pub fn ranked(index: &SearchIndex, q: &str, o: &SearchOptions) -> Vec<String> {
    index
        .search(q, o)
        .map(|hits| {
            hits.iter()
                .map(|h| index.operation_id(h.action.index()).to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn fit_on(base: &Arc<Base>, rows: &[&EvalRow], opts: &FitOptions) -> Model {
    let inner = folds(rows.len(), opts.inner_folds, opts.seed);
    let position: HashMap<&str, usize> = base
        .operation_ids
        .iter()
        .enumerate()
        .map(|(i, op)| (op.as_str(), i))
        .collect();
    // The index a training row is scored with: examples of the other inner folds.
    let index_for = |j: usize, model: Model| {
        let examples = Examples::from_rows(
            rows.iter()
                .zip(&inner)
                .filter(|(_, x)| **x != j)
                .map(|(r, _)| *r),
        );
        SearchIndex::from_base(Arc::clone(base), &examples, model)
    };
    let positives = |row: &EvalRow| -> Vec<usize> {
        row.expect
            .iter()
            .filter_map(|op| position.get(op.as_str()).copied())
            .collect()
    };

    // Stage one: every matched action of every training query.
    let mut groups = Vec::new();
    for j in 0..opts.inner_folds {
        let index = index_for(j, Model::zero(opts.candidates));
        for (row, _) in rows.iter().zip(&inner).filter(|(_, x)| **x == j) {
            let Some(q) = index.prepare(&row.q) else {
                continue;
            };
            let s1 = index.stage1(&q);
            let pos = positives(row);
            let cands: Vec<usize> = (0..index.len())
                .filter(|&i| s1.matched[i] && index.passes_typo_guard(&q, i))
                .collect();
            groups.push(Group {
                positive: cands.iter().map(|i| pos.contains(i)).collect(),
                x: cands
                    .iter()
                    .map(|&i| {
                        s1.row(i)
                            .iter()
                            .enumerate()
                            .filter(|(_, v)| **v != 0.0)
                            .map(|(k, &v)| (k as u16, v))
                            .collect()
                    })
                    .collect(),
            });
        }
    }
    let stage1 = train(&groups, features::STAGE1, opts);

    // Stage two: the best stage-one candidates, as at run time.
    let mut groups = Vec::new();
    for j in 0..opts.inner_folds {
        let mut m = Model::zero(opts.candidates);
        m.stage1 = stage1.clone();
        let index = index_for(j, m);
        for (row, _) in rows.iter().zip(&inner).filter(|(_, x)| **x == j) {
            let Some(q) = index.prepare(&row.q) else {
                continue;
            };
            let s1 = index.stage1(&q);
            let pos = positives(row);
            let cands = index.stage1_candidates(&q, &s1, |_| true);
            groups.push(Group {
                positive: cands.iter().map(|i| pos.contains(i)).collect(),
                x: cands.iter().map(|&i| index.stage2(&q, &s1, i)).collect(),
            });
        }
    }
    let stage2 = train(&groups, features::COUNT, opts);
    let mut model = Model {
        stage1,
        stage2,
        candidates: opts.candidates,
        trees: Vec::new(),
        boost_top: 0,
        provenance: serde_json::Value::Null,
    }
    .rounded();
    if opts.boost.trees > 0 {
        // As at run time: the best `top` candidates of each query by the linear score.
        let boost_groups: Vec<BoostGroup> = groups
            .iter()
            .map(|g| {
                let lin: Vec<f32> =
                    g.x.iter()
                        .map(|x| super::model::dot(&model.stage2, x))
                        .collect();
                let mut order: Vec<usize> = (0..g.x.len()).collect();
                order.sort_by(|&a, &b| lin[b].total_cmp(&lin[a]).then(a.cmp(&b)));
                order.truncate(opts.boost.top);
                BoostGroup {
                    base: order.iter().map(|&c| f64::from(lin[c])).collect(),
                    x: order
                        .iter()
                        .map(|&c| super::model::dense(&g.x[c]))
                        .collect(),
                    positive: order.iter().map(|&c| g.positive[c]).collect(),
                }
            })
            .collect();
        let increasing: Vec<bool> = features::names()
            .iter()
            .map(|n| features::is_evidence(n))
            .collect();
        model.trees = boost::fit(&boost_groups, features::COUNT, &opts.boost, &increasing);
        model.boost_top = opts.boost.top;
        model = model.rounded();
    }
    model
}

/// Softmax regression over groups by full-batch Adam (projected: evidence weights stay ≥ 0).
fn train(groups: &[Group], dim: usize, opts: &FitOptions) -> Vec<f32> {
    let names = features::names();
    let evidence: Vec<bool> = names[..dim]
        .iter()
        .map(|n| features::is_evidence(n))
        .collect();
    let usable: Vec<&Group> = groups
        .iter()
        .filter(|g| g.positive.iter().any(|&p| p) && g.positive.len() > 1)
        .collect();
    let n = usable.len().max(1) as f64;
    let mut w = vec![0.0f64; dim];
    let (mut m, mut v) = (vec![0.0f64; dim], vec![0.0f64; dim]);
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
    let lr = f64::from(opts.learning_rate);
    let l2 = f64::from(opts.l2);
    let mut grad = vec![0.0f64; dim];
    let mut scores = Vec::new();
    for step in 1..=opts.steps {
        for (g, &wi) in grad.iter_mut().zip(&w) {
            *g = l2 * wi;
        }
        for g in &usable {
            scores.clear();
            scores.extend(g.x.iter().map(|x| {
                x.iter()
                    .map(|&(i, v)| w[i as usize] * f64::from(v))
                    .sum::<f64>()
            }));
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let (mut z, mut zp) = (0.0, 0.0);
            for (s, &p) in scores.iter_mut().zip(&g.positive) {
                *s = (*s - max).exp();
                z += *s;
                if p {
                    zp += *s;
                }
            }
            for ((x, &e), &p) in g.x.iter().zip(&scores).zip(&g.positive) {
                let coef = (e / z - if p { e / zp } else { 0.0 }) / n;
                if coef != 0.0 {
                    for &(i, val) in x {
                        grad[i as usize] += coef * f64::from(val);
                    }
                }
            }
        }
        let t = step as i32;
        for i in 0..dim {
            m[i] = b1 * m[i] + (1.0 - b1) * grad[i];
            v[i] = b2 * v[i] + (1.0 - b2) * grad[i] * grad[i];
            let mh = m[i] / (1.0 - b1.powi(t));
            let vh = v[i] / (1.0 - b2.powi(t));
            w[i] -= lr * mh / (vh.sqrt() + eps);
            if evidence[i] && w[i] < 0.0 {
                w[i] = 0.0;
            }
        }
    }
    w.into_iter().map(|x| x as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;

    fn fixture() -> Catalog {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gitea-mini.swagger.json"
        );
        let spec = Spec::parse(&std::fs::read(path).unwrap()).unwrap();
        Catalog::build(&spec).unwrap()
    }

    fn row(id: &str, q: &str, op: &str) -> EvalRow {
        EvalRow {
            id: id.into(),
            q: q.into(),
            expect: vec![op.into()],
            cat: "task".into(),
        }
    }

    fn rows() -> Vec<EvalRow> {
        vec![
            // Their only word is known through their own label, nowhere else (a word of the
            // needs that nothing corrects is kept as typed, so no other need may use it).
            row("a", "zorblax", "repoGet"),
            row("a2", "the quuxtrix", "repoGet"),
            row("b", "merge the pull request", "repoMergePullRequest"),
            row("c", "remove a branch", "repoDeleteBranch"),
            row("d", "open a new ticket", "issueCreateIssue"),
            row("e", "which branches are there", "repoListBranches"),
            row("f", "fetch one repository", "repoGet"),
        ]
    }

    fn quick() -> FitOptions {
        FitOptions {
            inner_folds: 2,
            steps: 30,
            ..FitOptions::default()
        }
    }

    #[test]
    fn the_fit_is_deterministic() {
        let c = fixture();
        let (a, ea) = fit(&c, &rows(), &quick());
        let (b, eb) = fit(&c, &rows(), &quick());
        assert_eq!(a.to_json(), b.to_json());
        assert_eq!(ea.to_jsonl(), eb.to_jsonl());
        assert_eq!(
            Model::parse(&a.to_json()).unwrap(),
            a,
            "the file form round-trips"
        );
    }

    /// A held-out row never sees its own label: `zorblax` and `quuxtrix` are found in sample,
    /// not in CV (where no other need uses them).
    #[test]
    fn cross_validation_keeps_held_out_rows_out_of_the_index() {
        let c = fixture();
        let rows = rows();
        let (model, examples) = fit(&c, &rows, &quick());
        let index = SearchIndex::with(&c, &examples, model);
        let o = SearchOptions::default();
        for q in ["zorblax", "the quuxtrix"] {
            assert_eq!(
                ranked(&index, q, &o).first().map(String::as_str),
                Some("repoGet"),
                "{q}"
            );
        }
        let cv = cross_validate(&c, &rows, 3, 7, 5, &quick());
        for id in ["a", "a2"] {
            let miss = cv.report.misses.iter().find(|m| m.id == id);
            assert!(
                miss.is_some_and(|m| m.rank.is_none() && m.got.is_empty()),
                "{id}: {:?}",
                cv.report.misses
            );
        }
        assert_eq!(cv.report.overall.n, rows.len());
    }
}

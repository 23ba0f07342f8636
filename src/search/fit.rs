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

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::boost::{self, BoostGroup, BoostOptions};
use super::eval::{CvReport, EvalRow, folds, score_lists};
use super::model::WORD_WEIGHTS;
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
    /// Fit word × shape weights (verb class, scope, item) jointly with stage two.
    pub words: bool,
    /// Their L2 penalty.
    pub word_l2: f32,
    /// A word gets weights when this many training needs use it.
    pub word_min_rows: usize,
    /// The query's function words get word × shape weights too (`~my`; they count by their
    /// sum ÷ √n).
    pub word_function_words: bool,
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
            words: true,
            word_l2: 1e-3,
            word_min_rows: 3,
            word_function_words: true,
        }
    }
}

/// How well a fit ranks its own training needs, each scored as at run time with the examples of
/// the other inner folds only. Well above the cross-validated R@1, the fit learns the needs
/// rather than the task (variance); close to it, the features bound what any fit of them can
/// reach (bias).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct TrainingFit {
    /// Training needs.
    pub rows: usize,
    /// R@1 of the linear stages alone.
    pub linear_recall_at_1: f64,
    /// R@1 of the whole model (the trees re-ranking the linear stages' best).
    pub recall_at_1: f64,
}

impl TrainingFit {
    /// The figures of several fits together, weighted by their rows.
    fn merge(fits: &[TrainingFit]) -> TrainingFit {
        let rows: usize = fits.iter().map(|f| f.rows).sum();
        if rows == 0 {
            return TrainingFit::default();
        }
        let mean = |x: fn(&TrainingFit) -> f64| {
            fits.iter().map(|f| x(f) * f.rows as f64).sum::<f64>() / rows as f64
        };
        TrainingFit {
            rows,
            linear_recall_at_1: mean(|f| f.linear_recall_at_1),
            recall_at_1: mean(|f| f.recall_at_1),
        }
    }
}

/// One training query: its candidates' sparse features and which are correct.
struct Group {
    x: Vec<Vec<(u16, f32)>>,
    positive: Vec<bool>,
}

/// Fits a model on `rows` for the document of `catalog`; returns it with the examples to commit
/// and how well it ranks its own training needs.
pub fn fit(
    catalog: &Catalog,
    rows: &[EvalRow],
    opts: &FitOptions,
) -> (Model, Examples, TrainingFit) {
    let base = Arc::new(Base::build(catalog));
    let refs: Vec<&EvalRow> = rows.iter().collect();
    let (model, training) = fit_on(&base, &refs, opts);
    (model, Examples::from_rows(rows), training)
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
    cross_validate_with(catalog, rows, k, seed, cutoff, opts, None, |_, _| {})
}

/// [`cross_validate`], calling `inspect(row, index)` for every row with the index that answers
/// it (the model and examples of the other folds): for error analysis (`eval --cv --misses`).
///
/// With `frozen` (one model per fold, as an earlier run returned them in
/// [`CvReport::models`]), each fold is answered by its given model instead of a new fit: a
/// change to how needs are read then moves only the rows it reads differently (or whose
/// examples it reads differently), without the reshuffle a refit brings (`docs/search.md`,
/// round 46). The report's `fit` is then empty.
#[allow(clippy::too_many_arguments)]
pub fn cross_validate_with(
    catalog: &Catalog,
    rows: &[EvalRow],
    k: usize,
    seed: u64,
    cutoff: usize,
    opts: &FitOptions,
    frozen: Option<&[Model]>,
    mut inspect: impl FnMut(usize, &SearchIndex),
) -> CvReport {
    assert!(
        frozen.is_none_or(|m| m.len() == k),
        "one frozen model per fold"
    );
    let base = Arc::new(Base::build(catalog));
    let fold = folds(rows.len(), k, seed);
    let mut lists: Vec<Vec<String>> = vec![Vec::new(); rows.len()];
    let mut fits = Vec::with_capacity(k);
    let mut models = Vec::with_capacity(k);
    for f in 0..k {
        let train: Vec<&EvalRow> = rows
            .iter()
            .zip(&fold)
            .filter(|(_, x)| **x != f)
            .map(|(r, _)| r)
            .collect();
        let model = match frozen {
            Some(given) => given[f].clone(),
            None => {
                let (model, training) = fit_on(&base, &train, opts);
                fits.push(training);
                model
            }
        };
        models.push(model.clone());
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
        fit: TrainingFit::merge(&fits),
        models,
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

fn fit_on(base: &Arc<Base>, rows: &[&EvalRow], opts: &FitOptions) -> (Model, TrainingFit) {
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
    // Per group, the query's stems and each candidate's word × shape slots.
    let mut word_rows: Vec<WordRow> = Vec::new();
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
            let m = 1.0 / q.stems.len().max(1) as f32;
            let mut stems: Vec<(String, f32)> = q.stems.iter().map(|s| (s.clone(), m)).collect();
            if opts.word_function_words && !q.fn_keys.is_empty() {
                let m = 1.0 / (q.fn_keys.len() as f32).sqrt();
                stems.extend(q.fn_keys.iter().map(|s| (s.clone(), m)));
            }
            word_rows.push((stems, cands.iter().map(|&i| index.word_slots(i)).collect()));
        }
    }
    let kept = if opts.words {
        add_word_features(&mut groups, &word_rows, opts.word_min_rows)
    } else {
        Vec::new()
    };
    let dim = features::COUNT + kept.len() * WORD_WEIGHTS;
    let names = features::names();
    let evidence: Vec<bool> = (0..dim)
        .map(|i| i < features::COUNT && features::is_evidence(&names[i]))
        .collect();
    let l2: Vec<f32> = (0..dim)
        .map(|i| {
            if i < features::COUNT {
                opts.l2
            } else {
                opts.word_l2
            }
        })
        .collect();
    let w = train_with(&groups, &evidence, &l2, opts);
    let mut words = BTreeMap::new();
    for (k, stem) in kept.iter().enumerate() {
        let mut ws = [0.0f32; WORD_WEIGHTS];
        ws.copy_from_slice(&w[features::COUNT + k * WORD_WEIGHTS..][..WORD_WEIGHTS]);
        words.insert(stem.clone(), ws);
    }
    let mut model = Model {
        stage1,
        stage2: w[..features::COUNT].to_vec(),
        candidates: opts.candidates,
        trees: Vec::new(),
        boost_top: 0,
        words,
        provenance: serde_json::Value::Null,
    }
    .rounded();
    // Words whose weights all round to (nearly) nothing are left out of the file.
    model
        .words
        .retain(|_, ws| ws.iter().any(|w| w.abs() >= WORD_WEIGHT_FLOOR));
    // The linear score of a candidate, as at run time (word weights included; summed in another
    // order than `model::dot_dense`, so equal up to the last bits).
    let mut full = model.stage2.clone();
    for (k, stem) in kept.iter().enumerate() {
        let ws = model.words.get(stem).copied().unwrap_or_default();
        full.extend_from_slice(&ws);
        debug_assert_eq!(full.len(), features::COUNT + (k + 1) * WORD_WEIGHTS);
    }
    // The linear score of every candidate, and its order, as at run time.
    let linear: Vec<(Vec<f32>, Vec<usize>)> = groups
        .iter()
        .map(|g| {
            let lin: Vec<f32> = g.x.iter().map(|x| super::model::dot(&full, x)).collect();
            let mut order: Vec<usize> = (0..g.x.len()).collect();
            order.sort_by(|&a, &b| lin[b].total_cmp(&lin[a]).then(a.cmp(&b)));
            (lin, order)
        })
        .collect();
    let rate = |hits: usize| hits as f64 / rows.len().max(1) as f64;
    let linear_hits = groups
        .iter()
        .zip(&linear)
        .filter(|(g, (_, order))| order.first().is_some_and(|&c| g.positive[c]))
        .count();
    let mut training = TrainingFit {
        rows: rows.len(),
        linear_recall_at_1: rate(linear_hits),
        recall_at_1: rate(linear_hits),
    };
    if opts.boost.trees > 0 {
        // As at run time: the best `top` candidates of each query by the linear score.
        let boost_groups: Vec<BoostGroup> = groups
            .iter()
            .zip(&linear)
            .map(|(g, (lin, order))| {
                let order = &order[..order.len().min(opts.boost.top)];
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
        // The trees' sum added to the best `top`, whose order decides the first answer.
        let hits = boost_groups
            .iter()
            .filter(|bg| {
                let scores: Vec<f64> =
                    bg.x.iter()
                        .zip(&bg.base)
                        .map(|(x, b)| b + f64::from(boost::eval(&model.trees, x)))
                        .collect();
                let best = (0..scores.len())
                    .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)));
                best.is_some_and(|i| bg.positive[i])
            })
            .count();
        training.recall_at_1 = rate(hits);
    }
    (model, training)
}

/// Word × shape weights smaller than this are left out of the model file.
const WORD_WEIGHT_FLOOR: f32 = 1e-3;

/// One stage-two training query for the word weights: its word keys with their values, and
/// per candidate its word × shape slots.
type WordRow = (Vec<(String, f32)>, Vec<[usize; 3]>);

/// Appends to every stage-two candidate its word × shape features: for each word key of the
/// query that at least `min_rows` training queries use, its value (`1/n` for the n stems of
/// the query; `1/√n` for the n function words) at the action's class, scope and item slots.
/// Returns the keys given weights, in slot order.
fn add_word_features(groups: &mut [Group], word_rows: &[WordRow], min_rows: usize) -> Vec<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (keys, _) in word_rows {
        for (k, _) in keys {
            *count.entry(k.as_str()).or_default() += 1;
        }
    }
    // Sparse indices are 16-bit: the commonest words first when there are too many.
    let room = (usize::from(u16::MAX) - features::COUNT) / WORD_WEIGHTS;
    let mut kept: Vec<(&str, usize)> = count
        .into_iter()
        .filter(|&(_, c)| c >= min_rows.max(1))
        .collect();
    kept.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    kept.truncate(room);
    kept.sort_by(|a, b| a.0.cmp(b.0));
    let id: HashMap<&str, usize> = kept.iter().enumerate().map(|(k, (s, _))| (*s, k)).collect();
    for (g, (keys, slots)) in groups.iter_mut().zip(word_rows) {
        let ids: Vec<(usize, f32)> = keys
            .iter()
            .filter_map(|(s, v)| id.get(s.as_str()).map(|&k| (k, *v)))
            .collect();
        for (x, slot) in g.x.iter_mut().zip(slots) {
            for &(k, v) in &ids {
                for &j in slot {
                    x.push(((features::COUNT + k * WORD_WEIGHTS + j) as u16, v));
                }
            }
        }
    }
    kept.into_iter().map(|(s, _)| s.to_string()).collect()
}

/// Softmax regression over groups by full-batch Adam (projected: evidence weights stay ≥ 0).
fn train(groups: &[Group], dim: usize, opts: &FitOptions) -> Vec<f32> {
    let names = features::names();
    let evidence: Vec<bool> = names[..dim]
        .iter()
        .map(|n| features::is_evidence(n))
        .collect();
    train_with(groups, &evidence, &vec![opts.l2; dim], opts)
}

/// [`train`] with the evidence features and each weight's L2 penalty given.
fn train_with(groups: &[Group], evidence: &[bool], l2: &[f32], opts: &FitOptions) -> Vec<f32> {
    let dim = evidence.len();
    let usable: Vec<&Group> = groups
        .iter()
        .filter(|g| g.positive.iter().any(|&p| p) && g.positive.len() > 1)
        .collect();
    let n = usable.len().max(1) as f64;
    let mut w = vec![0.0f64; dim];
    let (mut m, mut v) = (vec![0.0f64; dim], vec![0.0f64; dim]);
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
    let lr = f64::from(opts.learning_rate);
    let l2: Vec<f64> = l2.iter().map(|&x| f64::from(x)).collect();
    let mut grad = vec![0.0f64; dim];
    let mut scores = Vec::new();
    for step in 1..=opts.steps {
        for ((g, &wi), &l) in grad.iter_mut().zip(&w).zip(&l2) {
            *g = l * wi;
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
        let (a, ea, _) = fit(&c, &rows(), &quick());
        let (b, eb, _) = fit(&c, &rows(), &quick());
        assert_eq!(a.to_json(), b.to_json());
        assert_eq!(ea.to_jsonl(), eb.to_jsonl());
        assert_eq!(
            Model::parse(&a.to_json()).unwrap(),
            a,
            "the file form round-trips"
        );
    }

    #[test]
    fn word_weights_round_trip() {
        let mut m = Model::zero(5);
        let mut ws = [0.0f32; WORD_WEIGHTS];
        ws[super::super::model::WORD_CLASS] = 0.25;
        m.words.insert("zorblax".into(), ws);
        assert_eq!(Model::parse(&m.to_json()).unwrap(), m);
        let (fitted, _, _) = fit(&fixture(), &rows(), &quick());
        let text = fitted.to_json();
        assert_eq!(Model::parse(&text).unwrap().words, fitted.words);
    }

    /// A held-out row never sees its own label: `zorblax` and `quuxtrix` are found in sample,
    /// not in CV (where no other need uses them).
    #[test]
    fn cross_validation_keeps_held_out_rows_out_of_the_index() {
        let c = fixture();
        let rows = rows();
        let (model, examples, _) = fit(&c, &rows, &quick());
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
        // Each row trains the fits of the k − 1 folds it is not held out of.
        assert_eq!(cv.fit.rows, rows.len() * 2);
    }

    /// Frozen fold models answer as the fits that made them did (through their file form, as
    /// `eval --save-fold-models` / `--frozen-fold-models` pass them), and are what answers:
    /// other models give other answers.
    #[test]
    fn frozen_fold_models_answer_as_their_fits_did() {
        let c = fixture();
        let rows = rows();
        let cv = cross_validate(&c, &rows, 3, 7, 5, &quick());
        assert_eq!(cv.models.len(), 3);
        let saved: Vec<Model> = cv
            .models
            .iter()
            .map(|m| Model::parse(&m.to_json()).unwrap())
            .collect();
        let frozen = cross_validate_with(&c, &rows, 3, 7, 5, &quick(), Some(&saved), |_, _| {});
        assert_eq!(frozen.report, cv.report);
        assert_eq!(frozen.models, cv.models);
        assert_eq!(frozen.fit, TrainingFit::default(), "nothing was fitted");
        let zero = vec![Model::zero(quick().candidates); 3];
        let unfitted = cross_validate_with(&c, &rows, 3, 7, 5, &quick(), Some(&zero), |_, _| {});
        assert_ne!(unfitted.report, cv.report);
    }

    /// The training figure is what the fitted model answers for each training need when the
    /// index holds the examples of the other inner folds only, as the fit scored it.
    #[test]
    fn the_training_fit_is_what_the_model_does_on_its_training_needs() {
        let c = fixture();
        let rows = rows();
        for opts in [
            quick(),
            FitOptions {
                boost: BoostOptions {
                    trees: 0,
                    ..BoostOptions::default()
                },
                ..quick()
            },
        ] {
            let (model, _, training) = fit(&c, &rows, &opts);
            let base = Arc::new(Base::build(&c));
            let inner = folds(rows.len(), opts.inner_folds, opts.seed);
            let o = SearchOptions::default();
            let mut hits = 0;
            for j in 0..opts.inner_folds {
                let examples = Examples::from_rows(
                    rows.iter()
                        .zip(&inner)
                        .filter(|(_, x)| **x != j)
                        .map(|(r, _)| r),
                );
                let index = SearchIndex::from_base(Arc::clone(&base), &examples, model.clone());
                for (row, _) in rows.iter().zip(&inner).filter(|(_, x)| **x == j) {
                    let first = ranked(&index, &row.q, &o);
                    if first.first().is_some_and(|op| row.expect.contains(op)) {
                        hits += 1;
                    }
                }
            }
            assert_eq!(training.rows, rows.len());
            let want = hits as f64 / rows.len() as f64;
            assert!(
                (training.recall_at_1 - want).abs() < 1e-9,
                "{training:?} against {hits} of {}",
                rows.len()
            );
            assert!(hits > 0, "the fixture's needs are findable");
            if opts.boost.trees == 0 {
                assert_eq!(training.recall_at_1, training.linear_recall_at_1);
            }
        }
    }

    #[test]
    fn training_fits_merge_by_rows() {
        let a = TrainingFit {
            rows: 1,
            linear_recall_at_1: 1.0,
            recall_at_1: 0.0,
        };
        let b = TrainingFit {
            rows: 3,
            linear_recall_at_1: 0.0,
            recall_at_1: 1.0,
        };
        let m = TrainingFit::merge(&[a, b]);
        assert_eq!(m.rows, 4);
        assert!((m.linear_recall_at_1 - 0.25).abs() < 1e-12);
        assert!((m.recall_at_1 - 0.75).abs() < 1e-12);
        assert_eq!(TrainingFit::merge(&[]), TrainingFit::default());
    }
}

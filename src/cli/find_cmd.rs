//! `aegis-gitea-mcp find` and `aegis-gitea-mcp eval`: the search from the command line.

use std::io::BufRead;
use std::path::PathBuf;

use aegis_gitea_mcp::app;
use aegis_gitea_mcp::catalog::{Catalog, Domain};
use aegis_gitea_mcp::config::Config;
use aegis_gitea_mcp::search::fit::{self as fitting, FitOptions};
use aegis_gitea_mcp::search::paired::{self, CvRun};
use aegis_gitea_mcp::search::{self, Examples, Model, SearchIndex, SearchOptions};
use aegis_gitea_mcp::state::State;
use aegis_gitea_mcp::tools;
use anyhow::Context;
use serde_json::{Value, json};

use super::{Exit, UsageError};

/// Arguments of `find`.
#[derive(Debug, clap::Args)]
pub struct FindArgs {
    /// What you want to do, in your own words
    #[arg(required_unless_present = "stdin")]
    query: Option<String>,
    /// How many results (1-20)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=20))]
    limit: u16,
    /// Only this domain
    #[arg(long, value_name = "DOMAIN")]
    domain: Option<String>,
    /// Print JSON: {"query", "results": [{"name", "operation_id", "method", "path", "score", "summary"}]}
    #[arg(long)]
    json: bool,
    /// Read one query per line from standard input; print one answer per line
    #[arg(long, conflicts_with = "query")]
    stdin: bool,
    /// Also print how the query was analysed (terms, intents, cues) to stderr
    #[arg(long)]
    explain: bool,
    /// Print what the gitea_find_action tool answers: {"text", "structured", "is_error"}
    #[arg(long = "tool-output", conflicts_with = "json")]
    tool_output: bool,
}

/// Arguments of `eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// An evaluation set (JSON Lines: id, q, expect, cat)
    file: PathBuf,
    /// How many results to request per query (MRR and R@20 depend on it)
    #[arg(long, default_value_t = 20)]
    cutoff: usize,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
    /// Cross-validate over FILE with K folds (by row, seeded): each fold is answered by a
    /// model and examples learned from the other folds only
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u16).range(2..=50))]
    cv: Option<u16>,
    /// Seed of the cross-validation folds
    #[arg(long, default_value_t = DEFAULT_CV_SEED)]
    seed: u64,
    /// Without --cv: rank without the committed examples (text and shape only)
    #[arg(long)]
    no_examples: bool,
    /// With --cv: fail (exit 1) when R@1 is more than 0.02 below the figure in this file
    /// (`index/cv-baseline.json`, written by `fit`)
    #[arg(long, value_name = "FILE", requires = "cv")]
    baseline: Option<PathBuf>,
    /// Without --cv: rank with the model.json and examples.jsonl of this directory (as
    /// written by `fit --out-dir`) instead of the committed ones
    #[arg(long, value_name = "DIR", hide = true, conflicts_with = "cv")]
    index_dir: Option<PathBuf>,
    /// With --cv: write one JSON line per row answered wrongly at rank 1 (rank of the right
    /// action, the top three, the analysed terms and cues, its stage-one rank, the features
    /// separating the first hit from it) to FILE, for error analysis
    #[arg(long, value_name = "FILE", requires = "cv")]
    misses: Option<PathBuf>,
    /// With --cv: write the model that answered each fold to DIR (`cv-SEED-K-FOLD.json`), for
    /// a later --frozen-fold-models run
    #[arg(long, value_name = "DIR", requires = "cv")]
    save_fold_models: Option<PathBuf>,
    /// With --cv: answer each fold with the model a --save-fold-models run (same seed and K)
    /// wrote to DIR instead of fitting one, so that a change to how needs are read moves only
    /// the rows it reads differently, or whose examples it does (no refit)
    #[arg(
        long,
        value_name = "DIR",
        requires = "cv",
        conflicts_with = "save_fold_models"
    )]
    frozen_fold_models: Option<PathBuf>,
    #[command(flatten)]
    fit: FitFlags,
}

/// Where `eval --cv K --seed SEED --save-fold-models DIR` writes fold `fold`'s model.
fn fold_model_path(dir: &std::path::Path, seed: u64, k: u16, fold: usize) -> PathBuf {
    dir.join(format!("cv-{seed}-{k}-{fold}.json"))
}

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline's runs: `eval --cv K --seed S --json` outputs, one per fold seed
    #[arg(long, value_name = "FILE", num_args = 1.., required = true)]
    baseline: Vec<PathBuf>,
    /// The candidate's runs, with the same fold seeds (in any order) and folds
    #[arg(long, value_name = "FILE", num_args = 1.., required = true)]
    candidate: Vec<PathBuf>,
    /// Print JSON: {"seeds", "folds", "rows", "baseline_recall_at_1",
    /// "candidate_recall_at_1", "better", "worse", "p_value"}
    #[arg(long)]
    json: bool,
}

/// Fit settings (defaults: `FitOptions::default()`, chosen by cross-validation).
#[derive(Debug, Clone, clap::Args)]
pub struct FitFlags {
    /// L2 penalty of the fit
    #[arg(long, hide = true)]
    l2: Option<f32>,
    /// Adam steps of the fit
    #[arg(long, hide = true)]
    steps: Option<usize>,
    /// Adam step size of the fit
    #[arg(long, hide = true)]
    learning_rate: Option<f32>,
    /// Stage-one candidates re-ranked by stage two
    #[arg(long, hide = true)]
    candidates: Option<usize>,
    /// Inner folds keeping training queries apart from their own examples
    #[arg(long, hide = true)]
    inner_folds: Option<usize>,
    /// Boosted trees on top of stage two
    #[arg(long, hide = true)]
    trees: Option<usize>,
    /// Depth of the boosted trees
    #[arg(long, hide = true)]
    tree_depth: Option<usize>,
    /// Shrinkage of the boosted trees
    #[arg(long, hide = true)]
    tree_learning_rate: Option<f32>,
    /// L2 penalty on the boosted trees' leaves
    #[arg(long, hide = true)]
    tree_lambda: Option<f32>,
    /// How many of stage two's best candidates the trees re-rank
    #[arg(long, hide = true)]
    tree_top: Option<usize>,
    /// Whether the trees may not decrease along evidence features (true or false)
    #[arg(long, hide = true)]
    tree_increasing_evidence: Option<bool>,
    /// Whether stage two fits word × shape weights (true or false)
    #[arg(long, hide = true)]
    words: Option<bool>,
    /// L2 penalty of the word × shape weights
    #[arg(long, hide = true)]
    word_l2: Option<f32>,
    /// Training needs a word must be in to get word × shape weights
    #[arg(long, hide = true)]
    word_min_rows: Option<usize>,
    /// Whether function words get word × shape weights too (true or false)
    #[arg(long, hide = true)]
    word_function_words: Option<bool>,
    /// Seed of the split into inner folds (to measure how far a refit alone moves the figures)
    #[arg(long, hide = true)]
    inner_seed: Option<u64>,
}

impl FitFlags {
    fn options(&self) -> FitOptions {
        let d = FitOptions::default();
        FitOptions {
            l2: self.l2.unwrap_or(d.l2),
            steps: self.steps.unwrap_or(d.steps),
            learning_rate: self.learning_rate.unwrap_or(d.learning_rate),
            candidates: self.candidates.unwrap_or(d.candidates),
            inner_folds: self.inner_folds.unwrap_or(d.inner_folds).max(2),
            boost: aegis_gitea_mcp::search::boost::BoostOptions {
                trees: self.trees.unwrap_or(d.boost.trees),
                depth: self.tree_depth.unwrap_or(d.boost.depth).clamp(1, 8),
                learning_rate: self.tree_learning_rate.unwrap_or(d.boost.learning_rate),
                lambda: self.tree_lambda.unwrap_or(d.boost.lambda),
                top: self.tree_top.unwrap_or(d.boost.top).max(1),
                increasing_evidence: self
                    .tree_increasing_evidence
                    .unwrap_or(d.boost.increasing_evidence),
                ..d.boost.clone()
            },
            words: self.words.unwrap_or(d.words),
            word_l2: self.word_l2.unwrap_or(d.word_l2),
            word_min_rows: self.word_min_rows.unwrap_or(d.word_min_rows),
            word_function_words: self.word_function_words.unwrap_or(d.word_function_words),
            seed: self.inner_seed.unwrap_or(d.seed),
        }
    }
}

/// Seed of the cross-validation folds (CI, the baseline and docs/search.md use it).
const DEFAULT_CV_SEED: u64 = 1645;
/// Folds of the committed cross-validation figure.
const BASELINE_FOLDS: usize = 5;
/// How far CV R@1 may fall below the committed figure before CI fails.
const BASELINE_TOLERANCE: f64 = 0.02;

/// Arguments of `fit`.
#[derive(Debug, clap::Args)]
pub struct FitArgs {
    /// The training set (JSON Lines: id, q, expect, cat)
    file: PathBuf,
    /// Where the model, the examples and the CV baseline are written
    #[arg(long, default_value = "index")]
    out_dir: PathBuf,
    /// Write nothing; fail (exit 1) when the files in --out-dir differ from what the fit
    /// produces
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    fit: FitFlags,
}

async fn load(config: &Config) -> anyhow::Result<State> {
    Ok(app::load_state(config).await?.0)
}

/// The tool's answer for one query, as one JSON object.
fn tool_answer(state: &State, query: &str, args: &FindArgs) -> Value {
    let mut input = json!({"query": query, "limit": args.limit});
    if let Some(d) = &args.domain {
        input["domain"] = json!(d);
    }
    let out = tools::find::run(state, &input);
    json!({"text": out.text, "structured": out.structured, "is_error": out.is_error})
}

fn parse_domain(d: Option<&str>) -> anyhow::Result<Option<Domain>> {
    d.map(|d| {
        Domain::parse(d).ok_or_else(|| {
            let known: Vec<&str> = Domain::ALL.iter().map(|d| d.as_str()).collect();
            UsageError(format!(
                "--domain {d:?} is not a domain; use one of {}",
                known.join(", ")
            ))
            .into()
        })
    })
    .transpose()
}

fn answer(
    catalog: &Catalog,
    index: &SearchIndex,
    query: &str,
    opts: &SearchOptions,
) -> Result<Value, search::Error> {
    let hits = index.search(query, opts)?;
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            let a = &catalog[h.action];
            json!({
                "name": a.name.as_str(),
                "operation_id": a.operation_id.as_str(),
                "method": a.method.as_str(),
                "path": a.path,
                "score": (f64::from(h.score) * 1000.0).round() / 1000.0,
                "summary": a.summary,
            })
        })
        .collect();
    Ok(json!({"query": query, "results": results}))
}

pub async fn find(config: &Config, args: &FindArgs) -> anyhow::Result<Exit> {
    let opts = SearchOptions {
        limit: usize::from(args.limit),
        domain: parse_domain(args.domain.as_deref())?,
        read_only: None,
    };
    let state = load(config).await?;
    let (catalog, index) = (&state.catalog, state.search_index()?);
    if args.stdin {
        let stdin = std::io::stdin();
        let mut failed = false;
        for line in stdin.lock().lines() {
            let line = line.context("cannot read standard input")?;
            if args.tool_output {
                println!("{}", tool_answer(&state, &line, args));
                continue;
            }
            let out = match answer(catalog, index, &line, &opts) {
                Ok(v) => v,
                Err(e) => {
                    failed = true;
                    json!({"query": line, "results": [], "error": e.to_string()})
                }
            };
            if args.json {
                println!("{out}");
            } else {
                print_text(&out);
            }
        }
        return Ok(if failed { Exit::Failure } else { Exit::Ok });
    }
    let query = args.query.as_deref().unwrap_or_default();
    if args.explain {
        let a = index.analyse(query);
        let terms: Vec<String> = a
            .terms
            .iter()
            .map(|t| format!("{}({:?})", t.word, t.origin))
            .collect();
        eprintln!("terms: {}", terms.join(" "));
        eprintln!("concepts: {:?}", a.concepts);
        let object: Vec<_> = a.object.iter().map(|&c| &a.concepts[c]).collect();
        eprintln!("object: {object:?}");
        eprintln!(
            "intents: {:?} wanted={:?} from_typo={} self={} admin={} collection={} plural={}",
            a.intents,
            a.wanted,
            a.intent_from_typo,
            a.about_self,
            a.about_admin,
            a.wants_collection,
            a.plural
        );
    }
    if args.explain {
        let explained = index
            .explain(query, &opts)
            .map_err(|e| UsageError(e.to_string()))?;
        for (rank, (hit, parts)) in explained.iter().enumerate() {
            let a = &catalog[hit.action];
            let top: Vec<String> = parts
                .iter()
                .take(40)
                .map(|c| format!("{}={:.2}→{:+.2}", c.feature, c.value, c.part))
                .collect();
            eprintln!(
                "#{} {} {:.3}: {}",
                rank + 1,
                a.name,
                hit.score,
                top.join(" ")
            );
        }
    }
    if args.tool_output {
        println!("{}", tool_answer(&state, query, args));
        return Ok(Exit::Ok);
    }
    let out = answer(catalog, index, query, &opts).map_err(|e| UsageError(e.to_string()))?;
    let found = out["results"].as_array().is_some_and(|r| !r.is_empty());
    if args.json {
        println!("{out}");
    } else if found {
        print_text(&out);
    }
    if !found {
        eprintln!(
            "no action matches {query:?}: rephrase with the Gitea object and verb (e.g. \"create issue comment\"), or list the actions with `catalog`"
        );
        return Ok(Exit::Failure);
    }
    Ok(Exit::Ok)
}

fn print_text(out: &Value) {
    println!("{}", out["query"].as_str().unwrap_or_default());
    for (i, r) in out["results"].as_array().into_iter().flatten().enumerate() {
        println!(
            "  {}. {} ({} {}) {:.3}\n     {}",
            i + 1,
            r["name"].as_str().unwrap_or_default(),
            r["method"].as_str().unwrap_or_default(),
            r["path"].as_str().unwrap_or_default(),
            r["score"].as_f64().unwrap_or_default(),
            r["summary"].as_str().unwrap_or_default()
        );
    }
}

fn read_rows(file: &std::path::Path) -> anyhow::Result<Vec<search::EvalRow>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    Ok(
        search::parse_eval_set(&text)
            .map_err(|e| UsageError(format!("{}: {e}", file.display())))?,
    )
}

pub async fn eval(config: &Config, args: &EvalArgs) -> anyhow::Result<Exit> {
    let rows = read_rows(&args.file)?;
    let state = load(config).await?;
    let catalog = &state.catalog;
    let cutoff = args.cutoff.max(1);
    if let Some(k) = args.cv {
        let mut diagnoses: Vec<Option<Value>> = vec![None; rows.len()];
        let frozen = match &args.frozen_fold_models {
            Some(dir) => Some(
                (0..usize::from(k))
                    .map(|f| {
                        let path = fold_model_path(dir, args.seed, k, f);
                        let text = std::fs::read_to_string(&path)
                            .with_context(|| format!("cannot read {}", path.display()))?;
                        Model::parse(&text)
                            .map_err(|e| UsageError(format!("{}: {e}", path.display())).into())
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?,
            ),
            None => None,
        };
        let cv = fitting::cross_validate_with(
            catalog,
            &rows,
            usize::from(k),
            args.seed,
            cutoff,
            &args.fit.options(),
            frozen.as_deref(),
            |i, index| {
                if args.misses.is_some() {
                    diagnoses[i] = Some(index.diagnose(&rows[i].q, &rows[i].expect));
                }
            },
        );
        if let Some(dir) = &args.save_fold_models {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            for (f, model) in cv.models.iter().enumerate() {
                let path = fold_model_path(dir, args.seed, k, f);
                std::fs::write(&path, model.to_json())
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        if let Some(path) = &args.misses {
            let mut out = String::new();
            for m in &cv.report.misses {
                let Some(i) = rows.iter().position(|r| r.id == m.id) else {
                    continue;
                };
                let mut v = json!({
                    "id": m.id, "cat": m.cat, "q": m.q, "expect": m.expect,
                    "rank": m.rank, "got": m.got,
                });
                if let (Some(obj), Some(Value::Object(d))) =
                    (v.as_object_mut(), diagnoses[i].take())
                {
                    obj.extend(d);
                }
                out.push_str(&v.to_string());
                out.push('\n');
            }
            std::fs::write(path, out)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        if args.json {
            println!("{}", serde_json::to_string_pretty(&cv)?);
        } else {
            println!(
                "cross-validation of {} ({k} folds by row, seed {}; {} rows, {} results per query)",
                args.file.display(),
                args.seed,
                rows.len(),
                cv.report.cutoff
            );
            print_report(&cv.report, false);
            if args.frozen_fold_models.is_some() {
                println!("each fold answered by its saved model (--frozen-fold-models): no fit");
            } else {
                println!(
                    "the folds' fits on their own training needs (each scored with the examples of the other inner folds): R@1 {:.3} (linear stages alone {:.3})",
                    cv.fit.recall_at_1, cv.fit.linear_recall_at_1
                );
            }
        }
        if let Some(path) = &args.baseline {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let committed: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", path.display()))?;
            let want = committed["recall_at_1"]
                .as_f64()
                .ok_or_else(|| UsageError(format!("{}: no number recall_at_1", path.display())))?;
            let got = cv.report.overall.recall_at_1;
            if got < want - BASELINE_TOLERANCE {
                eprintln!(
                    "error: cross-validated R@1 {got:.3} is more than {BASELINE_TOLERANCE} below the committed {want:.3} ({})",
                    path.display()
                );
                return Ok(Exit::Failure);
            }
            println!("CV R@1 {got:.3} vs committed {want:.3}: within {BASELINE_TOLERANCE}");
        }
        return Ok(Exit::Ok);
    }
    let own;
    let index = if let Some(dir) = &args.index_dir {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))
        };
        let model = Model::parse(&read("model.json")?)
            .map_err(|e| UsageError(format!("model.json: {e}")))?;
        let examples = if args.no_examples {
            Examples::none()
        } else {
            Examples::parse(&read("examples.jsonl")?)
                .map_err(|e| UsageError(format!("examples.jsonl: {e}")))?
        };
        own = SearchIndex::with(catalog, &examples, model);
        &own
    } else if args.no_examples {
        own = SearchIndex::with(
            catalog,
            &Examples::none(),
            Model::committed().map_err(search::Error::Unavailable)?,
        );
        &own
    } else {
        state.search_index()?
    };
    let opts = SearchOptions {
        limit: cutoff,
        ..SearchOptions::default()
    };
    let report = search::evaluate(&rows, cutoff, |q| fitting::ranked(index, q, &opts));
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(Exit::Ok);
    }
    println!(
        "evaluation of {} ({} rows, {} results per query)",
        args.file.display(),
        rows.len(),
        report.cutoff
    );
    print_report(&report, true);
    Ok(Exit::Ok)
}

/// `compare`: a paired comparison of two sets of cross-validated runs.
pub fn compare(args: &CompareArgs) -> anyhow::Result<Exit> {
    let read = |files: &[PathBuf]| -> anyhow::Result<Vec<CvRun>> {
        files
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(f)
                    .with_context(|| format!("cannot read {}", f.display()))?;
                CvRun::from_json(&text)
                    .map_err(|e| UsageError(format!("{}: {e}", f.display())).into())
            })
            .collect()
    };
    let (baseline, candidate) = (read(&args.baseline)?, read(&args.candidate)?);
    let p = paired::compare(&baseline, &candidate).map_err(UsageError)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&p)?);
        return Ok(Exit::Ok);
    }
    let seeds: Vec<String> = p.seeds.iter().map(u64::to_string).collect();
    println!(
        "{} fold seeds ({}), {} folds over {} rows",
        p.seeds.len(),
        seeds.join(", "),
        p.folds,
        p.rows
    );
    println!(
        "mean R@1: baseline {:.4}, candidate {:.4} ({:+.4})",
        p.baseline_recall_at_1,
        p.candidate_recall_at_1,
        p.candidate_recall_at_1 - p.baseline_recall_at_1
    );
    println!(
        "rows ranked right first on more seeds: by the candidate {}, by the baseline {}",
        p.better, p.worse
    );
    println!("sign test (two-sided, exact): p = {:.3}", p.p_value);
    Ok(Exit::Ok)
}

fn print_report(report: &search::EvalReport, misses: bool) {
    println!(
        "{:<10} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "category", "n", "R@1", "R@5", "R@10", "R@20", "MRR"
    );
    let line = |name: &str, m: &search::Metrics| {
        println!(
            "{name:<10} {:>4} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
            m.n, m.recall_at_1, m.recall_at_5, m.recall_at_10, m.recall_at_20, m.mrr
        );
    };
    line("all", &report.overall);
    for (cat, m) in &report.by_category {
        line(cat, m);
    }
    if misses && !report.misses.is_empty() {
        println!("misses (rank of the first correct answer; top results):");
        for m in &report.misses {
            let rank = m.rank.map_or("-".to_string(), |r| r.to_string());
            println!(
                "  {} [{}] rank {rank}: {}\n      want {} got {}",
                m.id,
                m.cat,
                m.q,
                m.expect.join("|"),
                m.got.join(", ")
            );
        }
    }
}

/// The files `fit` writes, with their contents.
fn fit_outputs(
    catalog: &Catalog,
    rows: &[search::EvalRow],
    train_text: &[u8],
    opts: &FitOptions,
) -> Vec<(&'static str, String)> {
    use sha2::Digest;
    let (mut model, examples, training) = fitting::fit(catalog, rows, opts);
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    model.provenance = json!({
        "train_rows": rows.len(),
        "train_sha256": format!("{:x}", sha2::Sha256::digest(train_text)),
        "document": catalog.info().title.clone() + " " + &catalog.info().version,
        "options": opts,
        "training_fit": {
            "recall_at_1": round(training.recall_at_1),
            "linear_recall_at_1": round(training.linear_recall_at_1),
        },
    });
    let cv = fitting::cross_validate(catalog, rows, BASELINE_FOLDS, DEFAULT_CV_SEED, 20, opts);
    let m = &cv.report.overall;
    let mut baseline = serde_json::to_string_pretty(&json!({
        "folds": BASELINE_FOLDS,
        "seed": DEFAULT_CV_SEED,
        "rows": rows.len(),
        "recall_at_1": round(m.recall_at_1),
        "recall_at_5": round(m.recall_at_5),
        "recall_at_20": round(m.recall_at_20),
        "mrr": round(m.mrr),
    }))
    .unwrap_or_default();
    baseline.push('\n');
    vec![
        ("model.json", model.to_json()),
        ("examples.jsonl", examples.to_jsonl()),
        ("cv-baseline.json", baseline),
    ]
}

pub async fn fit(config: &Config, args: &FitArgs) -> anyhow::Result<Exit> {
    let train_text = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let rows = read_rows(&args.file)?;
    let state = load(config).await?;
    let outputs = fit_outputs(&state.catalog, &rows, &train_text, &args.fit.options());
    let mut stale = Vec::new();
    for (name, content) in &outputs {
        let path = args.out_dir.join(name);
        if args.check {
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            if &committed != content {
                stale.push(path.display().to_string());
            }
        } else {
            std::fs::write(&path, content)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote {}", path.display());
        }
    }
    if !stale.is_empty() {
        eprintln!(
            "error: {} differ from what `fit` produces; run `aegis-gitea-mcp fit {} --spec …` and commit",
            stale.join(", "),
            args.file.display()
        );
        return Ok(Exit::Failure);
    }
    if args.check {
        println!("the committed model, examples and CV baseline are what `fit` produces");
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        fit: FitFlags,
    }

    /// `--inner-seed` changes only the split into inner folds; without it the fit is the
    /// committed one's.
    #[test]
    fn the_inner_seed_flag_sets_the_split_seed() {
        let d = FitOptions::default();
        let unset = Flags::parse_from(["fit"]).fit.options();
        assert_eq!(unset, d);
        let set = Flags::parse_from(["fit", "--inner-seed", "101"])
            .fit
            .options();
        assert_eq!(set.seed, 101);
        assert_eq!(
            FitOptions {
                seed: d.seed,
                ..set
            },
            d
        );
        assert!(Flags::try_parse_from(["fit", "--inner-seed", "-1"]).is_err());
    }
}

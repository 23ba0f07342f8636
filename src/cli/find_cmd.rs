//! `aegis-gitea-mcp find` and `aegis-gitea-mcp eval`: the search from the command line.

use std::io::BufRead;
use std::path::PathBuf;

use aegis_gitea_mcp::app;
use aegis_gitea_mcp::catalog::{Catalog, Domain};
use aegis_gitea_mcp::config::Config;
use aegis_gitea_mcp::search::{self, SearchIndex, SearchOptions};
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
    /// How many results to request per query (MRR depends on it)
    #[arg(long, default_value_t = 10)]
    cutoff: usize,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
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
            let a = &catalog.actions()[h.action];
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
        eprintln!(
            "intents: {:?} from_typo={} self={} admin={} collection={} plural={}",
            a.intents,
            a.intent_from_typo,
            a.about_self,
            a.about_admin,
            a.wants_collection,
            a.plural
        );
    }
    if args.tool_output {
        println!("{}", tool_answer(&state, query, args));
        return Ok(Exit::Ok);
    }
    let out = answer(catalog, index, query, &opts).map_err(|e| UsageError(e.to_string()))?;
    if args.json {
        println!("{out}");
    } else {
        print_text(&out);
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

pub async fn eval(config: &Config, args: &EvalArgs) -> anyhow::Result<Exit> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let rows = search::parse_eval_set(&text)
        .map_err(|e| UsageError(format!("{}: {e}", args.file.display())))?;
    let state = load(config).await?;
    let (catalog, index) = (&state.catalog, state.search_index()?);
    let opts = SearchOptions {
        limit: args.cutoff.max(1),
        ..SearchOptions::default()
    };
    let report = search::evaluate(&rows, args.cutoff.max(1), |q| {
        index
            .search(q, &opts)
            .map(|hits| {
                hits.iter()
                    .map(|h| catalog.actions()[h.action].operation_id.to_string())
                    .collect()
            })
            .unwrap_or_default()
    });
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
    println!(
        "{:<10} {:>4} {:>6} {:>6} {:>6}",
        "category", "n", "R@1", "R@5", "MRR"
    );
    let line = |name: &str, m: &search::Metrics| {
        println!(
            "{name:<10} {:>4} {:>6.3} {:>6.3} {:>6.3}",
            m.n, m.recall_at_1, m.recall_at_5, m.mrr
        );
    };
    line("all", &report.overall);
    for (cat, m) in &report.by_category {
        line(cat, m);
    }
    if !report.misses.is_empty() {
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
    Ok(Exit::Ok)
}

//! `aegis-gitea-mcp catalog`: the actions as a table or JSON, and the docs inventory.

use std::path::PathBuf;

use aegis_gitea_mcp::app;
use aegis_gitea_mcp::catalog::{Action, ActionId, Domain, render_inventory};
use aegis_gitea_mcp::config::Config;
use aegis_gitea_mcp::policy::Decision;
use anyhow::Context;
use serde_json::{Value, json};

use super::{Exit, UsageError};

/// Arguments of `catalog`.
#[derive(Debug, clap::Args)]
pub struct CatalogArgs {
    /// Print a JSON array (fields: name, operation_id, method, path, domain, summary, read_only, destructive, idempotent, scopes, deprecated, user_content)
    #[arg(long)]
    json: bool,
    /// Only this domain
    #[arg(long, value_name = "DOMAIN")]
    domain: Option<String>,
    /// Write the inventory (docs/actions.md)
    #[arg(long = "write-docs", conflicts_with = "check_docs")]
    write_docs: bool,
    /// Fail when the committed inventory differs from what this catalog renders
    #[arg(long = "check-docs")]
    check_docs: bool,
    /// Where the inventory lives
    #[arg(long = "docs", value_name = "PATH", default_value = "docs/actions.md")]
    docs: PathBuf,
}

/// The JSON row of one action; the field set is a public contract.
fn json_row(a: &Action) -> Value {
    json!({
        "name": a.name.as_str(),
        "operation_id": a.operation_id.as_str(),
        "method": a.method.as_str(),
        "path": a.path,
        "domain": a.domain.as_str(),
        "summary": a.summary,
        "read_only": a.annotations.read_only,
        "destructive": a.annotations.destructive,
        "idempotent": a.annotations.idempotent,
        "scopes": a.scopes.scopes().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        "deprecated": a.deprecated,
        "user_content": a.user_content,
    })
}

pub async fn run(config: &Config, args: &CatalogArgs) -> anyhow::Result<Exit> {
    let domain = match &args.domain {
        Some(d) => Some(Domain::parse(d).ok_or_else(|| {
            let known: Vec<&str> = Domain::ALL.iter().map(|d| d.as_str()).collect();
            UsageError(format!(
                "--domain {d:?} is not a domain; use one of {}",
                known.join(", ")
            ))
        })?),
        None => None,
    };
    let (state, loaded) = app::load_state(config).await?;
    if args.write_docs || args.check_docs {
        let label = match loaded.source.file() {
            Some(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            None => loaded.source.describe(),
        };
        let rendered = render_inventory(&state.catalog, &label);
        if args.write_docs {
            std::fs::write(&args.docs, &rendered)
                .with_context(|| format!("cannot write {}", args.docs.display()))?;
            eprintln!(
                "wrote {} ({} actions)",
                args.docs.display(),
                state.catalog.len()
            );
            return Ok(Exit::Ok);
        }
        let committed = std::fs::read_to_string(&args.docs)
            .with_context(|| format!("cannot read {}", args.docs.display()))?;
        if committed == rendered {
            eprintln!(
                "{} is up to date ({} actions)",
                args.docs.display(),
                state.catalog.len()
            );
            return Ok(Exit::Ok);
        }
        eprintln!(
            "{} is stale: regenerate it with `aegis-gitea-mcp catalog --write-docs --spec <the spec it names>`",
            args.docs.display()
        );
        return Ok(Exit::Failure);
    }
    let rows: Vec<(ActionId, &Action)> = state
        .catalog
        .ids()
        .filter(|(_, a)| domain.is_none_or(|d| a.domain == d))
        .collect();
    if args.json {
        let out: Vec<Value> = rows.iter().map(|(_, a)| json_row(a)).collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(Exit::Ok);
    }
    for (i, a) in &rows {
        let mut flags = String::new();
        flags.push(if a.annotations.read_only { 'R' } else { '-' });
        flags.push(if a.annotations.destructive { 'D' } else { '-' });
        flags.push(if a.deprecated { 'd' } else { '-' });
        let withheld = match state.policy.decision(*i) {
            Decision::Allowed => String::new(),
            Decision::Withheld { reason } => format!("  [withheld: {reason}]"),
        };
        println!(
            "{:<56} {} {:<7} {}{}",
            a.name,
            flags,
            a.method.as_str(),
            a.path,
            withheld
        );
    }
    eprintln!(
        "{} actions from {} (sha256 {}); flags: R read-only, D destructive, d deprecated, - not",
        rows.len(),
        loaded.source.describe(),
        loaded.spec.sha256
    );
    Ok(Exit::Ok)
}

//! `aegis-gitea-mcp call`: the execute tool from the command line, for scripts.

use aegis_gitea_mcp::app::{App, Assembly};
use aegis_gitea_mcp::config::Config;
use aegis_gitea_mcp::exec::{CONFIRM_TTL, Confirmations};
use aegis_gitea_mcp::mcp::{CallOrigin, Server, Surface};
use aegis_gitea_mcp::tools;
use serde_json::{Value, json};

use super::{Exit, UsageError};

/// Arguments of `call`.
#[derive(Debug, clap::Args)]
pub struct CallArgs {
    /// Action name (gitea_…) or operationId
    action: String,
    /// The action's arguments as a JSON object
    #[arg(long = "args", value_name = "JSON", default_value = "{}")]
    args: String,
    /// Only print the request that would be sent
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// Confirmation token from a destructive call's preview
    #[arg(long, value_name = "TOKEN")]
    confirm: Option<String>,
}

/// Runs the call; prints the result's structured JSON. Exit 0 on success, 1 on an error result
/// (or when a destructive call waits for confirmation), 2 on usage errors.
/// Where the CLI remembers redeemed confirmation nonces: the user's cache directory
/// (`$XDG_CACHE_HOME/aegis-gitea-mcp/confirmations` on Linux), one file per instance and
/// credential. Files whose every entry has expired (untouched for a token's lifetime) are removed
/// on each run, so records never pile up.
fn confirmations_dir() -> std::path::PathBuf {
    let dir = dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("aegis-gitea-mcp")
        .join("confirmations");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        tracing::warn!("cannot create {}: {e}", dir.display());
    }
    let now = std::time::SystemTime::now();
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > CONFIRM_TTL);
        if stale && entry.path().is_file() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    dir
}

pub async fn run(config: &Config, args: &CallArgs) -> anyhow::Result<Exit> {
    let arguments: Value = serde_json::from_str(&args.args)
        .map_err(|e| UsageError(format!("--args is not valid JSON: {e}")))?;
    if !arguments.is_object() {
        return Err(UsageError(
            "--args must be a JSON object, e.g. '{\"owner\": \"alice\"}'".into(),
        )
        .into());
    }
    // One process issues the token, a later one redeems it: the key derives from the
    // configured instance and credentials, and used tokens are remembered in a file.
    let key_material = format!(
        "{}\n{}",
        config.gitea_url,
        config
            .token
            .as_ref()
            .map(|t| t.expose())
            .unwrap_or_default()
    );
    let used_file = confirmations_dir()
        .join(&aegis_gitea_mcp::digest::sha256_hex(key_material.as_bytes())[..16]);
    let how = Assembly {
        scope_wait: None,
        confirmations: Some(Confirmations::persistent(
            CONFIRM_TTL,
            &key_material,
            used_file,
        )),
    };
    // The same entry point as every transport: audit, scrubbing and bounds included.
    let server = Server::new(App::assemble(config, how).await?, Surface::Dynamic);
    let mut input = serde_json::Map::new();
    input.insert("action".into(), json!(args.action));
    input.insert("arguments".into(), arguments);
    input.insert("dry_run".into(), json!(args.dry_run));
    if let Some(c) = &args.confirm {
        input.insert("confirm".into(), json!(c));
    }
    let out = server
        .call(tools::execute::NAME, input, &CallOrigin::local("cli"))
        .await;
    println!("{}", serde_json::to_string_pretty(&out.structured)?);
    if out.needs_confirmation() {
        // The answer's wording is for a model ("repeat the call with \"confirm\": …"); a person
        // at a shell repeats the command.
        let s = &out.structured;
        eprintln!(
            "confirmation required: {} is destructive; the request is shown above. To proceed, run the same command again with --confirm {} (valid {} s, once, for these exact arguments).",
            args.action,
            s["confirm"].as_str().unwrap_or_default(),
            s["expires_in_secs"].as_u64().unwrap_or_default()
        );
        return Ok(Exit::Failure);
    }
    if out.is_error {
        eprintln!("{}", out.text);
        return Ok(Exit::Failure);
    }
    Ok(Exit::Ok)
}

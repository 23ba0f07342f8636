//! `aegis-gitea-mcp spec pin|check`: pinning the instance's API description.

use std::path::{Path, PathBuf};

use aegis_gitea_mcp::app;
use aegis_gitea_mcp::catalog::Catalog;
use aegis_gitea_mcp::config::{Config, Secret};
use aegis_gitea_mcp::gitea::{ClientConfig, GiteaClient};
use aegis_gitea_mcp::spec::{self, Spec, SpecDiff};
use anyhow::Context;

use super::Exit;

/// `spec` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SpecCommand {
    /// Download the instance's /swagger.v1.json into the config directory and write its sha256 beside it
    Pin {
        /// Where to write the document [default: <config dir>/pins/<instance>/gitea-swagger.v1.json]
        #[arg(long, value_name = "PATH")]
        output: Option<PathBuf>,
    },
    /// Compare the pinned document with the instance's; exit 1 when they differ
    Check {
        /// The pinned document [default: the one `serve` would use]
        #[arg(long, value_name = "PATH")]
        pinned: Option<PathBuf>,
    },
}

pub async fn run(config: &Config, cmd: &SpecCommand) -> anyhow::Result<Exit> {
    let client = GiteaClient::new(&ClientConfig::from_config(config), Default::default())?;
    let token = config.token.as_ref();
    match cmd {
        SpecCommand::Pin { output } => {
            let output = match output.clone().or_else(|| app::pin_location(config)) {
                Some(p) => p,
                None => {
                    anyhow::bail!(
                        "there is no config directory to pin into: give --output PATH or --config-dir DIR"
                    )
                }
            };
            pin(config, &client, token, &output).await
        }
        SpecCommand::Check { pinned } => {
            let candidates = app::pin_candidates(config);
            let pinned = match pinned
                .clone()
                .or_else(|| candidates.iter().find(|p| p.is_file()).cloned())
            {
                Some(p) => p,
                None => anyhow::bail!(
                    "no pinned document for {} (looked at {}): run `aegis-gitea-mcp spec pin` first",
                    config.gitea_url,
                    candidates
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            check(config, &client, token, &pinned).await
        }
    }
}

async fn pin(
    config: &Config,
    client: &GiteaClient,
    token: Option<&Secret>,
    output: &Path,
) -> anyhow::Result<Exit> {
    let bytes = app::fetch_instance_spec(config, client, token).await?;
    // Refuse to pin a document this server could not serve.
    let spec = Spec::parse(&bytes).context("the instance's document cannot be used")?;
    let catalog = Catalog::build(&spec).context("the instance's document cannot be used")?;
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(output, &bytes).with_context(|| format!("cannot write {}", output.display()))?;
    let pin_file = spec::pin_path_for(output);
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::fs::write(&pin_file, format!("{}  {name}\n", spec.sha256))
        .with_context(|| format!("cannot write {}", pin_file.display()))?;
    println!(
        "pinned {} ({} {}, {} actions), sha256 {}",
        output.display(),
        spec.title,
        spec.version,
        catalog.len(),
        spec.sha256
    );
    Ok(Exit::Ok)
}

async fn check(
    config: &Config,
    client: &GiteaClient,
    token: Option<&Secret>,
    pinned: &Path,
) -> anyhow::Result<Exit> {
    let old = Spec::parse(&spec::read_spec_file(pinned)?)
        .with_context(|| format!("cannot use the pinned document {}", pinned.display()))?;
    let new = Spec::parse(&app::fetch_instance_spec(config, client, token).await?)
        .context("cannot use the instance's document")?;
    let diff = SpecDiff::between(&old, &new);
    println!("pinned:   {} sha256 {}", pinned.display(), old.sha256);
    println!(
        "instance: {} sha256 {}",
        client.url("/swagger.v1.json"),
        new.sha256
    );
    if old.sha256 == new.sha256 {
        println!("identical");
        return Ok(Exit::Ok);
    }
    for (label, ids) in [
        ("added", &diff.added),
        ("removed", &diff.removed),
        ("changed", &diff.changed),
    ] {
        println!("{label}: {}", ids.len());
        for id in ids {
            println!("  {id}");
        }
    }
    if diff.is_empty() {
        println!("the documents differ only outside the operations (texts, definitions order)");
    }
    println!("re-pin with `aegis-gitea-mcp spec pin` after reviewing the changes");
    Ok(Exit::Failure)
}

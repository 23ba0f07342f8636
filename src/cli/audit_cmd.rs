//! `aegis-gitea-mcp audit verify FILE`: checks an audit log's hash chain.

use std::path::PathBuf;

use aegis_gitea_mcp::audit;

use super::Exit;

/// `audit` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum AuditCommand {
    /// Check the hash chain; report the first broken record (exit 1) or that all are intact
    Verify {
        /// The audit log file
        file: PathBuf,
    },
}

pub fn run(cmd: &AuditCommand) -> anyhow::Result<Exit> {
    match cmd {
        AuditCommand::Verify { file } => {
            let v = audit::verify(file)?;
            match v.first_broken {
                None => {
                    println!("{}: {} records, chain intact", file.display(), v.records);
                    Ok(Exit::Ok)
                }
                Some((line, why)) => {
                    println!("{}: record at line {line} is broken: {why}", file.display());
                    Ok(Exit::Failure)
                }
            }
        }
    }
}

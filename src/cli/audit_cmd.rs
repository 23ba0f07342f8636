//! `aegis-gitea-mcp audit verify FILE...`: checks audit logs' hash chains, one per replica.

use std::collections::BTreeMap;
use std::path::PathBuf;

use aegis_gitea_mcp::audit;

use super::Exit;

/// `audit` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum AuditCommand {
    /// Check the hash chain of each file (one per replica); report per file and replica, and the
    /// first broken record of each (exit 1 when any is broken)
    Verify {
        /// The audit log files (one per replica)
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

pub fn run(cmd: &AuditCommand) -> anyhow::Result<Exit> {
    match cmd {
        AuditCommand::Verify { files } => {
            let mut exit = Exit::Ok;
            // Which files each replica id appears in: one replica, one file, one chain.
            let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for file in files {
                let name = file.display().to_string();
                let v = match audit::verify(file) {
                    Ok(v) => v,
                    Err(e) => {
                        println!("{e}");
                        exit = Exit::Failure;
                        continue;
                    }
                };
                let who = replicas(&v.replicas);
                for r in v.replicas.keys() {
                    seen.entry(r.clone()).or_default().push(name.clone());
                }
                match v.first_broken {
                    None => println!("{name}: {} records, chain intact ({who})", v.records),
                    Some((line, why)) => {
                        println!(
                            "{name}: record at line {line} is broken: {why} ({who} before it)"
                        );
                        exit = Exit::Failure;
                    }
                }
                if v.replicas.len() > 1 {
                    println!(
                        "{name}: records of {} replicas in one file; give each replica its own AUDIT_LOG (one chain has one writer)",
                        v.replicas.len()
                    );
                }
            }
            for (replica, in_files) in &seen {
                if in_files.len() > 1 && !replica.is_empty() {
                    println!(
                        "replica {replica} appears in {} files: {}",
                        in_files.len(),
                        in_files.join(", ")
                    );
                }
            }
            Ok(exit)
        }
    }
}

/// `replica a: 3 records, replica b: 2 records`.
fn replicas(counts: &BTreeMap<String, usize>) -> String {
    if counts.is_empty() {
        return "no records".into();
    }
    counts
        .iter()
        .map(|(r, n)| {
            let r = if r.is_empty() { "(no replica id)" } else { r };
            format!("replica {r}: {n} records")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

//! `aegis-gitea-mcp api-key hash`: the `API_KEYS_FILE` line for a key read from standard input.

use std::io::Read;

use aegis_gitea_mcp::http::auth::key_line;

use super::{Exit, UsageError};

/// `api-key` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ApiKeyCommand {
    /// Read a key from standard input and print its API_KEYS_FILE line (the key itself is never stored)
    Hash {
        /// A label for audit records and metrics (who holds the key)
        #[arg(long, default_value = "")]
        label: String,
    },
}

pub fn run(cmd: &ApiKeyCommand) -> anyhow::Result<Exit> {
    match cmd {
        ApiKeyCommand::Hash { label } => {
            let mut key = String::new();
            std::io::stdin().read_to_string(&mut key)?;
            let key = key.trim();
            if key.len() < 16 || !key.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(UsageError(
                    "the key must be at least 16 printable characters without spaces".into(),
                )
                .into());
            }
            if label.chars().any(char::is_whitespace) {
                return Err(UsageError("--label must be one word".into()).into());
            }
            println!("{}", key_line(key, label).trim_end());
            Ok(Exit::Ok)
        }
    }
}

//! The command line: one function per subcommand, sharing [`GlobalArgs`].

mod api_key_cmd;
mod audit_cmd;
mod call_cmd;
mod catalog_cmd;
mod find_cmd;
mod serve_cmd;
mod spec_cmd;

use std::process::ExitCode;

use aegis_gitea_mcp::config::{self, Config, GlobalArgs};
use clap::{Parser, Subcommand};

/// The version and the commit it was built from.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("AEGIS_GIT_COMMIT"),
    ")"
);

/// A guarded MCP server for the whole Gitea / Forgejo API.
#[derive(Debug, Parser)]
#[command(name = "aegis-gitea-mcp", version = VERSION, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    /// Log filter for stderr (tracing syntax, e.g. "info" or "aegis_gitea_mcp=debug") [env: LOG_LEVEL]
    #[arg(
        long = "log-level",
        env = "LOG_LEVEL",
        global = true,
        value_name = "FILTER"
    )]
    pub log_level: Option<String>,

    /// Log line format on stderr: text or json (one JSON object per line, for log collectors)
    #[arg(
        long = "log-format",
        env = "LOG_FORMAT",
        global = true,
        value_name = "FORMAT",
        value_enum,
        default_value_t = LogFormat::Text
    )]
    pub log_format: LogFormat,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the catalog's actions, or write / check docs/actions.md
    Catalog(catalog_cmd::CatalogArgs),
    /// Make API_KEYS_FILE lines
    #[command(subcommand, name = "api-key")]
    ApiKey(api_key_cmd::ApiKeyCommand),
    /// Verify an audit log's hash chain
    #[command(subcommand)]
    Audit(audit_cmd::AuditCommand),
    /// Serve MCP over stdio (the default) or streamable HTTP (--http)
    Serve(Box<serve_cmd::ServeArgs>),
    /// Run an action (the execute tool, for scripts); prints the result JSON
    Call(call_cmd::CallArgs),
    /// Find the action for a need described in your own words
    Find(find_cmd::FindArgs),
    /// Measure search quality on an evaluation set (recall@k, MRR), or cross-validate (--cv)
    Eval(find_cmd::EvalArgs),
    /// Fit the search ranking on a labelled training set; write index/model.json,
    /// index/examples.jsonl and index/cv-baseline.json (or --check them)
    Fit(find_cmd::FitArgs),
    /// Pin the instance's API description, or compare the pinned one with it
    #[command(subcommand)]
    Spec(spec_cmd::SpecCommand),
    /// Check the URL, TLS, the API description and its pin, the token and its scopes; exit 1 when something fails
    Doctor {
        /// Print the checks as JSON
        #[arg(long)]
        json: bool,
    },
    /// Print shell completions (bash, zsh, fish, elvish, powershell)
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff)
    Man,
}

/// How the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success.
    Ok,
    /// The command ran and failed (or produced an error result).
    Failure,
    /// The command line or configuration was wrong.
    Usage,
}

/// An error and its causes on one line, each said once: an error that already quotes its
/// source (a `thiserror` message with `{source}`) would otherwise print the cause twice.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

impl Exit {
    /// Usage errors (configuration) exit 2; everything else 1.
    pub fn from_error(e: &anyhow::Error) -> Exit {
        let settings = matches!(
            e.downcast_ref::<aegis_gitea_mcp::app::Error>(),
            Some(aegis_gitea_mcp::app::Error::State(
                aegis_gitea_mcp::state::Error::UnknownDisabled(_)
            ))
        );
        if settings
            || e.downcast_ref::<config::Error>().is_some()
            || e.downcast_ref::<UsageError>().is_some()
        {
            Exit::Usage
        } else {
            Exit::Failure
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        match e {
            Exit::Ok => ExitCode::SUCCESS,
            Exit::Failure => ExitCode::from(1),
            Exit::Usage => ExitCode::from(2),
        }
    }
}

/// A command-line mistake the user can fix (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Logs go to stderr: stdout belongs to the stdio transport and to command output.
///
/// `serve` logs at info by default (where it listens, which document, how clients
/// authenticate), other commands at warn. rmcp stays at warn unless the filter names it: at info
/// it logs every client's initialize parameters, at debug every request with its arguments.
/// An invalid filter is an error (exit 2), not a silent fallback.
pub fn init_tracing(cli: &Cli) -> Result<(), UsageError> {
    let default = match cli.command {
        None | Some(Command::Serve(_)) => "info",
        Some(_) => "warn",
    };
    let given = cli.log_level.clone().filter(|f| !f.trim().is_empty());
    let mut filter = given.clone().unwrap_or_else(|| default.to_string());
    if !filter.contains("rmcp") {
        filter.push_str(",rmcp=warn");
    }
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(&filter)
        .map_err(|e| {
            UsageError(format!(
                "LOG_LEVEL (--log-level) {:?} is not a log filter ({e}); use a level (error, warn, info, debug, trace) or tracing's target=level list",
                given.unwrap_or_default()
            ))
        })?;
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().with_ansi(false).init(),
    }
    Ok(())
}

/// Writes `bytes` to standard output; a reader that went away ends the command normally.
fn print_bytes(bytes: &[u8]) -> anyhow::Result<Exit> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(Exit::Ok),
    }
}

/// Runs the chosen subcommand.
pub async fn run(cli: Cli) -> anyhow::Result<Exit> {
    let command = match cli.command {
        // Needs no configuration: a log can be checked anywhere.
        Some(Command::Audit(cmd)) => return audit_cmd::run(&cmd),
        Some(Command::ApiKey(cmd)) => return api_key_cmd::run(&cmd),
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "aegis-gitea-mcp", &mut out);
            return print_bytes(&out);
        }
        Some(Command::Man) => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            return print_bytes(&out);
        }
        other => other,
    };
    let config = Config::from_args(&cli.global)?;
    match command {
        Some(Command::Catalog(args)) => catalog_cmd::run(&config, &args).await,
        Some(Command::Call(args)) => call_cmd::run(&config, &args).await,
        Some(Command::Find(args)) => find_cmd::find(&config, &args).await,
        Some(Command::Eval(args)) => find_cmd::eval(&config, &args).await,
        Some(Command::Fit(args)) => find_cmd::fit(&config, &args).await,
        Some(Command::Spec(cmd)) => spec_cmd::run(&config, &cmd).await,
        Some(Command::Doctor { json }) => {
            let report = aegis_gitea_mcp::doctor::run(&config).await;
            let out = if json {
                serde_json::to_string_pretty(&report)? + "\n"
            } else {
                report.text()
            };
            print_bytes(out.as_bytes())?;
            Ok(if report.is_ok() {
                Exit::Ok
            } else {
                Exit::Failure
            })
        }
        Some(Command::Audit(cmd)) => audit_cmd::run(&cmd),
        Some(Command::ApiKey(cmd)) => api_key_cmd::run(&cmd),
        Some(Command::Completions { .. } | Command::Man) => Ok(Exit::Ok),
        Some(Command::Serve(args)) => serve_cmd::run(&config, &args).await,
        None => serve_cmd::run(&config, &serve_cmd::ServeArgs::default_stdio()).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        // A context that quotes its cause, and one that does not.
        let quoted = anyhow::Error::new(io).context("cannot read x: no such file");
        assert_eq!(error_text(&quoted), "cannot read x: no such file");
        let plain = quoted.context("cannot start");
        assert_eq!(
            error_text(&plain),
            "cannot start: cannot read x: no such file"
        );
    }
}

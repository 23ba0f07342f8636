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

/// Shown after the top-level help.
const EXAMPLES: &str = "\
Examples:
  GITEA_URL=https://gitea.example.com GITEA_TOKEN=… aegis-gitea-mcp          serve MCP over stdio
  aegis-gitea-mcp serve --http --listen 127.0.0.1:8080 --auth-mode api-key   serve streamable HTTP
  aegis-gitea-mcp doctor                                                      check the set-up
  aegis-gitea-mcp find \"open a pull request\"                                  which action does that
  aegis-gitea-mcp --read-only catalog                                         what an agent may do
  aegis-gitea-mcp spec pin                                                    pin the API description";

/// A guarded MCP server for the whole Gitea / Forgejo API.
#[derive(Debug, Parser)]
#[command(name = "aegis-gitea-mcp", version = VERSION, about, long_about = None, after_help = EXAMPLES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    /// Log filter for stderr (tracing syntax, e.g. "info" or "aegis_gitea_mcp=debug") [default: info for serve, warn otherwise]
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

    /// Debug logs when LOG_LEVEL is not set (the official Gitea MCP server's GITEA_DEBUG)
    #[arg(long = "debug", env = "GITEA_DEBUG", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = false, value_parser = config::Bool)]
    pub debug: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The command line as clap sees it: every variable pointed at the spelling that is set (see
/// `config::resolve_env`), and the commands that read no Gitea setting (`audit`, `api-key`,
/// `completions`, `man`) without the global options in their help.
pub fn command() -> clap::Command {
    let mut cmd = config::resolve_env(<Cli as clap::CommandFactory>::command(), &|n| {
        std::env::var(n).ok()
    });
    // clap copies a global option into a subcommand only where the subcommand lacks it: give
    // these subcommands hidden copies first (mutating after the build would corrupt clap's
    // index of flags).
    let globals: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    for name in ["audit", "api-key", "completions", "man"] {
        cmd = cmd.mut_subcommand(name, |sub| with_hidden(sub, &globals));
    }
    cmd
}

/// Every option of `cmd` and its subcommands that has a variable, once: the command it belongs
/// to (`""` for global options), the flag, every spelling of the variable (best first), the
/// default and the help line. README's configuration table is checked against it.
fn settings_json(cmd: &clap::Command) -> serde_json::Value {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(String::new(), cmd.clone())];
    while let Some((path, cmd)) = stack.pop() {
        for a in cmd.get_arguments() {
            let (Some(env), Some(long)) = (a.get_env(), a.get_long()) else {
                continue;
            };
            if !seen.insert(long.to_string()) {
                continue;
            }
            let defaults: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            out.push(serde_json::json!({
                "command": if a.is_global_set() { "" } else { path.as_str() },
                "flag": format!("--{long}"),
                "env": config::env_names(&env.to_string_lossy()),
                "default": defaults.first(),
                "help": a.get_help().map(|h| h.to_string()),
            }));
        }
        for sub in cmd.get_subcommands() {
            let name = format!("{path} {}", sub.get_name()).trim().to_string();
            stack.push((name, sub.clone()));
        }
    }
    serde_json::Value::Array(out)
}

/// `cmd` and its subcommands with hidden copies of `args`.
fn with_hidden(mut cmd: clap::Command, args: &[clap::Arg]) -> clap::Command {
    for a in args {
        cmd = cmd.arg(a.clone().hide(true));
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in subs {
        cmd = cmd.mut_subcommand(name, |s| with_hidden(s, args));
    }
    cmd
}

/// Parses the process's command line (exits on `--help`, `--version` and usage errors).
pub fn parse() -> Cli {
    use clap::FromArgMatches;
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
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
    /// Compare two sets of cross-validated runs (`eval --cv --json` outputs) row by row, over
    /// all their fold seeds: rows each ranks right first more often, and a sign test
    Compare(find_cmd::CompareArgs),
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
    /// Print every setting (flag, variables, default, help) as JSON, from the definitions
    #[command(hide = true)]
    Settings,
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
        use aegis_gitea_mcp::app::Error as App;
        use aegis_gitea_mcp::exec::Error as Exec;
        let settings = matches!(
            e.downcast_ref::<App>(),
            Some(
                App::State(aegis_gitea_mcp::state::Error::UnknownDisabled(_))
                    | App::Exec(Exec::KeyFile(_) | Exec::Store(_))
            )
        );
        if settings
            || e.downcast_ref::<config::Error>().is_some()
            || e.downcast_ref::<clap::Error>().is_some()
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
    let default = match (&cli.command, cli.debug) {
        (_, true) => "debug",
        (None | Some(Command::Serve(_)), false) => "info",
        (Some(_), false) => "warn",
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
        Some(Command::Settings) => {
            let out = serde_json::to_string_pretty(&settings_json(
                &<Cli as clap::CommandFactory>::command(),
            ))?;
            return print_bytes((out + "\n").as_bytes());
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
        Some(Command::Compare(args)) => find_cmd::compare(&args),
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
        Some(Command::Completions { .. } | Command::Man | Command::Settings) => Ok(Exit::Ok),
        Some(Command::Serve(args)) => serve_cmd::run(&config, &args).await,
        None => serve_cmd::run(&config, &serve_cmd::ServeArgs::default_stdio()?).await,
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

//! Configuration: command-line flags and environment variables with the same meaning.
//!
//! Each setting is defined once, as a clap argument of [`GlobalArgs`] (or of `serve`): flag,
//! variable, default, range and help. Values are checked by clap value parsers ([`Bool`],
//! [`Number`], [`Parsed`]) whose errors name the variable, the flag and what is expected;
//! [`resolve_env`] points each argument at the spelling of its variable that is set
//! ([`env_names`]); [`Config::from_args`] only assembles the typed values.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::policy::PolicyConfig;

/// The default Gitea instance (the official Gitea MCP server's default too).
pub const DEFAULT_GITEA_URL: &str = "https://gitea.com";

/// A secret value (token, API key). `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Secret {
        Secret::new(s)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A configuration value that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{variable} (--{flag}): {message}")]
pub struct Error {
    /// The environment variable.
    pub variable: &'static str,
    /// The flag, without dashes.
    pub flag: &'static str,
    /// What was wrong and what is expected (never the value of a secret).
    pub message: String,
}

/// Defaults of the settings, named once for the flag definitions and `GlobalArgs::default()`.
pub mod defaults {
    /// `GITEA_TIMEOUT_SECS`.
    pub const TIMEOUT_SECS: u64 = 30;
    /// `GITEA_CONNECT_TIMEOUT_SECS`.
    pub const CONNECT_TIMEOUT_SECS: u64 = 10;
    /// `GITEA_MAX_CONCURRENCY`.
    pub const MAX_CONCURRENCY: u64 = 8;
    /// `GITEA_RETRIES`.
    pub const RETRIES: u64 = 2;
    /// `MAX_RESPONSE_BYTES` (about 20k tokens).
    pub const MAX_RESPONSE_BYTES: u64 = 80_000;
    /// `MAX_FILE_SIZE_BYTES`.
    pub const MAX_FILE_SIZE_BYTES: u64 = 1_048_576;
    /// `CONFIRM_DESTRUCTIVE`.
    pub const CONFIRM_DESTRUCTIVE: bool = true;
    /// `RAW_REQUESTS`.
    pub const RAW_REQUESTS: bool = true;
    /// `SANITIZE`.
    pub const SANITIZE: bool = true;
}

/// What the cross-repository flow guard does with a write that follows reads of non-public
/// repositories (`exec::flow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FlowGuard {
    /// The write needs the confirmation step, its preview naming the sources.
    #[default]
    Confirm,
    /// The write is refused.
    Deny,
    /// No guard.
    Off,
}

/// How a call waiting for its confirmation is confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ConfirmVia {
    /// Ask the person through the client (MCP elicitation) when it can; else the token.
    #[default]
    Auto,
    /// Always the one-use token the model repeats the call with.
    Token,
    /// Only the person through the client: destructive calls from clients that cannot ask are
    /// refused.
    Elicitation,
}

/// How raw requests treat paths no catalog operation matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum UnknownPaths {
    /// Refused.
    #[default]
    Deny,
    /// Judged by their template family and sent.
    Allow,
}

/// Options shared by every subcommand. Each flag has an environment variable of the same meaning
/// (see [`env_names`] for the other spellings accepted); values are checked by clap's parsers,
/// whose errors name the variable and the flag.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Base URL of the Gitea or Forgejo instance
    #[arg(long = "gitea-url", env = "GITEA_URL", global = true, value_name = "URL", default_value = DEFAULT_GITEA_URL, value_parser = Parsed(parse_gitea_url))]
    pub gitea_url: Option<reqwest::Url>,

    /// Gitea access token (prefer the variable: flags show up in process lists)
    #[arg(long = "gitea-token", env = "GITEA_TOKEN", global = true, value_name = "TOKEN", hide_env_values = true, value_parser = Parsed(validate_token))]
    pub gitea_token: Option<Secret>,

    /// API description to use instead of the pinned one or the instance's /swagger.v1.json
    #[arg(long = "spec", env = "GITEA_SPEC", global = true, value_name = "PATH")]
    pub spec: Option<PathBuf>,

    /// Directory of pinned API descriptions (`spec pin`) [default: the user's config directory/aegis-gitea-mcp]
    #[arg(
        long = "config-dir",
        env = "AEGIS_CONFIG_DIR",
        global = true,
        value_name = "DIR"
    )]
    pub config_dir: Option<PathBuf>,

    /// Expected sha256 of the API description; a different document is refused
    #[arg(
        long = "spec-sha256",
        env = "GITEA_SPEC_SHA256",
        global = true,
        value_name = "HEX"
    )]
    pub spec_sha256: Option<String>,

    /// Comma-separated domains to offer (admin, repo, issue, pull, release, wiki, org, team, user, actions, hook, package, notification, misc) or "all"
    #[arg(long, env = "TOOLSETS", global = true, value_name = "LIST")]
    pub toolsets: Option<String>,

    /// Withhold every action that writes
    #[arg(long = "read-only", env = "READ_ONLY", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = false, value_parser = Bool)]
    pub read_only: bool,

    /// Comma-separated action names, operationIds or domains to withhold
    #[arg(
        long = "disabled-tools",
        env = "DISABLED_TOOLS",
        global = true,
        value_name = "LIST"
    )]
    pub disabled_tools: Option<String>,

    /// Accept DISABLED_TOOLS entries that match nothing (warned about) instead of refusing to start
    #[arg(long = "disabled-tools-allow-unknown", env = "DISABLED_TOOLS_ALLOW_UNKNOWN", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = false, value_parser = Bool)]
    pub disabled_tools_allow_unknown: bool,

    /// PEM bundle of extra CA certificates to trust for the instance
    #[arg(long = "gitea-ca-file", env = "GITEA_CA_FILE", global = true, value_name = "PATH", value_parser = Parsed(readable_file))]
    pub gitea_ca_file: Option<PathBuf>,

    /// Accept any TLS certificate from the instance (self-signed labs only; warned about at start)
    #[arg(long = "gitea-insecure", env = "GITEA_INSECURE", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = false, value_parser = Bool)]
    pub gitea_insecure: bool,

    /// Seconds a request to Gitea may take in total
    #[arg(long = "gitea-timeout", env = "GITEA_TIMEOUT_SECS", global = true, value_name = "SECS", default_value_t = defaults::TIMEOUT_SECS, value_parser = Number(1, 3600))]
    pub gitea_timeout: u64,

    /// Seconds to wait for a connection to Gitea
    #[arg(long = "gitea-connect-timeout", env = "GITEA_CONNECT_TIMEOUT_SECS", global = true, value_name = "SECS", default_value_t = defaults::CONNECT_TIMEOUT_SECS, value_parser = Number(1, 600))]
    pub gitea_connect_timeout: u64,

    /// Requests to Gitea in flight at once
    #[arg(long = "gitea-max-concurrency", env = "GITEA_MAX_CONCURRENCY", global = true, value_name = "N", default_value_t = defaults::MAX_CONCURRENCY, value_parser = Number(1, 1024))]
    pub gitea_max_concurrency: u64,

    /// Retries of a failed idempotent request (GET/HEAD/PUT/DELETE; never POST/PATCH)
    #[arg(long = "gitea-retries", env = "GITEA_RETRIES", global = true, value_name = "N", default_value_t = defaults::RETRIES, value_parser = Number(0, 10))]
    pub gitea_retries: u64,

    /// Largest answer returned to the model, in bytes (80000 is about 20k tokens)
    #[arg(long = "max-response-bytes", env = "MAX_RESPONSE_BYTES", global = true, value_name = "BYTES", default_value_t = defaults::MAX_RESPONSE_BYTES, value_parser = Number(1_000, 100_000_000))]
    pub max_response_bytes: u64,

    /// Largest binary file returned (as base64), in bytes
    #[arg(long = "max-file-size-bytes", env = "MAX_FILE_SIZE_BYTES", global = true, value_name = "BYTES", default_value_t = defaults::MAX_FILE_SIZE_BYTES, value_parser = Number(1, 1_073_741_824))]
    pub max_file_size_bytes: u64,

    /// Make every call that writes a dry run
    #[arg(long = "safe-mode", env = "SAFE_MODE", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = false, value_parser = Bool)]
    pub safe_mode: bool,

    /// Require a confirmation token for destructive calls
    #[arg(long = "confirm-destructive", env = "CONFIRM_DESTRUCTIVE", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = defaults::CONFIRM_DESTRUCTIVE, value_parser = Bool)]
    pub confirm_destructive: bool,

    /// Offer the raw gitea_api_request tool
    #[arg(long = "raw-requests", env = "RAW_REQUESTS", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = defaults::RAW_REQUESTS, value_parser = Bool)]
    pub raw_requests: bool,

    /// Raw requests to paths no catalog operation matches
    #[arg(long = "raw-unknown-paths", env = "RAW_UNKNOWN_PATHS", global = true, value_name = "POLICY", value_enum, default_value_t = UnknownPaths::Deny)]
    pub raw_unknown_paths: UnknownPaths,

    /// Remove what a reader of Gitea cannot see (invisible characters, HTML comments, hidden elements) from user-written text in answers
    #[arg(long = "sanitize", env = "SANITIZE", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = defaults::SANITIZE, value_parser = Bool)]
    pub sanitize: bool,

    /// How calls that need a confirmation are confirmed: auto (ask the person when the client can, else a token), token, or elicitation (only the person; refuse clients that cannot ask)
    #[arg(long = "confirm-via", env = "CONFIRM_VIA", global = true, value_name = "HOW", value_enum, default_value_t = ConfirmVia::Auto)]
    pub confirm_via: ConfirmVia,

    /// On public repositories, replace text written by users without write access with a notice
    #[arg(long = "lockdown", env = "LOCKDOWN", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = false, value_parser = Bool)]
    pub lockdown: bool,

    /// After reading a non-public repository, a write elsewhere needs confirmation (confirm), is refused (deny), or is not guarded (off)
    #[arg(long = "flow-guard", env = "FLOW_GUARD", global = true, value_name = "MODE", value_enum, default_value_t = FlowGuard::Confirm)]
    pub flow_guard: FlowGuard,

    /// Audit log: a file (appended, hash-chained JSON lines) or - for stderr; unset = no audit log
    #[arg(
        long = "audit-log",
        env = "AUDIT_LOG",
        global = true,
        value_name = "PATH|-"
    )]
    pub audit_log: Option<String>,

    /// This process's name in audit records and logs, one per replica (default: the host name)
    #[arg(long = "replica-id", env = "REPLICA_ID", global = true, value_name = "NAME", value_parser = Parsed(replica_id))]
    pub replica_id: Option<String>,

    /// Redis (or Valkey) shared by every replica: one-use confirmations, rate limits, token cache, flow guard; unset = this process only
    #[arg(long = "redis-url", env = "REDIS_URL", global = true, value_name = "URL", hide_env_values = true, value_parser = Parsed(redis_url))]
    pub redis_url: Option<Secret>,

    /// CA certificates (PEM) that sign the Redis server's certificate, for rediss:// with a private CA; unset = the system's roots
    #[arg(long = "redis-ca-file", env = "REDIS_CA_FILE", global = true, value_name = "PATH", value_parser = Parsed(readable_file))]
    pub redis_ca_file: Option<PathBuf>,

    /// Prefix of every Redis key (several deployments can share one Redis)
    #[arg(long = "redis-prefix", env = "REDIS_PREFIX", global = true, value_name = "PREFIX", default_value = "aegis", value_parser = Parsed(redis_prefix))]
    pub redis_prefix: String,

    /// Secrets that sign confirmation tokens, one per line, the first signing (the same file on every replica); re-read when it changes
    #[arg(
        long = "confirm-key-file",
        env = "CONFIRM_KEY_FILE",
        global = true,
        value_name = "PATH"
    )]
    pub confirm_key_file: Option<PathBuf>,
}

/// A replica id: letters, digits, `.`, `_`, `-`, `:`, at most 64.
fn replica_id(v: &str) -> Result<String, String> {
    let v = v.trim();
    if v.is_empty()
        || v.len() > 64
        || !v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'))
    {
        return Err(format!(
            "expected up to 64 letters, digits, '.', '_', '-' or ':', got {:?}",
            v.chars().take(80).collect::<String>()
        ));
    }
    Ok(v.to_string())
}

/// A Redis URL's scheme is checked here; the rest when the store is built. The value is never
/// repeated (it may hold a password).
fn redis_url(v: &str) -> Result<Secret, String> {
    let v = v.trim();
    let scheme = v.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("redis" | "rediss" | "valkey" | "valkeys" | "redis+unix" | "unix") => {
            Ok(Secret::new(v))
        }
        _ => Err(
            "expected redis://[user:password@]host:port[/db] (rediss:// for TLS); the value is not shown, it may hold a password"
                .to_string(),
        ),
    }
}

fn redis_prefix(v: &str) -> Result<String, String> {
    let v = v.trim();
    if v.is_empty()
        || v.len() > 32
        || !v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Err(format!(
            "expected up to 32 letters, digits, '_', '-' or '.', got {:?}",
            v.chars().take(40).collect::<String>()
        ));
    }
    Ok(v.to_string())
}

/// The host name (`/proc/sys/kernel/hostname`, else `HOSTNAME`), or `local`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .and_then(|h| replica_id(&h).ok())
        .unwrap_or_else(|| "local".to_string())
}

impl Default for GlobalArgs {
    /// Every setting at its default (no flag, no variable), as clap would parse an empty command
    /// line in an empty environment.
    fn default() -> GlobalArgs {
        GlobalArgs {
            gitea_url: None,
            gitea_token: None,
            spec: None,
            config_dir: None,
            spec_sha256: None,
            toolsets: None,
            read_only: false,
            disabled_tools: None,
            disabled_tools_allow_unknown: false,
            gitea_ca_file: None,
            gitea_insecure: false,
            gitea_timeout: defaults::TIMEOUT_SECS,
            gitea_connect_timeout: defaults::CONNECT_TIMEOUT_SECS,
            gitea_max_concurrency: defaults::MAX_CONCURRENCY,
            gitea_retries: defaults::RETRIES,
            max_response_bytes: defaults::MAX_RESPONSE_BYTES,
            max_file_size_bytes: defaults::MAX_FILE_SIZE_BYTES,
            safe_mode: false,
            confirm_destructive: defaults::CONFIRM_DESTRUCTIVE,
            raw_requests: defaults::RAW_REQUESTS,
            raw_unknown_paths: UnknownPaths::Deny,
            sanitize: defaults::SANITIZE,
            flow_guard: FlowGuard::Confirm,
            lockdown: false,
            confirm_via: ConfirmVia::Auto,
            audit_log: None,
            replica_id: None,
            redis_url: None,
            redis_ca_file: None,
            redis_prefix: "aegis".to_string(),
            confirm_key_file: None,
        }
    }
}

/// Spellings of a variable accepted besides the one clap declares, best first (the declared one
/// follows them): the `AEGIS_`-prefixed form of every generic name (`AEGIS_READ_ONLY` for
/// `READ_ONLY`), so settings cannot collide with other programs' in a shared environment, and
/// the names the official Gitea MCP server reads, with the same meaning.
pub fn env_names(declared: &str) -> Vec<String> {
    let official: &[&str] = match declared {
        "GITEA_URL" => &["GITEA_HOST"],
        "GITEA_TOKEN" => &["GITEA_ACCESS_TOKEN"],
        "READ_ONLY" => &["GITEA_READONLY"],
        _ => &[],
    };
    let mut names = Vec::new();
    if !declared.starts_with("GITEA_") && !declared.starts_with("AEGIS_") {
        names.push(format!("AEGIS_{declared}"));
    }
    names.push(declared.to_string());
    names.extend(official.iter().map(|s| s.to_string()));
    names
}

/// Points every argument of `cmd` (and of its subcommands) at the first of its [`env_names`]
/// that is set to something non-empty; an argument whose variables are all empty reads none
/// (an empty value means unset, as in most deployment tools).
pub fn resolve_env(
    mut cmd: clap::Command,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> clap::Command {
    let ids: Vec<(clap::Id, String)> = cmd
        .get_arguments()
        .filter_map(|a| {
            Some((
                a.get_id().clone(),
                a.get_env()?.to_string_lossy().into_owned(),
            ))
        })
        .collect();
    for (id, declared) in ids {
        let names = env_names(&declared);
        let chosen = names
            .iter()
            .find(|n| lookup(n).is_some_and(|v| !v.trim().is_empty()))
            .cloned();
        let any_set = names.iter().any(|n| lookup(n).is_some());
        cmd = cmd.mut_arg(id, |a| match chosen {
            Some(name) => a.env(name),
            None if any_set => a.env(None::<&str>),
            None => a,
        });
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in subs {
        cmd = cmd.mut_subcommand(name, |s| resolve_env(s, lookup));
    }
    cmd
}

/// The name of the setting `arg` in errors: `VARIABLE (--flag)`.
fn setting_name(arg: Option<&clap::Arg>) -> String {
    let Some(arg) = arg else {
        return "a setting".to_string();
    };
    match (arg.get_env(), arg.get_long()) {
        (Some(env), Some(long)) => format!("{} (--{long})", env.to_string_lossy()),
        (None, Some(long)) => format!("--{long}"),
        _ => arg.get_id().to_string(),
    }
}

fn invalid(arg: Option<&clap::Arg>, message: impl fmt::Display) -> clap::Error {
    clap::Error::raw(
        clap::error::ErrorKind::ValueValidation,
        format!("{}: {message}\n", setting_name(arg)),
    )
}

/// clap parser of a boolean: true/false, 1/0, yes/no, on/off.
#[derive(Debug, Clone, Copy)]
pub struct Bool;

impl clap::builder::TypedValueParser for Bool {
    type Value = bool;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<bool, clap::Error> {
        let v = value.to_string_lossy();
        parse_bool(&v).ok_or_else(|| {
            invalid(
                arg,
                format!("expected true or false (or 1/0, yes/no, on/off), got {v:?}"),
            )
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            ["true", "false"]
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// clap parser of a whole number within `.0..=.1`.
#[derive(Debug, Clone, Copy)]
pub struct Number(pub u64, pub u64);

impl clap::builder::TypedValueParser for Number {
    type Value = u64;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<u64, clap::Error> {
        let v = value.to_string_lossy();
        match v.trim().parse::<u64>() {
            Ok(n) if (self.0..=self.1).contains(&n) => Ok(n),
            _ => Err(invalid(
                arg,
                format!(
                    "expected a whole number from {} to {}, got {v:?}",
                    self.0, self.1
                ),
            )),
        }
    }
}

/// clap parser through a checking function whose message is put after the setting's name.
#[derive(Clone, Copy)]
pub struct Parsed<T>(pub fn(&str) -> Result<T, String>);

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Parsed<T> {
    type Value = T;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        (self.0)(&value.to_string_lossy()).map_err(|m| invalid(arg, m))
    }
}

fn readable_file(v: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(v);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "{v} is not a readable file (expected a PEM bundle)"
        ))
    }
}

/// Validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The instance's base URL (no trailing slash, no credentials, no query).
    pub gitea_url: reqwest::Url,
    /// The token, if any.
    pub token: Option<Secret>,
    /// An explicit API description file.
    pub spec: Option<PathBuf>,
    /// Where pinned documents live (`None` when the user has no config directory).
    pub config_dir: Option<PathBuf>,
    /// The expected sha256 of the API description.
    pub spec_sha256: Option<String>,
    /// The operator's filters.
    pub policy: PolicyConfig,
    /// Extra CA certificates (PEM) to trust.
    pub ca_file: Option<PathBuf>,
    /// Accept any certificate (labs only).
    pub insecure: bool,
    /// Total time a request to Gitea may take.
    pub timeout: Duration,
    /// Time to wait for a connection.
    pub connect_timeout: Duration,
    /// Requests to Gitea in flight at once.
    pub max_concurrency: usize,
    /// Retries of a failed idempotent request.
    pub retries: u32,
    /// Largest answer returned to the model.
    pub max_response_bytes: usize,
    /// Largest binary file returned as base64.
    pub max_file_size_bytes: usize,
    /// Every writing call is a dry run.
    pub safe_mode: bool,
    /// Destructive calls need a confirmation token.
    pub confirm_destructive: bool,
    /// The raw request tool is offered.
    pub raw_requests: bool,
    /// Raw requests may reach paths no catalog operation matches.
    pub raw_unknown_paths: bool,
    /// Where audit records go (`-` = stderr), if anywhere.
    pub audit_log: Option<String>,
    /// User-written text in answers is sanitised (`render::sanitize`).
    pub sanitize: bool,
    /// The cross-repository flow guard.
    pub flow_guard: FlowGuard,
    /// Lockdown of outsiders' text on public repositories.
    pub lockdown: bool,
    /// How confirmations are given.
    pub confirm_via: ConfirmVia,
    /// This process's name in audit records.
    pub replica_id: String,
    /// The shared store, if any.
    pub redis_url: Option<Secret>,
    /// CA certificates for the shared store's TLS, if not the system's.
    pub redis_ca_file: Option<PathBuf>,
    /// Prefix of the shared store's keys.
    pub redis_prefix: String,
    /// The shared confirmation keys, if any.
    pub confirm_key_file: Option<PathBuf>,
}

impl Config {
    /// The configuration from parsed (already checked) arguments.
    pub fn from_args(args: &GlobalArgs) -> Result<Config, Error> {
        let gitea_url = match &args.gitea_url {
            Some(u) => u.clone(),
            None => parse_gitea_url(DEFAULT_GITEA_URL).map_err(|message| Error {
                variable: "GITEA_URL",
                flag: "gitea-url",
                message,
            })?,
        };
        let (toolsets, unknown_toolsets) =
            PolicyConfig::parse_toolsets(args.toolsets.as_deref().unwrap_or(""));
        let policy = PolicyConfig {
            toolsets,
            read_only: args.read_only,
            disabled: PolicyConfig::parse_list(args.disabled_tools.as_deref().unwrap_or("")),
            unknown_toolsets,
            allow_unknown_disabled: args.disabled_tools_allow_unknown,
        };
        Ok(Config {
            gitea_url,
            token: args.gitea_token.clone(),
            spec: args.spec.clone().filter(|p| !p.as_os_str().is_empty()),
            config_dir: args
                .config_dir
                .clone()
                .filter(|d| !d.as_os_str().is_empty())
                .or_else(|| dirs::config_dir().map(|d| d.join("aegis-gitea-mcp"))),
            spec_sha256: args.spec_sha256.clone().filter(|v| !v.trim().is_empty()),
            policy,
            ca_file: args.gitea_ca_file.clone(),
            insecure: args.gitea_insecure,
            timeout: Duration::from_secs(args.gitea_timeout),
            connect_timeout: Duration::from_secs(args.gitea_connect_timeout),
            max_concurrency: args.gitea_max_concurrency as usize,
            retries: args.gitea_retries as u32,
            max_response_bytes: args.max_response_bytes as usize,
            max_file_size_bytes: args.max_file_size_bytes as usize,
            safe_mode: args.safe_mode,
            confirm_destructive: args.confirm_destructive,
            raw_requests: args.raw_requests,
            raw_unknown_paths: args.raw_unknown_paths == UnknownPaths::Allow,
            audit_log: args.audit_log.clone().filter(|v| !v.trim().is_empty()),
            sanitize: args.sanitize,
            flow_guard: args.flow_guard,
            lockdown: args.lockdown,
            confirm_via: args.confirm_via,
            replica_id: args.replica_id.clone().unwrap_or_else(host_name),
            redis_url: args.redis_url.clone(),
            redis_ca_file: args.redis_ca_file.clone(),
            redis_prefix: args.redis_prefix.clone(),
            confirm_key_file: args
                .confirm_key_file
                .clone()
                .filter(|p| !p.as_os_str().is_empty()),
        })
    }
}

/// Parses the usual spellings of a boolean.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Checks and normalises an instance URL (`GITEA_URL`): absolute http(s), a host, no
/// credentials, query or fragment; a trailing `/api/v1` is dropped.
pub fn parse_gitea_url(text: &str) -> Result<reqwest::Url, String> {
    let err = |message: String| message;
    let mut url = reqwest::Url::parse(text.trim()).map_err(|e| {
        err(format!(
            "expected an absolute http(s) URL such as https://gitea.example.com, got {:?} ({e})",
            without_userinfo(text)
        ))
    })?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(err(format!(
            "expected an http or https URL, got scheme {:?}",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(err("the URL has no host".to_string()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(err(
            "put credentials in GITEA_TOKEN, not in the URL".to_string()
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(err("the URL must not have a query or fragment".to_string()));
    }
    // Accept a URL that already ends in /api/v1: requests add it themselves.
    let trimmed = url
        .path()
        .trim_end_matches('/')
        .trim_end_matches("/api/v1")
        .trim_end_matches('/')
        .to_string();
    url.set_path(&trimmed);
    Ok(url)
}

/// A URL-like text with anything between `scheme://` and the last `@` of its authority masked,
/// so an error can quote a malformed URL without its password.
fn without_userinfo(text: &str) -> String {
    let (scheme, rest) = match text.find("://") {
        Some(i) => (&text[..i + 3], &text[i + 3..]),
        None => ("", text),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}***@{}", &rest[at + 1..]),
        None => text.to_string(),
    }
}

/// Checks a token (`GITEA_TOKEN`): printable ASCII, no spaces, not empty.
pub fn validate_token(t: &str) -> Result<Secret, String> {
    let t = t.trim();
    if t.is_empty() {
        return Err("the token is empty".to_string());
    }
    // A token becomes an HTTP header value: refuse anything that could break out of it.
    if !t.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(
            "the token must be printable ASCII without spaces (was it pasted with a line break?)"
                .to_string(),
        );
    }
    Ok(Secret::new(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalised_and_checked() {
        let ok = |s: &str| parse_gitea_url(s).unwrap().to_string();
        assert_eq!(ok("https://git.example.com/"), "https://git.example.com/");
        assert_eq!(
            ok("https://git.example.com/gitea/api/v1/"),
            "https://git.example.com/gitea"
        );
        for bad in [
            "git.example.com",
            "ftp://x",
            "https://user:pw@x",
            "https://x/?a=1",
            "http://",
        ] {
            let err = parse(&[&format!("--gitea-url={bad}")]).unwrap_err();
            assert!(err.contains("--gitea-url: "), "{bad}: {err}");
        }
    }

    #[test]
    fn malformed_urls_are_quoted_without_their_password() {
        for bad in [
            "https://user:hunter2@git.example.com:99999/",
            "https://hunter2@git example.com",
            "hunter2@:/x",
        ] {
            let err = parse_gitea_url(bad).unwrap_err().to_string();
            assert!(!err.contains("hunter2"), "{bad}: {err}");
        }
        assert_eq!(
            without_userinfo("https://a:b@h:1/p@q"),
            "https://***@h:1/p@q"
        );
    }

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s} {s:?}"), "*** Secret(***)");
        let err = validate_token("abc\ndef").unwrap_err().to_string();
        assert!(!err.contains("abc"), "{err}");
    }

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        global: GlobalArgs,
    }

    /// Parses flags as the binary does, the environment aside (clap reads the process's own;
    /// the tests of variables run the binary: `tests/it/cli_catalog.rs`).
    fn parse(args: &[&str]) -> Result<Config, String> {
        use clap::{CommandFactory, FromArgMatches};
        let mut cmd = Cli::command();
        let ids: Vec<clap::Id> = cmd.get_arguments().map(|a| a.get_id().clone()).collect();
        for id in ids {
            cmd = cmd.mut_arg(id, |a| a.env(None::<&str>));
        }
        let matches = cmd
            .try_get_matches_from(std::iter::once("x").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        let cli = Cli::from_arg_matches(&matches).map_err(|e| e.to_string())?;
        Config::from_args(&cli.global).map_err(|e| e.to_string())
    }

    #[test]
    fn numbers_and_enums_are_checked() {
        let err = parse(&["--gitea-timeout=0"]).unwrap_err();
        assert!(
            err.contains("--gitea-timeout: ") && err.contains("from 1 to 3600"),
            "{err}"
        );
        let err = parse(&["--raw-unknown-paths=maybe"]).unwrap_err();
        assert!(err.contains("deny") && err.contains("allow"), "{err}");
        let err = parse(&["--gitea-ca-file=/nonexistent/ca.pem"]).unwrap_err();
        assert!(err.contains("--gitea-ca-file: "), "{err}");
        let err = parse(&["--gitea-url=ftp://x"]).unwrap_err();
        assert!(err.contains("--gitea-url: "), "{err}");
        for c in [
            parse(&[]).unwrap(),
            Config::from_args(&GlobalArgs::default()).unwrap(),
        ] {
            assert!(
                c.confirm_destructive && c.raw_requests && !c.raw_unknown_paths && !c.safe_mode
            );
            assert_eq!(
                (c.max_response_bytes, c.max_file_size_bytes, c.retries),
                (80_000, 1_048_576, 2)
            );
            assert_eq!(c.gitea_url.as_str(), "https://gitea.com/");
        }
    }

    #[test]
    fn bad_booleans_name_the_setting() {
        let err = parse(&["--read-only=maybe"]).unwrap_err();
        assert!(
            err.contains("--read-only: ") && err.contains("\"maybe\""),
            "{err}"
        );
    }

    #[test]
    fn generic_names_gain_the_prefix_and_official_names_follow() {
        assert_eq!(env_names("TOOLSETS"), ["AEGIS_TOOLSETS", "TOOLSETS"]);
        assert_eq!(
            env_names("READ_ONLY"),
            ["AEGIS_READ_ONLY", "READ_ONLY", "GITEA_READONLY"]
        );
        assert_eq!(env_names("GITEA_URL"), ["GITEA_URL", "GITEA_HOST"]);
        assert_eq!(env_names("AEGIS_CONFIG_DIR"), ["AEGIS_CONFIG_DIR"]);
    }

    #[test]
    fn the_first_non_empty_spelling_is_read() {
        use clap::CommandFactory;
        let env = [
            ("AEGIS_TOOLSETS", ""),
            ("TOOLSETS", "repo"),
            ("READ_ONLY", ""),
        ];
        let lookup = |n: &str| {
            env.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        };
        let cmd = resolve_env(Cli::command(), &lookup);
        let env_of = |id: &str| {
            cmd.get_arguments()
                .find(|a| a.get_id() == id)
                .and_then(|a| a.get_env())
                .map(|e| e.to_string_lossy().into_owned())
        };
        assert_eq!(env_of("toolsets").as_deref(), Some("TOOLSETS"));
        assert_eq!(
            env_of("read_only"),
            None,
            "all spellings empty: none is read"
        );
        assert_eq!(
            env_of("safe_mode").as_deref(),
            Some("SAFE_MODE"),
            "none set: as declared"
        );
    }
}

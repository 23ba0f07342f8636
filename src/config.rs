//! Configuration: command-line flags and environment variables with the same meaning.
//!
//! Parsing happens in two stages, as in ripgrep: [`GlobalArgs`] (clap) only collects raw
//! strings from flags and the environment; [`Config::from_args`] validates them into typed values
//! and fails with an error that names the variable, the flag and what is expected.

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

/// Options shared by every subcommand. Each flag has an environment variable of the same meaning.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GlobalArgs {
    /// Base URL of the Gitea or Forgejo instance [env: GITEA_URL, alias GITEA_HOST] [default: https://gitea.com]
    #[arg(long = "gitea-url", global = true, value_name = "URL")]
    pub gitea_url: Option<String>,

    /// Gitea access token [env: GITEA_TOKEN, alias GITEA_ACCESS_TOKEN]. Prefer the variable: flags show up in process lists.
    #[arg(
        long = "gitea-token",
        global = true,
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub gitea_token: Option<String>,

    /// API description to use instead of the pinned one or the instance's /swagger.v1.json
    #[arg(long = "spec", env = "GITEA_SPEC", global = true, value_name = "PATH")]
    pub spec: Option<PathBuf>,

    /// Directory of pinned API descriptions (`spec pin`) and other state [default: the user's config directory/aegis-gitea-mcp]
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

    /// Withhold every action that writes (true/false)
    #[arg(long = "read-only", env = "READ_ONLY", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub read_only: Option<String>,

    /// Comma-separated action names, operationIds or domains to withhold
    #[arg(
        long = "disabled-tools",
        env = "DISABLED_TOOLS",
        global = true,
        value_name = "LIST"
    )]
    pub disabled_tools: Option<String>,

    /// Accept DISABLED_TOOLS entries that match nothing (warned about) instead of refusing to start (true/false)
    #[arg(long = "disabled-tools-allow-unknown", env = "DISABLED_TOOLS_ALLOW_UNKNOWN", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub disabled_tools_allow_unknown: Option<String>,

    /// PEM bundle of extra CA certificates to trust for the instance
    #[arg(
        long = "gitea-ca-file",
        env = "GITEA_CA_FILE",
        global = true,
        value_name = "PATH"
    )]
    pub gitea_ca_file: Option<PathBuf>,

    /// Accept any TLS certificate from the instance (self-signed labs only; warned about at start)
    #[arg(long = "gitea-insecure", env = "GITEA_INSECURE", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub gitea_insecure: Option<String>,

    /// Seconds a request to Gitea may take in total [default: 30]
    #[arg(
        long = "gitea-timeout",
        env = "GITEA_TIMEOUT_SECS",
        global = true,
        value_name = "SECS"
    )]
    pub gitea_timeout: Option<String>,

    /// Seconds to wait for a connection to Gitea [default: 10]
    #[arg(
        long = "gitea-connect-timeout",
        env = "GITEA_CONNECT_TIMEOUT_SECS",
        global = true,
        value_name = "SECS"
    )]
    pub gitea_connect_timeout: Option<String>,

    /// Requests to Gitea in flight at once [default: 8]
    #[arg(
        long = "gitea-max-concurrency",
        env = "GITEA_MAX_CONCURRENCY",
        global = true,
        value_name = "N"
    )]
    pub gitea_max_concurrency: Option<String>,

    /// Retries of a failed idempotent request (GET/HEAD/PUT/DELETE; never POST/PATCH) [default: 2]
    #[arg(
        long = "gitea-retries",
        env = "GITEA_RETRIES",
        global = true,
        value_name = "N"
    )]
    pub gitea_retries: Option<String>,

    /// Largest answer returned to the model, in bytes [default: 80000, about 20k tokens]
    #[arg(
        long = "max-response-bytes",
        env = "MAX_RESPONSE_BYTES",
        global = true,
        value_name = "BYTES"
    )]
    pub max_response_bytes: Option<String>,

    /// Largest binary file returned (as base64), in bytes [default: 1048576]
    #[arg(
        long = "max-file-size-bytes",
        env = "MAX_FILE_SIZE_BYTES",
        global = true,
        value_name = "BYTES"
    )]
    pub max_file_size_bytes: Option<String>,

    /// Make every call that writes a dry run (true/false)
    #[arg(long = "safe-mode", env = "SAFE_MODE", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub safe_mode: Option<String>,

    /// Require a confirmation token for destructive calls (true/false) [default: true]
    #[arg(long = "confirm-destructive", env = "CONFIRM_DESTRUCTIVE", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub confirm_destructive: Option<String>,

    /// Offer the raw gitea_api_request tool (true/false) [default: true]
    #[arg(long = "raw-requests", env = "RAW_REQUESTS", global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub raw_requests: Option<String>,

    /// Raw requests to paths no catalog operation matches: deny or allow [default: deny]
    #[arg(
        long = "raw-unknown-paths",
        env = "RAW_UNKNOWN_PATHS",
        global = true,
        value_name = "deny|allow"
    )]
    pub raw_unknown_paths: Option<String>,

    /// Audit log: a file (appended, hash-chained JSON lines) or - for stderr; unset = no audit log
    #[arg(
        long = "audit-log",
        env = "AUDIT_LOG",
        global = true,
        value_name = "PATH|-"
    )]
    pub audit_log: Option<String>,
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
}

/// Reads an environment variable, treating an empty value as unset.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Config {
    /// Validates raw arguments (flags first, then environment variables, then defaults).
    pub fn from_args(args: &GlobalArgs) -> Result<Config, Error> {
        let url_text = args
            .gitea_url
            .clone()
            .or_else(|| env_var("GITEA_URL"))
            .or_else(|| env_var("GITEA_HOST"))
            .unwrap_or_else(|| DEFAULT_GITEA_URL.to_string());
        let gitea_url = parse_gitea_url(&url_text)?;
        let token = args
            .gitea_token
            .clone()
            .or_else(|| env_var("GITEA_TOKEN"))
            .or_else(|| env_var("GITEA_ACCESS_TOKEN"))
            .map(|t| validate_token(t.trim()))
            .transpose()?;
        // GITEA_READONLY is the official Gitea MCP server's name for it: a user migrating from it
        // must not get a server that writes.
        let read_only = match (args.read_only.as_deref(), env_var("GITEA_READONLY")) {
            (None, Some(v)) => bool_value(Some(&v), "GITEA_READONLY", "read-only", false)?,
            (v, _) => bool_value(v, "READ_ONLY", "read-only", false)?,
        };
        let (toolsets, unknown_toolsets) =
            PolicyConfig::parse_toolsets(args.toolsets.as_deref().unwrap_or(""));
        let policy = PolicyConfig {
            toolsets,
            read_only,
            disabled: PolicyConfig::parse_list(args.disabled_tools.as_deref().unwrap_or("")),
            unknown_toolsets,
            allow_unknown_disabled: bool_value(
                args.disabled_tools_allow_unknown.as_deref(),
                "DISABLED_TOOLS_ALLOW_UNKNOWN",
                "disabled-tools-allow-unknown",
                false,
            )?,
        };
        let flag =
            |v: &Option<String>, variable: &'static str, flag: &'static str, default: bool| {
                bool_value(v.as_deref(), variable, flag, default)
            };
        let raw_unknown_paths = match args
            .raw_unknown_paths
            .as_deref()
            .map(|v| v.trim().to_ascii_lowercase())
        {
            None => false,
            Some(v) if v == "deny" || v.is_empty() => false,
            Some(v) if v == "allow" => true,
            Some(v) => {
                return Err(Error {
                    variable: "RAW_UNKNOWN_PATHS",
                    flag: "raw-unknown-paths",
                    message: format!("expected deny or allow, got {v:?}"),
                });
            }
        };
        if let Some(ca) = &args.gitea_ca_file {
            if !ca.is_file() {
                return Err(Error {
                    variable: "GITEA_CA_FILE",
                    flag: "gitea-ca-file",
                    message: format!(
                        "{} is not a readable file (expected a PEM bundle)",
                        ca.display()
                    ),
                });
            }
        }
        Ok(Config {
            gitea_url,
            token,
            spec: args.spec.clone(),
            config_dir: args
                .config_dir
                .clone()
                .filter(|d| !d.as_os_str().is_empty())
                .or_else(|| dirs::config_dir().map(|d| d.join("aegis-gitea-mcp"))),
            spec_sha256: args.spec_sha256.clone(),
            policy,
            ca_file: args.gitea_ca_file.clone(),
            insecure: flag(
                &args.gitea_insecure,
                "GITEA_INSECURE",
                "gitea-insecure",
                false,
            )?,
            timeout: Duration::from_secs(number(
                args.gitea_timeout.as_deref(),
                "GITEA_TIMEOUT_SECS",
                "gitea-timeout",
                30,
                1,
                3600,
            )?),
            connect_timeout: Duration::from_secs(number(
                args.gitea_connect_timeout.as_deref(),
                "GITEA_CONNECT_TIMEOUT_SECS",
                "gitea-connect-timeout",
                10,
                1,
                600,
            )?),
            max_concurrency: number(
                args.gitea_max_concurrency.as_deref(),
                "GITEA_MAX_CONCURRENCY",
                "gitea-max-concurrency",
                8,
                1,
                1024,
            )? as usize,
            retries: number(
                args.gitea_retries.as_deref(),
                "GITEA_RETRIES",
                "gitea-retries",
                2,
                0,
                10,
            )? as u32,
            max_response_bytes: number(
                args.max_response_bytes.as_deref(),
                "MAX_RESPONSE_BYTES",
                "max-response-bytes",
                80_000,
                1_000,
                100_000_000,
            )? as usize,
            max_file_size_bytes: number(
                args.max_file_size_bytes.as_deref(),
                "MAX_FILE_SIZE_BYTES",
                "max-file-size-bytes",
                1_048_576,
                1,
                1_073_741_824,
            )? as usize,
            safe_mode: flag(&args.safe_mode, "SAFE_MODE", "safe-mode", false)?,
            confirm_destructive: flag(
                &args.confirm_destructive,
                "CONFIRM_DESTRUCTIVE",
                "confirm-destructive",
                true,
            )?,
            raw_requests: flag(&args.raw_requests, "RAW_REQUESTS", "raw-requests", true)?,
            raw_unknown_paths,
            audit_log: args.audit_log.clone().filter(|v| !v.trim().is_empty()),
        })
    }
}

/// A boolean setting, or its default when unset; errors name the variable and the flag.
pub fn bool_value(
    v: Option<&str>,
    variable: &'static str,
    flag: &'static str,
    default: bool,
) -> Result<bool, Error> {
    match v {
        None => Ok(default),
        Some(v) => parse_bool(v).ok_or_else(|| Error {
            variable,
            flag,
            message: format!("expected true or false (or 1/0, yes/no, on/off), got {v:?}"),
        }),
    }
}

/// A whole-number setting within `min..=max`, or its default when unset; errors name the
/// variable and the flag.
pub fn number(
    v: Option<&str>,
    variable: &'static str,
    flag: &'static str,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, Error> {
    match v.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(default),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(Error {
                variable,
                flag,
                message: format!("expected a whole number from {min} to {max}, got {v:?}"),
            }),
        },
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

fn parse_gitea_url(text: &str) -> Result<reqwest::Url, Error> {
    let err = |message: String| Error {
        variable: "GITEA_URL",
        flag: "gitea-url",
        message,
    };
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

fn validate_token(t: &str) -> Result<Secret, Error> {
    let err = |message: &str| Error {
        variable: "GITEA_TOKEN",
        flag: "gitea-token",
        message: message.to_string(),
    };
    if t.is_empty() {
        return Err(err("the token is empty"));
    }
    // A token becomes an HTTP header value: refuse anything that could break out of it.
    if !t.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(err(
            "the token must be printable ASCII without spaces (was it pasted with a line break?)",
        ));
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
            let err = parse_gitea_url(bad).unwrap_err().to_string();
            assert!(err.starts_with("GITEA_URL (--gitea-url): "), "{bad}: {err}");
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

    #[test]
    fn numbers_and_enums_are_checked() {
        let args = GlobalArgs {
            gitea_timeout: Some("0".into()),
            ..GlobalArgs::default()
        };
        let err = Config::from_args(&args).unwrap_err().to_string();
        assert!(
            err.contains("GITEA_TIMEOUT_SECS") && err.contains("from 1 to 3600"),
            "{err}"
        );
        let args = GlobalArgs {
            raw_unknown_paths: Some("maybe".into()),
            ..GlobalArgs::default()
        };
        let err = Config::from_args(&args).unwrap_err().to_string();
        assert!(
            err.contains("RAW_UNKNOWN_PATHS") && err.contains("deny or allow"),
            "{err}"
        );
        let args = GlobalArgs {
            gitea_ca_file: Some("/nonexistent/ca.pem".into()),
            ..GlobalArgs::default()
        };
        assert!(
            Config::from_args(&args)
                .unwrap_err()
                .to_string()
                .contains("GITEA_CA_FILE")
        );
        let c = Config::from_args(&GlobalArgs::default()).unwrap();
        assert!(c.confirm_destructive && c.raw_requests && !c.raw_unknown_paths && !c.safe_mode);
        assert_eq!(
            (c.max_response_bytes, c.max_file_size_bytes, c.retries),
            (80_000, 1_048_576, 2)
        );
    }

    #[test]
    fn bad_booleans_name_the_variable() {
        let args = GlobalArgs {
            read_only: Some("maybe".into()),
            ..GlobalArgs::default()
        };
        let err = Config::from_args(&args).unwrap_err().to_string();
        assert!(
            err.contains("READ_ONLY") && err.contains("\"maybe\""),
            "{err}"
        );
    }
}

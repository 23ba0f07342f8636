//! Configuration: command-line flags and environment variables with the same meaning.
//!
//! Parsing happens in two stages, as in ripgrep: [`GlobalArgs`] (clap) only collects raw
//! strings from flags and the environment; [`Config::from_args`] validates them into typed values
//! and fails with an error that names the variable, the flag and what is expected.

use std::fmt;
use std::path::PathBuf;

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

    /// API description to use instead of spec/gitea-swagger.v1.json or the instance's /swagger.v1.json
    #[arg(long = "spec", env = "GITEA_SPEC", global = true, value_name = "PATH")]
    pub spec: Option<PathBuf>,

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
    #[arg(long = "read-only", env = "READ_ONLY", global = true, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub read_only: Option<String>,

    /// Comma-separated action names, operationIds or domains to withhold
    #[arg(
        long = "disabled-tools",
        env = "DISABLED_TOOLS",
        global = true,
        value_name = "LIST"
    )]
    pub disabled_tools: Option<String>,
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
    /// The expected sha256 of the API description.
    pub spec_sha256: Option<String>,
    /// The operator's filters.
    pub policy: PolicyConfig,
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
        let read_only = match &args.read_only {
            Some(v) => parse_bool(v).ok_or_else(|| Error {
                variable: "READ_ONLY",
                flag: "read-only",
                message: format!("expected true or false (or 1/0, yes/no, on/off), got {v:?}"),
            })?,
            None => false,
        };
        let (toolsets, unknown_toolsets) =
            PolicyConfig::parse_toolsets(args.toolsets.as_deref().unwrap_or(""));
        let policy = PolicyConfig {
            toolsets,
            read_only,
            disabled: PolicyConfig::parse_list(args.disabled_tools.as_deref().unwrap_or("")),
            unknown_toolsets,
        };
        Ok(Config {
            gitea_url,
            token,
            spec: args.spec.clone(),
            spec_sha256: args.spec_sha256.clone(),
            policy,
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

fn parse_gitea_url(text: &str) -> Result<reqwest::Url, Error> {
    let err = |message: String| Error {
        variable: "GITEA_URL",
        flag: "gitea-url",
        message,
    };
    let mut url = reqwest::Url::parse(text.trim()).map_err(|e| {
        err(format!(
            "expected an absolute http(s) URL such as https://gitea.example.com, got {text:?} ({e})"
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
    fn secrets_never_print() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s} {s:?}"), "*** Secret(***)");
        let err = validate_token("abc\ndef").unwrap_err().to_string();
        assert!(!err.contains("abc"), "{err}");
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

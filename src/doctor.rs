//! `aegis-gitea-mcp doctor` and the start-up checks of `serve`: what works and what to fix.
//!
//! Each check talks to the instance at most once with a small bounded read, so `serve` can run
//! the cheap ones ([`startup`]) without delaying start-up for long, and never refuses to start
//! because of them: a missing token or an unreachable instance is logged, one line each.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

use crate::app;
use crate::catalog::Scope;
use crate::config::{Config, Secret};
use crate::exec::SMALL_READ_LIMIT;
use crate::gitea::{self, API_PREFIX, GiteaClient};
use crate::spec::SpecSource;
use crate::state::State;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Works.
    Ok,
    /// Works, but something is worth fixing.
    Warn,
    /// Does not work.
    Fail,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, not `write_str`: the report aligns statuses with a width.
        f.pad(match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        })
    }
}

/// One check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    /// What was checked (`instance`, `tls`, `api description`, `token`, `scopes`, `policy`).
    pub name: &'static str,
    /// How it came out.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// What to do about it, when there is something to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn warn(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Warn,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Fail,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// The check as one log line (`token: refused (401); fix: …`).
    pub fn line(&self) -> String {
        match &self.fix {
            Some(fix) => format!("{}: {}; fix: {fix}", self.name, self.detail),
            None => format!("{}: {}", self.name, self.detail),
        }
    }
}

/// All checks of `doctor`, in the order they ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// The checks.
    pub checks: Vec<Check>,
}

impl Report {
    /// True when nothing failed (warnings allowed).
    pub fn is_ok(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Fail)
    }

    /// The report as aligned text, one check per line and its fix below it.
    pub fn text(&self) -> String {
        let width = self.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        let mut out = String::new();
        for c in &self.checks {
            out.push_str(&format!(
                "{:<4}  {:<width$}  {}\n",
                c.status, c.name, c.detail
            ));
            if let Some(fix) = &c.fix {
                out.push_str(&format!("      {:<width$}  fix: {fix}\n", ""));
            }
        }
        out
    }
}

/// Every check: the URL and TLS, the instance and its version, the API description and its
/// pin, the token and its scopes, and what the policy offers.
pub async fn run(config: &Config) -> Report {
    let mut report = Report::default();
    let client = match GiteaClient::new(
        &gitea::ClientConfig::from_config(config),
        Default::default(),
    ) {
        Ok(c) => c,
        Err(e) => {
            report.checks.push(Check::fail(
                "instance",
                e.to_string(),
                "check GITEA_CA_FILE (a PEM bundle)",
            ));
            return report;
        }
    };
    let token = config.token.as_ref();
    report.checks.push(tls(config));
    let reachable = instance(&client, token, &mut report.checks).await;
    let loaded = match app::load_spec(config, &client, token).await {
        Ok(l) => {
            report.checks.push(api_description(&l));
            Some(l)
        }
        Err(e) => {
            report.checks.push(Check::fail(
                "api description",
                e.to_string(),
                "give the document with --spec FILE, or pin it with `aegis-gitea-mcp spec pin`",
            ));
            None
        }
    };
    let state = loaded
        .as_ref()
        .and_then(|l| State::new(&l.spec, &config.policy).ok());
    if reachable && token_check(&client, token, &mut report.checks, true).await {
        report
            .checks
            .push(scopes(&client, token, state.as_ref()).await);
    }
    if let Some(state) = &state {
        report.checks.push(policy(state, config));
    }
    if let Some(check) = shared_store(config).await {
        report.checks.push(check);
    }
    report
}

/// With `REDIS_URL`: whether the shared store answers, and whether replicas can redeem each
/// other's confirmations (`CONFIRM_KEY_FILE`).
async fn shared_store(config: &Config) -> Option<Check> {
    config.redis_url.as_ref()?;
    let store = match crate::store::Store::from_config(config) {
        Ok(s) => s,
        Err(e) => {
            return Some(Check::fail("shared store", e.to_string(), "fix REDIS_URL"));
        }
    };
    let health = store.health().await;
    let at = health.at.unwrap_or_default();
    Some(match (health.ok, &config.confirm_key_file) {
        (false, _) => Check::fail(
            "shared store",
            format!(
                "Redis at {at} does not answer: {}",
                health.error.unwrap_or_default()
            ),
            "start Redis, or check REDIS_URL's host, port, password and rediss:// for TLS; while it is down, confirmed calls are refused",
        ),
        (true, None) => Check::warn(
            "shared store",
            format!("Redis at {at} answers; no CONFIRM_KEY_FILE"),
            "give every replica the same CONFIRM_KEY_FILE, or a token issued by one cannot be redeemed at another",
        ),
        (true, Some(file)) => Check::ok(
            "shared store",
            format!(
                "Redis at {at} answers; confirmations signed with {}",
                file.display()
            ),
        ),
    })
}

/// The cheap checks `serve` runs at start-up: the instance answers, and the server's token (when
/// `expect_token`) is accepted. Problems only; nothing when all is well.
pub async fn startup(
    client: &GiteaClient,
    token: Option<&Secret>,
    expect_token: bool,
) -> Vec<Check> {
    let mut checks = Vec::new();
    if instance(client, token, &mut checks).await {
        token_check(client, token, &mut checks, expect_token).await;
    }
    checks.retain(|c| c.status != Status::Ok);
    checks
}

fn tls(config: &Config) -> Check {
    let url = &config.gitea_url;
    let loopback = match url.host_str() {
        Some("localhost") => true,
        Some(h) => h
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback()),
        None => false,
    };
    match (url.scheme(), config.insecure) {
        ("https", false) => Check::ok("tls", "https, certificates verified"),
        ("https", true) => Check::warn(
            "tls",
            "https without certificate checks (GITEA_INSECURE=true): anyone on the path can read the token",
            "trust the instance's CA with GITEA_CA_FILE and drop GITEA_INSECURE",
        ),
        (_, _) if loopback => Check::ok("tls", "plain http to this machine"),
        _ => Check::warn(
            "tls",
            format!(
                "plain http to {}: the token crosses the network unencrypted",
                url.host_str().unwrap_or("?")
            ),
            "use the instance's https:// URL",
        ),
    }
}

/// `GET /api/v1/version`; true when the instance answered.
async fn instance(client: &GiteaClient, token: Option<&Secret>, out: &mut Vec<Check>) -> bool {
    let base = client.base_url().as_str().trim_end_matches('/').to_string();
    match client
        .get_bytes(&format!("{API_PREFIX}/version"), token, SMALL_READ_LIMIT)
        .await
    {
        Ok(bytes) => {
            let version = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|v| v.get("version").and_then(Value::as_str).map(str::to_string));
            match version {
                Some(v) => out.push(Check::ok(
                    "instance",
                    format!("{base} answers, version {v}"),
                )),
                None => out.push(Check::warn(
                    "instance",
                    format!("{base}{API_PREFIX}/version answered, but not with a version"),
                    "check that GITEA_URL is a Gitea or Forgejo instance",
                )),
            }
            true
        }
        // Gitea refuses a bad token on every route, its version too: the token check says why.
        Err(gitea::Error::Status { status: 401, .. }) if token.is_some() => {
            out.push(Check::ok(
                "instance",
                format!("{base} answers (it refused the token)"),
            ));
            true
        }
        Err(gitea::Error::Status { url, status }) => {
            out.push(Check::fail(
                "instance",
                format!("{url} answered {status}"),
                "GITEA_URL is the instance's root (https://gitea.example.com), not …/api/v1 or a web page",
            ));
            false
        }
        Err(e) => {
            let text = e.to_string();
            let lower = text.to_ascii_lowercase();
            let fix = if lower.contains("certificate")
                || lower.contains("tls")
                || lower.contains("ssl")
            {
                "trust the instance's CA with GITEA_CA_FILE (a PEM bundle), or GITEA_INSECURE=true for a lab"
            } else {
                "check GITEA_URL and that the instance is reachable from this machine (proxy: HTTPS_PROXY / NO_PROXY)"
            };
            out.push(Check::fail(
                "instance",
                format!("cannot reach {base}: {text}"),
                fix,
            ));
            false
        }
    }
}

/// `GET /api/v1/user`; true when the token was accepted.
async fn token_check(
    client: &GiteaClient,
    token: Option<&Secret>,
    out: &mut Vec<Check>,
    expect_token: bool,
) -> bool {
    let new_token = format!(
        "create one at {}/user/settings/applications and set GITEA_TOKEN",
        client.base_url().as_str().trim_end_matches('/')
    );
    let Some(token) = token else {
        if expect_token {
            out.push(Check::warn(
                "token",
                "none: only what anonymous visitors see, and every write fails",
                new_token,
            ));
        }
        return false;
    };
    match client
        .get_bytes(&format!("{API_PREFIX}/user"), Some(token), SMALL_READ_LIMIT)
        .await
    {
        Ok(bytes) => {
            let user = serde_json::from_slice::<Value>(&bytes).unwrap_or_default();
            let login = user.get("login").and_then(Value::as_str).unwrap_or("?");
            let admin = user.get("is_admin").and_then(Value::as_bool) == Some(true);
            out.push(Check::ok(
                "token",
                format!(
                    "accepted, user {login}{}",
                    if admin { " (site administrator)" } else { "" }
                ),
            ));
            true
        }
        Err(gitea::Error::Status { status: 401, .. }) => {
            out.push(Check::fail(
                "token",
                "refused (401): wrong, expired or revoked",
                new_token,
            ));
            false
        }
        Err(gitea::Error::Status { status: 403, .. }) => {
            out.push(Check::fail(
                "token",
                "accepted, but it may not read its own user (403): the read:user scope is missing",
                "create a token with read:user (see README, The Gitea token)",
            ));
            false
        }
        Err(e) => {
            out.push(Check::fail(
                "token",
                format!("not checked: {e}"),
                "run `aegis-gitea-mcp doctor` again",
            ));
            false
        }
    }
}

/// `GET /api/v1/token` (newer Gitea): the token's scopes, and which scopes the offered actions
/// need that it lacks.
async fn scopes(client: &GiteaClient, token: Option<&Secret>, state: Option<&State>) -> Check {
    let read = client
        .get_bytes(&format!("{API_PREFIX}/token"), token, SMALL_READ_LIMIT)
        .await
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| {
            v.get("scopes")?.as_array().map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
        });
    let Some(names) = read else {
        return Check::warn(
            "scopes",
            "not readable from this instance (older Gitea or Forgejo)",
            "nothing to do: a call the token may not make is answered with the scope it needs",
        );
    };
    let granted: Vec<Scope> = names.iter().filter_map(|s| Scope::parse(s)).collect();
    let all = names.iter().any(|s| s == "all");
    let listed = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    let Some(state) = state else {
        return Check::ok("scopes", listed);
    };
    let mut missing: BTreeSet<String> = BTreeSet::new();
    let mut withheld = 0;
    for (id, action) in state.catalog.ids() {
        if state.policy.check(id).is_err() || all {
            continue;
        }
        let lacking: Vec<&Scope> = action
            .scopes
            .scopes()
            .iter()
            .filter(|need| !granted.iter().any(|g| g.satisfies(**need)))
            .collect();
        if !lacking.is_empty() {
            withheld += 1;
            missing.extend(lacking.iter().map(|s| s.to_string()));
        }
    }
    if missing.is_empty() {
        Check::ok(
            "scopes",
            format!("{listed}: enough for every action offered"),
        )
    } else {
        Check::warn(
            "scopes",
            format!(
                "{listed}: {withheld} offered actions need {}, which the token lacks (they are withheld)",
                missing.into_iter().collect::<Vec<_>>().join(", ")
            ),
            "add those scopes to a new token if the agent needs the actions, or narrow TOOLSETS",
        )
    }
}

fn api_description(l: &app::LoadedSpec) -> Check {
    let what = format!(
        "{} {} ({} operations) from {}",
        l.spec.title,
        l.spec.version,
        l.spec.operations.len(),
        l.source.describe()
    );
    match (&l.source, &l.pin) {
        (_, Some(pin)) => Check::ok("api description", format!("{what}, pinned by {pin}")),
        (SpecSource::Instance, None) => Check::warn(
            "api description",
            format!("{what}, unpinned: the actions change whenever the instance does"),
            "pin it with `aegis-gitea-mcp spec pin`",
        ),
        (_, None) => Check::ok("api description", format!("{what}, no pin")),
    }
}

fn policy(state: &State, config: &Config) -> Check {
    let mut how = Vec::new();
    if config.policy.read_only {
        how.push("read-only".to_string());
    }
    if let Some(domains) = &config.policy.toolsets {
        let names: Vec<&str> = domains.iter().map(|d| d.as_str()).collect();
        how.push(format!("toolsets {}", names.join(",")));
    }
    if !config.policy.disabled.is_empty() {
        how.push(format!("{} disabled entries", config.policy.disabled.len()));
    }
    let how = if how.is_empty() {
        "no filters".to_string()
    } else {
        how.join(", ")
    };
    let offered = state.policy.allowed_count();
    let detail = format!(
        "{offered} of {} actions offered ({how})",
        state.catalog.len()
    );
    if offered == 0 {
        Check::fail(
            "policy",
            detail,
            "loosen TOOLSETS / DISABLED_TOOLS: the agent can do nothing",
        )
    } else {
        Check::ok("policy", detail)
    }
}

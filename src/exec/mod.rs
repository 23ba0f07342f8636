//! Executing actions: arguments checked, policy applied, exactly the right request sent once,
//! the answer shaped to fit a model's context.
//!
//! The order never changes: resolve the action → policy ([`Allowed`] or the reason it is
//! withheld) → validate ([`ValidatedArgs`]) → build the request → dry run / safe mode /
//! confirmation of destructive calls → send → shape. The raw request follows the same path
//! after its path is matched to a catalog action.

pub mod args;
pub mod confirm;
pub mod raw;
pub mod request;
pub mod response;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::audit::{Facts, OutcomeKind};
use crate::catalog::{Action, Catalog, HttpMethod, ResponseKind};
use crate::config::{Config, Secret};
use crate::gitea::{self, Body, ClientConfig, GiteaClient, Request};
use crate::policy::{Allowed, Policy, WithheldReason};
use crate::search::{LazyIndex, SearchOptions};
pub use args::{ValidatedArgs, Validators};
pub use confirm::Confirmations;
pub use response::{Limits, Outcome};

/// Errors setting up the executor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The HTTP client could not be built.
    #[error(transparent)]
    Gitea(#[from] gitea::Error),
    /// No key for confirmation tokens could be drawn.
    #[error(transparent)]
    Random(#[from] confirm::RandomError),
}

/// How long a confirmation token stays valid.
pub const CONFIRM_TTL: Duration = Duration::from_secs(300);

/// The executor's settings.
#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// Every writing call is a dry run.
    pub safe_mode: bool,
    /// Destructive calls need a confirmation token.
    pub confirm_destructive: bool,
    /// The raw request tool is on.
    pub raw_requests: bool,
    /// Raw requests may reach paths no catalog action matches.
    pub raw_unknown_paths: bool,
    /// Bounds of an answer.
    pub limits: Limits,
    /// How long a confirmation token is valid.
    pub confirm_ttl: Duration,
}

impl ExecConfig {
    /// The settings from the configuration.
    pub fn from_config(config: &Config) -> ExecConfig {
        ExecConfig {
            safe_mode: config.safe_mode,
            confirm_destructive: config.confirm_destructive,
            raw_requests: config.raw_requests,
            raw_unknown_paths: config.raw_unknown_paths,
            limits: Limits {
                max_response_bytes: config.max_response_bytes,
                max_file_size_bytes: config.max_file_size_bytes,
            },
            confirm_ttl: CONFIRM_TTL,
        }
    }
}

/// Which Gitea credential a call uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// The server's own token (stdio, the CLI, API-key and unauthenticated HTTP callers).
    Server,
    /// The caller's own Gitea token (pass-through mode); the server's token is never used.
    Own(Secret),
}

/// Who a call is made for. Every function that reaches Gitea on a caller's behalf takes one:
/// there is no default, so no path can forget whose credential and identity apply.
#[derive(Debug, Clone)]
pub struct Caller {
    principal: String,
    credential: Credential,
    /// Other secrets the caller presented (an API key): scrubbed from answers like tokens.
    presented: Vec<Secret>,
    deadline: Option<Instant>,
}

impl Caller {
    /// A caller named `principal` (an API-key label, a Gitea login, `local`, `anonymous`).
    pub fn new(principal: impl Into<String>, credential: Credential) -> Caller {
        Caller {
            principal: principal.into(),
            credential,
            presented: Vec::new(),
            deadline: None,
        }
    }

    /// The local user of stdio and the CLI, with the server's token.
    pub fn local() -> Caller {
        Caller::new("local", Credential::Server)
    }

    /// Records a secret the caller presented (never sent anywhere; scrubbed from answers).
    pub fn with_presented(mut self, secret: Secret) -> Caller {
        self.presented.push(secret);
        self
    }

    /// The moment by which the caller needs an answer (the HTTP gateway's time limit).
    pub fn with_deadline(mut self, deadline: Instant) -> Caller {
        self.deadline = Some(deadline);
        self
    }

    /// Who calls: confirmation tokens and audit records are bound to this name.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// The credential the caller's requests use.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// When the caller stops waiting, if ever.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The caller's own secrets: its Gitea token and whatever else it presented.
    pub fn secrets(&self) -> impl Iterator<Item = &Secret> {
        let own = match &self.credential {
            Credential::Own(t) => Some(t),
            Credential::Server => None,
        };
        own.into_iter().chain(&self.presented)
    }
}

/// The executor's process-wide state: the client, the settings, the confirmation tokens.
#[derive(Debug)]
pub struct Context {
    /// The client towards Gitea.
    pub client: GiteaClient,
    /// The settings.
    pub config: ExecConfig,
    /// Outstanding confirmation tokens (shared by every caller).
    pub confirmations: Arc<Confirmations>,
    /// The server's own token, for callers with [`Credential::Server`].
    server_token: Option<Secret>,
}

/// Largest answer read from Gitea for small service reads (`/user`, `/token`, `/version`).
pub const SMALL_READ_LIMIT: usize = 64 * 1024;

impl Context {
    /// Builds the executor.
    pub fn new(config: &Config, exec: ExecConfig) -> Result<Context, Error> {
        let client = GiteaClient::new(&ClientConfig::from_config(config))?;
        let confirmations = Arc::new(Confirmations::new(exec.confirm_ttl)?);
        Ok(Context {
            client,
            config: exec,
            confirmations,
            server_token: config.token.clone(),
        })
    }

    /// The token a caller's requests carry.
    pub fn token_for<'a>(&'a self, caller: &'a Caller) -> Option<&'a Secret> {
        match &caller.credential {
            Credential::Server => self.server_token.as_ref(),
            Credential::Own(t) => Some(t),
        }
    }

    /// The server's own token (start-up checks, `/health`).
    pub fn server_token(&self) -> Option<&Secret> {
        self.server_token.as_ref()
    }

    /// Reads the server token's scopes (`GET /api/v1/token`, newer Gitea). `None` when they
    /// cannot be read (older Gitea, no token): then nothing is withheld for scopes and a 403 is
    /// explained with the scope the route needs.
    pub async fn token_scopes(&self) -> Option<Vec<String>> {
        let bytes = self
            .client
            .get_bytes(
                &format!("{}/token", gitea::API_PREFIX),
                self.server_token.as_ref(),
                SMALL_READ_LIMIT,
            )
            .await
            .ok()?;
        let v: Value = serde_json::from_slice(&bytes).ok()?;
        let scopes = v.get("scopes")?.as_array()?;
        Some(
            scopes
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        )
    }
}

/// What the executor reads from the shared state.
#[derive(Debug, Clone, Copy)]
pub struct Env<'a> {
    /// The catalog.
    pub catalog: &'a Catalog,
    /// The policy over it.
    pub policy: &'a Policy,
    /// Compiled input schemas.
    pub validators: &'a Validators,
    /// The search index (for suggestions).
    pub index: &'a LazyIndex,
}

/// One call of an action.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// Action name or operationId.
    pub action: &'a str,
    /// The arguments (an object).
    pub arguments: &'a Value,
    /// Only show the request that would be sent.
    pub dry_run: bool,
    /// A confirmation token from an earlier preview.
    pub confirm: Option<&'a str>,
}

/// Longest piece of caller input repeated in an answer (names, methods, paths).
const ECHO_CHARS: usize = 200;

fn echo(s: &str) -> std::borrow::Cow<'_, str> {
    crate::outbound::clip(s, ECHO_CHARS)
}

/// Runs one call of an action for `caller`.
pub async fn call(env: Env<'_>, ctx: &Context, caller: &Caller, call: &Call<'_>) -> Outcome {
    let Some(action) = env.catalog.get(call.action) else {
        return unknown_action(env, call.action);
    };
    let Some(index) = env.catalog.index_of(&action.name) else {
        return unknown_action(env, call.action);
    };
    let allowed = match env.policy.check(index) {
        Ok(a) => a,
        Err(reason) => {
            return withheld(action.name.as_str(), &reason).about(Some(action.name.as_str()), None);
        }
    };
    let args = match args::validate(env.validators, index, action, call.arguments) {
        Ok(a) => a,
        Err(problems) => {
            return Outcome::refused(
                problems.to_string(),
                json!({"action": action.name.as_str(), "problems": problems.problems, "usage": problems.usage}),
            )
            .about(Some(action.name.as_str()), None);
        }
    };
    let req = match request::build(action, &args) {
        Ok(r) => r,
        Err(e) => {
            return Outcome::refused(e.to_string(), json!({"action": action.name.as_str()}))
                .about(Some(action.name.as_str()), None);
        }
    };
    let digest = || {
        confirm::digest(
            caller.principal(),
            action.name.as_str(),
            &Value::Object(args.as_map().clone()),
        )
    };
    let guard = Guard {
        name: action.name.as_str(),
        read_only: action.annotations.read_only,
        destructive: action.annotations.destructive,
        scopes: action.scopes.scopes(),
        digest: &digest,
    };
    if let Some(stop) = gate(ctx, &guard, &req, call.dry_run, call.confirm) {
        return stop.about(Some(action.name.as_str()), Some(&req));
    }
    let check_with = read_back(env.catalog, action);
    send(
        ctx,
        caller,
        Some(action),
        check_with,
        args.as_map(),
        &req,
        allowed,
    )
    .await
    .about(Some(action.name.as_str()), Some(&req))
}

/// The read action that shows whether a write took effect: a GET on the same path, else on
/// the collection above it.
fn read_back<'c>(catalog: &'c Catalog, action: &Action) -> Option<&'c Action> {
    if action.method.is_read() {
        return None;
    }
    let parent = action.path.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
    let get = |path: &str| {
        catalog
            .actions()
            .iter()
            .find(|a| a.method == HttpMethod::Get && a.path == path)
    };
    get(&action.path).or_else(|| get(parent))
}

/// One raw request.
#[derive(Debug, Clone)]
pub struct RawCall<'a> {
    /// HTTP method.
    pub method: &'a str,
    /// Path under `/api/v1`.
    pub path: &'a str,
    /// Query parameters (an object of scalars or arrays).
    pub query: Option<&'a Value>,
    /// JSON body.
    pub body: Option<&'a Value>,
    /// Only show the request that would be sent.
    pub dry_run: bool,
    /// A confirmation token from an earlier preview.
    pub confirm: Option<&'a str>,
}

/// Runs one raw request for `caller` under the same policy as the actions.
pub async fn raw_call(env: Env<'_>, ctx: &Context, caller: &Caller, call: &RawCall<'_>) -> Outcome {
    if !ctx.config.raw_requests {
        return Outcome::refused(
            "raw requests are turned off on this server (RAW_REQUESTS=false); use gitea_find_action and gitea_execute_action",
            json!({"code": "raw_disabled"}),
        );
    }
    let Some(method) = HttpMethod::parse(call.method.trim()) else {
        return Outcome::refused(
            format!(
                "`method` must be GET, POST, PUT, PATCH or DELETE, got {:?}",
                echo(call.method)
            ),
            json!({}),
        );
    };
    let path = match raw::check_path(call.path.trim()) {
        Ok(p) => p,
        Err(e) => return Outcome::refused(e, json!({"code": "bad_path"})),
    };
    let (allowed, action) = match raw::match_action(env.catalog, method, &path) {
        Some((i, action)) => match env.policy.check(i) {
            Ok(a) => (a, Some(action)),
            Err(reason) => {
                return withheld(action.name.as_str(), &reason)
                    .about(Some(action.name.as_str()), None);
            }
        },
        None if !ctx.config.raw_unknown_paths => {
            return Outcome::refused(
                format!(
                    "{method} {path} matches no operation of this instance's API description; raw requests to unknown paths are refused (RAW_UNKNOWN_PATHS=deny). Use gitea_find_action to find the right action."
                ),
                json!({"code": "unknown_path"}),
            );
        }
        None => match raw::judge_unknown(env.catalog, env.policy, method, &path) {
            Ok(a) => (a, None),
            Err(reason) => return withheld(&format!("{method} {path}"), &reason),
        },
    };
    let mut query = Vec::new();
    match call.query {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if k.eq_ignore_ascii_case("token") || k.eq_ignore_ascii_case("access_token") {
                    return Outcome::refused(
                        "credentials cannot be passed in `query`; the server authenticates itself",
                        json!({}),
                    );
                }
                match v {
                    Value::Array(items) => {
                        query.extend(items.iter().map(|i| (k.clone(), scalar(i))))
                    }
                    Value::Object(_) => {
                        return Outcome::refused(
                            format!("query parameter `{}` must be a scalar or an array", echo(k)),
                            json!({}),
                        );
                    }
                    other => query.push((k.clone(), scalar(other))),
                }
            }
        }
        Some(other) => {
            return Outcome::refused(
                format!(
                    "`query` must be an object, got {}",
                    echo(&other.to_string())
                ),
                json!({}),
            );
        }
    }
    let req = Request {
        method,
        path: path.clone(),
        query,
        sudo: None,
        body: call
            .body
            .filter(|b| !b.is_null())
            .map(|b| Body::Json(b.clone()))
            .unwrap_or(Body::None),
    };
    let name = action
        .map(|a| a.name.as_str().to_string())
        .unwrap_or_else(|| format!("{method} {path}"));
    let digest = || {
        confirm::digest(
            caller.principal(),
            "gitea_api_request",
            &json!({"method": method.as_str(), "path": path, "query": call.query, "body": call.body}),
        )
    };
    let guard = Guard {
        name: &name,
        read_only: method.is_read(),
        destructive: action.map_or(method == HttpMethod::Delete, |a| a.annotations.destructive),
        scopes: action.map(|a| a.scopes.scopes()).unwrap_or_default(),
        digest: &digest,
    };
    if let Some(stop) = gate(ctx, &guard, &req, call.dry_run, call.confirm) {
        return stop.about(Some(&name), Some(&req));
    }
    let check_with = action.and_then(|a| read_back(env.catalog, a));
    let args = Map::new();
    send(ctx, caller, action, check_with, &args, &req, allowed)
        .await
        .about(Some(&name), Some(&req))
}

/// What the guards need to know about a call. The digest is computed only when a
/// confirmation is involved (it hashes the canonical arguments).
struct Guard<'a> {
    name: &'a str,
    read_only: bool,
    destructive: bool,
    scopes: &'a [crate::catalog::Scope],
    digest: &'a (dyn Fn() -> String + Sync),
}

/// Dry run, safe mode and confirmation: an answer that stops the call, or `None` to go on.
fn gate(
    ctx: &Context,
    g: &Guard<'_>,
    req: &Request,
    dry_run: bool,
    confirm: Option<&str>,
) -> Option<Outcome> {
    let previewing = dry_run || (ctx.config.safe_mode && !g.read_only);
    let confirming = g.destructive && ctx.config.confirm_destructive;
    if !previewing && !confirming {
        // The common case: nothing to show, nothing to hash.
        return None;
    }
    let scopes: Vec<String> = g.scopes.iter().map(|s| s.to_string()).collect();
    let preview = preview(&ctx.client, req, &scopes);
    if previewing {
        let why = if dry_run {
            "dry_run requested"
        } else {
            "SAFE_MODE is on: writing calls are previewed, not sent"
        };
        return Some(Outcome {
            text: format!("dry run ({why}): would send {}", preview),
            structured: json!({"action": g.name, "dry_run": true, "reason": why, "request": preview}),
            is_error: false,
            status: None,
            facts: Facts {
                kind: OutcomeKind::DryRun,
                ..Facts::default()
            },
        });
    }
    let digest = (g.digest)();
    let ttl = ctx.confirmations.ttl().as_secs();
    let fresh = match ctx.confirmations.issue(&digest) {
        Ok(t) => t,
        Err(e) => {
            return Some(Outcome::refused(
                format!("{e}; destructive calls are refused until it works again"),
                json!({"action": g.name, "code": "confirmation_unavailable"}),
            ));
        }
    };
    match confirm.map(str::trim).filter(|c| !c.is_empty()) {
        None => Some(Outcome {
            text: format!(
                "confirmation required: {} is destructive. It would send {}. To proceed, repeat the same call with \"confirm\": \"{fresh}\" (valid {ttl} s, once, for these exact arguments).",
                g.name, preview
            ),
            structured: json!({"action": g.name, "confirmation_required": true, "confirm": fresh, "expires_in_secs": ttl, "request": preview}),
            is_error: false,
            status: None,
            facts: Facts {
                kind: OutcomeKind::ConfirmationRequired,
                ..Facts::default()
            },
        }),
        Some(token) => match ctx.confirmations.redeem(token, &digest) {
            Ok(()) => None,
            Err(e) => Some(Outcome::refused(
                format!(
                    "{e}. A new confirmation for these exact arguments: \"confirm\": \"{fresh}\" (valid {ttl} s)."
                ),
                json!({"action": g.name, "confirmation_required": true, "confirm": fresh, "expires_in_secs": ttl, "request": preview}),
            )),
        },
    }
}

/// Sends the request for `caller`, within the caller's deadline. Requires the policy's
/// [`Allowed`].
async fn send(
    ctx: &Context,
    caller: &Caller,
    action: Option<&Action>,
    check_with: Option<&Action>,
    args: &Map<String, Value>,
    req: &Request,
    _allowed: Allowed,
) -> Outcome {
    let kind = action.map_or(ResponseKind::Json, |a| a.response);
    let limit = ctx
        .config
        .limits
        .read_limit(kind)
        .max(ctx.config.limits.read_limit(ResponseKind::Json));
    let sending = ctx.client.send(req, ctx.token_for(caller), limit);
    let result = match caller.deadline() {
        Some(deadline) => {
            match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), sending).await {
                Ok(r) => r,
                Err(_) => return unanswered(req, check_with, Unanswered::Deadline),
            }
        }
        None => sending.await,
    };
    match result {
        Ok(resp) => response::shape(action, args, resp, ctx.config.limits),
        Err(e) if e.never_sent() || req.method.is_read() => Outcome::refused(
            format!("could not complete the request: {e}"),
            json!({"code": "transport"}),
        ),
        Err(e) => unanswered(req, check_with, Unanswered::Transport(e.to_string())),
    }
}

/// Why a sent write has no answer.
enum Unanswered {
    /// The caller's deadline passed first.
    Deadline,
    /// The connection failed after the request may have left.
    Transport(String),
}

/// A write that may or may not have been applied: say so, say how to check, audit it as such.
fn unanswered(req: &Request, check_with: Option<&Action>, why: Unanswered) -> Outcome {
    if req.method.is_read() {
        return Outcome::refused(
            "Gitea did not answer within the time limit for an answer (REQUEST_TIMEOUT_SECS); retry later or ask for less",
            json!({"code": "timeout"}),
        );
    }
    let what = match &why {
        Unanswered::Deadline => {
            "Gitea did not answer within the time limit for an answer (REQUEST_TIMEOUT_SECS)"
                .to_string()
        }
        Unanswered::Transport(e) => format!("the connection to Gitea failed: {e}"),
    };
    let check = match check_with {
        Some(a) => format!("check with {} before repeating it", a.name),
        None => "check its effect (read the resource) before repeating it".to_string(),
    };
    let mut out = Outcome::refused(
        format!(
            "{what}. The {} {} was sent and may have been applied: {check}.",
            req.method, req.path
        ),
        json!({"code": "outcome_unknown", "may_have_been_applied": true, "check_with": check_with.map(|a| a.name.as_str())}),
    );
    out.facts.kind = OutcomeKind::Unknown;
    out
}

/// The request as it would be sent, secrets redacted.
fn preview(client: &GiteaClient, req: &Request, scopes: &[String]) -> Value {
    let body = match &req.body {
        Body::None => Value::Null,
        Body::Json(v) => redact(v, req.path.contains("/secrets/")),
        Body::Text(t, ct) => json!({"content_type": ct, "text": t.chars().take(2000).collect::<String>()}),
        Body::Multipart(parts) => Value::Array(
            parts
                .iter()
                .map(|p| json!({"name": p.name, "filename": p.filename, "content_type": p.content_type, "size": p.bytes.len()}))
                .collect(),
        ),
    };
    let mut headers = Map::new();
    if let Some(s) = &req.sudo {
        headers.insert("Sudo".into(), json!(s));
    }
    json!({
        "method": req.method.as_str(),
        "url": client.request_url(req),
        "query": req.query.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "headers": headers,
        "body": body,
        "required_scopes": scopes,
    })
}

/// A copy of a body with secret values replaced by `***`.
pub fn redact(v: &Value, secret_data: bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let lower = k.to_ascii_lowercase();
                    let secret = crate::outbound::SECRET_FIELDS.contains(&lower.as_str())
                        || (secret_data && lower == "data");
                    (
                        k.clone(),
                        if secret && !v.is_null() {
                            json!("***")
                        } else {
                            redact(v, secret_data)
                        },
                    )
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|i| redact(i, secret_data)).collect()),
        other => other.clone(),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn withheld(name: &str, reason: &WithheldReason) -> Outcome {
    let mut structured = json!({
        "action": name,
        "withheld": {"reason": reason.to_string(), "code": reason.code(), "who_can_change": reason.who_can_change()},
    });
    if let WithheldReason::MissingScopes { missing } = reason {
        structured["withheld"]["missing_scopes"] =
            json!(missing.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    }
    let mut out = Outcome::refused(
        format!(
            "{name} is withheld: {reason}. Who can change this: {}.",
            reason.who_can_change()
        ),
        structured,
    );
    out.facts.kind = OutcomeKind::Denied(reason.code().to_string());
    out
}

fn unknown_action(env: Env<'_>, name: &str) -> Outcome {
    let text: String = echo(name).replace(['_', '-'], " ");
    let options = SearchOptions {
        limit: 5,
        ..SearchOptions::default()
    };
    let hits = env
        .index
        .wait()
        .and_then(|index| index.search(&text, &options))
        .unwrap_or_default();
    let suggestions: Vec<String> = hits
        .iter()
        .map(|h| env.catalog.actions()[h.action].name.to_string())
        .collect();
    let hint = if suggestions.is_empty() {
        "use gitea_find_action to find the action for your task".to_string()
    } else {
        format!(
            "did you mean: {}? (or use gitea_find_action)",
            suggestions.join(", ")
        )
    };
    Outcome::refused(
        format!("unknown action {:?}; {hint}", echo(name)),
        json!({"code": "unknown_action", "suggestions": suggestions}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_in_previews() {
        let body = json!({"username": "bob", "password": "hunter2", "nested": [{"token": "t"}], "data": "x"});
        let r = redact(&body, false);
        assert_eq!(
            r,
            json!({"username": "bob", "password": "***", "nested": [{"token": "***"}], "data": "x"})
        );
        assert_eq!(
            redact(&json!({"data": "s3cret"}), true),
            json!({"data": "***"})
        );
    }
}

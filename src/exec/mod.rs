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
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::audit::{Facts, OutcomeKind};
use crate::catalog::{Action, Catalog, HttpMethod, ResponseKind};
use crate::config::Config;
use crate::gitea::{self, Body, GiteaClient, Request};
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

/// The executor's process-wide state: the client, the settings, the confirmation tokens.
#[derive(Debug)]
pub struct Context {
    /// The client towards Gitea.
    pub client: GiteaClient,
    /// The settings.
    pub config: ExecConfig,
    /// Outstanding confirmation tokens (shared by every caller's context).
    pub confirmations: Arc<Confirmations>,
    /// Who calls (pass-through mode): confirmation tokens are bound to them.
    pub principal: Option<String>,
}

impl Context {
    /// The same executor acting for one caller with their own Gitea token (pass-through mode).
    /// Cheap: the HTTP client and the confirmation store are shared.
    pub fn for_caller(&self, principal: &str, token: Option<crate::config::Secret>) -> Context {
        Context {
            client: self.client.with_token(token),
            config: self.config.clone(),
            confirmations: Arc::clone(&self.confirmations),
            principal: Some(principal.to_string()),
        }
    }

    /// Binds a digest to the caller, so one caller cannot redeem another's confirmation.
    fn bind(&self, digest: String) -> String {
        match &self.principal {
            Some(p) => crate::spec::sha256_hex(format!("{p}\n{digest}").as_bytes()),
            None => digest,
        }
    }

    /// Builds the executor.
    pub fn new(config: &Config, exec: ExecConfig) -> Result<Context, Error> {
        let client = GiteaClient::new(config)?;
        let confirmations = Arc::new(Confirmations::new(exec.confirm_ttl));
        Ok(Context {
            client,
            config: exec,
            confirmations,
            principal: None,
        })
    }

    /// Reads the token's scopes (`GET /api/v1/token`, newer Gitea). `None` when they cannot be
    /// read (older Gitea, no token): then nothing is withheld for scopes and a 403 is explained
    /// with the scope the route needs.
    pub async fn token_scopes(&self) -> Option<Vec<String>> {
        let bytes = self
            .client
            .get_bytes(&format!("{}/token", gitea::API_PREFIX))
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

/// Runs one call of an action.
pub async fn call(env: Env<'_>, ctx: &Context, call: &Call<'_>) -> Outcome {
    let Some(action) = env.catalog.get(call.action) else {
        return unknown_action(env, call.action);
    };
    let index = env.catalog.index_of(&action.name).unwrap_or(usize::MAX);
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
        ctx.bind(confirm::digest(
            action.name.as_str(),
            &Value::Object(args.as_map().clone()),
        ))
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
    send(ctx, Some(action), args.as_map(), &req, allowed)
        .await
        .about(Some(action.name.as_str()), Some(&req))
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

/// Runs one raw request under the same policy as the actions.
pub async fn raw_call(env: Env<'_>, ctx: &Context, call: &RawCall<'_>) -> Outcome {
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
                call.method
            ),
            json!({}),
        );
    };
    let path = match raw::check_path(call.path.trim()) {
        Ok(p) => p,
        Err(e) => return Outcome::refused(e, json!({"code": "bad_path"})),
    };
    let matched = raw::match_action(env.catalog, method, &path);
    let (allowed, action) = match matched {
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
        None => match env.policy.check_unknown(method, &path) {
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
                            format!("query parameter `{k}` must be a scalar or an array"),
                            json!({}),
                        );
                    }
                    other => query.push((k.clone(), scalar(other))),
                }
            }
        }
        Some(other) => {
            return Outcome::refused(format!("`query` must be an object, got {other}"), json!({}));
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
        ctx.bind(confirm::digest(
            "gitea_api_request",
            &json!({"method": method.as_str(), "path": path, "query": call.query, "body": call.body}),
        ))
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
    let args = Map::new();
    send(ctx, action, &args, &req, allowed)
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
    if g.destructive && ctx.config.confirm_destructive {
        let digest = (g.digest)();
        let fresh = || ctx.confirmations.issue(&digest);
        let ttl = ctx.confirmations.ttl().as_secs();
        match confirm.map(str::trim).filter(|c| !c.is_empty()) {
            None => {
                let token = fresh();
                return Some(Outcome {
                    text: format!(
                        "confirmation required: {} is destructive. It would send {}. To proceed, repeat the same call with \"confirm\": \"{token}\" (valid {ttl} s, once, for these exact arguments).",
                        g.name, preview
                    ),
                    structured: json!({"action": g.name, "confirmation_required": true, "confirm": token, "expires_in_secs": ttl, "request": preview}),
                    is_error: false,
                    status: None,
                    facts: Facts {
                        kind: OutcomeKind::ConfirmationRequired,
                        ..Facts::default()
                    },
                });
            }
            Some(token) => {
                if let Err(e) = ctx.confirmations.redeem(token, &digest) {
                    let token = fresh();
                    return Some(Outcome::refused(
                        format!(
                            "{e}. A new confirmation for these exact arguments: \"confirm\": \"{token}\" (valid {ttl} s)."
                        ),
                        json!({"action": g.name, "confirmation_required": true, "confirm": token, "expires_in_secs": ttl, "request": preview}),
                    ));
                }
            }
        }
    }
    None
}

/// Sends the request. Requires the policy's [`Allowed`].
async fn send(
    ctx: &Context,
    action: Option<&Action>,
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
    match ctx.client.send(req, limit).await {
        Ok(resp) => response::shape(action, args, resp, ctx.config.limits),
        Err(e) => {
            let may_have_applied = matches!(req.method, HttpMethod::Post | HttpMethod::Patch);
            let note = if may_have_applied {
                " The request may or may not have reached Gitea: check its effect before repeating it."
            } else {
                ""
            };
            Outcome::refused(
                format!("could not complete the request: {e}.{note}"),
                json!({"code": "transport"}),
            )
        }
    }
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

/// Field names whose values are secrets.
const SECRET_FIELDS: [&str; 9] = [
    "password",
    "passwd",
    "secret",
    "token",
    "access_token",
    "client_secret",
    "passphrase",
    "private_key",
    "new_password",
];

/// A copy of a body with secret values replaced by `***`.
pub fn redact(v: &Value, secret_data: bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let lower = k.to_ascii_lowercase();
                    let secret =
                        SECRET_FIELDS.contains(&lower.as_str()) || (secret_data && lower == "data");
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
    let text = name.replace(['_', '-'], " ");
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
        format!("unknown action {name:?}; {hint}"),
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

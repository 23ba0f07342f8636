//! Executing actions: arguments checked, policy applied, exactly the right request sent once,
//! the answer shaped to fit a model's context.
//!
//! The order never changes: resolve the action → policy ([`Allowed`] or the reason it is
//! withheld) → validate ([`ValidatedArgs`]) → build the request → dry run / safe mode /
//! confirmation of destructive calls → send → shape. The raw request follows the same path
//! after its path is matched to a catalog action.

pub mod args;
pub mod confirm;
pub mod flow;
pub mod outcome;
pub mod provenance;
pub mod raw;
pub mod request;
pub mod response;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::catalog::{Action, Catalog, HttpMethod, ResponseKind};
use crate::config::{Config, Secret};
use crate::gitea::{self, Body, ClientConfig, GiteaClient, Request};
use crate::metrics::Metrics;
use crate::policy::{Allowed, WithheldReason};
use crate::search::SearchOptions;
use crate::state::State;
use crate::store::Store;
pub use args::{ValidatedArgs, Validators};
pub use confirm::Confirmations;
pub use outcome::{
    CallResult, DryRunReason, Executed, JsonCut, Offer, Paging, Preview, RawProblem, Refusal,
    RequestLine, Shaped, TextCut,
};
pub use response::Limits;

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
    /// `CONFIRM_KEY_FILE` cannot be used.
    #[error(transparent)]
    KeyFile(#[from] confirm::KeyFileError),
    /// `REDIS_URL` cannot be used.
    #[error(transparent)]
    Store(#[from] crate::store::Error),
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
    /// The cross-repository flow guard.
    pub flow_guard: flow::FlowGuard,
    /// Lockdown of outsiders' text on public repositories.
    pub lockdown: bool,
    /// How confirmations are given (the MCP layer asks the person; exec issues the token).
    pub confirm_via: crate::config::ConfirmVia,
    /// User-written text in answers is sanitised (applied by `render`, which reads it here).
    pub sanitize: bool,
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
            sanitize: config.sanitize,
            flow_guard: config.flow_guard,
            lockdown: config.lockdown,
            confirm_via: config.confirm_via,
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
    /// State shared with the other replicas (memory without `REDIS_URL`).
    pub store: Arc<Store>,
    /// What each caller read that is not public (the flow guard's memory).
    pub flows: flow::Flows,
    /// Who may write where (lockdown's memory).
    pub access: provenance::Access,
    /// The server's own token, for callers with [`Credential::Server`].
    server_token: Option<Secret>,
}

/// Largest answer read from Gitea for small service reads (`/user`, `/token`, `/version`).
pub const SMALL_READ_LIMIT: usize = 64 * 1024;

impl Context {
    /// Builds the executor; the client records upstream latency in `metrics`.
    pub fn new(config: &Config, exec: ExecConfig, metrics: Arc<Metrics>) -> Result<Context, Error> {
        let client = GiteaClient::new(&ClientConfig::from_config(config), metrics)?;
        let store = Arc::new(Store::from_config(config)?);
        let confirmations = Arc::new(match &config.confirm_key_file {
            Some(path) => Confirmations::from_key_file(exec.confirm_ttl, path, store.clone())?,
            None => {
                if config.redis_url.is_some() {
                    tracing::warn!(
                        "REDIS_URL is set but CONFIRM_KEY_FILE is not: this replica signs confirmations with its own key, so a token it issues cannot be redeemed at another replica"
                    );
                }
                Confirmations::new(exec.confirm_ttl, store.clone())?
            }
        });
        Ok(Context {
            client,
            config: exec,
            confirmations,
            store,
            flows: flow::Flows::default(),
            access: provenance::Access::default(),
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

/// One call of an action. The arguments travel by value from the transport to the request:
/// checked to be an object once (in validation), coerced in place, never copied.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// Action name or operationId.
    pub action: &'a str,
    /// The arguments (an object; `null` counts as none).
    pub arguments: Value,
    /// Only show the request that would be sent.
    pub dry_run: bool,
    /// A confirmation token from an earlier preview.
    pub confirm: Option<&'a str>,
}

/// Longest piece of caller input kept in a refusal (names, methods).
const ECHO_CHARS: usize = 200;

fn echo(s: &str) -> String {
    crate::outbound::clip(s, ECHO_CHARS).into_owned()
}

/// Runs one call of an action for `caller`.
pub async fn call(state: &State, ctx: &Context, caller: &Caller, call: Call<'_>) -> CallResult {
    let Some((id, action)) = state.catalog.lookup(call.action) else {
        return Err(unknown_action(state, call.action));
    };
    let allowed = state.policy.check(id).map_err(|reason| Refusal::Withheld {
        target: action.name.to_string(),
        reason,
    })?;
    let args =
        args::validate(&state.validators, id, action, call.arguments).map_err(|problems| {
            Refusal::InvalidArguments {
                action: action.name.clone(),
                problems,
            }
        })?;
    let req = request::build(action, &args).map_err(|e| Refusal::Unbuildable {
        action: action.name.clone(),
        reason: e.0,
    })?;
    let digest = || confirm::digest(caller.principal(), action.name.as_str(), args.as_map());
    let guard = Guard {
        target: action.name.as_str(),
        read_only: action.annotations.read_only,
        destructive: action.annotations.destructive,
        scopes: action.scopes.scopes(),
        digest: &digest,
        flow_from: flow_sources(ctx, caller, action.annotations.read_only, &req).await,
    };
    gate(ctx, &guard, &req, call.dry_run, call.confirm).await?;
    let check_with = read_back(&state.catalog, action);
    let result = send(
        ctx,
        caller,
        Some(action),
        check_with,
        args.as_map(),
        &req,
        allowed,
    )
    .await;
    after(
        caller,
        ctx,
        &req,
        action.user_content,
        guard.flow_from,
        result,
    )
    .await
}

/// The flow guard's sources for a write: the repositories `caller` read, other than the one
/// the request writes to, that are not public (none for reads, or with the guard off). Reads
/// cost nothing extra: visibility is asked of Gitea only here, once per repository for a few
/// minutes, and a repository whose visibility cannot be read counts as not public.
async fn flow_sources(
    ctx: &Context,
    caller: &Caller,
    read_only: bool,
    req: &Request,
) -> Vec<String> {
    if read_only || ctx.config.flow_guard == flow::FlowGuard::Off {
        return Vec::new();
    }
    // A webhook or a mirror sends the repository's content out of Gitea: no target is safe.
    let target = match flow::leaves_gitea(&req.path) {
        true => None,
        false => flow::repo_of(&req.path),
    };
    let mut read = ctx.flows.sources(caller.principal(), target.as_deref());
    // What the caller read through other replicas (nothing without a shared store).
    for repo in ctx
        .store
        .set_members(flow::STORE_USE, caller.principal())
        .await
    {
        if Some(repo.as_str()) != target.as_deref() && !read.contains(&repo) {
            read.push(repo);
        }
    }
    let mut private = Vec::new();
    for repo in read {
        if repo_private(ctx, caller, &repo).await {
            private.push(repo);
        }
    }
    private
}

/// Whether `repo` (`owner/name`) is not public: from the cache, else from Gitea (cached for a
/// few minutes); a visibility that cannot be read counts as not public.
async fn repo_private(ctx: &Context, caller: &Caller, repo: &str) -> bool {
    if let Some(p) = ctx.flows.cached_private(repo) {
        return p;
    }
    let p = match small_get(ctx, caller, &format!("/repos/{repo}")).await {
        Some(v) => {
            v.get("private").and_then(Value::as_bool) != Some(false)
                || v.get("internal").and_then(Value::as_bool) == Some(true)
        }
        None => true,
    };
    ctx.flows.cache_private(repo, p);
    p
}

/// A small read for the guards (`path` under `/api/v1`), bounded by [`SMALL_READ_LIMIT`].
async fn small_read(ctx: &Context, caller: &Caller, path: &str) -> Result<Vec<u8>, gitea::Error> {
    ctx.client
        .get_bytes(
            &format!("{}{path}", gitea::API_PREFIX),
            ctx.token_for(caller),
            SMALL_READ_LIMIT,
        )
        .await
}

/// [`small_read`] as JSON, `None` on any failure.
async fn small_get(ctx: &Context, caller: &Caller, path: &str) -> Option<Value> {
    let bytes = small_read(ctx, caller, path).await.ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Most authors whose relation one answer looks up (the rest are `Unknown`).
const MAX_AUTHOR_LOOKUPS: usize = 20;

/// Who wrote the user text of an answer from `repo`: the owner by name, others by Gitea's
/// permission endpoint (cached per repository and user, at most [`MAX_AUTHOR_LOOKUPS`] per
/// answer). The caller is recognised when their login is known (lockdown asks for it).
async fn authors_of(
    ctx: &Context,
    caller: &Caller,
    repo: &str,
    data: &Value,
    me: Option<&str>,
) -> Vec<provenance::Authored> {
    use provenance::Relation;
    let owner = repo.split('/').next().unwrap_or_default();
    let mut lookups = 0;
    let mut out = Vec::new();
    for (at, author) in provenance::authored(data) {
        let relation = if author.eq_ignore_ascii_case(owner) {
            Relation::Owner
        } else if me.is_some_and(|m| m.eq_ignore_ascii_case(&author)) {
            Relation::Caller
        } else if let Some(r) = ctx.access.cached(repo, &author) {
            r
        } else if lookups >= MAX_AUTHOR_LOOKUPS {
            Relation::Unknown
        } else {
            lookups += 1;
            let path = format!(
                "/repos/{repo}/collaborators/{}/permission",
                percent_encoding::utf8_percent_encode(&author, request::SEGMENT)
            );
            let r = match small_read(ctx, caller, &path).await {
                Ok(bytes) => match serde_json::from_slice::<Value>(&bytes)
                    .ok()
                    .and_then(|v| {
                        v.get("permission")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .as_deref()
                {
                    Some("admin" | "write" | "owner") => Relation::Collaborator,
                    Some(_) => Relation::NoWriteAccess,
                    None => Relation::Unknown,
                },
                // Gitea answers 404 for a user who is no collaborator.
                Err(gitea::Error::Status { status: 404, .. }) => Relation::NoWriteAccess,
                Err(_) => Relation::Unknown,
            };
            ctx.access.remember(repo, &author, r);
            r
        };
        out.push(provenance::Authored {
            at,
            author,
            relation,
        });
    }
    out
}

/// The caller's Gitea login (asked once per caller, then cached).
async fn login_of(ctx: &Context, caller: &Caller) -> Option<String> {
    if let Some(l) = ctx.access.login_of(caller.principal()) {
        return Some(l);
    }
    let login = small_get(ctx, caller, "/user")
        .await
        .and_then(|v| v.get("login").and_then(Value::as_str).map(str::to_string));
    if let Some(l) = &login {
        ctx.access.remember_login(caller.principal(), l);
    }
    login
}

/// Lockdown on one answer from the public `repo`: the text of every author who is not its
/// owner, a collaborator with write access or the caller is replaced with a notice. Returns the
/// authors withheld.
fn lock_down(data: &mut Value, authored: &[provenance::Authored]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in authored {
        if !a.relation.trusted()
            && provenance::withhold(data, &a.at, &a.author)
            && !out.contains(&a.author)
        {
            out.push(a.author.clone());
        }
    }
    out
}

/// What a finished call leaves behind: a successful read of a repository is remembered for the
/// flow guard, and locked down when `LOCKDOWN` is on and the answer carries user-written text; a
/// write carries its flow sources into the result (and the audit).
async fn after(
    caller: &Caller,
    ctx: &Context,
    req: &Request,
    user_content: bool,
    flow_from: Vec<String>,
    result: CallResult,
) -> CallResult {
    let mut done = result?;
    done.flow_from = flow_from;
    if !req.method.is_read() {
        return Ok(done);
    }
    let Some(repo) = flow::repo_of(&req.path) else {
        return Ok(done);
    };
    if ctx.config.flow_guard != flow::FlowGuard::Off {
        ctx.flows.record(caller.principal(), &repo);
        ctx.store
            .add_to_set(
                flow::STORE_USE,
                caller.principal(),
                &repo,
                flow::SHARED_TTL,
                flow::MAX_SOURCES,
            )
            .await;
    }
    if !user_content {
        return Ok(done);
    }
    if let Shaped::Json {
        data, serialized, ..
    } = &mut done.body
    {
        let me = match ctx.config.lockdown {
            true => login_of(ctx, caller).await,
            false => ctx.access.login_of(caller.principal()),
        };
        done.provenance = authors_of(ctx, caller, &repo, data, me.as_deref()).await;
        if ctx.config.lockdown
            && !done.provenance.is_empty()
            && !repo_private(ctx, caller, &repo).await
        {
            done.locked_out = lock_down(data, &done.provenance);
            if !done.locked_out.is_empty() {
                *serialized = data.to_string();
            }
        }
    }
    Ok(done)
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
    pub query: Option<Value>,
    /// JSON body.
    pub body: Option<Value>,
    /// Only show the request that would be sent.
    pub dry_run: bool,
    /// A confirmation token from an earlier preview.
    pub confirm: Option<&'a str>,
}

/// Runs one raw request for `caller` under the same policy as the actions.
pub async fn raw_call(
    state: &State,
    ctx: &Context,
    caller: &Caller,
    call: RawCall<'_>,
) -> CallResult {
    if !ctx.config.raw_requests {
        return Err(Refusal::RawDisabled);
    }
    let method = HttpMethod::parse(call.method.trim()).ok_or_else(|| {
        Refusal::BadRaw(RawProblem::Method {
            given: echo(call.method),
        })
    })?;
    let path =
        raw::check_path(call.path.trim()).map_err(|e| Refusal::BadRaw(RawProblem::Path(e)))?;
    let line = RequestLine {
        method,
        path: path.clone(),
    };
    let (allowed, action) = match raw::match_action(&state.catalog, method, &path) {
        Some((id, action)) => {
            let allowed = state.policy.check(id).map_err(|reason| Refusal::Withheld {
                target: action.name.to_string(),
                reason,
            })?;
            (allowed, Some(action))
        }
        None if !ctx.config.raw_unknown_paths => {
            return Err(Refusal::UnknownPath { request: line });
        }
        None => {
            let allowed = raw::judge_unknown(&state.catalog, &state.policy, method, &path)
                .map_err(|reason| Refusal::Withheld {
                    target: format!("{method} {path}"),
                    reason,
                })?;
            (allowed, None)
        }
    };
    let mut query = Vec::new();
    match &call.query {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if k.eq_ignore_ascii_case("token") || k.eq_ignore_ascii_case("access_token") {
                    return Err(Refusal::BadRaw(RawProblem::CredentialInQuery));
                }
                match v {
                    Value::Array(items) => {
                        query.extend(items.iter().map(|i| (k.clone(), scalar(i))))
                    }
                    Value::Object(_) => {
                        return Err(Refusal::BadRaw(RawProblem::QueryValue { name: echo(k) }));
                    }
                    other => query.push((k.clone(), scalar(other))),
                }
            }
        }
        Some(_) => return Err(Refusal::BadRaw(RawProblem::QueryShape)),
    }
    let digest = || {
        let mut canonical = Map::new();
        canonical.insert("method".into(), json!(method.as_str()));
        canonical.insert("path".into(), json!(path));
        canonical.insert("query".into(), call.query.clone().unwrap_or(Value::Null));
        canonical.insert("body".into(), call.body.clone().unwrap_or(Value::Null));
        confirm::digest(caller.principal(), "gitea_api_request", &canonical)
    };
    let target = action
        .map(|a| a.name.as_str().to_string())
        .unwrap_or_else(|| format!("{method} {path}"));
    let req = Request {
        method,
        path: path.clone(),
        query,
        sudo: None,
        body: match call.body.clone() {
            None | Some(Value::Null) => Body::None,
            Some(b) => Body::Json(b),
        },
    };
    let guard = Guard {
        target: &target,
        read_only: method.is_read(),
        destructive: action.map_or(method == HttpMethod::Delete, |a| a.annotations.destructive),
        scopes: action.map(|a| a.scopes.scopes()).unwrap_or_default(),
        digest: &digest,
        flow_from: flow_sources(ctx, caller, method.is_read(), &req).await,
    };
    gate(ctx, &guard, &req, call.dry_run, call.confirm).await?;
    let check_with = action.and_then(|a| read_back(&state.catalog, a));
    let result = send(ctx, caller, action, check_with, &Map::new(), &req, allowed).await;
    let user_content = action.is_none_or(|a| a.user_content);
    after(caller, ctx, &req, user_content, guard.flow_from, result).await
}

/// What the guards need to know about a call. The digest is computed only when a
/// confirmation is involved (it hashes the canonical arguments).
struct Guard<'a> {
    target: &'a str,
    read_only: bool,
    destructive: bool,
    scopes: &'a [crate::catalog::Scope],
    digest: &'a (dyn Fn() -> String + Sync),
    /// The flow guard's sources (see [`flow_sources`]).
    flow_from: Vec<String>,
}

/// Dry run, safe mode and confirmation: the refusal that stops the call, or `Ok` to go on.
async fn gate(
    ctx: &Context,
    g: &Guard<'_>,
    req: &Request,
    dry_run: bool,
    confirm: Option<&str>,
) -> Result<(), Refusal> {
    let previewing = dry_run || (ctx.config.safe_mode && !g.read_only);
    let flow = !g.flow_from.is_empty();
    if flow && ctx.config.flow_guard == flow::FlowGuard::Deny && !previewing {
        return Err(Refusal::Withheld {
            target: g.target.to_string(),
            reason: WithheldReason::FlowGuard {
                sources: g.flow_from.clone(),
            },
        });
    }
    let confirming = (g.destructive && ctx.config.confirm_destructive)
        || (flow && ctx.config.flow_guard == flow::FlowGuard::Confirm);
    if !previewing && !confirming {
        // The common case: nothing to show, nothing to hash.
        return Ok(());
    }
    let mut preview = Box::new(preview(&ctx.client, req, g.scopes));
    preview.flow_from = g.flow_from.clone();
    let target = g.target.to_string();
    if previewing {
        let reason = if dry_run {
            DryRunReason::Requested
        } else {
            DryRunReason::SafeMode
        };
        return Err(Refusal::DryRun {
            target,
            reason,
            preview,
        });
    }
    let digest = (g.digest)();
    let ttl_secs = ctx.confirmations.ttl().as_secs();
    let offer = match ctx.confirmations.issue(&digest) {
        Ok(token) => Offer { token, ttl_secs },
        Err(error) => {
            return Err(Refusal::ConfirmationUnavailable {
                target,
                error: error.into(),
            });
        }
    };
    match confirm.map(str::trim).filter(|c| !c.is_empty()) {
        None => Err(Refusal::NeedsConfirmation {
            target,
            offer,
            preview,
        }),
        Some(token) => match ctx.confirmations.redeem(token, &digest).await {
            Ok(()) => Ok(()),
            Err(confirm::Redeem::Refused(error)) => Err(Refusal::ConfirmationRefused {
                target,
                error,
                offer,
                preview,
            }),
            Err(confirm::Redeem::Unavailable(error)) => {
                Err(Refusal::ConfirmationUnavailable { target, error })
            }
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
) -> CallResult {
    let kind = action.map_or(ResponseKind::Json, |a| a.response);
    let limit = ctx
        .config
        .limits
        .read_limit(kind)
        .max(ctx.config.limits.read_limit(ResponseKind::Json));
    let line = RequestLine {
        method: req.method,
        path: req.path.clone(),
    };
    let name = action.map(|a| a.name.clone());
    let sending = ctx.client.send(req, ctx.token_for(caller), limit);
    let result = match caller.deadline() {
        Some(deadline) => {
            match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), sending).await {
                Ok(r) => r,
                Err(_) if req.method.is_read() => {
                    return Err(Refusal::TimedOut {
                        action: name,
                        request: line,
                    });
                }
                Err(_) => {
                    return Err(Refusal::Unanswered {
                        action: name,
                        request: line,
                        deadline: true,
                        error: None,
                        check_with: check_with.map(|a| a.name.clone()),
                    });
                }
            }
        }
        None => sending.await,
    };
    match result {
        Ok(resp) => response::shape(action, line, args, resp, ctx.config.limits),
        Err(e) if e.never_sent() || req.method.is_read() => Err(Refusal::Transport {
            action: name,
            request: line,
            error: e.to_string(),
        }),
        Err(e) => Err(Refusal::Unanswered {
            action: name,
            request: line,
            deadline: false,
            error: Some(e.to_string()),
            check_with: check_with.map(|a| a.name.clone()),
        }),
    }
}

/// The request as it would be sent, secrets redacted.
fn preview(client: &GiteaClient, req: &Request, scopes: &[crate::catalog::Scope]) -> Preview {
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
    Preview {
        request: RequestLine {
            method: req.method,
            path: req.path.clone(),
        },
        url: client.request_url(req),
        query: req.query.clone(),
        sudo: req.sudo.clone(),
        body,
        scopes: scopes.to_vec(),
        flow_from: Vec::new(),
    }
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

fn unknown_action(state: &State, name: &str) -> Refusal {
    let name = echo(name);
    let text = name.replace(['_', '-'], " ");
    let options = SearchOptions {
        limit: 5,
        ..SearchOptions::default()
    };
    let hits = state
        .index
        .wait()
        .and_then(|index| index.search(&text, &options))
        .unwrap_or_default();
    Refusal::UnknownAction {
        name,
        suggestions: hits
            .iter()
            .map(|h| state.catalog[h.action].name.clone())
            .collect(),
    }
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

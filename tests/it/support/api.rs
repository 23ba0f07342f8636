//! Routing and handlers of the fake Gitea API.
//!
//! Order of checks for a request under `/api/v1`, as in Gitea:
//! 1. `Authorization: token|Bearer <t>` — an unknown token is a 401 on every route;
//! 2. route match — 404 (`APIErrorNotFound` shape) or 405;
//! 3. `Sudo` header / `?sudo=` — admins only (403), unknown user 404;
//! 4. sign-in (401 `token is required`) and token scopes per route group (403 naming the scope);
//! 5. the handler (repository visibility 404, write permission 403, archived 423, validation 422).

use axum::http::HeaderMap;
use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::state::{Asset, Comment, Issue, Label, Pull, Release, RepoSeed, Review, State, Token};
use super::util::{
    Paging, Reply, Res, blob_sha, content_type_for, parse_multipart, parse_query, percent_decode,
    sha40,
};

/// What arrived, after the body was read.
pub struct Incoming<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub raw_query: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

/// Who the request was authenticated as.
#[derive(Debug, Default, Clone)]
pub struct AuthInfo {
    pub token_user: Option<String>,
    pub sudo: Option<String>,
    pub acting_user: Option<String>,
}

/// One routed call, as handlers see it.
pub struct Call<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub params: Vec<(&'static str, String)>,
    pub query: Vec<(String, String)>,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    /// Lower-cased login of the acting user (after sudo); empty when anonymous.
    pub doer: String,
    pub token: Option<Token>,
}

impl Call<'_> {
    fn param(&self, name: &str) -> &str {
        self.params
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }

    fn int_param(&self, name: &str) -> i64 {
        self.param(name).parse().unwrap_or(0)
    }

    fn q(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    fn q_all(&self, name: &str) -> Vec<&str> {
        self.query
            .iter()
            .filter(|(k, _)| k == name)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .collect()
    }

    fn q_bool(&self, name: &str) -> Option<bool> {
        self.q(name).and_then(|v| match v {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        })
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn body(&self) -> Result<Body, Reply> {
        Body::parse(self.body)
    }
}

/// A JSON request body, read like Go's `encoding/json` (keys match case-insensitively).
struct Body(Map<String, Value>);

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Body {
    fn parse(bytes: &[u8]) -> Result<Body, Reply> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Body(Map::new()));
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(m)) => Ok(Body(m)),
            Ok(other) => Err(Reply::error(
                422,
                format!(
                    "[]: json: cannot unmarshal {} into Go value of type struct",
                    type_name(&other)
                ),
            )),
            Err(e) => Err(Reply::error(422, format!("[]: {e}"))),
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.0
            .get(key)
            .or_else(|| {
                self.0
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(key))
                    .map(|(_, v)| v)
            })
            .filter(|v| !v.is_null())
    }

    fn mismatch(key: &str, got: &Value, want: &str) -> Reply {
        Reply::error(
            422,
            format!(
                "[]: json: cannot unmarshal {} into Go struct field .{key} of type {want}",
                type_name(got)
            ),
        )
    }

    fn str(&self, key: &str) -> Result<Option<String>, Reply> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(Body::mismatch(key, v, "string")),
        }
    }

    /// A string that must be present and not empty (`binding:"Required"`).
    fn required(&self, key: &str, field: &str) -> Result<String, Reply> {
        match self.str(key)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            _ => Err(Reply::validation(field, "Required")),
        }
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, Reply> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(Body::mismatch(key, v, "bool")),
        }
    }

    fn array(&self, key: &str) -> Result<Vec<Value>, Reply> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(v) => Err(Body::mismatch(key, v, "[]")),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, Reply> {
        self.array(key)?
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                other => Err(Body::mismatch(key, &other, "string")),
            })
            .collect()
    }

    fn ints(&self, key: &str) -> Result<Vec<i64>, Reply> {
        self.array(key)?
            .into_iter()
            .map(|v| v.as_i64().ok_or_else(|| Body::mismatch(key, &v, "int64")))
            .collect()
    }
}

// ---- routing ----------------------------------------------------------------------------------

type Handler = fn(&mut State, &Call) -> Res;

/// A route: a path pattern (`{name}` one segment, `{name*}` the rest, `{a}.{b}` a segment split
/// at its last dot) and the handler of each method it answers.
type Route = (&'static str, &'static [(&'static str, Handler)]);

#[rustfmt::skip]
const ROUTES: &[Route] = &[
    ("/version", &[("GET", get_version)]),
    ("/settings/api", &[("GET", settings_api)]),
    ("/settings/ui", &[("GET", settings_ui)]),
    ("/settings/repository", &[("GET", settings_repository)]),
    ("/settings/attachment", &[("GET", settings_attachment)]),
    ("/token", &[("GET", get_token)]),
    ("/user", &[("GET", get_current_user)]),
    ("/user/repos", &[("GET", list_my_repos), ("POST", create_my_repo)]),
    ("/users/{username}", &[("GET", get_user)]),
    ("/users/{username}/repos", &[("GET", list_user_repos)]),
    ("/orgs", &[("GET", list_orgs), ("POST", create_org)]),
    ("/orgs/{org}", &[("GET", get_org)]),
    ("/orgs/{org}/repos", &[("GET", list_org_repos), ("POST", create_org_repo)]),
    ("/repos/search", &[("GET", search_repos)]),
    ("/repos/{owner}/{repo}", &[("GET", get_repo), ("PATCH", edit_repo), ("DELETE", delete_repo)]),
    ("/repos/{owner}/{repo}/collaborators/{collaborator}/permission", &[("GET", get_collaborator_permission)]),
    ("/repos/{owner}/{repo}/branches", &[("GET", list_branches), ("POST", create_branch)]),
    ("/repos/{owner}/{repo}/branches/{branch*}", &[("GET", get_branch)]),
    ("/repos/{owner}/{repo}/contents", &[("GET", get_contents)]),
    ("/repos/{owner}/{repo}/contents/{filepath*}", &[("GET", get_contents), ("POST", create_file), ("PUT", update_file)]),
    ("/repos/{owner}/{repo}/raw/{filepath*}", &[("GET", get_raw)]),
    ("/repos/{owner}/{repo}/issues", &[("GET", list_issues), ("POST", create_issue)]),
    ("/repos/{owner}/{repo}/issues/{index}", &[("GET", get_issue), ("PATCH", edit_issue)]),
    ("/repos/{owner}/{repo}/issues/{index}/comments", &[("GET", list_comments), ("POST", create_comment)]),
    ("/repos/{owner}/{repo}/issues/{index}/labels", &[("GET", get_issue_labels), ("POST", add_issue_labels), ("PUT", replace_issue_labels), ("DELETE", clear_issue_labels)]),
    ("/repos/{owner}/{repo}/labels", &[("GET", list_labels), ("POST", create_label)]),
    ("/repos/{owner}/{repo}/labels/{id}", &[("GET", get_label)]),
    ("/repos/{owner}/{repo}/pulls", &[("GET", list_pulls), ("POST", create_pull)]),
    ("/repos/{owner}/{repo}/pulls/{index}.{diffType}", &[("GET", get_pull_diff)]),
    ("/repos/{owner}/{repo}/pulls/{index}", &[("GET", get_pull), ("PATCH", edit_pull)]),
    ("/repos/{owner}/{repo}/pulls/{index}/reviews", &[("GET", list_reviews), ("POST", create_review)]),
    ("/repos/{owner}/{repo}/pulls/{index}/merge", &[("GET", is_merged), ("POST", merge_pull)]),
    ("/repos/{owner}/{repo}/releases", &[("GET", list_releases), ("POST", create_release)]),
    ("/repos/{owner}/{repo}/releases/tags/{tag}", &[("GET", get_release_by_tag)]),
    ("/repos/{owner}/{repo}/releases/{id}", &[("GET", get_release)]),
    ("/repos/{owner}/{repo}/releases/{id}/assets", &[("GET", list_assets), ("POST", upload_asset)]),
];

fn match_pattern(pattern: &'static str, segs: &[String]) -> Option<Vec<(&'static str, String)>> {
    let pat: Vec<&'static str> = pattern.split('/').skip(1).collect();
    let mut params = Vec::new();
    for (i, p) in pat.iter().enumerate() {
        if let Some(name) = p.strip_prefix('{').and_then(|p| p.strip_suffix("*}")) {
            if i >= segs.len() || i + 1 != pat.len() {
                return None;
            }
            params.push((name, segs[i..].join("/")));
            return Some(params);
        }
        let seg = segs.get(i)?;
        if let Some((a, b)) = p.split_once("}.{") {
            let (x, y) = seg.rsplit_once('.')?;
            if x.is_empty() || y.is_empty() {
                return None;
            }
            params.push((a.trim_start_matches('{'), x.to_string()));
            params.push((b.trim_end_matches('}'), y.to_string()));
        } else if let Some(name) = p.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            if seg.is_empty() {
                return None;
            }
            params.push((name, seg.clone()));
        } else if p != seg {
            return None;
        }
    }
    (pat.len() == segs.len()).then_some(params)
}

/// What a route group needs, restating Gitea's `tokenRequiresScopes` groups.
enum Need {
    /// Neither sign-in nor scope (`/version`, `/settings/*`).
    Nothing,
    /// A signed-in token, no scope (`/token`).
    SignIn,
    /// A signed-in token with these categories, checked outer group first.
    Scopes(&'static [&'static str]),
}

fn need_for(segs: &[String]) -> Need {
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["version"] | ["settings", _] => Need::Nothing,
        ["markdown", ..] | ["markup"] | ["signing-key.gpg"] | ["gitignore", ..] => Need::Nothing,
        ["token"] => Need::SignIn,
        ["admin", ..] => Need::Scopes(&["admin"]),
        ["repos", "issues", "search"] => Need::Scopes(&["issue"]),
        ["repos", _, _, "issues" | "labels" | "milestones", ..] => Need::Scopes(&["issue"]),
        ["repos", _, _, "notifications"] => Need::Scopes(&["notification"]),
        ["repos", ..] | ["repositories", ..] | ["topics", "search"] => {
            Need::Scopes(&["repository"])
        }
        ["user", "repos"] | ["user", "starred", ..] => Need::Scopes(&["user", "repository"]),
        ["user", "orgs"] => Need::Scopes(&["user", "organization"]),
        ["user", ..] => Need::Scopes(&["user"]),
        ["users", _, "repos"] => Need::Scopes(&["user", "repository"]),
        ["users", _, "orgs", ..] => Need::Scopes(&["user", "organization"]),
        ["users", ..] => Need::Scopes(&["user"]),
        ["org", _, "repos"] => Need::Scopes(&["organization", "repository"]),
        ["orgs", ..] | ["teams", ..] => Need::Scopes(&["organization"]),
        ["packages", ..] => Need::Scopes(&["package"]),
        _ => Need::SignIn,
    }
}

/// The scopes the fake checks for `method path` (a concrete API path without `/api/v1`), as
/// `read:user read:repository`, `none`, or `None` for routes outside the groups it models.
pub fn scopes_needed(method: &str, path: &str) -> Option<String> {
    let segs: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(str::to_string)
        .collect();
    let access = if method == "GET" { "read" } else { "write" };
    match need_for(&segs) {
        Need::Nothing => Some("none".into()),
        Need::SignIn => None,
        Need::Scopes(categories) => Some(
            categories
                .iter()
                .map(|c| format!("{access}:{c}"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

fn token_has(token: &Token, needed: &str) -> bool {
    let (access, category) = needed.split_once(':').unwrap_or(("", needed));
    token.scopes.iter().any(|s| {
        s == "all" || s == needed || (access == "read" && *s == format!("write:{category}"))
    })
}

/// The token from `Authorization: token <t>` or `Bearer <t>` (scheme case-insensitive).
fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    (scheme.eq_ignore_ascii_case("token") || scheme.eq_ignore_ascii_case("bearer"))
        .then(|| token.trim().to_string())
}

/// Answers one request; also reports who it was authenticated as.
pub fn dispatch(st: &mut State, spec: Option<&[u8]>, inc: &Incoming) -> (Reply, AuthInfo) {
    let mut info = AuthInfo::default();
    let query = parse_query(inc.raw_query);
    if inc.path == "/swagger.v1.json" {
        let reply = match (inc.method, spec) {
            ("GET" | "HEAD", Some(doc)) => Reply::bytes(200, "application/json", doc.to_vec()),
            ("GET" | "HEAD", None) => Reply::not_found(&[]),
            _ => Reply::error(405, "Method Not Allowed"),
        };
        return (reply, info);
    }
    let Some(api_path) = inc.path.strip_prefix("/api/v1") else {
        return (Reply::not_found(&[]), info);
    };
    let api_path = api_path.trim_end_matches('/');
    let segs: Vec<String> = if api_path.is_empty() {
        Vec::new()
    } else {
        api_path
            .split('/')
            .skip(1)
            .map(|s| percent_decode(s, false))
            .collect()
    };

    // 1. The token.
    let token = match bearer(inc.headers) {
        None => None,
        Some(t) => match st.tokens.get(&t) {
            Some(tok) => Some(tok.clone()),
            None => {
                return (
                    Reply::error(401, "invalid username, password or token"),
                    info,
                );
            }
        },
    };
    info.token_user = token
        .as_ref()
        .and_then(|t| st.user(&t.user))
        .map(|u| u.login.clone());

    // 2. The route.
    let Some((methods, params)) = ROUTES
        .iter()
        .find_map(|&(pattern, methods)| match_pattern(pattern, &segs).map(|p| (methods, p)))
    else {
        return (Reply::not_found(&[]), info);
    };
    let method = if inc.method == "HEAD" {
        "GET"
    } else {
        inc.method
    };
    let Some(&(_, handler)) = methods.iter().find(|(m, _)| *m == method) else {
        let allow: Vec<&str> = methods.iter().map(|(m, _)| *m).collect();
        return (
            Reply::error(405, "Method Not Allowed").with_header("allow", allow.join(", ")),
            info,
        );
    };

    // 3. Sudo.
    let mut doer = token.as_ref().map(|t| t.user.clone()).unwrap_or_default();
    let sudo = query
        .iter()
        .find(|(k, _)| k == "sudo")
        .map(|(_, v)| v.clone())
        .or_else(|| {
            inc.headers
                .get("sudo")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        })
        .filter(|s| !s.is_empty());
    if let Some(target) = &sudo {
        info.sudo = Some(target.clone());
        if token.is_none() || !st.is_admin(&doer) {
            return (
                Reply::json(
                    403,
                    &json!({ "message": "Only administrators allowed to sudo." }),
                ),
                info,
            );
        }
        match st.user(target) {
            Some(u) => doer = u.login.to_ascii_lowercase(),
            None => {
                return (
                    Reply::not_found(&[format!("user redirect does not exist [name: {target}]")]),
                    info,
                );
            }
        }
    }
    info.acting_user = st.user(&doer).map(|u| u.login.clone());

    // 4. Sign-in and scopes.
    let need = need_for(&segs);
    if !matches!(need, Need::Nothing) && token.is_none() {
        return (Reply::error(401, "token is required"), info);
    }
    if let (Need::Scopes(categories), Some(tok)) = (&need, &token) {
        let access = if method == "GET" { "read" } else { "write" };
        for category in *categories {
            let needed = format!("{access}:{category}");
            if !token_has(tok, &needed) {
                return (
                    Reply::error(
                        403,
                        format!(
                            "token does not have at least one of required scope(s): [{needed}]"
                        ),
                    ),
                    info,
                );
            }
        }
    }

    // 5. The handler.
    let call = Call {
        method,
        path: inc.path,
        params,
        query,
        headers: inc.headers,
        body: inc.body,
        doer,
        token,
    };
    let reply = handler(st, &call).unwrap_or_else(|e| e);
    (reply, info)
}

// ---- shared helpers ---------------------------------------------------------------------------

/// A list with Gitea's paging (`page`, `limit` ≤ 50), `X-Total-Count` and `Link`.
fn paged(st: &State, call: &Call, items: Vec<Value>, wrap: fn(Vec<Value>) -> Value) -> Reply {
    let paging = Paging::from_query(&call.query);
    let total = items.len();
    let page = paging.slice(&items);
    let mut reply = Reply::json(200, &wrap(page))
        .with_header("x-total-count", total.to_string())
        .with_header("access-control-expose-headers", "X-Total-Count, Link");
    if let Some(link) = paging.link_header(&st.base_url, call.path, &call.query, total) {
        reply = reply.with_header("link", link);
    }
    reply
}

fn list(st: &State, call: &Call, items: Vec<Value>) -> Reply {
    paged(st, call, items, Value::Array)
}

/// The repository of `{owner}/{repo}` when the doer may see it.
fn repo_for(st: &State, call: &Call) -> Result<usize, Reply> {
    let owner = call.param("owner");
    if st.user(owner).is_none() {
        return Err(Reply::not_found(&[format!(
            "user redirect does not exist [name: {}]",
            owner.to_ascii_lowercase()
        )]));
    }
    let idx = st
        .repo_idx(owner, call.param("repo"))
        .ok_or_else(|| Reply::not_found(&[]))?;
    if !st.can_read(&st.repos[idx], &call.doer) {
        return Err(Reply::not_found(&[]));
    }
    Ok(idx)
}

/// Gitea's 403 for a doer without write permission.
const NO_WRITE_PERMISSION: &str = "user should have a permission to write to a repo";

/// 403 unless the doer may write to the repository, 423 when it is archived.
fn require_write(st: &State, ri: usize, call: &Call) -> Result<(), Reply> {
    let repo = &st.repos[ri];
    if !st.can_write(repo, &call.doer) {
        return Err(Reply::error(403, NO_WRITE_PERMISSION));
    }
    if repo.archived {
        return Err(Reply::error(
            423,
            format!("repo is archived [id: {}]", repo.id),
        ));
    }
    Ok(())
}

fn issue_not_found(repo_id: i64, index: i64) -> Reply {
    Reply::error(
        404,
        format!("issue does not exist [id: 0, repo_id: {repo_id}, index: {index}]"),
    )
}

fn pull_not_found(repo_id: i64, index: i64) -> Reply {
    Reply::error(
        404,
        format!(
            "pull request does not exist [id: 0, issue_id: 0, head_repo_id: 0, base_repo_id: {repo_id}, index: {index}]"
        ),
    )
}

/// The repository (see [`repo_for`]) and the position of its issue `{index}`; with
/// `pulls_only`, of its pull request `{index}` (a plain issue is then a pull request's 404).
fn indexed_for(st: &State, call: &Call, pulls_only: bool) -> Result<(usize, usize), Reply> {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let index = call.int_param("index");
    let found = repo
        .issues
        .iter()
        .position(|i| i.index == index && (!pulls_only || i.pull.is_some()));
    match found {
        Some(pos) => Ok((ri, pos)),
        None if pulls_only => Err(pull_not_found(repo.id, index)),
        None => Err(issue_not_found(repo.id, index)),
    }
}

/// The repository and the position of its issue (or pull request) `{index}`.
fn issue_for(st: &State, call: &Call) -> Result<(usize, usize), Reply> {
    indexed_for(st, call, false)
}

/// The repository and the position of its pull request `{index}` (404 for a plain issue).
fn pull_for(st: &State, call: &Call) -> Result<(usize, usize), Reply> {
    indexed_for(st, call, true)
}

/// 423 when the repository is archived (the issue and pull request routes' wording).
fn refuse_archived(st: &State, ri: usize) -> Result<(), Reply> {
    if st.repos[ri].archived {
        return Err(Reply::error(423, "repo is archived"));
    }
    Ok(())
}

/// Whether the doer may write to the repository; 403 when it may not and is not the poster of
/// issue `pos` either.
fn writer_or_poster(st: &State, ri: usize, pos: usize, call: &Call) -> Result<bool, Reply> {
    let writer = st.can_write(&st.repos[ri], &call.doer);
    if !writer && st.repos[ri].issues[pos].poster != call.doer {
        return Err(Reply::error(403, NO_WRITE_PERMISSION));
    }
    Ok(writer)
}

/// The login of the doer as written in commits (empty when anonymous).
fn doer_login(st: &State, call: &Call) -> String {
    st.user(&call.doer)
        .map(|u| u.login.clone())
        .unwrap_or_default()
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn valid_ref_name(name: &str) -> bool {
    !name.is_empty()
        && !name.contains("..")
        && !name.starts_with('/')
        && !name.ends_with('/')
        && !name.ends_with(".lock")
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c))
}

/// The body's `key`, which must be present (`[field]: Required`) and a valid ref name
/// (`[field]: GitRefName`).
fn required_ref_name(body: &Body, key: &str, field: &str) -> Result<String, Reply> {
    let name = body.required(key, field)?;
    if !valid_ref_name(&name) {
        return Err(Reply::validation(field, "GitRefName"));
    }
    Ok(name)
}

fn valid_tree_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != ".." && s != ".git")
}

// ---- misc, user, orgs -------------------------------------------------------------------------

fn get_version(_: &mut State, _: &Call) -> Res {
    Ok(Reply::json(200, &json!({ "version": "1.28.0+fake" })))
}

fn settings_api(_: &mut State, _: &Call) -> Res {
    Ok(Reply::json(
        200,
        &json!({
            "max_response_items": super::util::MAX_RESPONSE_ITEMS,
            "default_paging_num": super::util::DEFAULT_PAGING_NUM,
            "default_git_trees_per_page": 1000,
            "default_max_blob_size": 10_485_760,
            "default_max_response_size": 104_857_600,
        }),
    ))
}

fn settings_ui(_: &mut State, _: &Call) -> Res {
    Ok(Reply::json(
        200,
        &json!({
            "default_theme": "gitea-auto",
            "allowed_reactions": ["+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"],
            "custom_emojis": ["git", "gitea", "codeberg", "gitlab", "github", "gogs"],
        }),
    ))
}

fn settings_repository(_: &mut State, _: &Call) -> Res {
    Ok(Reply::json(
        200,
        &json!({
            "mirrors_disabled": false,
            "http_git_disabled": false,
            "migrations_disabled": false,
            "stars_disabled": false,
            "time_tracking_disabled": false,
            "lfs_disabled": false,
        }),
    ))
}

fn settings_attachment(_: &mut State, _: &Call) -> Res {
    Ok(Reply::json(
        200,
        &json!({ "enabled": true, "allowed_types": "*/*", "max_size": 2048, "max_files": 5 }),
    ))
}

fn get_token(st: &mut State, call: &Call) -> Res {
    let tok = call
        .token
        .as_ref()
        .ok_or_else(|| Reply::error(401, "token is required"))?;
    let user = st.user(&tok.user).map(|u| (u.id, u.login.clone()));
    let (uid, login) = user.unwrap_or((0, tok.user.clone()));
    Ok(Reply::json(
        200,
        &json!({
            "id": tok.id,
            "name": tok.name,
            "scopes": tok.scopes,
            "created_at": super::util::rfc3339(tok.created),
            "last_used_at": super::util::rfc3339(tok.created),
            "user": { "id": uid, "login": login },
        }),
    ))
}

fn get_current_user(st: &mut State, call: &Call) -> Res {
    Ok(Reply::json(200, &st.user_json(&call.doer)))
}

fn get_user(st: &mut State, call: &Call) -> Res {
    let name = call.param("username");
    if st.user(name).is_none() {
        return Err(Reply::not_found(&[format!(
            "user redirect does not exist [name: {}]",
            name.to_ascii_lowercase()
        )]));
    }
    Ok(Reply::json(200, &st.user_json(name)))
}

fn repos_where(st: &State, call: &Call, keep: impl Fn(&super::state::Repo) -> bool) -> Vec<Value> {
    st.repos
        .iter()
        .filter(|r| keep(r) && st.can_read(r, &call.doer))
        .map(|r| st.repo_json(r, Some(&call.doer)))
        .collect()
}

fn list_my_repos(st: &mut State, call: &Call) -> Res {
    let doer = call.doer.clone();
    let items = repos_where(st, call, |r| {
        r.owner.eq_ignore_ascii_case(&doer)
            || r.collaborators.contains(&doer)
            || st.is_org_member(&r.owner, &doer)
    });
    Ok(list(st, call, items))
}

fn list_user_repos(st: &mut State, call: &Call) -> Res {
    let name = call.param("username").to_string();
    if st.user(&name).is_none() {
        return Err(Reply::not_found(&[format!(
            "user redirect does not exist [name: {}]",
            name.to_ascii_lowercase()
        )]));
    }
    let items = repos_where(st, call, |r| r.owner.eq_ignore_ascii_case(&name));
    Ok(list(st, call, items))
}

fn create_repo_for(st: &mut State, call: &Call, owner: &str) -> Res {
    let body = call.body()?;
    let name = body.required("name", "Name")?;
    if !valid_name(&name) {
        return Err(Reply::validation("Name", "AlphaDashDot"));
    }
    let seed = RepoSeed {
        description: body.str("description")?.unwrap_or_default(),
        private: body.bool("private")?.unwrap_or(false),
        auto_init: body.bool("auto_init")?.unwrap_or(false),
        default_branch: body
            .str("default_branch")?
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| "main".into()),
    };
    if !valid_ref_name(&seed.default_branch) {
        return Err(Reply::validation("DefaultBranch", "GitRefName"));
    }
    let Some(ri) = st.create_repo(owner, &name, &seed) else {
        return Err(Reply::error(
            409,
            "The repository with the same name already exists.",
        ));
    };
    Ok(Reply::json(
        201,
        &st.repo_json(&st.repos[ri], Some(&call.doer)),
    ))
}

fn create_my_repo(st: &mut State, call: &Call) -> Res {
    let doer = call.doer.clone();
    create_repo_for(st, call, &doer)
}

fn org_not_found(name: &str) -> Reply {
    Reply::not_found(&[format!(
        "user redirect does not exist [name: {}]",
        name.to_ascii_lowercase()
    )])
}

fn list_orgs(st: &mut State, call: &Call) -> Res {
    let items: Vec<Value> = st
        .users
        .values()
        .filter(|u| u.is_org)
        .map(|u| st.org_json(&u.login))
        .collect();
    Ok(list(st, call, items))
}

fn create_org(st: &mut State, call: &Call) -> Res {
    let body = call.body()?;
    let name = body.required("username", "UserName")?;
    if !valid_name(&name) || name.len() > 40 {
        return Err(Reply::validation("UserName", "Username"));
    }
    if st.user(&name).is_some() {
        return Err(Reply::error(
            422,
            format!("user already exists [name: {name}]"),
        ));
    }
    let key = st.ensure_user(&name, false, true);
    let doer = call.doer.clone();
    let org = st.users.get_mut(&key).expect("just created");
    org.members.push(doer);
    org.full_name = body.str("full_name")?.unwrap_or_default();
    org.description = body.str("description")?.unwrap_or_default();
    org.website = body.str("website")?.unwrap_or_default();
    org.location = body.str("location")?.unwrap_or_default();
    org.email = body.str("email")?.unwrap_or_default();
    if let Some(v) = body.str("visibility")? {
        if !matches!(v.as_str(), "public" | "limited" | "private") {
            return Err(Reply::validation("Visibility", "In"));
        }
        org.visibility = v;
    }
    Ok(Reply::json(201, &st.org_json(&name)))
}

fn org_index(st: &State, name: &str) -> Result<(), Reply> {
    match st.user(name) {
        Some(u) if u.is_org => Ok(()),
        _ => Err(org_not_found(name)),
    }
}

fn get_org(st: &mut State, call: &Call) -> Res {
    let name = call.param("org");
    org_index(st, name)?;
    Ok(Reply::json(200, &st.org_json(name)))
}

fn list_org_repos(st: &mut State, call: &Call) -> Res {
    let name = call.param("org").to_string();
    org_index(st, &name)?;
    let items = repos_where(st, call, |r| r.owner.eq_ignore_ascii_case(&name));
    Ok(list(st, call, items))
}

fn create_org_repo(st: &mut State, call: &Call) -> Res {
    let name = call.param("org").to_string();
    org_index(st, &name)?;
    if !st.is_admin(&call.doer) && !st.is_org_member(&name, &call.doer) {
        return Err(Reply::error(
            403,
            "Given user is not owner of organization.",
        ));
    }
    create_repo_for(st, call, &name)
}

// ---- repositories -----------------------------------------------------------------------------

fn search_repos(st: &mut State, call: &Call) -> Res {
    let q = call.q("q").map(str::to_lowercase);
    let include_desc = call.q_bool("includeDesc").unwrap_or(false);
    let uid = call
        .q("uid")
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|v| *v > 0);
    let private = call.q_bool("private").or(call.q_bool("is_private"));
    let archived = call.q_bool("archived");
    let mut repos: Vec<&super::state::Repo> = st
        .repos
        .iter()
        .filter(|r| st.can_read(r, &call.doer))
        .filter(|r| {
            q.as_ref().is_none_or(|q| {
                r.name.to_lowercase().contains(q)
                    || (include_desc && r.description.to_lowercase().contains(q))
            })
        })
        .filter(|r| uid.is_none_or(|id| st.user(&r.owner).is_some_and(|u| u.id == id)))
        .filter(|r| private.is_none_or(|p| r.private == p))
        .filter(|r| archived.is_none_or(|a| r.archived == a))
        .collect();
    repos.sort_by(|a, b| {
        a.name
            .to_lowercase()
            .cmp(&b.name.to_lowercase())
            .then(a.id.cmp(&b.id))
    });
    let items: Vec<Value> = repos
        .iter()
        .map(|r| st.repo_json(r, Some(&call.doer)))
        .collect();
    Ok(paged(
        st,
        call,
        items,
        |data| json!({ "ok": true, "data": data }),
    ))
}

fn get_repo(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    Ok(Reply::json(
        200,
        &st.repo_json(&st.repos[ri], Some(&call.doer)),
    ))
}

/// `RepoCollaboratorPermission`: what `collaborator` may do in the repository.
fn get_collaborator_permission(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let who = call.param("collaborator").to_string();
    if st.user(&who).is_none() {
        return Err(Reply::not_found(&[format!(
            "user does not exist [name: {who}]"
        )]));
    }
    let repo = &st.repos[ri];
    let permission = if st.is_repo_owner(repo, &who) {
        "admin"
    } else if st.can_write(repo, &who) {
        "write"
    } else if st.can_read(repo, &who) {
        "read"
    } else {
        "none"
    };
    Ok(Reply::json(
        200,
        &json!({"permission": permission, "role_name": permission, "user": st.user_json(&who)}),
    ))
}

fn edit_repo(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    if !st.is_repo_owner(&st.repos[ri], &call.doer) {
        return Err(Reply::error(
            403,
            "user should be an owner or a collaborator with admin write of a repository",
        ));
    }
    let body = call.body()?;
    if let Some(name) = body.str("name")? {
        if !valid_name(&name) {
            return Err(Reply::validation("Name", "AlphaDashDot"));
        }
        let owner = st.repos[ri].owner.clone();
        if st.repo_idx(&owner, &name).is_some_and(|other| other != ri) {
            return Err(Reply::error(
                422,
                format!(
                    "repository already exists [uname: {}, name: {name}]",
                    owner.to_ascii_lowercase()
                ),
            ));
        }
        st.repos[ri].name = name;
    }
    if let Some(branch) = body.str("default_branch")? {
        let repo = &st.repos[ri];
        if !repo.branches.is_empty() && !repo.branches.contains_key(&branch) {
            return Err(Reply::not_found(&[format!(
                "branch does not exist [name: {branch}]"
            )]));
        }
        st.repos[ri].default_branch = branch;
    }
    let description = body.str("description")?;
    let website = body.str("website")?;
    let private = body.bool("private")?;
    let archived = body.bool("archived")?;
    let now = st.tick();
    let repo = &mut st.repos[ri];
    if let Some(d) = description {
        repo.description = d;
    }
    if let Some(w) = website {
        repo.website = w;
    }
    if let Some(p) = private {
        repo.private = p;
    }
    if let Some(a) = archived {
        repo.archived = a;
    }
    const MODELLED: &[&str] = &[
        "name",
        "default_branch",
        "description",
        "website",
        "private",
        "archived",
    ];
    for (k, v) in &body.0 {
        let known = MODELLED.iter().any(|m| m.eq_ignore_ascii_case(k));
        if !known && !k.contains("password") && !k.contains("token") && !v.is_null() {
            repo.extra.insert(k.to_ascii_lowercase(), v.clone());
        }
    }
    repo.updated = now;
    Ok(Reply::json(
        200,
        &st.repo_json(&st.repos[ri], Some(&call.doer)),
    ))
}

fn delete_repo(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    if !st.is_repo_owner(&st.repos[ri], &call.doer) {
        return Err(Reply::error(403, "user should be the owner of the repo"));
    }
    st.repos.remove(ri);
    Ok(Reply::empty(204))
}

// ---- branches ---------------------------------------------------------------------------------

fn list_branches(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let mut branches: Vec<&super::state::Branch> = repo.branches.values().collect();
    branches.sort_by_key(|b| (b.name != repo.default_branch, b.name.clone()));
    let items = branches
        .iter()
        .map(|b| st.branch_json(repo, b, &call.doer))
        .collect();
    Ok(list(st, call, items))
}

fn create_branch(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    require_write(st, ri, call)?;
    let body = call.body()?;
    let name = required_ref_name(&body, "new_branch_name", "BranchName")?;
    let repo = &st.repos[ri];
    let from = body
        .str("old_ref_name")?
        .or(body.str("old_branch_name")?)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_start_matches("refs/heads/").to_string())
        .unwrap_or_else(|| repo.default_branch.clone());
    let Some(source) = repo.branches.get(&from) else {
        return Err(Reply::error(404, "The old branch does not exist"));
    };
    if repo.branches.contains_key(&name) {
        return Err(Reply::error(409, "The branch already exists."));
    }
    let mut branch = source.clone();
    branch.name = name.clone();
    st.repos[ri].branches.insert(name.clone(), branch);
    let repo = &st.repos[ri];
    Ok(Reply::json(
        201,
        &st.branch_json(repo, &repo.branches[&name], &call.doer),
    ))
}

fn get_branch(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let name = call.param("branch");
    let branch = repo.branches.get(name).ok_or_else(|| {
        Reply::not_found(&[format!(
            "branch does not exist [repo_id: {} name: {name}]",
            repo.id
        )])
    })?;
    Ok(Reply::json(200, &st.branch_json(repo, branch, &call.doer)))
}

// ---- files ------------------------------------------------------------------------------------

/// The branch a `ref` names: a branch name, or the head commit of a branch (full or prefix).
fn resolve_ref(
    repo: &super::state::Repo,
    reference: Option<&str>,
    path: &str,
) -> Result<String, Reply> {
    let reference = reference
        .map(|r| r.trim_start_matches("refs/heads/"))
        .unwrap_or(&repo.default_branch);
    if repo.branches.contains_key(reference) {
        return Ok(reference.to_string());
    }
    if reference.len() >= 7 {
        if let Some(b) = repo
            .branches
            .values()
            .find(|b| b.head.sha.starts_with(reference))
        {
            return Ok(b.name.clone());
        }
    }
    Err(Reply::not_found(&[format!(
        "object does not exist [id: {reference}, rel_path: {path}]"
    )]))
}

fn get_contents(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let path = call.param("filepath").trim_matches('/').to_string();
    let branch = resolve_ref(repo, call.q("ref"), &path)?;
    let files = &repo.branches[&branch].files;
    if let Some(entry) = files.get(&path) {
        return Ok(Reply::json(
            200,
            &st.file_json(repo, &branch, &path, entry, true),
        ));
    }
    let prefix = if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    };
    let mut entries: Vec<(String, Value)> = Vec::new();
    for (p, entry) in files.range(prefix.clone()..) {
        let Some(rest) = p.strip_prefix(&prefix) else {
            break;
        };
        match rest.split_once('/') {
            None => entries.push((
                rest.to_string(),
                st.file_json(repo, &branch, p, entry, false),
            )),
            Some((dir, _)) => {
                if entries.last().is_none_or(|(n, _)| n != dir) {
                    let dir_path = format!("{prefix}{dir}");
                    entries.push((dir.to_string(), st.dir_json(repo, &branch, &dir_path)));
                }
            }
        }
    }
    if entries.is_empty() {
        return Err(Reply::not_found(&[format!(
            "object does not exist [id: {branch}, rel_path: {path}]"
        )]));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.dedup_by(|a, b| a.0 == b.0);
    Ok(Reply::json(
        200,
        &Value::Array(entries.into_iter().map(|(_, v)| v).collect()),
    ))
}

fn decode_content(body: &Body) -> Result<Vec<u8>, Reply> {
    let content = body
        .str("content")?
        .ok_or_else(|| Reply::validation("ContentBase64", "Required"))?;
    base64::engine::general_purpose::STANDARD
        .decode(content.trim())
        .map_err(|e| Reply::error(422, e.to_string()))
}

/// The first steps of a file change, in this order: the repository the doer may write to, the
/// checked `{filepath}` (422 for a malformed one), the body and its decoded `content`.
fn file_change(st: &State, call: &Call) -> Result<(usize, String, Body, Vec<u8>), Reply> {
    let ri = repo_for(st, call)?;
    require_write(st, ri, call)?;
    let path = call.param("filepath").to_string();
    if !valid_tree_path(&path) {
        return Err(Reply::error(
            422,
            format!("path contains a malformed path component [path: {path}]"),
        ));
    }
    let body = call.body()?;
    let content = decode_content(&body)?;
    Ok((ri, path, body, content))
}

/// The body's `branch`, or the default branch when it is absent or empty.
fn source_branch(repo: &super::state::Repo, body: &Body) -> Result<String, Reply> {
    Ok(body
        .str("branch")?
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| repo.default_branch.clone()))
}

/// Where a file change lands: `(source branch, target branch)`, creating `new_branch`.
fn target_branch(st: &mut State, ri: usize, body: &Body) -> Result<String, Reply> {
    let repo = &st.repos[ri];
    let source = source_branch(repo, body)?;
    let new_branch = body.str("new_branch")?.filter(|b| !b.is_empty());
    if !repo.branches.is_empty() && !repo.branches.contains_key(&source) {
        return Err(Reply::error(
            404,
            format!("branch does not exist [name: {source}]"),
        ));
    }
    let Some(new) = new_branch else {
        return Ok(source);
    };
    if !valid_ref_name(&new) {
        return Err(Reply::validation("NewBranchName", "GitRefName"));
    }
    if repo.branches.contains_key(&new) {
        return Err(Reply::error(
            422,
            format!("branch already exists [name: {new}]"),
        ));
    }
    if let Some(src) = repo.branches.get(&source) {
        let mut b = src.clone();
        b.name = new.clone();
        st.repos[ri].branches.insert(new.clone(), b);
    }
    Ok(new)
}

fn file_response(
    st: &State,
    ri: usize,
    branch: &str,
    path: &str,
    commit: &super::state::Commit,
) -> Value {
    let repo = &st.repos[ri];
    let entry = &repo.branches[branch].files[path];
    json!({
        "content": st.file_json(repo, branch, path, entry, false),
        "commit": st.file_commit_json(repo, commit),
        "verification": {
            "verified": false,
            "reason": "gpg.error.not_signed_commit",
            "signature": "",
            "signer": null,
            "payload": "",
        },
    })
}

fn create_file(st: &mut State, call: &Call) -> Res {
    let (ri, path, body, content) = file_change(st, call)?;
    let message = body
        .str("message")?
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| format!("Add {path}"));
    // Check before creating a new branch, so a failure leaves nothing behind.
    let source = source_branch(&st.repos[ri], &body)?;
    let exists_on = |b: &str| {
        st.repos[ri]
            .branches
            .get(b)
            .is_some_and(|b| b.files.contains_key(&path))
    };
    if exists_on(&source) {
        return Err(Reply::error(
            422,
            format!("repository file already exists [path: {path}]"),
        ));
    }
    let branch = target_branch(st, ri, &body)?;
    let author = doer_login(st, call);
    let commit = st.commit_files(
        ri,
        &branch,
        &author,
        &message,
        &[(path.clone(), Some(content))],
    );
    Ok(Reply::json(
        201,
        &file_response(st, ri, &branch, &path, &commit),
    ))
}

fn update_file(st: &mut State, call: &Call) -> Res {
    let (ri, path, body, content) = file_change(st, call)?;
    let sha = body.str("sha")?.filter(|s| !s.is_empty());
    let from_path = body
        .str("from_path")?
        .filter(|p| !p.is_empty() && *p != path);
    let source = source_branch(&st.repos[ri], &body)?;
    let old_path = from_path.clone().unwrap_or_else(|| path.clone());
    let existing = st.repos[ri]
        .branches
        .get(&source)
        .and_then(|b| b.files.get(&old_path))
        .map(|e| blob_sha(&e.content));
    let creating = match (&existing, &sha) {
        (None, None) if from_path.is_none() => true,
        (None, _) => {
            return Err(Reply::error(
                404,
                format!("repository file does not exist [path: {old_path}]"),
            ));
        }
        (Some(_), None) => {
            return Err(Reply::error(
                422,
                "a SHA or commit ID must be proved when updating a file",
            ));
        }
        (Some(expected), Some(given)) if expected != given => {
            return Err(Reply::error(
                422,
                format!("sha does not match [given: {given}, expected: {expected}]"),
            ));
        }
        (Some(_), Some(_)) => false,
    };
    let message = body
        .str("message")?
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| {
            if creating {
                format!("Add {path}")
            } else {
                format!("Update {path}")
            }
        });
    let branch = target_branch(st, ri, &body)?;
    let author = doer_login(st, call);
    let mut changes = vec![(path.clone(), Some(content))];
    if let Some(from) = from_path {
        changes.push((from, None));
    }
    let commit = st.commit_files(ri, &branch, &author, &message, &changes);
    let status = if creating { 201 } else { 200 };
    Ok(Reply::json(
        status,
        &file_response(st, ri, &branch, &path, &commit),
    ))
}

fn get_raw(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let path = call.param("filepath").to_string();
    let branch = resolve_ref(repo, call.q("ref"), &path)?;
    let entry = repo.branches[&branch].files.get(&path).ok_or_else(|| {
        Reply::not_found(&[format!(
            "object does not exist [id: {branch}, rel_path: {path}]"
        )])
    })?;
    Ok(Reply::bytes(
        200,
        content_type_for(&path),
        entry.content.clone(),
    ))
}

// ---- issues, comments, labels -----------------------------------------------------------------

fn list_issues(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let state = call.q("state").unwrap_or("open");
    let kind = call.q("type");
    let q = call.q("q").map(str::to_lowercase);
    let created_by = call.q("created_by").map(str::to_ascii_lowercase);
    let assigned_by = call.q("assigned_by").map(str::to_ascii_lowercase);
    let label_names = call.q_all("labels");
    let mut label_ids = Vec::new();
    for name in &label_names {
        match repo.labels.iter().find(|l| l.name == *name) {
            Some(l) => label_ids.push(l.id),
            None => return Ok(list(st, call, Vec::new())),
        }
    }
    let mut issues: Vec<&Issue> = repo
        .issues
        .iter()
        .filter(|i| match state {
            "closed" => !i.open,
            "all" => true,
            _ => i.open,
        })
        .filter(|i| match kind {
            Some("issues") => i.pull.is_none(),
            Some("pulls") => i.pull.is_some(),
            _ => true,
        })
        .filter(|i| label_ids.iter().all(|id| i.label_ids.contains(id)))
        .filter(|i| {
            q.as_ref().is_none_or(|q| {
                i.title.to_lowercase().contains(q) || i.body.to_lowercase().contains(q)
            })
        })
        .filter(|i| created_by.as_ref().is_none_or(|c| i.poster == *c))
        .filter(|i| assigned_by.as_ref().is_none_or(|a| i.assignees.contains(a)))
        .collect();
    issues.sort_by_key(|i| std::cmp::Reverse(i.index));
    let items = issues.iter().map(|i| st.issue_json(repo, i)).collect();
    Ok(list(st, call, items))
}

/// Lower-cased logins of `names`; 422 naming the first unknown one.
fn known_users(st: &State, names: &[String]) -> Result<Vec<String>, Reply> {
    names
        .iter()
        .map(|n| {
            st.user(n)
                .map(|u| u.login.to_ascii_lowercase())
                .ok_or_else(|| {
                    Reply::error(
                        422,
                        format!(
                            "user does not exist [uid: 0, name: {}]",
                            n.to_ascii_lowercase()
                        ),
                    )
                })
        })
        .collect()
}

fn assignees_from(st: &State, body: &Body) -> Result<Option<Vec<String>>, Reply> {
    let mut names = body.strings("assignees")?;
    if let Some(one) = body.str("assignee")?.filter(|a| !a.is_empty()) {
        if !names.contains(&one) {
            names.insert(0, one);
        }
    }
    if body.get("assignees").is_none() && body.get("assignee").is_none() {
        return Ok(None);
    }
    known_users(st, &names).map(Some)
}

/// The assignees a new issue or pull request gets: a writer's, none for anyone else.
fn writer_assignees(st: &State, body: &Body, writer: bool) -> Result<Vec<String>, Reply> {
    if !writer {
        return Ok(Vec::new());
    }
    Ok(assignees_from(st, body)?.unwrap_or_default())
}

/// The labels a new issue or pull request gets: a writer's known label ids, none for anyone
/// else.
fn writer_labels(st: &State, ri: usize, body: &Body, writer: bool) -> Result<Vec<i64>, Reply> {
    if !writer {
        return Ok(Vec::new());
    }
    Ok(body
        .ints("labels")?
        .into_iter()
        .filter(|id| st.repos[ri].label_by_id(*id).is_some())
        .collect())
}

fn create_issue(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    refuse_archived(st, ri)?;
    let body = call.body()?;
    let title = body.required("title", "Title")?;
    let writer = st.can_write(&st.repos[ri], &call.doer);
    let assignees = writer_assignees(st, &body, writer)?;
    let label_ids = writer_labels(st, ri, &body, writer)?;
    let closed = body.bool("closed")?.unwrap_or(false);
    let due_date = body.str("due_date")?;
    let text = body.str("body")?.unwrap_or_default();
    let id = st.next_id("issue");
    let now = st.tick();
    let index = st.repos[ri].push_issue(Issue {
        body: text,
        open: !closed,
        label_ids,
        assignees,
        closed_at: closed.then_some(now),
        due_date,
        ..Issue::new(id, title, call.doer.clone(), now)
    });
    let repo = &st.repos[ri];
    Ok(Reply::json(
        201,
        &st.issue_json(repo, repo.issue(index).expect("just created")),
    ))
}

fn get_issue(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = issue_for(st, call)?;
    let repo = &st.repos[ri];
    Ok(Reply::json(200, &st.issue_json(repo, &repo.issues[pos])))
}

/// The 412 for changing the state of a merged pull request.
fn merged_state_unchangeable() -> Reply {
    Reply::error(
        412,
        "cannot change state of this pull request, it was already merged",
    )
}

/// The fields an `EditIssueOption` and an `EditPullRequestOption` share.
struct IssueEdit {
    title: Option<String>,
    text: Option<String>,
    state: Option<String>,
    due: Option<String>,
    unset_due: bool,
    /// Only a writer's assignees count; `None` leaves them as they are.
    assignees: Option<Vec<String>>,
}

impl IssueEdit {
    /// Reads the shared fields of `body` in Gitea's order (the first wrong one is the error).
    fn read(st: &State, body: &Body, writer: bool) -> Result<IssueEdit, Reply> {
        Ok(IssueEdit {
            title: body.str("title")?.filter(|t| !t.trim().is_empty()),
            text: body.str("body")?,
            state: body.str("state")?,
            due: body.str("due_date")?,
            unset_due: body.bool("unset_due_date")?.unwrap_or(false),
            assignees: if writer {
                assignees_from(st, body)?
            } else {
                None
            },
        })
    }

    /// Applies the edit at logical time `now`: closing stamps `closed_at`, reopening clears it,
    /// and the issue counts as updated.
    fn apply(self, issue: &mut Issue, now: i64) {
        if let Some(t) = self.title {
            issue.title = t;
        }
        if let Some(b) = self.text {
            issue.body = b;
        }
        match self.state.as_deref() {
            Some("closed") if issue.open => {
                issue.open = false;
                issue.closed_at = Some(now);
            }
            Some("open") if !issue.open => {
                issue.open = true;
                issue.closed_at = None;
            }
            _ => {}
        }
        if self.unset_due {
            issue.due_date = None;
        } else if let Some(d) = self.due {
            issue.due_date = Some(d);
        }
        if let Some(a) = self.assignees {
            issue.assignees = a;
        }
        issue.updated = now;
    }
}

fn edit_issue(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = issue_for(st, call)?;
    let writer = writer_or_poster(st, ri, pos, call)?;
    refuse_archived(st, ri)?;
    let body = call.body()?;
    let edit = IssueEdit::read(st, &body, writer)?;
    let issue = &st.repos[ri].issues[pos];
    if issue.pull.as_ref().is_some_and(|p| p.merged) && edit.state.as_deref() == Some("open") {
        return Err(merged_state_unchangeable());
    }
    let now = st.tick();
    edit.apply(&mut st.repos[ri].issues[pos], now);
    let repo = &st.repos[ri];
    Ok(Reply::json(201, &st.issue_json(repo, &repo.issues[pos])))
}

/// Gitea does not page issue comments: every comment, with `X-Total-Count`.
fn list_comments(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = issue_for(st, call)?;
    let repo = &st.repos[ri];
    let issue = &repo.issues[pos];
    let items: Vec<Value> = issue
        .comments
        .iter()
        .map(|c| st.comment_json(repo, issue, c))
        .collect();
    let total = items.len();
    Ok(Reply::json(200, &Value::Array(items))
        .with_header("x-total-count", total.to_string())
        .with_header("access-control-expose-headers", "X-Total-Count"))
}

fn create_comment(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = issue_for(st, call)?;
    refuse_archived(st, ri)?;
    let body = call.body()?;
    let text = body.required("body", "Body")?;
    let id = st.next_id("comment");
    let now = st.tick();
    let issue = &mut st.repos[ri].issues[pos];
    issue.comments.push(Comment {
        id,
        body: text,
        poster: call.doer.clone(),
        created: now,
        updated: now,
    });
    issue.updated = now;
    let repo = &st.repos[ri];
    let issue = &repo.issues[pos];
    Ok(Reply::json(
        201,
        &st.comment_json(repo, issue, issue.comments.last().expect("just added")),
    ))
}

fn issue_labels_reply(st: &State, ri: usize, pos: usize) -> Reply {
    let repo = &st.repos[ri];
    let issue = &repo.issues[pos];
    let labels: Vec<Value> = issue
        .label_ids
        .iter()
        .filter_map(|id| repo.label_by_id(*id))
        .map(|l| st.label_json(repo, l))
        .collect();
    Reply::json(200, &Value::Array(labels))
}

fn get_issue_labels(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = issue_for(st, call)?;
    Ok(issue_labels_reply(st, ri, pos))
}

/// The label ids of an `IssueLabelsOption` (ids or names, not both; unknown ones are ignored,
/// as Gitea does).
fn label_ids_from(st: &State, ri: usize, body: &Body) -> Result<Vec<i64>, Reply> {
    let repo = &st.repos[ri];
    let mut ids = Vec::new();
    let mut names = Vec::new();
    for v in body.array("labels")? {
        match v {
            Value::Number(n) => ids.push(n.as_f64().unwrap_or(0.0) as i64),
            Value::String(s) => names.push(s),
            _ => {}
        }
    }
    if !ids.is_empty() && !names.is_empty() {
        return Err(Reply::error(
            400,
            "labels should be an array of strings or integers",
        ));
    }
    for name in names {
        if let Some(l) = repo.labels.iter().find(|l| l.name == name) {
            ids.push(l.id);
        }
    }
    ids.retain(|id| repo.label_by_id(*id).is_some());
    ids.dedup();
    Ok(ids)
}

fn write_issue_labels(st: &mut State, call: &Call, replace: bool) -> Res {
    let (ri, pos) = issue_for(st, call)?;
    require_write(st, ri, call)?;
    let body = call.body()?;
    let ids = label_ids_from(st, ri, &body)?;
    let now = st.tick();
    let issue = &mut st.repos[ri].issues[pos];
    if replace {
        issue.label_ids.clear();
    }
    for id in ids {
        if !issue.label_ids.contains(&id) {
            issue.label_ids.push(id);
        }
    }
    issue.updated = now;
    Ok(issue_labels_reply(st, ri, pos))
}

fn add_issue_labels(st: &mut State, call: &Call) -> Res {
    write_issue_labels(st, call, false)
}

fn replace_issue_labels(st: &mut State, call: &Call) -> Res {
    write_issue_labels(st, call, true)
}

fn clear_issue_labels(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = issue_for(st, call)?;
    require_write(st, ri, call)?;
    st.repos[ri].issues[pos].label_ids.clear();
    Ok(Reply::empty(204))
}

fn list_labels(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let mut labels: Vec<&Label> = repo.labels.iter().collect();
    labels.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    let items = labels.iter().map(|l| st.label_json(repo, l)).collect();
    Ok(list(st, call, items))
}

fn normalize_color(color: &str) -> Option<String> {
    let c = color.trim().trim_start_matches('#').to_ascii_lowercase();
    let hex = c.chars().all(|ch| ch.is_ascii_hexdigit());
    match c.len() {
        6 if hex => Some(c),
        3 if hex => Some(c.chars().flat_map(|ch| [ch, ch]).collect()),
        _ => None,
    }
}

fn create_label(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    require_write(st, ri, call)?;
    let body = call.body()?;
    let name = body.required("name", "Name")?;
    let color = body.required("color", "Color")?;
    let color = normalize_color(&color)
        .ok_or_else(|| Reply::error(422, format!("invalid color format: {color}")))?;
    let description = body.str("description")?.unwrap_or_default();
    let exclusive = body.bool("exclusive")?.unwrap_or(false);
    let archived = body.bool("is_archived")?.unwrap_or(false);
    let id = st.next_id("label");
    st.repos[ri].labels.push(Label {
        id,
        name,
        color,
        description,
        exclusive,
        archived,
    });
    let repo = &st.repos[ri];
    Ok(Reply::json(
        201,
        &st.label_json(repo, repo.labels.last().expect("just added")),
    ))
}

fn get_label(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let id = call.int_param("id");
    let label = repo
        .label_by_id(id)
        .ok_or_else(|| Reply::not_found(&[format!("label does not exist [id: {id}]")]))?;
    Ok(Reply::json(200, &st.label_json(repo, label)))
}

// ---- pull requests ----------------------------------------------------------------------------

fn list_pulls(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let state = call.q("state").unwrap_or("open");
    let base = call.q("base_branch");
    let poster = call.q("poster").map(str::to_ascii_lowercase);
    let labels: Vec<i64> = call
        .q_all("labels")
        .iter()
        .filter_map(|l| l.parse().ok())
        .collect();
    let mut pulls: Vec<&Issue> = repo
        .issues
        .iter()
        .filter(|i| i.pull.is_some())
        .filter(|i| match state {
            "closed" => !i.open,
            "all" => true,
            _ => i.open,
        })
        .filter(|i| base.is_none_or(|b| i.pull.as_ref().is_some_and(|p| p.base == b)))
        .filter(|i| poster.as_ref().is_none_or(|p| i.poster == *p))
        .filter(|i| labels.iter().all(|l| i.label_ids.contains(l)))
        .collect();
    pulls.sort_by_key(|i| std::cmp::Reverse(i.index));
    let items = pulls
        .iter()
        .map(|i| st.pull_json(repo, i, &call.doer))
        .collect();
    Ok(list(st, call, items))
}

fn create_pull(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    refuse_archived(st, ri)?;
    let body = call.body()?;
    let head = body.required("head", "Head")?;
    let base = body.required("base", "Base")?;
    let title = body.required("title", "Title")?;
    let repo = &st.repos[ri];
    // `owner:branch` names a fork's branch; only the repository's own owner is supported.
    let head = match head.split_once(':') {
        Some((owner, branch)) if owner.eq_ignore_ascii_case(&repo.owner) => branch.to_string(),
        Some(_) => return Err(Reply::not_found(&[])),
        None => head,
    };
    if !repo.branches.contains_key(&head) || !repo.branches.contains_key(&base) {
        return Err(Reply::not_found(&[]));
    }
    if head == base {
        return Err(Reply::error(
            422,
            "Invalid PullRequest: head and base are the same branch",
        ));
    }
    if let Some(existing) = repo.issues.iter().find(|i| {
        i.open
            && i.pull
                .as_ref()
                .is_some_and(|p| p.head == head && p.base == base && !p.merged)
    }) {
        let p = existing.pull.as_ref().expect("a pull request");
        return Err(Reply::error(
            409,
            format!(
                "pull request already exists for these targets [id: {}, issue_id: {}, head_repo_id: {}, base_repo_id: {}, head_branch: {head}, base_branch: {base}]",
                p.id, existing.id, repo.id, repo.id
            ),
        ));
    }
    let writer = st.can_write(repo, &call.doer);
    let assignees = writer_assignees(st, &body, writer)?;
    let reviewers = known_users(st, &body.strings("reviewers")?)?;
    let label_ids = writer_labels(st, ri, &body, writer)?;
    let text = body.str("body")?.unwrap_or_default();
    let due_date = body.str("due_date")?;
    let allow_edit = body.bool("allow_maintainer_edit")?.unwrap_or(false);
    let issue_id = st.next_id("issue");
    let pull_id = st.next_id("pull");
    let now = st.tick();
    let repo = &mut st.repos[ri];
    let head_sha = repo.branches[&head].head.sha.clone();
    let base_sha = repo.branches[&base].head.sha.clone();
    let pull = Pull {
        requested_reviewers: reviewers,
        allow_maintainer_edit: allow_edit,
        ..Pull::open(pull_id, head, base, head_sha, base_sha)
    };
    let index = repo.push_issue(Issue {
        body: text,
        label_ids,
        assignees,
        due_date,
        pull: Some(pull),
        ..Issue::new(issue_id, title, call.doer.clone(), now)
    });
    let repo = &st.repos[ri];
    Ok(Reply::json(
        201,
        &st.pull_json(repo, repo.issue(index).expect("just created"), &call.doer),
    ))
}

fn get_pull(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = pull_for(st, call)?;
    let repo = &st.repos[ri];
    Ok(Reply::json(
        200,
        &st.pull_json(repo, &repo.issues[pos], &call.doer),
    ))
}

/// Freezes the head and base SHAs of a pull request that stops being open.
fn freeze_shas(st: &mut State, ri: usize, pos: usize) {
    let repo = &st.repos[ri];
    let issue = &repo.issues[pos];
    let pull = issue.pull.as_ref().expect("a pull request");
    let (head, base) = st.pull_shas(repo, issue, pull);
    let pull = st.repos[ri].issues[pos]
        .pull
        .as_mut()
        .expect("a pull request");
    pull.head_sha = head;
    pull.base_sha = base;
}

fn edit_pull(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = pull_for(st, call)?;
    let writer = writer_or_poster(st, ri, pos, call)?;
    let body = call.body()?;
    let state = body.str("state")?;
    let new_base = body.str("base")?.filter(|b| !b.is_empty());
    let merged = st.repos[ri].issues[pos]
        .pull
        .as_ref()
        .is_some_and(|p| p.merged);
    if merged && state.is_some() {
        return Err(merged_state_unchangeable());
    }
    if let Some(b) = &new_base {
        if !st.repos[ri].branches.contains_key(b) {
            return Err(Reply::not_found(&[format!("new base '{b}' not exist")]));
        }
    }
    let edit = IssueEdit::read(st, &body, writer)?;
    let labels = if writer && body.get("labels").is_some() {
        Some(body.ints("labels")?)
    } else {
        None
    };
    let allow_edit = body.bool("allow_maintainer_edit")?;
    if state.as_deref() == Some("closed") && st.repos[ri].issues[pos].open {
        freeze_shas(st, ri, pos);
    }
    let now = st.tick();
    let repo = &mut st.repos[ri];
    let known: Vec<i64> = repo.labels.iter().map(|l| l.id).collect();
    let issue = &mut repo.issues[pos];
    edit.apply(issue, now);
    if let Some(l) = labels {
        issue.label_ids = l.into_iter().filter(|id| known.contains(id)).collect();
    }
    let pull = issue.pull.as_mut().expect("a pull request");
    if let Some(b) = new_base {
        pull.base = b;
    }
    if let Some(a) = allow_edit {
        pull.allow_maintainer_edit = a;
    }
    let repo = &st.repos[ri];
    Ok(Reply::json(
        201,
        &st.pull_json(repo, &repo.issues[pos], &call.doer),
    ))
}

fn get_pull_diff(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = pull_for(st, call)?;
    let repo = &st.repos[ri];
    let issue = &repo.issues[pos];
    let pull = issue.pull.as_ref().expect("a pull request");
    let diff = st.pull_diff(repo, pull);
    let text = match call.param("diffType") {
        "diff" => diff,
        "patch" => {
            let (head, _) = st.pull_shas(repo, issue, pull);
            let author = st
                .user(&issue.poster)
                .map(|u| (u.login.clone(), u.email.clone()));
            let (name, email) = author.unwrap_or_default();
            format!(
                "From {head} Mon Sep 17 00:00:00 2001\nFrom: {name} <{email}>\nDate: {}\nSubject: [PATCH] {}\n\n---\n{diff}",
                super::util::rfc3339(issue.created),
                issue.title
            )
        }
        _ => return Err(Reply::not_found(&[])),
    };
    Ok(Reply::bytes(
        200,
        "text/plain; charset=utf-8",
        text.into_bytes(),
    ))
}

fn list_reviews(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = pull_for(st, call)?;
    let repo = &st.repos[ri];
    let issue = &repo.issues[pos];
    let items = issue
        .pull
        .as_ref()
        .expect("a pull request")
        .reviews
        .iter()
        .map(|r| st.review_json(repo, issue, r))
        .collect();
    Ok(list(st, call, items))
}

fn create_review(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = pull_for(st, call)?;
    let body = call.body()?;
    let event = body.str("event")?.unwrap_or_default().to_ascii_uppercase();
    let text = body.str("body")?.unwrap_or_default();
    let comments = body.array("comments")?;
    let commit_id = body.str("commit_id")?;
    let issue = &st.repos[ri].issues[pos];
    let own = issue.poster == call.doer;
    let state = match event.as_str() {
        "APPROVED" | "APPROVE" => {
            if own {
                return Err(Reply::error(422, "approve your own pull is not allowed"));
            }
            "APPROVED"
        }
        "REQUEST_CHANGES" => {
            if own {
                return Err(Reply::error(422, "reject your own pull is not allowed"));
            }
            if text.trim().is_empty() {
                return Err(Reply::error(
                    422,
                    "review event REQUEST_CHANGES requires a body",
                ));
            }
            "REQUEST_CHANGES"
        }
        "COMMENT" => {
            if text.trim().is_empty() && comments.is_empty() {
                return Err(Reply::error(
                    422,
                    "review event COMMENT requires a body or a comment",
                ));
            }
            "COMMENT"
        }
        "" | "PENDING" => "PENDING",
        other => {
            return Err(Reply::error(422, format!("unknown review event: {other}")));
        }
    };
    if !issue.open && state != "COMMENT" {
        return Err(Reply::error(422, "pull request is closed"));
    }
    let repo = &st.repos[ri];
    let pull = issue.pull.as_ref().expect("a pull request");
    let (head_sha, _) = st.pull_shas(repo, issue, pull);
    let official = st.can_write(repo, &call.doer);
    let id = st.next_id("review");
    let now = st.tick();
    let doer = call.doer.clone();
    let issue = &mut st.repos[ri].issues[pos];
    issue.updated = now;
    let pull = issue.pull.as_mut().expect("a pull request");
    if state != "PENDING" {
        pull.requested_reviewers.retain(|r| *r != doer);
    }
    pull.reviews.push(Review {
        id,
        poster: doer,
        state: state.to_string(),
        body: text,
        commit_id: commit_id.unwrap_or(head_sha),
        comments_count: comments.len() as i64,
        official,
        submitted: now,
    });
    let repo = &st.repos[ri];
    let issue = &repo.issues[pos];
    let review = issue
        .pull
        .as_ref()
        .and_then(|p| p.reviews.last())
        .expect("just added");
    Ok(Reply::json(200, &st.review_json(repo, issue, review)))
}

fn is_merged(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = pull_for(st, call)?;
    let merged = st.repos[ri].issues[pos]
        .pull
        .as_ref()
        .is_some_and(|p| p.merged);
    if merged {
        Ok(Reply::empty(204))
    } else {
        Err(Reply::not_found(&[]))
    }
}

fn merge_pull(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = pull_for(st, call)?;
    let body = call.body()?;
    let style = body.required("do", "Do")?;
    if !matches!(
        style.as_str(),
        "merge" | "rebase" | "rebase-merge" | "squash" | "fast-forward-only" | "manually-merged"
    ) {
        return Err(Reply::validation("Do", "In"));
    }
    let repo = &st.repos[ri];
    let issue = &repo.issues[pos];
    let pull = issue.pull.as_ref().expect("a pull request");
    if pull.merged {
        return Err(Reply::error(405, "The PR is already merged"));
    }
    if !issue.open {
        return Err(Reply::not_found(&[]));
    }
    if !st.can_write(repo, &call.doer) {
        return Err(Reply::error(405, "User not allowed to merge PR"));
    }
    refuse_archived(st, ri)?;
    let Some(head_branch) = repo.branches.get(&pull.head) else {
        return Err(Reply::error(
            409,
            format!("head branch does not exist [name: {}]", pull.head),
        ));
    };
    let (head, base) = (pull.head.clone(), pull.base.clone());
    let head_sha = head_branch.head.sha.clone();
    let changes: Vec<(String, Option<Vec<u8>>)> = head_branch
        .files
        .iter()
        .map(|(p, e)| (p.clone(), Some(e.content.clone())))
        .collect();
    let title = issue.title.clone();
    let index = issue.index;
    let message = body
        .str("merge_title_field")?
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| match style.as_str() {
            "squash" => format!("{title} (#{index})"),
            _ => format!("Merge pull request '{title}' (#{index}) from {head} into {base}"),
        });
    let delete_branch = body.bool("delete_branch_after_merge")?.unwrap_or(false);
    freeze_shas(st, ri, pos);
    let author = doer_login(st, call);
    let merge_sha = match style.as_str() {
        "manually-merged" => head_sha.clone(),
        "fast-forward-only" => {
            let mut b = st.repos[ri].branches[&head].clone();
            b.name = base.clone();
            st.repos[ri].branches.insert(base.clone(), b);
            head_sha.clone()
        }
        _ => st.commit_files(ri, &base, &author, &message, &changes).sha,
    };
    let now = st.tick();
    let doer = call.doer.clone();
    let repo = &mut st.repos[ri];
    if delete_branch && head != repo.default_branch {
        repo.branches.remove(&head);
    }
    let issue = &mut repo.issues[pos];
    issue.open = false;
    issue.closed_at = Some(now);
    issue.updated = now;
    let pull = issue.pull.as_mut().expect("a pull request");
    pull.merged = true;
    pull.merged_at = Some(now);
    pull.merged_by = Some(doer);
    pull.merge_commit_sha = Some(merge_sha);
    Ok(Reply::empty(200))
}

// ---- releases ---------------------------------------------------------------------------------

fn list_releases(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let writer = st.can_write(repo, &call.doer);
    let draft = call.q_bool("draft");
    let pre = call.q_bool("pre-release");
    let mut releases: Vec<&Release> = repo
        .releases
        .iter()
        .filter(|r| writer || !r.draft)
        .filter(|r| draft.is_none_or(|d| r.draft == d))
        .filter(|r| pre.is_none_or(|p| r.prerelease == p))
        .collect();
    releases.sort_by(|a, b| b.created.cmp(&a.created).then(b.id.cmp(&a.id)));
    let items = releases.iter().map(|r| st.release_json(repo, r)).collect();
    Ok(list(st, call, items))
}

fn create_release(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    require_write(st, ri, call)?;
    let body = call.body()?;
    let tag = required_ref_name(&body, "tag_name", "TagName")?;
    let repo = &st.repos[ri];
    if repo.releases.iter().any(|r| r.tag == tag) {
        return Err(Reply::error(
            409,
            format!("release tag already exist [tag_name: {tag}]"),
        ));
    }
    let target = body
        .str("target_commitish")?
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| repo.default_branch.clone());
    if !repo.branches.contains_key(&target) && !repo.branches.values().any(|b| b.head.sha == target)
    {
        return Err(Reply::not_found(&[format!(
            "target commitish does not exist [ref: {target}]"
        )]));
    }
    let release = Release {
        id: 0,
        name: body.str("name")?.unwrap_or_else(|| tag.clone()),
        body: body.str("body")?.unwrap_or_default(),
        draft: body.bool("draft")?.unwrap_or(false),
        prerelease: body.bool("prerelease")?.unwrap_or(false),
        target,
        author: call.doer.clone(),
        created: 0,
        assets: Vec::new(),
        tag,
    };
    let id = st.next_id("release");
    let now = st.tick();
    st.repos[ri].releases.push(Release {
        id,
        created: now,
        ..release
    });
    let repo = &st.repos[ri];
    Ok(Reply::json(
        201,
        &st.release_json(repo, repo.releases.last().expect("just added")),
    ))
}

/// The repository (see [`repo_for`]) and the position of its release `{id}` (drafts only for
/// writers).
fn release_for(st: &State, call: &Call) -> Result<(usize, usize), Reply> {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let id = call.int_param("id");
    let writer = st.can_write(repo, &call.doer);
    let pos = repo
        .releases
        .iter()
        .position(|r| r.id == id && (writer || !r.draft))
        .ok_or_else(|| {
            Reply::not_found(&[format!("release does not exist [id: {id}, tag_name: ]")])
        })?;
    Ok((ri, pos))
}

fn get_release(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = release_for(st, call)?;
    let repo = &st.repos[ri];
    Ok(Reply::json(
        200,
        &st.release_json(repo, &repo.releases[pos]),
    ))
}

fn get_release_by_tag(st: &mut State, call: &Call) -> Res {
    let ri = repo_for(st, call)?;
    let repo = &st.repos[ri];
    let tag = call.param("tag");
    let writer = st.can_write(repo, &call.doer);
    let release = repo
        .releases
        .iter()
        .find(|r| r.tag == tag && (writer || !r.draft))
        .ok_or_else(|| {
            Reply::not_found(&[format!("release does not exist [id: 0, tag_name: {tag}]")])
        })?;
    Ok(Reply::json(200, &st.release_json(repo, release)))
}

fn list_assets(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = release_for(st, call)?;
    let items: Vec<Value> = st.repos[ri].releases[pos]
        .assets
        .iter()
        .map(|a| st.asset_json(a))
        .collect();
    Ok(Reply::json(200, &Value::Array(items)))
}

fn upload_asset(st: &mut State, call: &Call) -> Res {
    let (ri, pos) = release_for(st, call)?;
    require_write(st, ri, call)?;
    let content_type = call.header("content-type").unwrap_or("").to_string();
    let (filename, part_type, data) = if content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        let parts = parse_multipart(&content_type, call.body)
            .map_err(|e| Reply::error(400, format!("cannot parse multipart form: {e}")))?;
        let part = parts
            .into_iter()
            .find(|p| p.name == "attachment")
            .ok_or_else(|| Reply::error(400, "http: no such file"))?;
        (part.filename, part.content_type, part.data)
    } else {
        (
            None,
            (!content_type.is_empty()).then(|| content_type.clone()),
            call.body.to_vec(),
        )
    };
    let name = call
        .q("name")
        .map(str::to_string)
        .or_else(|| filename.clone())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Reply::error(400, "Could not get file name"))?;
    let id = st.next_id("attachment");
    let now = st.tick();
    let uuid_hex = sha40(format!("attachment {id}").as_bytes());
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        &uuid_hex[0..8],
        &uuid_hex[8..12],
        &uuid_hex[12..16],
        &uuid_hex[16..20],
        &uuid_hex[20..32]
    );
    let asset = Asset {
        id,
        uuid,
        name,
        filename,
        content_type: part_type,
        data,
        created: now,
    };
    let json = st.asset_json(&asset);
    st.repos[ri].releases[pos].assets.push(asset);
    Ok(Reply::json(201, &json))
}

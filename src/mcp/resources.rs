//! MCP resources: the catalog (`gitea://actions…`) and Gitea entities (`gitea://repo/…`).
//!
//! Entity reads go through the executor, so the policy applies exactly as for tool calls: a
//! resource whose underlying action is withheld is refused with the reason. Parameters are
//! checked before any request (-32602); an upstream 404 is -32003 (as forgejo-mcp's resource
//! spec requires; rmcp's own "resource not found" is -32002, which we keep for URIs that name
//! no resource at all).

use rmcp::ErrorData;
use rmcp::model::{ErrorCode, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::{Map, Value, json};

use super::Shared;
use crate::catalog::Catalog;
use crate::exec::{self, Call, Caller};
use crate::outbound::{self, Secrets};
use crate::tools::card::card_json;

/// Error code for an entity the instance does not have (or the token cannot see).
pub const UPSTREAM_NOT_FOUND: i32 = -32003;
/// Most entries of an embedded list (comments, reviews, statuses).
pub const EMBEDDED_LIST_CAP: usize = 30;

const JSON: &str = "application/json";
const MARKDOWN: &str = "text/markdown";

/// The static resources.
pub fn list() -> Vec<Resource> {
    vec![
        Resource::new("gitea://actions", "actions")
            .with_description("Every action this server allows: name, method, path, summary.")
            .with_mime_type(JSON),
    ]
}

/// The operations each entity template reads (a template is offered only when the loaded API
/// description has all of them).
const TEMPLATE_OPERATIONS: [(&str, &[&str]); 7] = [
    ("gitea://owner/{owner}", &["userGet"]),
    ("gitea://repo/{owner}/{repo}", &["repoGet"]),
    (
        "gitea://repo/{owner}/{repo}/commit/{sha}",
        &["repoGetSingleCommit"],
    ),
    (
        "gitea://repo/{owner}/{repo}/commit/{sha}/status",
        &["repoGetCombinedStatusByRef"],
    ),
    (
        "gitea://repo/{owner}/{repo}/issue/{index}",
        &["issueGetIssue", "issueGetComments"],
    ),
    (
        "gitea://repo/{owner}/{repo}/issue/{index}/comment/{id}",
        &["issueGetComment"],
    ),
    (
        "gitea://repo/{owner}/{repo}/pr/{index}",
        &[
            "repoGetPullRequest",
            "repoListPullReviews",
            "issueGetComments",
        ],
    ),
];

/// The operations a template needs that `catalog` lacks.
fn missing_operations<'a>(catalog: &Catalog, ops: &[&'a str]) -> Vec<&'a str> {
    ops.iter()
        .copied()
        .filter(|op| catalog.get(op).is_none())
        .collect()
}

/// The resource templates this catalog can serve.
pub fn available_templates(catalog: &Catalog) -> Vec<ResourceTemplate> {
    templates()
        .into_iter()
        .filter(|t| {
            TEMPLATE_OPERATIONS
                .iter()
                .find(|(uri, _)| *uri == t.uri_template)
                .is_none_or(|(_, ops)| missing_operations(catalog, ops).is_empty())
        })
        .collect()
}

/// Every resource template (see [`available_templates`] for those a catalog can serve).
pub fn templates() -> Vec<ResourceTemplate> {
    let t = |uri: &str, name: &str, description: &str| {
        ResourceTemplate::new(uri, name)
            .with_description(description)
            .with_mime_type(JSON)
    };
    vec![
        t(
            "gitea://actions/{name}",
            "action",
            "One action's full card with its input schema.",
        ),
        t("gitea://owner/{owner}", "owner", "A user or organisation."),
        t("gitea://repo/{owner}/{repo}", "repository", "A repository."),
        t(
            "gitea://repo/{owner}/{repo}/commit/{sha}",
            "commit",
            "A commit with its message and files.",
        ),
        t(
            "gitea://repo/{owner}/{repo}/commit/{sha}/status",
            "commit status",
            "The combined CI status of a commit.",
        ),
        t(
            "gitea://repo/{owner}/{repo}/issue/{index}",
            "issue",
            "An issue with its recent comments.",
        ),
        t(
            "gitea://repo/{owner}/{repo}/issue/{index}/comment/{id}",
            "issue comment",
            "One comment of an issue.",
        ),
        t(
            "gitea://repo/{owner}/{repo}/pr/{index}",
            "pull request",
            "A pull request with its recent comments and reviews.",
        ),
    ]
}

/// A parsed entity URI.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Uri {
    Actions,
    Action(String),
    Owner(String),
    Repo(String, String),
    Commit(String, String, String),
    CommitStatus(String, String, String),
    Issue(String, String, u64),
    Comment(String, String, u64, u64),
    Pull(String, String, u64),
}

impl Uri {
    /// The template this URI instantiates (entity templates only).
    fn template(&self) -> Option<&'static str> {
        Some(match self {
            Uri::Actions | Uri::Action(_) => return None,
            Uri::Owner(_) => "gitea://owner/{owner}",
            Uri::Repo(..) => "gitea://repo/{owner}/{repo}",
            Uri::Commit(..) => "gitea://repo/{owner}/{repo}/commit/{sha}",
            Uri::CommitStatus(..) => "gitea://repo/{owner}/{repo}/commit/{sha}/status",
            Uri::Issue(..) => "gitea://repo/{owner}/{repo}/issue/{index}",
            Uri::Comment(..) => "gitea://repo/{owner}/{repo}/issue/{index}/comment/{id}",
            Uri::Pull(..) => "gitea://repo/{owner}/{repo}/pr/{index}",
        })
    }
}

fn invalid(message: String) -> ErrorData {
    ErrorData::invalid_params(message, None)
}

/// Parses and checks a resource URI.
fn parse(uri: &str) -> Result<Uri, ErrorData> {
    let Some(rest) = uri.strip_prefix("gitea://") else {
        return Err(ErrorData::resource_not_found(
            format!("{uri:?} is not a gitea:// resource"),
            None,
        ));
    };
    if rest.contains(['?', '#']) {
        return Err(invalid(format!(
            "resource URIs take no query or fragment: {uri:?}"
        )));
    }
    let parts: Vec<&str> = rest.split('/').collect();
    let name = |s: &str, what: &str| decode_name(s, what);
    let number = |s: &str, what: &str| -> Result<u64, ErrorData> {
        match s.parse::<u64>() {
            Ok(n) if n > 0 && n <= i64::MAX as u64 && s.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(n)
            }
            _ => Err(invalid(format!(
                "{what} must be a positive whole number, got {s:?}"
            ))),
        }
    };
    let sha = |s: &str| -> Result<String, ErrorData> {
        if (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(s.to_ascii_lowercase())
        } else {
            Err(invalid(format!(
                "sha must be 4 to 64 hexadecimal characters, got {s:?}"
            )))
        }
    };
    Ok(match parts.as_slice() {
        ["actions"] => Uri::Actions,
        ["actions", n] => Uri::Action(name(n, "action name")?),
        ["owner", o] => Uri::Owner(name(o, "owner")?),
        ["repo", o, r] => Uri::Repo(name(o, "owner")?, name(r, "repo")?),
        ["repo", o, r, "commit", s] => Uri::Commit(name(o, "owner")?, name(r, "repo")?, sha(s)?),
        ["repo", o, r, "commit", s, "status"] => {
            Uri::CommitStatus(name(o, "owner")?, name(r, "repo")?, sha(s)?)
        }
        ["repo", o, r, "issue", i] => {
            Uri::Issue(name(o, "owner")?, name(r, "repo")?, number(i, "index")?)
        }
        ["repo", o, r, "issue", i, "comment", c] => Uri::Comment(
            name(o, "owner")?,
            name(r, "repo")?,
            number(i, "index")?,
            number(c, "comment id")?,
        ),
        ["repo", o, r, "pr", i] => {
            Uri::Pull(name(o, "owner")?, name(r, "repo")?, number(i, "index")?)
        }
        ["owner", ..] | ["repo", ..] | ["actions", ..] => {
            return Err(invalid(format!(
                "malformed resource URI {uri:?}: owner, repo and names cannot contain '/'; see resources/templates/list"
            )));
        }
        _ => {
            return Err(ErrorData::resource_not_found(
                format!("no resource at {uri:?}; see resources/templates/list"),
                None,
            ));
        }
    })
}

/// Percent-decodes a name segment and checks it cannot escape its place.
fn decode_name(s: &str, what: &str) -> Result<String, ErrorData> {
    let decoded = percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map_err(|_| invalid(format!("{what} is not valid UTF-8 after percent-decoding")))?;
    if decoded.is_empty()
        || decoded == "."
        || decoded == ".."
        || decoded.contains('/')
        || decoded.contains('\\')
        || decoded.chars().any(char::is_control)
        || decoded.len() > 255
    {
        return Err(invalid(format!("{what} {decoded:?} is not a valid name")));
    }
    Ok(decoded.into_owned())
}

/// What a resource read produced, before it is scrubbed, bounded and wrapped: the JSON block
/// and, for entities with a body, the body as Markdown.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    json: Value,
    markdown: Option<String>,
}

impl Read {
    fn json(json: Value) -> Read {
        Read {
            json,
            markdown: None,
        }
    }

    fn with_markdown(json: Value, markdown: Option<String>) -> Read {
        Read { json, markdown }
    }

    /// Scrubs `secrets` and fits both blocks into `max` bytes together (the Markdown, a copy of
    /// the body, gives way first).
    pub fn finish(&mut self, secrets: &Secrets, max: usize) {
        secrets.scrub_value(&mut self.json);
        if let Some(md) = &mut self.markdown {
            if let std::borrow::Cow::Owned(clean) = secrets.scrub_str(md) {
                *md = clean;
            }
        }
        let md_len = self.markdown.as_ref().map_or(0, String::len);
        if outbound::json_len(&self.json) + md_len > max {
            if let Some(md) = &mut self.markdown {
                let room = max
                    .saturating_sub(outbound::json_len(&self.json))
                    .max(max / 4);
                outbound::cut(md, room, "\n\n[cut to fit MAX_RESPONSE_BYTES]");
            }
            let md_len = self.markdown.as_ref().map_or(0, String::len);
            outbound::fit_value(&mut self.json, max.saturating_sub(md_len));
        }
    }

    /// The MCP result.
    pub fn into_result(self, uri: &str) -> ReadResourceResult {
        let mut contents =
            vec![ResourceContents::text(self.json.to_string(), uri).with_mime_type(JSON)];
        if let Some(md) = self.markdown {
            contents.push(ResourceContents::text(md, uri).with_mime_type(MARKDOWN));
        }
        ReadResourceResult::new(contents)
    }
}

/// Reads a resource for `caller` (under the caller's own credential, like every tool call).
pub async fn read(shared: &Shared, caller: &Caller, uri: &str) -> Result<Read, ErrorData> {
    let parsed = parse(uri)?;
    let state = &shared.state;
    if let Some(template) = parsed.template() {
        if let Some((_, ops)) = TEMPLATE_OPERATIONS.iter().find(|(t, _)| *t == template) {
            let missing = missing_operations(&state.catalog, ops);
            if !missing.is_empty() {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "{template} is not available: this instance's API description has no {}",
                        missing.join(", ")
                    ),
                    None,
                ));
            }
        }
    }
    match parsed {
        Uri::Actions => {
            let rows: Vec<Value> = state
                .catalog
                .actions()
                .iter()
                .enumerate()
                .filter(|(i, _)| state.policy.decision(*i).is_allowed())
                .map(|(_, a)| json!([a.name.as_str(), a.method.as_str(), a.path, a.summary]))
                .collect();
            let body = json!({"columns": ["name", "method", "path", "summary"], "actions": rows});
            Ok(Read::json(body))
        }
        Uri::Action(name) => {
            let action = state.catalog.get(&name).ok_or_else(|| {
                ErrorData::resource_not_found(format!("no action named {name:?}"), None)
            })?;
            let decision = state.policy.decide(&state.catalog, action);
            let mut card = card_json(action, decision, false);
            card["input_schema"] = (*action.input_schema).clone();
            card["description"] = json!(action.description);
            card["scopes"] = json!(
                action
                    .scopes
                    .scopes()
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
            );
            Ok(Read::json(card))
        }
        Uri::Owner(owner) => {
            let user = fetch(shared, caller, "userGet", json!({"username": owner}))
                .await?
                .data;
            Ok(Read::json(pick(
                &user,
                &[
                    "id",
                    "login",
                    "full_name",
                    "email",
                    "avatar_url",
                    "html_url",
                    "description",
                    "website",
                    "location",
                    "created",
                    "visibility",
                    "followers_count",
                    "following_count",
                    "starred_repos_count",
                ],
            )))
        }
        Uri::Repo(owner, repo) => {
            let r = fetch(
                shared,
                caller,
                "repoGet",
                json!({"owner": owner, "repo": repo}),
            )
            .await?
            .data;
            let fields = [
                "id",
                "full_name",
                "description",
                "private",
                "fork",
                "archived",
                "mirror",
                "template",
                "default_branch",
                "stars_count",
                "forks_count",
                "watchers_count",
                "open_issues_count",
                "open_pr_counter",
                "release_counter",
                "size",
                "language",
                "html_url",
                "clone_url",
                "ssh_url",
                "website",
                "created_at",
                "updated_at",
                "permissions",
                "has_issues",
                "has_pull_requests",
                "has_wiki",
            ];
            let mut v = pick(&r, &fields);
            v["owner"] = login(&r["owner"]);
            v["parent"] = r
                .get("parent")
                .and_then(|p| p.get("full_name"))
                .cloned()
                .unwrap_or(Value::Null);
            Ok(Read::json(v))
        }
        Uri::Commit(owner, repo, sha) => {
            let c = fetch(
                shared,
                caller,
                "repoGetSingleCommit",
                json!({"owner": owner, "repo": repo, "sha": sha}),
            )
            .await?
            .data;
            let message = c
                .pointer("/commit/message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let mut v = json!({
                "sha": c["sha"], "html_url": c["html_url"], "created": c["created"],
                "message": message,
                "author": c.pointer("/commit/author").cloned().unwrap_or(Value::Null),
                "committer": c.pointer("/commit/committer").cloned().unwrap_or(Value::Null),
                "parents": c["parents"].as_array().map(|ps| ps.iter().map(|p| p["sha"].clone()).collect::<Vec<_>>()),
                "stats": c["stats"],
            });
            let files = c["files"].as_array().cloned().unwrap_or_default();
            let total = files.len() as u64;
            embed(
                &mut v,
                "files",
                files,
                total,
                "gitea_repo_get_single_commit",
                json!({"owner": owner, "repo": repo, "sha": sha}),
            );
            Ok(Read::with_markdown(
                v,
                (!message.is_empty()).then_some(message),
            ))
        }
        Uri::CommitStatus(owner, repo, sha) => {
            let args = json!({"owner": owner, "repo": repo, "ref": sha});
            let got = fetch(shared, caller, "repoGetCombinedStatusByRef", args.clone()).await?;
            let s = got.data;
            let statuses = s["statuses"].as_array().cloned().unwrap_or_default();
            let total = s["total_count"].as_u64().unwrap_or(statuses.len() as u64);
            let mut v = json!({"sha": s["sha"], "state": s["state"], "total_count": total});
            embed(
                &mut v,
                "statuses",
                statuses,
                total,
                "gitea_repo_list_statuses_by_ref",
                args,
            );
            Ok(Read::json(v))
        }
        Uri::Issue(owner, repo, index) => {
            let args = json!({"owner": owner, "repo": repo, "index": index});
            let issue = fetch(shared, caller, "issueGetIssue", args.clone())
                .await?
                .data;
            let mut v = issue_fields(&issue);
            recent_comments(shared, caller, &mut v, &issue, args).await?;
            let body = issue["body"]
                .as_str()
                .map(str::to_string)
                .filter(|b| !b.is_empty());
            Ok(Read::with_markdown(v, body))
        }
        Uri::Comment(owner, repo, index, id) => {
            let c = fetch(
                shared,
                caller,
                "issueGetComment",
                json!({"owner": owner, "repo": repo, "id": id}),
            )
            .await?
            .data;
            // A comment id is repository-wide: make sure it belongs to the issue in the URI.
            let belongs = c["issue_url"].as_str().is_some_and(|u| {
                u.trim_end_matches('/').rsplit('/').next() == Some(index.to_string().as_str())
            }) || c.get("issue_url").is_none();
            if !belongs {
                return Err(ErrorData::new(
                    ErrorCode(UPSTREAM_NOT_FOUND),
                    format!("comment {id} does not belong to issue {index} of {owner}/{repo}"),
                    None,
                ));
            }
            let v = comment_fields(&c);
            let body = c["body"]
                .as_str()
                .map(str::to_string)
                .filter(|b| !b.is_empty());
            Ok(Read::with_markdown(v, body))
        }
        Uri::Pull(owner, repo, index) => {
            let args = json!({"owner": owner, "repo": repo, "index": index});
            let pr = fetch(shared, caller, "repoGetPullRequest", args.clone())
                .await?
                .data;
            let mut v = issue_fields(&pr);
            for key in [
                "merged",
                "merged_at",
                "merge_commit_sha",
                "mergeable",
                "review_comments",
                "draft",
                "allow_maintainer_edit",
            ] {
                v[key] = pr.get(key).cloned().unwrap_or(Value::Null);
            }
            v["merged_by"] = login(&pr["merged_by"]);
            v["requested_reviewers"] = logins(&pr["requested_reviewers"]);
            for side in ["head", "base"] {
                v[side] = json!({
                    "ref": pr[side]["ref"], "sha": pr[side]["sha"],
                    "repo": pr[side].get("repo").and_then(|r| r.get("full_name")).cloned().unwrap_or(Value::Null),
                    "repo_full_name": pr[side].get("repo").and_then(|r| r.get("full_name")).cloned().unwrap_or(Value::Null),
                });
            }
            recent_comments(shared, caller, &mut v, &pr, args.clone()).await?;
            let (reviews, total) = recent_reviews(shared, caller, &args).await?;
            let reviews: Vec<Value> = reviews
                .iter()
                .map(|r| json!({"id": r["id"], "state": r["state"], "user": login(&r["user"]), "body": r["body"], "submitted_at": r["submitted_at"], "comments_count": r["comments_count"]}))
                .collect();
            v["review_count"] = json!(total);
            v["reviews_count"] = json!(total);
            embed(
                &mut v,
                "recent_reviews",
                reviews.clone(),
                total,
                "gitea_pull_list_reviews",
                args.clone(),
            );
            // The name of earlier versions, kept for clients that read it.
            embed(
                &mut v,
                "reviews",
                reviews,
                total,
                "gitea_pull_list_reviews",
                args,
            );
            let body = pr["body"]
                .as_str()
                .map(str::to_string)
                .filter(|b| !b.is_empty());
            Ok(Read::with_markdown(v, body))
        }
    }
}

/// Embeds the [`EMBEDDED_LIST_CAP`] most recent comments of an issue or pull request (Gitea
/// answers all of them, oldest first, with the count in the entity).
async fn recent_comments(
    shared: &Shared,
    caller: &Caller,
    v: &mut Value,
    entity: &Value,
    args: Value,
) -> Result<(), ErrorData> {
    let comments = fetch(shared, caller, "issueGetComments", args.clone()).await?;
    let list = comments.data.as_array().cloned().unwrap_or_default();
    let total = entity["comments"]
        .as_u64()
        .unwrap_or(list.len() as u64)
        .max(list.len() as u64)
        .max(comments.total.unwrap_or(0));
    let recent: Vec<Value> = list
        .iter()
        .rev()
        .take(EMBEDDED_LIST_CAP)
        .rev()
        .map(comment_fields)
        .collect();
    embed(
        v,
        "recent_comments",
        recent,
        total,
        "gitea_issue_get_comments",
        args,
    );
    Ok(())
}

/// The [`EMBEDDED_LIST_CAP`] most recent reviews of a pull request and their total. Reviews
/// are paged oldest first, so past one page the last pages are read.
async fn recent_reviews(
    shared: &Shared,
    caller: &Caller,
    args: &Value,
) -> Result<(Vec<Value>, u64), ErrorData> {
    let page = |n: u64| {
        let mut a = args.clone();
        a["limit"] = json!(EMBEDDED_LIST_CAP);
        a["page"] = json!(n);
        a
    };
    let first = fetch(shared, caller, "repoListPullReviews", page(1)).await?;
    let mut list = first.data.as_array().cloned().unwrap_or_default();
    let total = first.total.unwrap_or(list.len() as u64);
    let cap = EMBEDDED_LIST_CAP as u64;
    if total > cap {
        let last = total.div_ceil(cap);
        let mut tail = Vec::new();
        for n in [last - 1, last] {
            if n == 1 {
                tail.append(&mut list);
            } else {
                let got = fetch(shared, caller, "repoListPullReviews", page(n)).await?;
                tail.extend(got.data.as_array().cloned().unwrap_or_default());
            }
        }
        list = tail;
    }
    let skip = list.len().saturating_sub(EMBEDDED_LIST_CAP);
    Ok((list.split_off(skip), total))
}

fn issue_fields(i: &Value) -> Value {
    let mut v = pick(
        i,
        &[
            "number",
            "title",
            "state",
            "body",
            "comments",
            "created_at",
            "updated_at",
            "closed_at",
            "due_date",
            "html_url",
            "is_locked",
        ],
    );
    v["index"] = i.get("number").cloned().unwrap_or(Value::Null);
    v["author"] = login(&i["user"]);
    v["assignees"] = logins(&i["assignees"]);
    v["labels"] = json!(
        i["labels"]
            .as_array()
            .map(|ls| ls.iter().map(|l| l["name"].clone()).collect::<Vec<_>>())
    );
    v["milestone"] = i
        .get("milestone")
        .and_then(|m| m.get("title"))
        .cloned()
        .unwrap_or(Value::Null);
    v["comments_count"] = i.get("comments").cloned().unwrap_or(Value::Null);
    v
}

fn comment_fields(c: &Value) -> Value {
    let mut v = pick(c, &["id", "body", "created_at", "updated_at", "html_url"]);
    v["author"] = login(&c["user"]);
    v
}

fn login(user: &Value) -> Value {
    user.get("login").cloned().unwrap_or(Value::Null)
}

fn logins(users: &Value) -> Value {
    json!(
        users
            .as_array()
            .map(|us| us.iter().map(login).collect::<Vec<_>>())
            .unwrap_or_default()
    )
}

fn pick(v: &Value, keys: &[&str]) -> Value {
    let mut out = Map::new();
    for k in keys {
        if let Some(x) = v.get(*k) {
            out.insert((*k).to_string(), x.clone());
        }
    }
    Value::Object(out)
}

/// Embeds at most [`EMBEDDED_LIST_CAP`] entries; when there are more, a sentinel names the
/// action that lists the rest and the total count.
fn embed(
    v: &mut Value,
    key: &str,
    mut items: Vec<Value>,
    total: u64,
    list_action: &str,
    arguments: Value,
) {
    let more = total > EMBEDDED_LIST_CAP as u64 || items.len() > EMBEDDED_LIST_CAP;
    items.truncate(EMBEDDED_LIST_CAP);
    let shown = items.len();
    v[key] = Value::Array(items);
    if more {
        v[format!("{key}_more")] = json!({
            "shown": shown, "total_count": total,
            "list_with": {"action": list_action, "arguments": arguments},
        });
    }
}

struct Fetched {
    data: Value,
    total: Option<u64>,
}

/// Runs a read action through the executor (policy, validation, bounds) and maps failures to
/// resource errors.
async fn fetch(
    shared: &Shared,
    caller: &Caller,
    operation_id: &str,
    arguments: Value,
) -> Result<Fetched, ErrorData> {
    let call = Call {
        action: operation_id,
        arguments: &arguments,
        dry_run: false,
        confirm: None,
    };
    let out = exec::call(shared.state.exec_env(), &shared.exec, caller, &call).await;
    if !out.is_error {
        return Ok(Fetched {
            total: out
                .structured
                .pointer("/paging/total_count")
                .and_then(Value::as_u64),
            data: out.structured.get("data").cloned().unwrap_or(Value::Null),
        });
    }
    if out.structured.get("withheld").is_some() {
        return Err(ErrorData::invalid_request(
            out.text,
            out.structured.get("withheld").cloned(),
        ));
    }
    match out.status {
        Some(404) => Err(ErrorData::new(
            ErrorCode(UPSTREAM_NOT_FOUND),
            format!("not found on the Gitea instance: {}", first_line(&out.text)),
            None,
        )),
        Some(_) | None => Err(ErrorData::internal_error(
            first_line(&out.text).to_string(),
            out.structured.get("error").cloned(),
        )),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_checked_before_any_request() {
        assert_eq!(
            parse("gitea://repo/alice/demo/pr/12").unwrap(),
            Uri::Pull("alice".into(), "demo".into(), 12)
        );
        assert_eq!(
            parse("gitea://repo/alice/my%20repo").unwrap(),
            Uri::Repo("alice".into(), "my repo".into())
        );
        assert_eq!(
            parse("gitea://repo/a/b/commit/ABCDEF1/status").unwrap(),
            Uri::CommitStatus("a".into(), "b".into(), "abcdef1".into())
        );
        for bad in [
            "gitea://repo/alice/demo/issue/x",
            "gitea://repo/alice/demo/issue/0",
            "gitea://repo/alice/demo/issue/-1",
            "gitea://repo/alice/demo/issue/99999999999999999999",
            "gitea://repo/a%2Fb/demo",
            "gitea://repo/../demo",
            "gitea://repo/alice/demo/commit/xyz",
            "gitea://owner/a/b",
            "gitea://repo/alice",
            "gitea://repo/alice/demo?x=1",
            "gitea://repo/alice/demo/issue/1/comment/abc",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code.0, -32602, "{bad}: {e:?}");
        }
        assert_eq!(
            parse("http://x").unwrap_err().code,
            ErrorCode::RESOURCE_NOT_FOUND
        );
        assert_eq!(
            parse("gitea://nothing/here").unwrap_err().code,
            ErrorCode::RESOURCE_NOT_FOUND
        );
    }

    #[test]
    fn embedded_lists_are_capped_with_a_sentinel() {
        let mut v = json!({});
        let items: Vec<Value> = (0..45).map(|i| json!(i)).collect();
        embed(
            &mut v,
            "comments",
            items,
            45,
            "gitea_issue_get_comments",
            json!({"index": 1}),
        );
        assert_eq!(v["comments"].as_array().unwrap().len(), 30);
        assert_eq!(v["comments_more"]["total_count"], 45);
        assert_eq!(
            v["comments_more"]["list_with"]["action"],
            "gitea_issue_get_comments"
        );
        let mut w = json!({});
        embed(&mut w, "comments", vec![json!(1)], 1, "x", json!({}));
        assert!(w.get("comments_more").is_none());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::proptest_cases(256)))]

        /// Any URI parses, or is refused with -32602 (malformed) or -32002 (no such
        /// resource); a parsed name never carries a separator.
        #[test]
        fn hostile_uris_are_refused_with_their_code(
            uri in proptest::prop_oneof![
                "\\PC{0,60}",
                "gitea://(repo|owner|actions)/[a-z%./\\\\0-9]{0,20}(/[a-z%.0-9]{0,6}){0,5}",
                "gitea://repo/[a-z]{1,5}/[a-z]{1,5}/(issue|pr|commit)/[-+0-9a-fx ]{0,22}(/comment/[0-9x]{0,5})?",
            ],
        ) {
            match parse(&uri) {
                Ok(u) => {
                    let names = match &u {
                        Uri::Owner(o) => vec![o.clone()],
                        Uri::Repo(o, r) | Uri::Issue(o, r, _) | Uri::Pull(o, r, _)
                        | Uri::Comment(o, r, _, _) | Uri::Commit(o, r, _) | Uri::CommitStatus(o, r, _) => {
                            vec![o.clone(), r.clone()]
                        }
                        Uri::Actions | Uri::Action(_) => vec![],
                    };
                    for n in names {
                        proptest::prop_assert!(!n.contains('/') && n != ".." && !n.is_empty(), "{n:?}");
                    }
                }
                Err(e) => proptest::prop_assert!(
                    e.code.0 == -32602 || e.code == ErrorCode::RESOURCE_NOT_FOUND,
                    "{uri:?}: {e:?}"
                ),
            }
        }
    }
}

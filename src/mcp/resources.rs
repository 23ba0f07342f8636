//! MCP resources: the catalog (`gitea://actions…`) and Gitea entities (`gitea://repo/…`).
//!
//! Every entity template is one row of [`TEMPLATES`]: its URI, the operation that reads it, the
//! fields kept (paths into Gitea's answer), the lists embedded in it and which operation reads
//! them. One generic reader serves them all; the names of the actions that list the rest of an
//! embedded list come from the catalog. A template is offered only when the loaded document has
//! every operation it reads.
//!
//! Entity reads go through the executor for the caller, so the policy applies exactly as for
//! tool calls: a resource whose underlying action is withheld is refused with the reason.
//! Parameters are checked before any request (-32602); an upstream 404 is -32003 (as
//! forgejo-mcp's resource spec requires; rmcp's own "resource not found", -32002, is kept for
//! URIs that name no resource at all). Errors are typed ([`ResourceError`]); `render` words them.

use rmcp::model::{Resource, ResourceTemplate};
use serde_json::{Map, Value, json};

use crate::app::App;
use crate::catalog::Catalog;
use crate::exec::{self, Call, Caller, Refusal, Shaped};
use crate::outbound;
use crate::render::card::card_json;
pub use crate::render::resource::{Read, ResourceError};

/// Most entries of an embedded list (comments, reviews, statuses, files).
pub const EMBEDDED_LIST_CAP: usize = 30;

const JSON: &str = "application/json";

/// One entity template.
struct Template {
    /// `gitea://…` with `{param}` segments.
    uri: &'static str,
    name: &'static str,
    description: &'static str,
    /// The operation that reads the entity.
    read: &'static str,
    /// `(argument, URI parameter)` where the operation names a parameter differently.
    renames: &'static [(&'static str, &'static str)],
    /// The fields kept: `out=path` or `path`; a path is dot-separated keys, `key[].sub` maps a
    /// list; a dotted `out` nests. Several lists are kept in order (shared field lists).
    fields: &'static [&'static [&'static str]],
    /// Lists embedded in the entity.
    embeds: &'static [Embed],
    /// A field rendered as a Markdown block beside the JSON.
    markdown: Option<&'static str>,
    /// A field holding a URL whose last segment must be the URI's `{index}` (comment ids are
    /// repository-wide: the comment must belong to the issue named).
    belongs_to_index: Option<&'static str>,
}

/// One embedded list.
struct Embed {
    /// The key in the entity (and `<key>_more` for the sentinel).
    key: &'static str,
    /// Where the items come from.
    from: Source,
    /// The fields kept of each item (as in [`Template::fields`]); empty keeps items whole.
    fields: &'static [&'static str],
    /// Keep the most recent items (the end of the list) rather than the first.
    recent: bool,
    /// Entity keys that also receive the total count.
    count_as: &'static [&'static str],
}

/// Where an embedded list comes from.
enum Source {
    /// A field of the entity, with its total in another field if Gitea gives one, and the
    /// operation that lists the rest (else the entity's own read).
    Field {
        path: &'static str,
        total: Option<&'static str>,
        rest: Option<&'static str>,
    },
    /// Another operation on the same parameters; `total` is an entity field counting the items
    /// (the list may be unpaged); `paged` lists are read from their last pages.
    Read {
        operation_id: &'static str,
        total: Option<&'static str>,
        paged: bool,
    },
}

const ISSUE_FIELDS: &[&str] = &[
    "number",
    "index=number",
    "title",
    "state",
    "body",
    "comments",
    "comments_count=comments",
    "created_at",
    "updated_at",
    "closed_at",
    "due_date",
    "html_url",
    "is_locked",
    "author=user.login",
    "assignees=assignees[].login",
    "labels=labels[].name",
    "milestone=milestone.title",
];

const COMMENT_FIELDS: &[&str] = &[
    "id",
    "body",
    "created_at",
    "updated_at",
    "html_url",
    "author=user.login",
];

const COMMENTS: Embed = Embed {
    key: "recent_comments",
    from: Source::Read {
        operation_id: "issueGetComments",
        total: Some("comments"),
        paged: false,
    },
    fields: COMMENT_FIELDS,
    recent: true,
    count_as: &[],
};

/// What a pull request has beyond the fields it shares with an issue.
const PULL_FIELDS: &[&str] = &[
    "merged",
    "merged_at",
    "merge_commit_sha",
    "mergeable",
    "review_comments",
    "draft",
    "allow_maintainer_edit",
    "merged_by=merged_by.login",
    "requested_reviewers=requested_reviewers[].login",
    "head.ref=head.ref",
    "head.sha=head.sha",
    "head.repo=head.repo.full_name",
    "head.repo_full_name=head.repo.full_name",
    "base.ref=base.ref",
    "base.sha=base.sha",
    "base.repo=base.repo.full_name",
    "base.repo_full_name=base.repo.full_name",
];

const REVIEW_FIELDS: &[&str] = &[
    "id",
    "state",
    "user=user.login",
    "body",
    "submitted_at",
    "comments_count",
];

/// The entity templates.
static TEMPLATES: &[Template] = &[
    Template {
        uri: "gitea://owner/{owner}",
        name: "owner",
        description: "A user or organisation.",
        read: "userGet",
        renames: &[("username", "owner")],
        fields: &[&[
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
        ]],
        embeds: &[],
        markdown: None,
        belongs_to_index: None,
    },
    Template {
        uri: "gitea://repo/{owner}/{repo}",
        name: "repository",
        description: "A repository.",
        read: "repoGet",
        renames: &[],
        fields: &[&[
            "id",
            "full_name",
            "owner=owner.login",
            "description",
            "private",
            "fork",
            "parent=parent.full_name",
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
        ]],
        embeds: &[],
        markdown: None,
        belongs_to_index: None,
    },
    Template {
        uri: "gitea://repo/{owner}/{repo}/commit/{sha}",
        name: "commit",
        description: "A commit with its message and files.",
        read: "repoGetSingleCommit",
        renames: &[],
        fields: &[&[
            "sha",
            "html_url",
            "created",
            "message=commit.message",
            "author=commit.author",
            "committer=commit.committer",
            "parents=parents[].sha",
            "stats",
        ]],
        embeds: &[Embed {
            key: "files",
            from: Source::Field {
                path: "files",
                total: None,
                rest: None,
            },
            fields: &[],
            recent: false,
            count_as: &[],
        }],
        markdown: Some("commit.message"),
        belongs_to_index: None,
    },
    Template {
        uri: "gitea://repo/{owner}/{repo}/commit/{sha}/status",
        name: "commit status",
        description: "The combined CI status of a commit.",
        read: "repoGetCombinedStatusByRef",
        renames: &[("ref", "sha")],
        fields: &[&["sha", "state", "total_count"]],
        embeds: &[Embed {
            key: "statuses",
            from: Source::Field {
                path: "statuses",
                total: Some("total_count"),
                rest: Some("repoListStatusesByRef"),
            },
            fields: &[],
            recent: false,
            count_as: &[],
        }],
        markdown: None,
        belongs_to_index: None,
    },
    Template {
        uri: "gitea://repo/{owner}/{repo}/issue/{index}",
        name: "issue",
        description: "An issue with its recent comments.",
        read: "issueGetIssue",
        renames: &[],
        fields: &[ISSUE_FIELDS],
        embeds: &[COMMENTS],
        markdown: Some("body"),
        belongs_to_index: None,
    },
    Template {
        uri: "gitea://repo/{owner}/{repo}/issue/{index}/comment/{id}",
        name: "issue comment",
        description: "One comment of an issue.",
        read: "issueGetComment",
        renames: &[],
        fields: &[COMMENT_FIELDS],
        embeds: &[],
        markdown: Some("body"),
        belongs_to_index: Some("issue_url"),
    },
    Template {
        uri: "gitea://repo/{owner}/{repo}/pr/{index}",
        name: "pull request",
        description: "A pull request with its recent comments and reviews.",
        read: "repoGetPullRequest",
        renames: &[],
        fields: &[ISSUE_FIELDS, PULL_FIELDS],
        embeds: &[
            COMMENTS,
            Embed {
                key: "recent_reviews",
                from: Source::Read {
                    operation_id: "repoListPullReviews",
                    total: None,
                    paged: true,
                },
                fields: REVIEW_FIELDS,
                recent: true,
                count_as: &["review_count", "reviews_count"],
            },
        ],
        markdown: Some("body"),
        belongs_to_index: None,
    },
];

/// Keys that repeat another embedded list under an earlier name, kept for clients that read it.
const EMBED_ALIASES: [(&str, &str); 1] = [("reviews", "recent_reviews")];

/// The static resources.
pub fn list() -> Vec<Resource> {
    vec![
        Resource::new("gitea://actions", "actions")
            .with_description("Every action this server allows: name, method, path, summary.")
            .with_mime_type(JSON),
    ]
}

/// The operations a template reads that `catalog` lacks.
fn missing_operations(catalog: &Catalog, t: &Template) -> Vec<&'static str> {
    let embedded = t.embeds.iter().filter_map(|e| match e.from {
        Source::Read { operation_id, .. } => Some(operation_id),
        Source::Field { .. } => None,
    });
    std::iter::once(t.read)
        .chain(embedded)
        .filter(|op| catalog.get(op).is_none())
        .collect()
}

/// The resource templates this catalog can serve.
pub fn available_templates(catalog: &Catalog) -> Vec<ResourceTemplate> {
    let action = ResourceTemplate::new("gitea://actions/{name}", "action")
        .with_description("One action's full card with its input schema.")
        .with_mime_type(JSON);
    std::iter::once(action)
        .chain(
            TEMPLATES
                .iter()
                .filter(|t| missing_operations(catalog, t).is_empty())
                .map(|t| {
                    ResourceTemplate::new(t.uri, t.name)
                        .with_description(t.description)
                        .with_mime_type(JSON)
                }),
        )
        .collect()
}

/// A parsed URI.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Parsed {
    Actions,
    Action(String),
    Entity {
        template: usize,
        params: Vec<(&'static str, Param)>,
    },
}

/// A checked URI parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Param {
    Name(String),
    Number(u64),
}

impl Param {
    fn json(&self) -> Value {
        match self {
            Param::Name(s) => json!(s),
            Param::Number(n) => json!(n),
        }
    }
}

fn malformed(why: String) -> ResourceError {
    ResourceError::Malformed { why }
}

/// Parses and checks a resource URI against the templates.
fn parse(uri: &str) -> Result<Parsed, ResourceError> {
    let shown = || outbound::clip(uri, 200).into_owned();
    let Some(rest) = uri.strip_prefix("gitea://") else {
        return Err(ResourceError::NoResource { uri: shown() });
    };
    if rest.contains(['?', '#']) {
        return Err(malformed(format!(
            "resource URIs take no query or fragment: {:?}",
            shown()
        )));
    }
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        ["actions"] => return Ok(Parsed::Actions),
        ["actions", n] => return Ok(Parsed::Action(decode_name(n, "action name")?)),
        _ => {}
    }
    for (i, t) in TEMPLATES.iter().enumerate() {
        let pattern: Vec<&str> = t.uri["gitea://".len()..].split('/').collect();
        if pattern.len() != parts.len()
            || pattern
                .iter()
                .zip(&parts)
                .any(|(p, s)| !p.starts_with('{') && p != s)
        {
            continue;
        }
        let mut params = Vec::new();
        for (p, s) in pattern.iter().zip(&parts) {
            if let Some(name) = p.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                params.push((name, check_param(name, s)?));
            }
        }
        return Ok(Parsed::Entity {
            template: i,
            params,
        });
    }
    match parts.first() {
        Some(&("owner" | "repo" | "actions")) => Err(malformed(format!(
            "malformed resource URI {:?}: owner, repo and names cannot contain '/'; see resources/templates/list",
            shown()
        ))),
        _ => Err(ResourceError::NoResource { uri: shown() }),
    }
}

/// Checks one URI parameter by its name: numbers for `index` and `id`, hexadecimal for `sha`,
/// names otherwise.
fn check_param(name: &'static str, s: &str) -> Result<Param, ResourceError> {
    let shown = outbound::clip(s, 100);
    match name {
        "index" | "id" => match s.parse::<u64>() {
            Ok(n) if n > 0 && n <= i64::MAX as u64 && s.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(Param::Number(n))
            }
            _ => Err(malformed(format!(
                "{} must be a positive whole number, got {shown:?}",
                if name == "id" { "comment id" } else { name }
            ))),
        },
        "sha" => {
            if (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit()) {
                Ok(Param::Name(s.to_ascii_lowercase()))
            } else {
                Err(malformed(format!(
                    "sha must be 4 to 64 hexadecimal characters, got {shown:?}"
                )))
            }
        }
        _ => decode_name(s, name).map(Param::Name),
    }
}

/// Percent-decodes a name segment and checks it cannot escape its place.
fn decode_name(s: &str, what: &str) -> Result<String, ResourceError> {
    let decoded = percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map_err(|_| malformed(format!("{what} is not valid UTF-8 after percent-decoding")))?;
    if decoded.is_empty()
        || decoded == "."
        || decoded == ".."
        || decoded.contains('/')
        || decoded.contains('\\')
        || decoded.chars().any(char::is_control)
        || decoded.len() > 255
    {
        return Err(malformed(format!(
            "{what} {:?} is not a valid name",
            outbound::clip(&decoded, 100)
        )));
    }
    Ok(decoded.into_owned())
}

/// Reads a resource for `caller` (under the caller's own credential, like every tool call).
pub async fn read(shared: &App, caller: &Caller, uri: &str) -> Result<Read, ResourceError> {
    let state = &shared.state;
    match parse(uri)? {
        Parsed::Actions => {
            let rows: Vec<Value> = state
                .catalog
                .ids()
                .filter(|(id, _)| state.policy.decision(*id).is_allowed())
                .map(|(_, a)| json!([a.name.as_str(), a.method.as_str(), a.path, a.summary]))
                .collect();
            let json = json!({"columns": ["name", "method", "path", "summary"], "actions": rows});
            Ok(Read::new(json, None))
        }
        Parsed::Action(name) => {
            let action = state
                .catalog
                .get(&name)
                .ok_or_else(|| ResourceError::NoAction {
                    name: outbound::clip(&name, 100).into_owned(),
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
            Ok(Read::new(card, None))
        }
        Parsed::Entity { template, params } => {
            entity(shared, caller, &TEMPLATES[template], &params).await
        }
    }
}

/// The arguments of `operation_id` from the URI's parameters (renamed where the template says;
/// only those the operation takes).
fn arguments(
    catalog: &Catalog,
    operation_id: &str,
    t: &Template,
    params: &[(&'static str, Param)],
) -> Map<String, Value> {
    let takes = |arg: &str| {
        catalog
            .get(operation_id)
            .is_some_and(|a| a.params.iter().any(|p| p.name == arg))
    };
    params
        .iter()
        .filter_map(|(name, value)| {
            let arg = t
                .renames
                .iter()
                .find(|(_, from)| from == name)
                .map_or(*name, |(to, _)| *to);
            takes(arg).then(|| (arg.to_string(), value.json()))
        })
        .collect()
}

async fn entity(
    shared: &App,
    caller: &Caller,
    t: &'static Template,
    params: &[(&'static str, Param)],
) -> Result<Read, ResourceError> {
    let missing = missing_operations(&shared.state.catalog, t);
    if !missing.is_empty() {
        return Err(ResourceError::Unavailable {
            template: t.uri,
            missing,
        });
    }
    let catalog = &shared.state.catalog;
    let args = arguments(catalog, t.read, t, params);
    let main = fetch(shared, caller, t.read, args.clone()).await?;
    let param = |name: &str| params.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
    if let (Some(field), Some(Param::Number(index)), Some(Param::Number(id))) =
        (t.belongs_to_index, param("index"), param("id"))
    {
        let belongs = main
            .data
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(|u| {
                u.trim_end_matches('/').rsplit('/').next() == Some(index.to_string().as_str())
            });
        if !belongs {
            let repo = match (param("owner"), param("repo")) {
                (Some(Param::Name(o)), Some(Param::Name(r))) => format!("{o}/{r}"),
                _ => String::new(),
            };
            return Err(ResourceError::NotOfIssue {
                id: *id,
                index: *index,
                repo,
            });
        }
    }
    let mut v = pick(&main.data, t.fields.iter().copied().flatten());
    for e in t.embeds {
        let lister = match &e.from {
            Source::Field { rest, .. } => {
                rest.filter(|r| catalog.get(r).is_some()).unwrap_or(t.read)
            }
            Source::Read { operation_id, .. } => operation_id,
        };
        let list_args = arguments(catalog, lister, t, params);
        let (items, total) = match &e.from {
            Source::Field { path, total, .. } => {
                let items = get_path(&main.data, path)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let total = total
                    .and_then(|f| main.data.get(f))
                    .and_then(Value::as_u64)
                    .unwrap_or(items.len() as u64);
                (items, total)
            }
            Source::Read {
                operation_id,
                total,
                paged,
            } => {
                let (items, listed_total) = if *paged {
                    recent_pages(shared, caller, operation_id, &list_args).await?
                } else {
                    let got = fetch(shared, caller, operation_id, list_args.clone()).await?;
                    let items = got.data.as_array().cloned().unwrap_or_default();
                    let n = items.len() as u64;
                    (items, got.total.unwrap_or(n).max(n))
                };
                let counted = total
                    .and_then(|f| main.data.get(f))
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                (items, listed_total.max(counted))
            }
        };
        let shown: Vec<Value> = if e.recent {
            let skip = items.len().saturating_sub(EMBEDDED_LIST_CAP);
            items[skip..].to_vec()
        } else {
            items.iter().take(EMBEDDED_LIST_CAP).cloned().collect()
        };
        let shown: Vec<Value> = if e.fields.is_empty() {
            shown
        } else {
            shown.iter().map(|i| pick(i, e.fields)).collect()
        };
        for key in e.count_as {
            v[*key] = json!(total);
        }
        let lister = catalog
            .get(lister)
            .map_or_else(|| lister.to_string(), |a| a.name.to_string());
        embed(
            &mut v,
            e.key,
            shown,
            total,
            &lister,
            Value::Object(list_args),
        );
    }
    for (alias, of) in EMBED_ALIASES {
        if v.get(of).is_some() {
            v[alias] = v[of].clone();
            if let Some(more) = v.get(format!("{of}_more")).cloned() {
                v[format!("{alias}_more")] = more;
            }
        }
    }
    let markdown = t
        .markdown
        .and_then(|p| get_path(&main.data, p))
        .and_then(Value::as_str)
        .filter(|b| !b.is_empty())
        .map(str::to_string);
    Ok(Read::new(v, markdown))
}

/// The [`EMBEDDED_LIST_CAP`] most recent items of a paged list (oldest first) and their total:
/// past one page, the last pages are read.
async fn recent_pages(
    shared: &App,
    caller: &Caller,
    operation_id: &str,
    args: &Map<String, Value>,
) -> Result<(Vec<Value>, u64), ResourceError> {
    let page = |n: u64| {
        let mut a = args.clone();
        a.insert("limit".into(), json!(EMBEDDED_LIST_CAP));
        a.insert("page".into(), json!(n));
        a
    };
    let first = fetch(shared, caller, operation_id, page(1)).await?;
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
                let got = fetch(shared, caller, operation_id, page(n)).await?;
                tail.extend(got.data.as_array().cloned().unwrap_or_default());
            }
        }
        list = tail;
    }
    let skip = list.len().saturating_sub(EMBEDDED_LIST_CAP);
    Ok((list.split_off(skip), total))
}

/// The value at a dot-separated path (no list mapping).
fn get_path<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(v, |node, key| node.get(key))
}

/// The value at a path where `key[]` maps the rest of the path over a list.
fn select(v: &Value, path: &str) -> Option<Value> {
    match path.split_once("[].") {
        Some((list, rest)) => {
            let items = get_path(v, list)?.as_array()?;
            Some(Value::Array(
                items
                    .iter()
                    .map(|i| select(i, rest).unwrap_or(Value::Null))
                    .collect(),
            ))
        }
        None => get_path(v, path).cloned(),
    }
}

/// The fields of `specs` out of `v` (see [`Template::fields`]); missing fields are skipped,
/// fields through a missing object are `null`.
fn pick<'a>(v: &Value, specs: impl IntoIterator<Item = &'a &'a str>) -> Value {
    let mut out = Value::Object(Map::new());
    for spec in specs {
        let (key, path) = spec.split_once('=').unwrap_or((spec, spec));
        let value = match select(v, path) {
            Some(x) => x,
            None if path.contains('.') => Value::Null,
            None => continue,
        };
        let mut node = &mut out;
        let mut keys = key.split('.').peekable();
        while let Some(k) = keys.next() {
            if keys.peek().is_none() {
                node[k] = value;
                break;
            }
            if !node.get(k).is_some_and(Value::is_object) {
                node[k] = Value::Object(Map::new());
            }
            node = &mut node[k];
        }
    }
    out
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

/// Runs a read action through the executor (policy, validation, bounds).
async fn fetch(
    shared: &App,
    caller: &Caller,
    operation_id: &str,
    arguments: Map<String, Value>,
) -> Result<Fetched, ResourceError> {
    let call = Call {
        action: operation_id,
        arguments: Value::Object(arguments),
        dry_run: false,
        confirm: None,
    };
    match exec::call(&shared.state, &shared.exec, caller, call).await {
        Ok(done) => Ok(match done.body {
            Shaped::Json { data, paging, .. } => Fetched {
                total: paging.and_then(|p| p.total_count),
                data,
            },
            _ => Fetched {
                data: Value::Null,
                total: None,
            },
        }),
        Err(Refusal::Withheld { target, reason }) => {
            Err(ResourceError::Withheld { target, reason })
        }
        Err(Refusal::Gitea {
            status: 404,
            message,
            ..
        }) => Err(ResourceError::NotFound { message }),
        Err(other) => Err(ResourceError::Upstream(Box::new(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(uri: &str) -> (&'static str, Vec<(&'static str, Param)>) {
        match parse(uri).unwrap() {
            Parsed::Entity { template, params } => (TEMPLATES[template].uri, params),
            other => panic!("{other:?}"),
        }
    }

    fn code(e: &ResourceError) -> i32 {
        crate::render::resource::error_code(e)
    }

    #[test]
    fn uris_are_checked_before_any_request() {
        assert_eq!(
            entity("gitea://repo/alice/demo/pr/12"),
            (
                "gitea://repo/{owner}/{repo}/pr/{index}",
                vec![
                    ("owner", Param::Name("alice".into())),
                    ("repo", Param::Name("demo".into())),
                    ("index", Param::Number(12)),
                ]
            )
        );
        assert_eq!(
            entity("gitea://repo/alice/my%20repo").1[1],
            ("repo", Param::Name("my repo".into()))
        );
        assert_eq!(
            entity("gitea://repo/a/b/commit/ABCDEF1/status").1[2],
            ("sha", Param::Name("abcdef1".into()))
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
            assert_eq!(code(&e), -32602, "{bad}: {e:?}");
        }
        assert_eq!(code(&parse("http://x").unwrap_err()), -32002);
        assert_eq!(code(&parse("gitea://nothing/here").unwrap_err()), -32002);
    }

    #[test]
    fn fields_are_picked_by_path() {
        let pr = json!({"number": 3, "user": {"login": "bob", "id": 9}, "labels": [{"name": "a"}, {"name": "b"}],
            "head": {"ref": "f", "sha": "abc", "repo": {"full_name": "bob/x"}}, "milestone": null, "secret_field": 1});
        let v = pick(
            &pr,
            &[
                "index=number",
                "author=user.login",
                "labels=labels[].name",
                "head.repo_full_name=head.repo.full_name",
                "head.sha=head.sha",
                "milestone=milestone.title",
                "absent",
            ],
        );
        assert_eq!(
            v,
            json!({"index": 3, "author": "bob", "labels": ["a", "b"],
                "head": {"repo_full_name": "bob/x", "sha": "abc"}, "milestone": null})
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
                Ok(Parsed::Entity { params, .. }) => {
                    for (_, p) in params {
                        if let Param::Name(n) = p {
                            proptest::prop_assert!(!n.contains('/') && n != ".." && !n.is_empty(), "{n:?}");
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let c = code(&e);
                    proptest::prop_assert!(c == -32602 || c == -32002, "{uri:?}: {e:?}");
                }
            }
        }
    }
}

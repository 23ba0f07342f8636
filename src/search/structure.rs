//! What the ranking knows about an action's shape, derived from its method and path for every
//! operation of any document: the verb class, the scope (repository, organisation, team, the
//! authenticated user, another user, site administration, global), item or collection, the
//! resource the path ends in, and how many identifiers a call needs.

use super::vocabulary::{self, Intent};
use crate::catalog::{Action, Domain, HttpMethod, NAME_PARAMS, ParamLocation, split_words};

/// Who owns what an action acts on, read from the path's first segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `/admin/…`: site administration.
    Admin,
    /// `/repos/{owner}/{repo}/…` and `/repositories/{id}/…`.
    Repo,
    /// `/orgs/{org}/…`.
    Org,
    /// `/teams/{id}/…`.
    Team,
    /// `/user/…`: the authenticated user's own things.
    Me,
    /// `/users/{username}/…`: somebody's things.
    User,
    /// Everything else (`/repos/search`, `/markdown`, `/packages/{owner}`, `/version`…).
    Global,
}

impl Scope {
    /// Every scope, in feature order.
    pub const ALL: [Scope; 7] = [
        Scope::Admin,
        Scope::Repo,
        Scope::Org,
        Scope::Team,
        Scope::Me,
        Scope::User,
        Scope::Global,
    ];

    /// The scope's name in feature names.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Admin => "admin",
            Scope::Repo => "repo",
            Scope::Org => "org",
            Scope::Team => "team",
            Scope::Me => "me",
            Scope::User => "user",
            Scope::Global => "global",
        }
    }

    /// The scope of a path template.
    pub fn of_path(path: &str) -> Scope {
        let seg: Vec<&str> = path.trim_matches('/').split('/').collect();
        let param = |i: usize| seg.get(i).is_some_and(|s| s.starts_with('{'));
        match seg.first().copied().unwrap_or("") {
            "admin" => Scope::Admin,
            "repos" if param(1) && param(2) => Scope::Repo,
            "repositories" if param(1) => Scope::Repo,
            "orgs" | "org" if param(1) => Scope::Org,
            "teams" if param(1) => Scope::Team,
            "user" => Scope::Me,
            "users" if param(1) => Scope::User,
            _ => Scope::Global,
        }
    }
}

/// Verbs in an operationId that make a POST or PUT change something that exists rather than
/// create something.
const UPDATE_VERBS: [&str; 10] = [
    "edit", "update", "rename", "transfer", "set", "move", "read", "mark", "replace", "lock",
];

/// Name words that say who owns the target rather than what it is.
const SCOPE_WORDS: [&str; 8] = [
    "current",
    "repository",
    "organization",
    "user",
    "admin",
    "by",
    "all",
    "of",
];

/// The verb class of an action, from its method (and, for POST/PUT, its operationId's verbs).
pub fn class_of(a: &Action) -> Intent {
    let words = split_words(a.operation_id.as_str());
    let updates = || words.iter().any(|w| UPDATE_VERBS.contains(&w.as_str()));
    match a.method {
        HttpMethod::Delete => Intent::Delete,
        HttpMethod::Get | HttpMethod::Head | HttpMethod::Options => {
            if a.returns_list {
                Intent::List
            } else {
                Intent::Get
            }
        }
        HttpMethod::Patch => Intent::Update,
        // A body-less PUT adds a relation (star, follow, add member) unless its name says it
        // changes state ("read", "set"); with a body it replaces.
        HttpMethod::Put => {
            if a.body.is_some() || updates() {
                Intent::Update
            } else {
                Intent::Create
            }
        }
        HttpMethod::Post => {
            if updates() {
                Intent::Update
            } else {
                Intent::Create
            }
        }
    }
}

/// The structural facts of one action. Word lists are the surface words, analysed by the index.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Verb class.
    pub class: Intent,
    /// Who owns the target.
    pub scope: Scope,
    /// The path ends in a parameter: one item rather than a collection.
    pub on_item: bool,
    /// A PUT whose summary says it creates (create-or-replace).
    pub upsert: bool,
    /// May destroy or overwrite state.
    pub destructive: bool,
    /// Marked deprecated.
    pub deprecated: bool,
    /// Only reads.
    pub read_only: bool,
    /// The action's domain (for the `domain` filter).
    pub domain: Domain,
    /// Nouns of the action's name (verbs and scope words left out).
    pub name_nouns: Vec<String>,
    /// Words of the last literal path segment (the resource acted on); a trailing verb segment
    /// is not a resource (`/pulls/{index}/merge` acts on `pulls`, `/wiki/new` on `wiki`).
    pub resource: Vec<String>,
    /// Words of the literal segment before it (the parent resource), if any.
    pub parent: Vec<String>,
    /// Words of every literal path segment after the scope's root.
    pub path_words: Vec<String>,
    /// Required path parameters beyond the owner (`owner`, `repo`, `org`, `username`…):
    /// identifiers of a sub-resource the caller must already know (a PR index, a workflow id).
    pub extra_ids: u8,
    /// Literal path segments after the scope's root.
    pub depth: u8,
    /// Per path parameter beyond the owner, the words of what it identifies: the literal
    /// segment before it and the parameter's own name (`/comments/{id}/assets/{attachment_id}`
    /// → `comments id`, `assets attachment id`).
    pub id_words: Vec<Vec<String>>,
    /// The path names a repository by `{owner}/{repo}`, in whatever scope
    /// (`/user/starred/{owner}/{repo}`, `/admin/unadopted/{owner}/{repo}`): an `owner/repo` in
    /// the need names it.
    pub names_repository: bool,
}

/// The shape of an action.
pub fn shape_of(a: &Action) -> Shape {
    let action_part = a
        .name
        .as_str()
        .strip_prefix("gitea_")
        .unwrap_or(a.name.as_str());
    let action_part = action_part
        .strip_prefix(a.domain.as_str())
        .unwrap_or(action_part);
    let name_nouns = action_part
        .split('_')
        .filter(|w| !w.is_empty())
        .map(vocabulary::canonical)
        .filter(|w| {
            vocabulary::intent_of(w).is_none()
                && !SCOPE_WORDS.contains(w)
                && !UPDATE_VERBS.contains(w)
        })
        .map(str::to_string)
        .collect();
    let scope = Scope::of_path(&a.path);
    let literals: Vec<&str> = a
        .path
        .split('/')
        .filter(|s| !s.is_empty() && !s.starts_with('{'))
        .collect();
    // The scope's root (`repos`, `orgs`, `user`, `admin`…) says who, not what.
    let after_root: &[&str] = match scope {
        Scope::Global => &literals,
        _ => literals.get(1..).unwrap_or(&[]),
    };
    let words = |s: &str| -> Vec<String> {
        split_words(s)
            .iter()
            .map(|w| vocabulary::canonical(w).to_string())
            .collect()
    };
    // A trailing verb segment (`/pulls/{index}/merge`, `/wiki/new`) acts on what precedes it.
    let verb_seg = |s: &str| {
        let ws = split_words(s);
        !ws.is_empty()
            && ws
                .iter()
                .all(|w| vocabulary::intent_of(vocabulary::canonical(w)).is_some())
    };
    let acted_on: &[&str] =
        if after_root.len() >= 2 && after_root.last().is_some_and(|s| verb_seg(s)) {
            &after_root[..after_root.len() - 1]
        } else {
            after_root
        };
    // `/orgs/{org}`, `/user`: the resource is the scope's root itself.
    let resource = acted_on
        .last()
        .or(literals.first())
        .map(|s| words(s))
        .unwrap_or_default();
    let parent = acted_on
        .len()
        .checked_sub(2)
        .map(|i| words(acted_on[i]))
        .unwrap_or_default();
    Shape {
        class: class_of(a),
        scope,
        on_item: a.path.ends_with('}'),
        names_repository: a.path.contains("{owner}") && a.path.contains("{repo}"),
        upsert: a.method == HttpMethod::Put && a.summary.to_ascii_lowercase().contains("create"),
        destructive: a.annotations.destructive,
        deprecated: a.deprecated,
        read_only: a.annotations.read_only,
        domain: a.domain,
        name_nouns,
        resource,
        parent,
        path_words: after_root.iter().flat_map(|s| words(s)).collect(),
        extra_ids: a
            .params
            .iter()
            .filter(|p| {
                p.location == ParamLocation::Path && !NAME_PARAMS.contains(&p.name.as_str())
            })
            .count()
            .min(4) as u8,
        depth: after_root.len().min(6) as u8,
        id_words: id_words(&a.path, &words),
    }
}

/// The words of what each identifier of `path` beyond the owner names: the literal segment
/// before it and its own name.
fn id_words(path: &str, words: &dyn Fn(&str) -> Vec<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut before = "";
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) if !NAME_PARAMS.contains(&name) => {
                let mut w = words(before);
                w.extend(words(name));
                out.push(w);
            }
            Some(_) => {}
            None => before = seg,
        }
    }
    out
}

/// How a sibling relates to the action it is a sibling of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Same path, another method.
    OtherVerb,
    /// The same resource, one item rather than the collection or the other way round.
    ItemOrCollection,
    /// The look-alike in another scope (repository, organisation, user, admin…): same resource,
    /// same method, same item-ness.
    OtherScope,
}

impl Relation {
    /// A short label.
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::OtherVerb => "other verb",
            Relation::ItemOrCollection => "item/collection",
            Relation::OtherScope => "other scope",
        }
    }
}

/// The resource a path acts on, whatever its scope and whether it names one item: the path
/// after its scope's root (`/repos/{owner}/{repo}`, `/orgs/{org}`, `/user`, `/admin`…) with
/// parameters blanked and a trailing parameter dropped. Also the root itself and whether the
/// path names one item.
pub fn resource_key(path: &str) -> (String, String, bool) {
    let seg: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect();
    let param = |i: usize| seg.get(i) == Some(&"{}");
    let skip = match seg.first().copied().unwrap_or("") {
        "repos" if param(1) && param(2) => 3,
        "orgs" | "org" | "teams" | "users" | "repositories" if param(1) => 2,
        "user" | "admin" => 1,
        _ => 0,
    };
    let root = seg[..skip.min(seg.len())].join("/");
    let mut tail: Vec<&str> = seg.iter().skip(skip).copied().collect();
    let item = tail.last() == Some(&"{}");
    if item {
        tail.pop();
    }
    (tail.join("/"), root, item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_keys_ignore_scope_and_item() {
        let k = |p: &str| resource_key(p);
        assert_eq!(
            k("/repos/{owner}/{repo}/actions/secrets/{name}"),
            ("actions/secrets".into(), "repos/{}/{}".into(), true)
        );
        assert_eq!(k("/orgs/{org}/actions/secrets").0, "actions/secrets");
        assert_eq!(k("/user/actions/secrets").0, "actions/secrets");
        assert_eq!(k("/repos/{owner}/{repo}").0, "");
    }

    /// The shape of the one operation of a minimal document.
    fn shape(method: &str, path: &str, op: &str) -> Shape {
        let params: Vec<serde_json::Value> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .map(|n| serde_json::json!({"name": n, "in": "path", "required": true, "type": "string"}))
            .collect();
        let doc = serde_json::json!({
            "swagger": "2.0",
            "info": {"title": "t", "version": "1"},
            "paths": {path: {method: {
                "operationId": op, "tags": ["repository"], "summary": op,
                "parameters": params, "responses": {"200": {"description": "ok"}}
            }}}
        });
        let spec = crate::spec::Spec::parse(doc.to_string().as_bytes()).unwrap();
        let catalog = crate::catalog::Catalog::build(&spec).unwrap();
        shape_of(&catalog.actions()[0])
    }

    #[test]
    fn a_trailing_verb_segment_is_not_the_resource() {
        let s = shape(
            "post",
            "/repos/{owner}/{repo}/pulls/{index}/merge",
            "repoMergePullRequest",
        );
        assert_eq!((s.resource, s.parent), (vec!["pull".into()], vec![]));
        let s = shape(
            "post",
            "/repos/{owner}/{repo}/wiki/new",
            "repoCreateWikiPage",
        );
        assert_eq!(s.resource, vec!["wiki".to_string()]);
        // A verb that is the whole path after the scope's root stays (`/repos/{o}/{r}/archive/{a}`).
        let s = shape(
            "get",
            "/repos/{owner}/{repo}/archive/{archive}",
            "repoGetArchive",
        );
        assert_eq!(s.resource, vec!["archive".to_string()]);
    }

    #[test]
    fn identifiers_name_what_precedes_them() {
        let s = shape(
            "get",
            "/repos/{owner}/{repo}/issues/comments/{id}/assets/{attachment_id}",
            "issueGetIssueCommentAttachment",
        );
        assert_eq!(
            s.id_words,
            vec![
                vec!["comments".to_string(), "id".into()],
                vec!["assets".to_string(), "attachment".into(), "id".into()],
            ]
        );
    }

    #[test]
    fn scopes_come_from_the_path() {
        for (path, scope) in [
            ("/admin/users", Scope::Admin),
            ("/repos/{owner}/{repo}/issues", Scope::Repo),
            ("/repos/search", Scope::Global),
            ("/repositories/{id}", Scope::Repo),
            ("/orgs/{org}/members", Scope::Org),
            ("/orgs", Scope::Global),
            ("/teams/{id}/members", Scope::Team),
            ("/user/repos", Scope::Me),
            ("/user", Scope::Me),
            ("/users/{username}/repos", Scope::User),
            ("/users/search", Scope::Global),
            ("/version", Scope::Global),
        ] {
            assert_eq!(Scope::of_path(path), scope, "{path}");
        }
    }
}

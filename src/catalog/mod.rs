//! The catalog: one [`Action`] per operation of the API description.
//!
//! The catalog is the single source every surface is projected from: the search index, the
//! policy, the MCP tools and resources, the CLI and `docs/actions.md`. It is built once from a
//! [`Spec`] and never changes afterwards. It knows nothing about search, policy or transports.

mod inventory;
mod naming;
pub mod route;
mod schema;
mod scopes;
mod validators;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

pub use inventory::render_inventory;
pub use naming::{MAX_NAME_LEN, domain_for_path, overridden_operation_ids, split_words};
pub use schema::{BODY_ARG, NAME_PARAMS, NAME_PATTERN, SUDO_ARG};
pub use scopes::{Access, Scope, ScopeCategory, ScopeRequirement, scopes_for};
pub use validators::Validators;

pub use crate::spec::{CollectionFormat, HttpMethod, ParamLocation, ResponseKind};
use crate::spec::{Operation, Spec, clean_text};

/// Errors raised while building the catalog.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two operations derive the same name and no override settles it.
    #[error(
        "action name {name} is derived for both {first} and {second}; add an entry for one of \
         them to spec/overrides.toml"
    )]
    NameCollision {
        /// The contested name.
        name: String,
        /// `operationId (METHOD path)` of the first operation.
        first: String,
        /// `operationId (METHOD path)` of the second operation.
        second: String,
    },
    /// A derived or overridden name breaks the naming contract.
    #[error("invalid action name {name:?} for {operation_id}: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// The operation it was derived for.
        operation_id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two parameters of one operation map to the same argument name.
    #[error("operation {operation_id} has two arguments named {argument:?}")]
    ArgumentClash {
        /// The operation.
        operation_id: String,
        /// The argument name used twice.
        argument: String,
    },
}

/// The checked name of an action: `gitea_<domain>_<action>`, lower-case snake_case, at most 64
/// bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActionName(Arc<str>);

impl ActionName {
    /// Checks `name` against the naming contract.
    pub fn new(name: &str) -> Result<ActionName, &'static str> {
        if name.len() > MAX_NAME_LEN {
            return Err("longer than 64 bytes");
        }
        let Some(rest) = name.strip_prefix("gitea_") else {
            return Err("must start with gitea_");
        };
        if rest.is_empty() || rest.starts_with('_') || name.ends_with('_') || name.contains("__") {
            return Err("empty or badly placed underscore");
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err("only a-z, 0-9 and _ are allowed");
        }
        Ok(ActionName(name.into()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ActionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The position of an action in the catalog that issued it. Only a catalog hands them out, so
/// an id always names an action of that catalog; index a catalog with it (`catalog[id]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActionId(u32);

impl ActionId {
    /// The id of position `index` of a catalog's actions, for indexes built from that catalog
    /// (the search): they hand back only positions the catalog gave them.
    pub(crate) fn of_index(index: usize) -> ActionId {
        ActionId(index as u32)
    }

    /// The position in [`Catalog::actions`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An operationId from the API description.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OperationId(Arc<str>);

impl OperationId {
    /// Wraps an operationId (the spec module has already checked its characters).
    pub fn new(id: &str) -> OperationId {
        OperationId(id.into())
    }

    /// The operationId.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for OperationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The area of the API an action belongs to; also the unit of the `TOOLSETS` filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Domain {
    /// Site administration (`/admin/**`).
    Admin,
    /// Repositories, branches, files, commits, tags, keys…
    Repo,
    /// Issues, comments, labels, milestones.
    Issue,
    /// Pull requests and reviews.
    Pull,
    /// Releases and their assets.
    Release,
    /// Wiki pages.
    Wiki,
    /// Organisations.
    Org,
    /// Teams.
    Team,
    /// Users and the authenticated user.
    User,
    /// Gitea Actions: workflows, runs, jobs, runners, secrets, variables, artifacts.
    Actions,
    /// Webhooks.
    Hook,
    /// Packages.
    Package,
    /// Notifications.
    Notification,
    /// Everything else: version, settings, markdown, templates, signing keys.
    Misc,
}

impl Domain {
    /// Every domain, in display order.
    pub const ALL: [Domain; 14] = [
        Domain::Admin,
        Domain::Repo,
        Domain::Issue,
        Domain::Pull,
        Domain::Release,
        Domain::Wiki,
        Domain::Org,
        Domain::Team,
        Domain::User,
        Domain::Actions,
        Domain::Hook,
        Domain::Package,
        Domain::Notification,
        Domain::Misc,
    ];

    /// The domain's name as it appears in action names.
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Admin => "admin",
            Domain::Repo => "repo",
            Domain::Issue => "issue",
            Domain::Pull => "pull",
            Domain::Release => "release",
            Domain::Wiki => "wiki",
            Domain::Org => "org",
            Domain::Team => "team",
            Domain::User => "user",
            Domain::Actions => "actions",
            Domain::Hook => "hook",
            Domain::Package => "package",
            Domain::Notification => "notification",
            Domain::Misc => "misc",
        }
    }

    /// Parses a domain name (case-insensitive).
    pub fn parse(s: &str) -> Option<Domain> {
        let s = s.trim().to_ascii_lowercase();
        Domain::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// MCP tool annotations, derived from the method and the operation's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    /// Only reads (`GET`/`HEAD`).
    pub read_only: bool,
    /// May destroy or overwrite existing state (`DELETE`, a `PUT` that replaces, a rename).
    pub destructive: bool,
    /// Repeating the call has no further effect (`GET`, `PUT`, `DELETE`).
    pub idempotent: bool,
}

/// One argument of an action that travels in the path, the query, a header or a form field.
#[derive(Debug, Clone)]
pub struct Param {
    /// Name, both as argument and on the wire.
    pub name: String,
    /// Where it travels.
    pub location: ParamLocation,
    /// Whether it must be given.
    pub required: bool,
    /// The JSON type (`string`, `integer`, `boolean`, `array`, `object` for files).
    pub ty: String,
    /// Description (control characters removed).
    pub description: String,
    /// Allowed values, when the spec enumerates them.
    pub enum_values: Vec<String>,
    /// Array serialisation for query arrays.
    pub collection_format: Option<CollectionFormat>,
    /// A multipart file field (`{filename, content_base64}`).
    pub is_file: bool,
}

/// The request body of an action.
#[derive(Debug, Clone)]
pub struct Body {
    /// Whether the body must be given.
    pub required: bool,
    /// The content type to send (`application/json` or `text/plain`).
    pub content_type: String,
    /// Top-level property names of the body object (for search and hints).
    pub properties: Vec<String>,
}

/// One operation of the API, ready to be found, checked and called.
#[derive(Debug, Clone)]
pub struct Action {
    /// `gitea_<domain>_<action>`.
    pub name: ActionName,
    /// The operationId it was derived from.
    pub operation_id: OperationId,
    /// HTTP method.
    pub method: HttpMethod,
    /// Path template relative to `/api/v1`.
    pub path: String,
    /// The path template, parsed for matching.
    pub route: route::Pattern,
    /// Domain (from the path).
    pub domain: Domain,
    /// One line, at most [`MAX_SUMMARY_CHARS`].
    pub summary: String,
    /// Longer text, at most [`MAX_DESCRIPTION_CHARS`]; often empty.
    pub description: String,
    /// Swagger tags.
    pub tags: Vec<String>,
    /// Path, query, header and form parameters.
    pub params: Vec<Param>,
    /// The request body, if any.
    pub body: Option<Body>,
    /// What a successful answer carries.
    pub response: ResponseKind,
    /// The successful answer is a list (JSON array).
    pub returns_list: bool,
    /// The only successful answer documented is `204 No Content`.
    pub no_content: bool,
    /// What a successful answer is made of: the name of the definition it holds (or lists) and
    /// that definition's top-level field names (`AccessToken`: `scopes`, `sha1`, …). Searched,
    /// since a need often names what it wants to read rather than the operation.
    pub returns: Vec<String>,
    /// The answer carries text written by Gitea users (issue and comment bodies, commit
    /// messages, descriptions, file contents): untrusted data, sanitised in answers.
    pub user_content: bool,
    /// MCP annotations.
    pub annotations: Annotations,
    /// Token scopes Gitea checks for this route.
    pub scopes: ScopeRequirement,
    /// Marked deprecated by the spec.
    pub deprecated: bool,
    /// Self-contained JSON Schema of the arguments.
    pub input_schema: Arc<Value>,
    /// The input schema as a card shows it, compacted by `render::card` on first use: every
    /// `gitea_find_action` answer carries its best card's, and compacting walks and measures
    /// the whole schema.
    pub card_schema: OnceLock<CardSchema>,
}

/// The compacted input schema a card shows (see `render::card::compact_schema`), as JSON for
/// the structured card and as the serialized text the text answer quotes.
#[derive(Debug, Clone, PartialEq)]
pub struct CardSchema {
    /// The compacted schema.
    pub json: Value,
    /// `json` serialized.
    pub text: String,
}

impl Action {
    /// The schema of this action's body argument, if it takes one (its `$ref` resolved): the
    /// one accessor for body fields.
    pub fn body_schema(&self) -> Option<&Value> {
        body_schema(&self.input_schema)
    }

    /// The multipart file fields of this action.
    pub fn file_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.is_file)
    }

    /// True when the request is `multipart/form-data`.
    pub fn is_multipart(&self) -> bool {
        self.params
            .iter()
            .any(|p| p.location == ParamLocation::FormData)
    }
}

/// Longest summary kept (characters).
pub const MAX_SUMMARY_CHARS: usize = 200;
/// Longest description kept (characters).
pub const MAX_DESCRIPTION_CHARS: usize = 1000;

/// Facts about the document the catalog was built from.
#[derive(Debug, Clone)]
pub struct SpecInfo {
    /// sha256 of the document.
    pub sha256: String,
    /// `info.title`.
    pub title: String,
    /// `info.version` (or `unknown`).
    pub version: String,
    /// Gitea or Forgejo.
    pub flavor: crate::spec::Flavor,
}

/// All actions of one API description.
#[derive(Debug, Clone)]
pub struct Catalog {
    actions: Vec<Action>,
    by_name: HashMap<ActionName, usize>,
    by_operation_id: HashMap<OperationId, usize>,
    info: SpecInfo,
}

impl Catalog {
    /// Builds the catalog from a parsed document.
    pub fn build(spec: &Spec) -> Result<Catalog, Error> {
        let mut actions = Vec::with_capacity(spec.operations.len());
        let mut by_name: HashMap<ActionName, usize> = HashMap::new();
        for op in &spec.operations {
            let action = build_action(op, spec)?;
            if let Some(&i) = by_name.get(&action.name) {
                let describe = |a: &Action| format!("{} ({} {})", a.operation_id, a.method, a.path);
                return Err(Error::NameCollision {
                    name: action.name.to_string(),
                    first: describe(&actions[i]),
                    second: describe(&action),
                });
            }
            by_name.insert(action.name.clone(), actions.len());
            actions.push(action);
        }
        // Stable order for every listing: by name.
        actions.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name = actions
            .iter()
            .enumerate()
            .map(|(i, a)| (a.name.clone(), i))
            .collect();
        let by_operation_id = actions
            .iter()
            .enumerate()
            .map(|(i, a)| (a.operation_id.clone(), i))
            .collect();
        let info = SpecInfo {
            sha256: spec.sha256.clone(),
            title: spec.title.clone(),
            version: spec.version.clone(),
            flavor: spec.flavor,
        };
        Ok(Catalog {
            actions,
            by_name,
            by_operation_id,
            info,
        })
    }

    /// Every action, sorted by name.
    pub fn actions(&self) -> &[Action] {
        &self.actions
    }

    /// The number of actions.
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// True when the document had no operations.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// Looks an action up by its name or its operationId (operationIds are matched exactly;
    /// names are lower-case, so a name given in another case still matches).
    pub fn get(&self, name_or_operation_id: &str) -> Option<&Action> {
        let key = name_or_operation_id.trim();
        if let Some(&i) = self.by_operation_id.get(&OperationId::new(key)) {
            return Some(&self.actions[i]);
        }
        let lower = key.to_ascii_lowercase();
        ActionName::new(&lower)
            .ok()
            .and_then(|n| self.by_name.get(&n))
            .map(|&i| &self.actions[i])
    }

    /// The id of the action named `name`.
    pub fn id_of(&self, name: &ActionName) -> Option<ActionId> {
        self.by_name.get(name).map(|&i| ActionId(i as u32))
    }

    /// Looks an action up by its name or operationId (see [`Catalog::get`]), with its id.
    pub fn lookup(&self, name_or_operation_id: &str) -> Option<(ActionId, &Action)> {
        let action = self.get(name_or_operation_id)?;
        Some((self.id_of(&action.name)?, action))
    }

    /// The id of the action at position `index` of [`Catalog::actions`], if there is one.
    pub fn id_at(&self, index: usize) -> Option<ActionId> {
        (index < self.actions.len()).then_some(ActionId(index as u32))
    }

    /// Every action with its id, in name order.
    pub fn ids(&self) -> impl Iterator<Item = (ActionId, &Action)> {
        self.actions
            .iter()
            .enumerate()
            .map(|(i, a)| (ActionId(i as u32), a))
    }

    /// Facts about the source document.
    pub fn info(&self) -> &SpecInfo {
        &self.info
    }
}

impl std::ops::Index<ActionId> for Catalog {
    type Output = Action;

    /// The action of an id this catalog issued.
    fn index(&self, id: ActionId) -> &Action {
        &self.actions[id.index()]
    }
}

fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Verbs that mean the call overwrites or removes what exists.
const REPLACING_WORDS: [&str; 6] = ["replace", "update", "set", "reset", "rename", "transfer"];

/// Property names whose values Gitea users write.
pub const USER_TEXT_FIELDS: [&str; 6] =
    ["body", "content", "message", "title", "description", "note"];

/// True when a successful answer of `op` carries user-written text: text answers (diffs, raw
/// files), or a JSON definition with a user-text property, itself or one `$ref` down (a
/// commit's `commit.message`).
fn returns_user_text(op: &Operation, spec: &Spec) -> bool {
    fn has_text(def: &Value, spec: &Spec, depth: u8) -> bool {
        let Some(props) = def.get("properties").and_then(Value::as_object) else {
            return false;
        };
        props.iter().any(|(name, p)| {
            USER_TEXT_FIELDS.contains(&name.as_str())
                || (depth > 0
                    && p.get("$ref")
                        .or_else(|| p.pointer("/items/$ref"))
                        .and_then(Value::as_str)
                        .and_then(|r| r.strip_prefix("#/definitions/"))
                        .and_then(|n| spec.definitions.get(n))
                        .is_some_and(|d| has_text(d, spec, depth - 1)))
        })
    }
    match op.response {
        ResponseKind::Text => true,
        ResponseKind::Json => {
            answer_definition(op, spec).is_some_and(|(_, d)| has_text(d, spec, 1))
        }
        _ => false,
    }
}

/// The definition a successful answer of `op` holds (or lists): its name and its JSON.
fn answer_definition<'a>(op: &'a Operation, spec: &'a Spec) -> Option<(&'a str, &'a Value)> {
    let name = op.response_definition.as_deref()?;
    spec.definitions.get(name).map(|d| (name, d))
}

/// The answer's definition name and its top-level field names, in document order.
fn returned_fields(op: &Operation, spec: &Spec) -> Vec<String> {
    let Some((name, def)) = answer_definition(op, spec) else {
        return Vec::new();
    };
    let mut out = vec![name.to_string()];
    if let Some(props) = def.get("properties").and_then(Value::as_object) {
        out.extend(props.keys().cloned());
    }
    out
}

fn annotations(op: &Operation) -> Annotations {
    let words = split_words(&op.operation_id);
    let replacing = words.iter().any(|w| REPLACING_WORDS.contains(&w.as_str()));
    let has_body = op
        .parameters
        .iter()
        .any(|p| p.location == ParamLocation::Body);
    let destructive = match op.method {
        HttpMethod::Delete => true,
        // PUT replaces the target with what it carries; a body-less PUT adds a relation
        // (star, follow, add member) unless its name says it replaces.
        HttpMethod::Put => has_body || replacing,
        // PATCH edits in place; only renames and transfers lose something.
        HttpMethod::Patch | HttpMethod::Post => words
            .iter()
            .any(|w| w == "rename" || w == "transfer" || w == "replace"),
        _ => false,
    };
    Annotations {
        read_only: op.method.is_read(),
        destructive,
        idempotent: matches!(
            op.method,
            HttpMethod::Get | HttpMethod::Head | HttpMethod::Put | HttpMethod::Delete
        ),
    }
}

fn build_action(op: &Operation, spec: &Spec) -> Result<Action, Error> {
    let domain = domain_for_path(&op.path);
    let name_text = match naming::name_override(&op.operation_id) {
        Some(n) => n.to_string(),
        None => naming::rule_name(domain, &op.operation_id),
    };
    let name = ActionName::new(&name_text).map_err(|reason| Error::InvalidName {
        name: name_text.clone(),
        operation_id: op.operation_id.clone(),
        reason,
    })?;
    let input_schema = schema::input_schema(op, &spec.definitions)?;
    let mut params = Vec::new();
    let mut body = None;
    for p in &op.parameters {
        if p.location == ParamLocation::Body {
            let properties = body_schema(&input_schema)
                .and_then(|b| b.get("properties"))
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let content_type =
                if op.consumes.iter().any(|c| c.contains("json")) || op.consumes.is_empty() {
                    "application/json"
                } else {
                    op.consumes[0].as_str()
                };
            body = Some(Body {
                required: p.required,
                content_type: content_type.to_string(),
                properties,
            });
            continue;
        }
        let ty = if p.is_file {
            "object".to_string()
        } else {
            p.schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("string")
                .to_string()
        };
        let enum_source = if ty == "array" {
            p.schema.pointer("/items/enum")
        } else {
            p.schema.get("enum")
        };
        let enum_values = enum_source
            .and_then(Value::as_array)
            .map(|vs| {
                vs.iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect()
            })
            .unwrap_or_default();
        params.push(Param {
            name: p.name.clone(),
            location: p.location,
            required: p.required || p.location == ParamLocation::Path,
            ty,
            description: truncate_chars(&clean_text(&p.description), MAX_DESCRIPTION_CHARS),
            enum_values,
            collection_format: p.collection_format,
            is_file: p.is_file,
        });
    }
    Ok(Action {
        name,
        operation_id: OperationId::new(&op.operation_id),
        method: op.method,
        path: op.path.clone(),
        domain,
        summary: truncate_chars(op.summary.lines().next().unwrap_or(""), MAX_SUMMARY_CHARS),
        description: truncate_chars(&op.description, MAX_DESCRIPTION_CHARS),
        tags: op.tags.clone(),
        params,
        body,
        response: op.response,
        returns_list: op.returns_list,
        no_content: op.no_content,
        returns: returned_fields(op, spec),
        user_content: returns_user_text(op, spec),
        annotations: annotations(op),
        scopes: scopes_for(op.method, &op.path),
        route: route::Pattern::parse(&op.path),
        deprecated: op.deprecated,
        input_schema: Arc::new(input_schema),
        card_schema: OnceLock::new(),
    })
}

/// The schema of the `body` argument in an input schema, its `$ref` (into `$defs`) resolved.
pub fn body_schema(input_schema: &Value) -> Option<&Value> {
    let body = input_schema.pointer("/properties/body")?;
    Some(match body.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| input_schema.pointer(p))
            .unwrap_or(body),
        None => body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_names_are_checked() {
        assert!(ActionName::new("gitea_repo_get").is_ok());
        for bad in [
            "repo_get",
            "gitea_",
            "gitea__x",
            "gitea_Repo",
            "gitea_x-y",
            "gitea_x_",
        ] {
            assert!(ActionName::new(bad).is_err(), "{bad}");
        }
        assert!(ActionName::new(&format!("gitea_{}", "a".repeat(58))).is_ok());
        assert!(ActionName::new(&format!("gitea_{}", "a".repeat(59))).is_err());
    }

    #[test]
    fn domains_parse_case_insensitively() {
        assert_eq!(Domain::parse(" Pull "), Some(Domain::Pull));
        assert_eq!(Domain::parse("pulls"), None);
        for d in Domain::ALL {
            assert_eq!(Domain::parse(d.as_str()), Some(d));
        }
    }
}

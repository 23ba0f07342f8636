//! The text of an action's document, one string per field, derived from the catalog alone.
//!
//! Besides the name, operationId, summary, description, path and parameter names, each action
//! gets a *capability* text generated from its request-body schema and its query parameters:
//! every field's name and the first sentence of its description (`EditRepoOption.archived`:
//! "archived: set to true to archive this repository"). It is what lets a need that lives in one
//! field of a general edit operation ("archive the repository", "make it private") find that
//! operation in any document, without a list of fields per operation.

use serde_json::Value;

use super::vocabulary;
use crate::catalog::{Action, Domain, ParamLocation, split_words};

/// The fields of an action's document, in feature order (see `features.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Domain noun and action-name words.
    Name,
    /// operationId words.
    OperationId,
    /// The one-line summary.
    Summary,
    /// The longer description.
    Description,
    /// Literal path segments.
    Path,
    /// Parameter and body-property names, enum values.
    Params,
    /// Generated capability text (body fields and query parameters with their descriptions).
    Capability,
    /// What a successful answer holds: its definition's name and field names.
    Returns,
    /// Labelled needs (`index/examples.jsonl`), when the action has any.
    Examples,
}

/// Number of fields.
pub const FIELDS: usize = 9;

impl FieldKind {
    /// Every field, in index order.
    pub const ALL: [FieldKind; FIELDS] = [
        FieldKind::Name,
        FieldKind::OperationId,
        FieldKind::Summary,
        FieldKind::Description,
        FieldKind::Path,
        FieldKind::Params,
        FieldKind::Capability,
        FieldKind::Returns,
        FieldKind::Examples,
    ];

    /// The field's name in feature names.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Name => "name",
            FieldKind::OperationId => "opid",
            FieldKind::Summary => "summary",
            FieldKind::Description => "description",
            FieldKind::Path => "path",
            FieldKind::Params => "params",
            FieldKind::Capability => "capability",
            FieldKind::Returns => "returns",
            FieldKind::Examples => "examples",
        }
    }
}

/// Text as words: identifiers split (`branch_protections` → `branch protections`,
/// `getByID` → `get by id`), abbreviations unified.
pub fn words_of(text: &str) -> String {
    split_words(text)
        .iter()
        .map(|w| vocabulary::canonical(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words a domain stands for in the name field.
fn domain_words(d: Domain) -> &'static str {
    match d {
        Domain::Repo => "repository",
        Domain::Pull => "pull request",
        Domain::Org => "organization",
        other => other.as_str(),
    }
}

/// The text of every field but the examples (which come from the labelled needs).
pub fn document(a: &Action) -> [String; FIELDS - 1] {
    let action_part = a
        .name
        .as_str()
        .strip_prefix("gitea_")
        .unwrap_or(a.name.as_str());
    let path = a
        .path
        .split('/')
        .filter(|s| !s.is_empty() && !s.starts_with('{'))
        .map(words_of)
        .collect::<Vec<_>>()
        .join(" ");
    let mut params = Vec::new();
    for p in &a.params {
        if p.location != ParamLocation::Path {
            params.push(words_of(&p.name));
        }
        params.extend(p.enum_values.iter().map(|v| words_of(v)));
    }
    let body = body_definition(&a.input_schema);
    if let Some(b) = &a.body {
        params.extend(b.properties.iter().map(|p| words_of(p)));
    }
    if let Some(def) = body {
        collect_enums(def, &a.input_schema, &mut params);
    }
    [
        format!("{} {}", domain_words(a.domain), words_of(action_part)),
        words_of(a.operation_id.as_str()),
        vocabulary::canonical_text(&a.summary),
        vocabulary::canonical_text(&a.description),
        path,
        params.join(" "),
        capability(a, body),
        a.returns
            .iter()
            .map(|w| words_of(w))
            .collect::<Vec<_>>()
            .join(" "),
    ]
}

/// The body's definition in the action's input schema, following one `$ref`.
fn body_definition(schema: &Value) -> Option<&Value> {
    let body = schema.pointer("/properties/body")?;
    Some(resolve(body, schema))
}

fn resolve<'a>(node: &'a Value, root: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .unwrap_or(node),
        None => node,
    }
}

/// The capability text: for each body field and query parameter, its name as words and the
/// first sentence of its description, markup removed.
pub fn capability(a: &Action, body: Option<&Value>) -> String {
    let mut out = String::new();
    let mut push = |name: &str, description: &str| {
        out.push_str(&words_of(name));
        out.push_str(": ");
        out.push_str(&vocabulary::canonical_text(&first_sentence(description)));
        out.push_str(". ");
    };
    if let Some(props) = body
        .and_then(|b| b.get("properties"))
        .and_then(Value::as_object)
    {
        for (name, prop) in props {
            let prop = resolve(prop, &a.input_schema);
            let description = prop
                .get("description")
                .or_else(|| prop.get("title"))
                .and_then(Value::as_str)
                .unwrap_or("");
            push(name, description);
        }
    }
    for p in &a.params {
        if matches!(p.location, ParamLocation::Query | ParamLocation::FormData) {
            push(&p.name, &p.description);
        }
    }
    out
}

/// The first sentence (or line) of a description, without backticks and quotes.
fn first_sentence(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let end = line
        .char_indices()
        .find(|&(i, c)| {
            c == '.'
                && line[i + 1..]
                    .chars()
                    .next()
                    .is_none_or(|n| n.is_whitespace())
        })
        .map_or(line.len(), |(i, _)| i);
    line[..end]
        .chars()
        .map(|c| if matches!(c, '`' | '"') { ' ' } else { c })
        .collect()
}

/// Enum values of a body definition's top-level properties (merge styles, states, …).
fn collect_enums(def: &Value, root: &Value, out: &mut Vec<String>) {
    if let Some(props) = def.get("properties").and_then(Value::as_object) {
        for prop in props.values() {
            // Enums often live in their own definition (`ReviewStateType`, `MergeStyle`).
            let prop = resolve(prop, root);
            let items = prop.get("items").unwrap_or(prop);
            for node in [prop, items] {
                if let Some(values) = node.get("enum").and_then(Value::as_array) {
                    out.extend(values.iter().filter_map(Value::as_str).map(words_of));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentences_drop_markup() {
        assert_eq!(
            first_sentence("set to `true` to archive this repository. Note: x"),
            "set to  true  to archive this repository"
        );
        assert_eq!(first_sentence("version 1.2 of it"), "version 1.2 of it");
        assert_eq!(first_sentence(""), "");
    }
}

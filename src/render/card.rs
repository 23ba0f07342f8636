//! Action cards: the compact description of an action a model needs to call it.

use std::fmt::Write;

use serde_json::{Map, Value, json};

use crate::catalog::{Action, CardSchema, ParamLocation, SUDO_ARG};
use crate::policy::Decision;
use crate::search::Relation;

/// Longest property description kept in a card's schema.
const CARD_DESCRIPTION_CHARS: usize = 80;

/// Keys a JSON card can have (`card_json`), which its map is sized for.
const CARD_KEYS: usize = 12;

/// The card of `action` as JSON. `with_schema` adds the (compacted) input schema.
pub fn card_json(action: &Action, decision: &Decision, with_schema: bool) -> Value {
    // Sized for every key a card can have: the map is an `IndexMap` (`preserve_order`), and
    // growing it while inserting cost a fifth of rendering the cards.
    let mut card = Map::with_capacity(CARD_KEYS);
    card.insert("name".into(), json!(action.name.as_str()));
    card.insert("operation_id".into(), json!(action.operation_id.as_str()));
    card.insert("summary".into(), json!(action.summary));
    card.insert("method".into(), json!(action.method.as_str()));
    card.insert("path".into(), json!(action.path));
    card.insert("required".into(), Value::Object(required_args(action)));
    card.insert("read_only".into(), json!(action.annotations.read_only));
    card.insert("destructive".into(), json!(action.annotations.destructive));
    if action.deprecated {
        card.insert("deprecated".into(), json!(true));
    }
    if action.user_content {
        card.insert("user_content".into(), json!(true));
    }
    if let Decision::Withheld { reason } = decision {
        card.insert("withheld".into(), json!({"reason": reason.to_string(), "code": reason.code(), "who_can_change": reason.who_can_change()}));
    }
    if with_schema {
        card.insert("input_schema".into(), card_schema(action).json.clone());
    }
    Value::Object(card)
}

/// The schema a card of `action` shows, compacted and serialized on first use.
pub fn card_schema(action: &Action) -> &CardSchema {
    action.card_schema.get_or_init(|| {
        let json = compact_schema(&action.input_schema);
        let text = json.to_string();
        CardSchema { json, text }
    })
}

/// The line of the text answer that quotes the card schema of `action`.
pub fn schema_text(out: &mut String, action: &Action) {
    let _ = writeln!(
        out,
        "input schema of {}: {}",
        action.name,
        card_schema(action).text
    );
}

/// The required arguments in order, each with its type: the parameters', then `body`.
fn required(action: &Action) -> impl Iterator<Item = (&str, &str)> {
    let params = action.params.iter().filter(|p| p.required);
    let body = action.body.as_ref().filter(|b| b.required);
    params
        .map(|p| (p.name.as_str(), p.ty.as_str()))
        .chain(body.map(|_| ("body", "object")))
}

/// Required arguments and their types (`owner: string`, `index: integer`, `body: object`).
fn required_args(action: &Action) -> Map<String, Value> {
    let mut args = Map::with_capacity(required(action).count());
    for (name, ty) in required(action) {
        args.insert(name.to_string(), json!(ty));
    }
    args
}

/// The names of [`required_args`], in its order, without building its map.
fn required_names(action: &Action) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (name, _) in required(action) {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// One card as one line of text (two when withheld): name, method and path, the summary's
/// first sentence, required arguments, flags.
pub fn card_text(out: &mut String, rank: usize, action: &Action, decision: &Decision) {
    let mut flags = Vec::new();
    if action.annotations.read_only {
        flags.push("read-only");
    }
    if action.annotations.destructive {
        flags.push("destructive");
    }
    if action.deprecated {
        flags.push("deprecated");
    }
    if action.user_content {
        flags.push("returns user-written text");
    }
    let required = required_names(action);
    let _ = write!(
        out,
        "{rank}. {} {} {} — {}",
        action.name,
        action.method,
        action.path,
        one_line(&action.summary)
    );
    if !required.is_empty() {
        let _ = write!(out, " | required: {}", required.join(", "));
    }
    if let Some(b) = &action.body {
        if !b.properties.is_empty() && !b.required {
            let _ = write!(out, " | body optional");
        }
    }
    if !flags.is_empty() {
        let _ = write!(out, " | {}", flags.join(", "));
    }
    if let Decision::Withheld { reason } = decision {
        let _ = write!(
            out,
            "\n   WITHHELD: {reason} (who can change it: {})",
            reason.who_can_change()
        );
    }
    out.push('\n');
}

/// Longest summary shown in a text card.
const CARD_SUMMARY_CHARS: usize = 90;

/// The first sentence of a summary, bounded.
fn one_line(summary: &str) -> String {
    let first = summary
        .split_once(". ")
        .map_or(summary, |(a, _)| a)
        .trim_end_matches('.');
    if first.chars().count() <= CARD_SUMMARY_CHARS {
        return first.to_string();
    }
    let mut out: String = first.chars().take(CARD_SUMMARY_CHARS - 1).collect();
    out.push('…');
    out
}

/// Most siblings listed.
pub const MAX_SIBLINGS: usize = 6;

/// The siblings as one line of text.
pub fn siblings_text(out: &mut String, actions: &[Action], siblings: &[(usize, Relation)]) {
    if siblings.is_empty() {
        return;
    }
    let parts: Vec<String> = siblings
        .iter()
        .map(|&(i, _)| format!("{} ({})", actions[i].name, actions[i].method))
        .collect();
    let _ = writeln!(out, "Same resource as 1: {}", parts.join(", "));
}

/// Serialized size above which a card's schema keeps names and types only.
const SCHEMA_BUDGET_BYTES: usize = 2000;

/// The input schema without what only a validator needs: `sudo` (documented in the execute
/// tool), `additionalProperties`, formats of integers, and long descriptions. A schema still
/// larger than [`SCHEMA_BUDGET_BYTES`] loses its descriptions (names and types stay).
pub fn compact_schema(schema: &Value) -> Value {
    let compact = |keep_descriptions| {
        let mut v = strip(schema, keep_descriptions);
        if let Some(props) = v.get_mut("properties").and_then(Value::as_object_mut) {
            props.remove(SUDO_ARG);
        }
        v
    };
    let v = compact(true);
    if serialized_len(&v) > SCHEMA_BUDGET_BYTES {
        compact(false)
    } else {
        v
    }
}

/// The length of `v` serialized, counted rather than written.
fn serialized_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    // Writing to a counter cannot fail, and a `Value` always serializes.
    let _ = serde_json::to_writer(&mut n, v);
    n.0
}

fn strip(node: &Value, keep_descriptions: bool) -> Value {
    match node {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                match k.as_str() {
                    "additionalProperties" if v == &Value::Bool(false) => continue,
                    "format" if matches!(v.as_str(), Some("int64" | "int32")) => continue,
                    "pattern" | "minLength" => continue,
                    "description" | "title" => {
                        if let Some(s) = v.as_str().filter(|_| keep_descriptions) {
                            out.insert(k.clone(), json!(shorten(s)));
                        }
                        continue;
                    }
                    "properties" => {
                        if let Value::Object(props) = v {
                            out.insert(
                                k.clone(),
                                Value::Object(
                                    props
                                        .iter()
                                        .map(|(n, s)| (n.clone(), strip(s, keep_descriptions)))
                                        .collect(),
                                ),
                            );
                        }
                        continue;
                    }
                    _ => {}
                }
                out.insert(k.clone(), strip(v, keep_descriptions));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| strip(i, keep_descriptions)).collect())
        }
        other => other.clone(),
    }
}

fn shorten(s: &str) -> String {
    let first = s.lines().next().unwrap_or("").trim();
    if first.chars().count() <= CARD_DESCRIPTION_CHARS {
        return first.to_string();
    }
    let mut out: String = first.chars().take(CARD_DESCRIPTION_CHARS - 1).collect();
    out.push('…');
    out
}

/// Path parameter names of an action, in path order (for hints).
pub fn path_params(action: &Action) -> Vec<&str> {
    action
        .params
        .iter()
        .filter(|p| p.location == ParamLocation::Path)
        .map(|p| p.name.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::spec::Spec;

    /// A catalog of one action: two path parameters (one with a pattern, which cards leave
    /// out), a query parameter and a required body.
    fn one_action() -> Catalog {
        let doc = json!({
            "swagger": "2.0",
            "info": {"title": "Gitea API", "version": "1.0"},
            "basePath": "/api/v1",
            "paths": {"/repos/{owner}/{repo}/labels": {"post": {
                "operationId": "issueCreateLabel",
                "summary": "Create a label",
                "parameters": [
                    {"name": "owner", "in": "path", "required": true, "type": "string",
                     "pattern": "^[a-z]+$"},
                    {"name": "repo", "in": "path", "required": true, "type": "string"},
                    {"name": "page", "in": "query", "type": "integer"},
                    {"name": "body", "in": "body", "required": true,
                     "schema": {"type": "object", "properties": {"name": {"type": "string"}}}},
                ],
                "responses": {"201": {"description": "created"}},
            }}},
        });
        let spec = Spec::parse(doc.to_string().as_bytes()).expect("the document parses");
        Catalog::build(&spec).expect("the catalog builds")
    }

    /// The text card and the JSON card list the same required arguments in the same order:
    /// the path parameters, then the body.
    #[test]
    fn both_cards_list_the_required_arguments_alike() {
        let catalog = one_action();
        let action = &catalog.actions()[0];
        let mut text = String::new();
        card_text(&mut text, 1, action, &Decision::Allowed);
        assert!(text.contains(" | required: owner, repo, body"), "{text}");
        let card = card_json(action, &Decision::Allowed, false);
        let keys: Vec<&str> = card["required"]
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["owner", "repo", "body"]);
        assert_eq!(card["required"]["owner"], "string");
        assert_eq!(card["required"]["body"], "object");
    }

    /// The first card's schema is the compacted input schema, computed once (with its text)
    /// and the same on every later card of the action; a card without it leaves nothing
    /// computed. The text answer quotes the same schema.
    #[test]
    fn a_card_shows_the_compacted_schema_computed_once() {
        let catalog = one_action();
        let action = &catalog.actions()[0];
        let _ = card_json(action, &Decision::Allowed, false);
        assert!(action.card_schema.get().is_none());
        let expected = compact_schema(&action.input_schema);
        assert_ne!(
            expected, *action.input_schema,
            "the fixture has something to compact"
        );
        for _ in 0..2 {
            let card = card_json(action, &Decision::Allowed, true);
            assert_eq!(card["input_schema"], expected);
        }
        let cached = action.card_schema.get().expect("filled by the first card");
        assert_eq!(cached.json, expected);
        assert_eq!(cached.text, expected.to_string());
        let mut text = String::new();
        schema_text(&mut text, action);
        assert_eq!(
            text,
            format!("input schema of {}: {expected}\n", action.name)
        );
    }

    /// A schema within the budget keeps its descriptions; one over it keeps names and types
    /// only. The size is the serialized JSON's, counted without writing it.
    #[test]
    fn a_schema_over_the_budget_loses_its_descriptions() {
        let schema = |n: usize| {
            let props: Map<String, Value> = (0..n)
                .map(|i| {
                    let p = json!({"type": "string", "description": format!("field {i} of the option")});
                    (format!("field_{i}"), p)
                })
                .collect();
            json!({"type": "object", "properties": props})
        };
        for v in [schema(1), schema(40), json!("é\"\n"), json!([1, null, 2.5])] {
            assert_eq!(serialized_len(&v), v.to_string().len());
        }
        let small = compact_schema(&schema(3));
        assert_eq!(
            small["properties"]["field_0"]["description"],
            "field 0 of the option"
        );
        let large = compact_schema(&schema(60));
        assert!(serialized_len(&schema(60)) > SCHEMA_BUDGET_BYTES);
        assert_eq!(large["properties"]["field_0"], json!({"type": "string"}));
        assert_eq!(large["properties"].as_object().map(Map::len), Some(60));
    }
}

//! Self-contained JSON Schemas (draft 2020-12) for an action's arguments.
//!
//! Path and query parameters become top-level properties; the JSON body goes under `body`;
//! multipart files become `{filename, content_base64}` objects; every action accepts an optional
//! `sudo`. `#/definitions/X` references are rewritten to `#/$defs/X` and only the definitions a
//! body reaches are copied, so each schema stands alone. Recursive definitions stay recursive
//! through `$ref`; the copy itself is a bounded walk over a visited set.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::Error;
use crate::spec::{Operation, ParamLocation};

/// The argument that carries the JSON (or text) request body.
pub const BODY_ARG: &str = "body";
/// The argument that makes an admin act as another user (sent as the `Sudo` header).
pub const SUDO_ARG: &str = "sudo";

/// Path parameters that name a user, an organisation or a repository. Their pattern excludes
/// `/`, the segments `.` and `..`, and control characters, so a value can never escape its
/// path segment.
pub const NAME_PARAMS: [&str; 11] = [
    "owner",
    "repo",
    "org",
    "username",
    "user",
    "collaborator",
    "assignee",
    "target",
    "template_owner",
    "template_repo",
    "team",
];

/// A single path segment: no `/`, no control characters, not `.` or `..`.
pub const NAME_PATTERN: &str = r"^(?:[^/\x00-\x1f\x7f.][^/\x00-\x1f\x7f]*|\.[^/\x00-\x1f\x7f.][^/\x00-\x1f\x7f]*|\.\.[^/\x00-\x1f\x7f]+)$";

/// Swagger keys that carry no meaning for validation or for the model.
fn is_noise_key(key: &str) -> bool {
    key.starts_with("x-") || key == "example" || key == "discriminator"
}

/// Builds the input schema of `op`.
pub fn input_schema(op: &Operation, definitions: &Map<String, Value>) -> Result<Value, Error> {
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    let mut referenced = BTreeSet::new();
    let clash = |name: &str| Error::ArgumentClash {
        operation_id: op.operation_id.clone(),
        argument: name.to_string(),
    };
    for p in &op.parameters {
        let key = match p.location {
            ParamLocation::Body => BODY_ARG,
            _ => p.name.as_str(),
        };
        if key == SUDO_ARG || properties.contains_key(key) {
            return Err(clash(key));
        }
        let mut schema = match p.location {
            ParamLocation::Body => convert(&p.schema, &mut referenced),
            ParamLocation::FormData if p.is_file => file_schema(),
            _ => p.schema.clone(),
        };
        if let Value::Object(obj) = &mut schema {
            if !p.description.is_empty() && !obj.contains_key("description") {
                obj.insert("description".into(), Value::String(p.description.clone()));
            }
            if p.location == ParamLocation::Path
                && obj.get("type").and_then(Value::as_str) == Some("string")
            {
                obj.insert("minLength".into(), json!(1));
                if NAME_PARAMS.contains(&p.name.as_str()) {
                    obj.insert("pattern".into(), Value::String(NAME_PATTERN.into()));
                }
            }
        }
        if p.required || p.location == ParamLocation::Path {
            required.push(Value::String(key.to_string()));
        }
        properties.insert(key.to_string(), schema);
    }
    properties.insert(
        SUDO_ARG.into(),
        json!({
            "type": "string",
            "pattern": NAME_PATTERN,
            "description": "Act as this user (site admins only); sent as the Sudo header."
        }),
    );
    let mut root = Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        root.insert("required".into(), Value::Array(required));
    }
    root.insert("additionalProperties".into(), json!(false));
    let defs = collect_definitions(referenced, definitions);
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    Ok(Value::Object(root))
}

fn file_schema() -> Value {
    json!({
        "type": "object",
        "description": "A file to upload.",
        "properties": {
            "filename": {"type": "string", "minLength": 1, "description": "Name of the file."},
            "content_base64": {"type": "string", "contentEncoding": "base64", "description": "The file's bytes, base64-encoded."},
            "content_type": {"type": "string", "description": "MIME type (default application/octet-stream)."}
        },
        "required": ["filename", "content_base64"],
        "additionalProperties": false
    })
}

/// Copies a swagger schema as JSON Schema: refs rewritten, noise keys dropped, and the names of
/// referenced definitions collected.
fn convert(node: &Value, referenced: &mut BTreeSet<String>) -> Value {
    match node {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                if is_noise_key(k) {
                    continue;
                }
                if k == "$ref" {
                    if let Some(name) = v.as_str().and_then(|r| r.strip_prefix("#/definitions/")) {
                        referenced.insert(name.to_string());
                        out.insert(k.clone(), Value::String(format!("#/$defs/{name}")));
                        continue;
                    }
                }
                // Inside `properties` the keys are field names, not keywords: keep them all.
                let v = if k == "properties" {
                    match v {
                        Value::Object(props) => Value::Object(
                            props
                                .iter()
                                .map(|(name, s)| (name.clone(), convert(s, referenced)))
                                .collect(),
                        ),
                        other => other.clone(),
                    }
                } else {
                    convert(v, referenced)
                };
                out.insert(k.clone(), v);
            }
            close_object(&mut out);
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| convert(v, referenced)).collect()),
        other => other.clone(),
    }
}

/// Gitea's request structs list every field they read; anything else is silently ignored by
/// Gitea, so an unknown field is always a mistake worth reporting before the call.
fn close_object(obj: &mut Map<String, Value>) {
    if obj.contains_key("properties") && !obj.contains_key("additionalProperties") {
        obj.insert("additionalProperties".into(), json!(false));
    }
    // `uniqueItems` only means something on arrays (Gitea puts it on a few strings).
    if obj.contains_key("uniqueItems") && obj.get("type").and_then(Value::as_str) != Some("array") {
        obj.remove("uniqueItems");
    }
}

/// The transitive closure of `start` over `definitions`, converted.
fn collect_definitions(
    start: BTreeSet<String>,
    definitions: &Map<String, Value>,
) -> Map<String, Value> {
    let mut done = Map::new();
    let mut queue: Vec<String> = start.into_iter().collect();
    while let Some(name) = queue.pop() {
        if done.contains_key(&name) {
            continue;
        }
        let Some(def) = definitions.get(&name) else {
            continue;
        };
        let mut found = BTreeSet::new();
        let converted = convert(def, &mut found);
        done.insert(name, converted);
        queue.extend(found.into_iter().filter(|n| !done.contains_key(n)));
    }
    // Deterministic order regardless of discovery order.
    let mut sorted: Vec<(String, Value)> = done.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;

    fn spec(paths: Value, definitions: Value) -> Spec {
        let doc = json!({"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": paths, "definitions": definitions});
        Spec::parse(doc.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn recursive_definitions_are_copied_once_and_closed() {
        let s = spec(
            json!({"/repos/{owner}/{repo}/x": {"post": {"operationId": "x", "parameters": [
                {"name": "owner", "in": "path", "type": "string", "required": true},
                {"name": "repo", "in": "path", "type": "string", "required": true},
                {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/Node"}}]}}}),
            json!({"Node": {"type": "object", "x-go-package": "p", "properties": {
                "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}}},
                "Unused": {"type": "object"}}),
        );
        let schema = input_schema(&s.operations[0], &s.definitions).unwrap();
        assert_eq!(
            schema["properties"]["body"],
            json!({"$ref": "#/$defs/Node"})
        );
        let defs = schema["$defs"].as_object().unwrap();
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["Node"]);
        assert_eq!(defs["Node"]["additionalProperties"], json!(false));
        assert!(defs["Node"].get("x-go-package").is_none());
        assert_eq!(schema["required"], json!(["owner", "repo"]));
        assert_eq!(
            schema["properties"]["owner"]["pattern"],
            json!(NAME_PATTERN)
        );
    }

    #[test]
    fn a_parameter_named_like_a_reserved_argument_is_an_error() {
        let s = spec(
            json!({"/x": {"get": {"operationId": "x", "parameters": [{"name": "sudo", "in": "query", "type": "string"}]}}}),
            json!({}),
        );
        let err = input_schema(&s.operations[0], &s.definitions)
            .unwrap_err()
            .to_string();
        assert!(err.contains("sudo") && err.contains("x"), "{err}");
    }
}

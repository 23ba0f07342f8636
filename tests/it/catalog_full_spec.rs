//! The catalog over the complete API descriptions: Gitea (two versions) and Forgejo.
//!
//! The documents are read from `$GITEA_SPEC_DIR` (default `../shared/spec`); see
//! `tests/common/mod.rs` for when a missing file skips and when it fails.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::{FULL_SPECS, spec_bytes};
use aegis_gitea_mcp::catalog::{
    Access, Action, Catalog, HttpMethod, MAX_NAME_LEN, ScopeCategory, ScopeRequirement,
    overridden_operation_ids, split_words,
};
use aegis_gitea_mcp::spec::{Spec, template_names};
use serde_json::{Map, Value, json};

/// One loaded document.
struct Loaded {
    file: &'static str,
    expected_operations: usize,
    raw: Value,
    catalog: Catalog,
}

/// The three documents.
fn load_all() -> Vec<Loaded> {
    FULL_SPECS
        .iter()
        .map(|&(file, expected_operations)| {
            let bytes = spec_bytes(file);
            let raw: Value = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{file} is not JSON: {e}"));
            let spec = Spec::parse(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
            let catalog = Catalog::build(&spec).unwrap_or_else(|e| panic!("{file}: {e}"));
            Loaded {
                file,
                expected_operations,
                raw,
                catalog,
            }
        })
        .collect()
}

/// `(METHOD, path) -> operationId` for every operation the raw document declares.
fn raw_operations(raw: &Value) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    let paths = raw["paths"].as_object().expect("paths is an object");
    for (path, item) in paths {
        let item = item.as_object().expect("a path item is an object");
        for (key, op) in item {
            if HttpMethod::from_swagger_key(key).is_none() {
                continue;
            }
            let id = op["operationId"].as_str().unwrap_or_default().to_string();
            let previous = out.insert((key.to_ascii_uppercase(), path.clone()), id);
            assert!(previous.is_none(), "{key} {path} twice in the raw JSON");
        }
    }
    out
}

fn required_of(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn compile(file: &str, a: &Action) -> jsonschema::Validator {
    jsonschema::validator_for(&a.input_schema).unwrap_or_else(|e| {
        panic!(
            "{file}: the input schema of {} does not compile: {e}",
            a.name
        )
    })
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn every_operation_appears_exactly_once() {
    for l in load_all() {
        let raw = raw_operations(&l.raw);
        assert_eq!(
            raw.len(),
            l.expected_operations,
            "{}: operations in the JSON",
            l.file
        );
        assert_eq!(
            l.catalog.len(),
            raw.len(),
            "{}: one action per operation",
            l.file
        );
        let mut built: BTreeMap<(String, String), Vec<&str>> = BTreeMap::new();
        for a in l.catalog.actions() {
            built
                .entry((a.method.to_string(), a.path.clone()))
                .or_default()
                .push(a.operation_id.as_str());
        }
        for (key, id) in &raw {
            assert_eq!(
                built.get(key).map(Vec::as_slice),
                Some([id.as_str()].as_slice()),
                "{}: {} {} must appear exactly once",
                l.file,
                key.0,
                key.1
            );
        }
        assert_eq!(
            built.len(),
            raw.len(),
            "{}: no action without an operation",
            l.file
        );
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn names_are_unique_short_and_well_formed() {
    for l in load_all() {
        let mut seen = BTreeSet::new();
        for a in l.catalog.actions() {
            let name = a.name.as_str();
            assert!(seen.insert(name), "{}: {name} twice", l.file);
            assert!(
                name.len() <= MAX_NAME_LEN,
                "{}: {name} is longer than 64 bytes",
                l.file
            );
            let rest = name.strip_prefix("gitea_").unwrap_or("");
            assert!(
                !rest.is_empty()
                    && rest
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}: {name} does not match ^gitea_[a-z0-9_]+$",
                l.file
            );
            assert!(
                name.starts_with(&format!("gitea_{}_", a.domain)),
                "{}: {name} does not start with its domain {}",
                l.file,
                a.domain
            );
        }
        assert_eq!(seen.len(), l.expected_operations, "{}", l.file);
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn every_input_schema_compiles_and_is_closed() {
    for l in load_all() {
        for a in l.catalog.actions() {
            compile(l.file, a);
            let schema = &*a.input_schema;
            assert_eq!(schema["type"], "object", "{}: {}", l.file, a.name);
            assert_eq!(
                schema["additionalProperties"],
                json!(false),
                "{}: {}",
                l.file,
                a.name
            );
            assert!(
                schema["properties"]["sudo"].is_object(),
                "{}: {}",
                l.file,
                a.name
            );
            assert!(
                !required_of(schema).contains(&"sudo"),
                "{}: {}: sudo is optional",
                l.file,
                a.name
            );
            let text = schema.to_string();
            assert!(
                !text.contains("#/definitions/"),
                "{}: {} keeps a swagger ref",
                l.file,
                a.name
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn every_path_parameter_is_required() {
    for l in load_all() {
        let mut count = 0;
        for a in l.catalog.actions() {
            let required = required_of(&a.input_schema);
            for name in template_names(&a.path) {
                count += 1;
                assert!(
                    required.contains(&name),
                    "{}: {} ({} {}): {{{name}}} is not required",
                    l.file,
                    a.name,
                    a.method,
                    a.path
                );
                assert!(
                    a.input_schema["properties"][name].is_object(),
                    "{}: {}: {{{name}}} has no schema",
                    l.file,
                    a.name
                );
            }
        }
        assert!(
            count > l.expected_operations,
            "{}: {count} path parameters",
            l.file
        );
    }
}

/// Operation words that make a POST or PATCH destructive (it loses the old name or owner).
const LOSING_WORDS: [&str; 3] = ["rename", "transfer", "replace"];

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn annotations_follow_the_rules() {
    for l in load_all() {
        for a in l.catalog.actions() {
            let ann = a.annotations;
            let at = format!("{}: {} ({} {})", l.file, a.name, a.method, a.path);
            assert_eq!(ann.read_only, a.method.is_read(), "{at}: read_only");
            let words = split_words(a.operation_id.as_str());
            let losing = words.iter().any(|w| LOSING_WORDS.contains(&w.as_str()));
            match a.method {
                HttpMethod::Get | HttpMethod::Head => {
                    assert!(ann.idempotent && !ann.destructive, "{at}: {ann:?}");
                }
                HttpMethod::Delete => assert!(ann.destructive && ann.idempotent, "{at}: {ann:?}"),
                HttpMethod::Put => {
                    assert!(ann.idempotent, "{at}: {ann:?}");
                    if a.body.is_some() {
                        assert!(ann.destructive, "{at}: a PUT with a body replaces");
                    }
                }
                HttpMethod::Post | HttpMethod::Patch => {
                    assert!(!ann.idempotent, "{at}: {ann:?}");
                    assert_eq!(ann.destructive, losing, "{at}: {ann:?}");
                }
                HttpMethod::Options => panic!("{at}: unexpected OPTIONS operation"),
            }
        }
        // Adding a relation is not destructive; replacing or removing it is.
        for (id, destructive) in [
            ("userCurrentPutStar", false),
            ("userCurrentDeleteStar", true),
            ("repoUpdateTopics", true),
            ("repoCreatePullRequest", false),
            ("repoTransfer", true),
        ] {
            let a = l
                .catalog
                .get(id)
                .unwrap_or_else(|| panic!("{}: no {id}", l.file));
            assert_eq!(a.annotations.destructive, destructive, "{}: {id}", l.file);
        }
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn every_operation_maps_to_a_scope_rule() {
    for l in load_all() {
        let mut unscoped = Vec::new();
        for a in l.catalog.actions() {
            let at = format!("{}: {} ({} {})", l.file, a.name, a.method, a.path);
            match &a.scopes {
                ScopeRequirement::Unmapped => panic!("{at}: no scope rule covers this route"),
                ScopeRequirement::None => unscoped.push(a.path.as_str()),
                ScopeRequirement::Scopes(scopes) => {
                    assert!(!scopes.is_empty(), "{at}");
                    let access = if a.method.is_read() {
                        Access::Read
                    } else {
                        Access::Write
                    };
                    assert!(
                        scopes.iter().all(|s| s.access == access),
                        "{at}: {scopes:?}"
                    );
                    if a.path.starts_with("/admin/") {
                        assert_eq!(scopes[0].category, ScopeCategory::Admin, "{at}");
                    }
                }
            }
        }
        // Only the few public route groups are unscoped.
        assert!(unscoped.contains(&"/version"), "{}: {unscoped:?}", l.file);
        assert!(unscoped.len() < 20, "{}: {unscoped:?}", l.file);
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn overrides_are_not_stale() {
    let loaded = load_all();
    for id in overridden_operation_ids() {
        let users: Vec<&Loaded> = loaded
            .iter()
            .filter(|l| {
                l.catalog
                    .actions()
                    .iter()
                    .any(|a| a.operation_id.as_str() == id)
            })
            .collect();
        assert!(
            !users.is_empty(),
            "spec/overrides.toml names {id}, which no document has: remove the stale entry"
        );
        // Where it applies, the override is the name the catalog uses.
        let names: BTreeSet<&str> = users
            .iter()
            .filter_map(|l| l.catalog.get(id))
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(names.len(), 1, "{id}: {names:?}");
    }
}

/// A minimal instance of `schema`: required properties filled with simple values, refs followed
/// into `root`.
fn minimal(schema: &Value, root: &Value, depth: usize) -> Value {
    assert!(
        depth < 64,
        "schema nesting too deep (a required cycle?): {schema}"
    );
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let target = r
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .unwrap_or_else(|| panic!("unresolvable $ref {r}"));
        return minimal(target, root, depth + 1);
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => json!("x"),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") | None if schema.get("properties").is_some() => {
            let mut out = Map::new();
            for name in required_of(schema) {
                let prop = schema
                    .pointer(&format!("/properties/{name}"))
                    .cloned()
                    .unwrap_or(json!({}));
                out.insert(name.to_string(), minimal(&prop, root, depth + 1));
            }
            Value::Object(out)
        }
        Some("object") => json!({}),
        Some(other) => panic!("unexpected type {other:?} in {schema}"),
        None => json!("x"),
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn minimal_arguments_satisfy_every_schema() {
    for l in load_all() {
        let mut with_body = 0;
        for a in l.catalog.actions() {
            let schema = &*a.input_schema;
            let v = compile(l.file, a);
            let mut args = minimal(schema, schema, 0);
            // Beyond the required arguments, give the body too (with its own required fields),
            // so every body schema is shown to be satisfiable.
            if let Some(body) = schema.pointer("/properties/body") {
                with_body += 1;
                args["body"] = minimal(body, schema, 0);
            }
            if let Err(e) = v.validate(&args) {
                panic!(
                    "{}: {} refuses its minimal arguments {args}: {e} at {}",
                    l.file,
                    a.name,
                    e.instance_path()
                );
            }
            // And the schema is not vacuous: an unknown argument is refused.
            args["not_an_argument"] = json!(true);
            assert!(
                !v.is_valid(&args),
                "{}: {} accepts anything",
                l.file,
                a.name
            );
        }
        assert!(
            with_body > 100,
            "{}: {with_body} actions with a body",
            l.file
        );
    }
}

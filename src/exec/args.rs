//! Checking an action's arguments before any request: the unambiguous fixes models need, then
//! JSON Schema validation with errors a model can act on in one step.

use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};

pub use crate::catalog::Validators;
use crate::catalog::{Action, ActionId, BODY_ARG, ParamLocation, SUDO_ARG};

/// Arguments that passed validation. Only [`validate`] makes one, so a request can never be
/// built from unchecked input.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatedArgs(Map<String, Value>);

impl ValidatedArgs {
    /// The arguments.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }
}

/// Why the arguments were refused.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgProblems {
    /// The problems, at most [`MAX_PROBLEMS`] (then `more` is set).
    pub problems: Vec<Problem>,
    /// More problems were found than are listed.
    pub more: bool,
    /// The action's parameters, so the model can fix the call in one step.
    pub usage: Vec<Usage>,
}

/// Most problems listed for one call.
pub const MAX_PROBLEMS: usize = 10;

/// One problem with the arguments; `at` is `arguments` or the argument path.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// `arguments` is not an object.
    NotAnObject {
        /// The JSON type given (`a string`, `an array`, …).
        given: &'static str,
    },
    /// An argument the action does not take.
    Unknown {
        /// Where.
        at: String,
        /// The name given (clipped).
        name: String,
        /// The closest accepted name, if near.
        suggestion: Option<String>,
    },
    /// A required argument is missing.
    Missing {
        /// Where.
        at: String,
        /// The missing name.
        name: String,
        /// Every required name at that level (top level only).
        required: Vec<String>,
    },
    /// A value that breaks the schema.
    Invalid {
        /// Where.
        at: String,
        /// The validator's message.
        message: String,
        /// The value given (clipped).
        given: String,
    },
    /// The action's schema does not compile (a bug in the document or the catalog).
    Schema {
        /// The compiler's message.
        message: String,
    },
}

/// One parameter in the usage line: name, type, allowed values, required.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    /// The name (`body` for the body, with its property names).
    pub name: String,
    /// The JSON type (for the body: `{prop,prop,…}`).
    pub ty: String,
    /// Allowed values, when few.
    pub values: Vec<String>,
    /// Must be given.
    pub required: bool,
}

/// Applies the fixes models commonly need where the intent is unambiguous:
/// numeric strings for integer parameters (`"12"` → `12`), `"true"`/`"false"` for booleans, and
/// `repo: "owner/name"` when `owner` is missing.
pub fn coerce(action: &Action, args: &mut Map<String, Value>) {
    for p in action
        .params
        .iter()
        .filter(|p| p.location != ParamLocation::Body)
    {
        let Some(v) = args.get_mut(&p.name) else {
            continue;
        };
        match (p.ty.as_str(), &*v) {
            ("integer", Value::String(s)) => {
                if let Ok(n) = s.trim().parse::<i64>() {
                    *v = Value::from(n);
                }
            }
            ("boolean", Value::String(s)) if s == "true" || s == "false" => {
                *v = Value::Bool(s == "true");
            }
            ("array", Value::String(s)) => {
                // A single value where a list is expected.
                let item_is_int = action
                    .input_schema
                    .pointer(&format!("/properties/{}/items/type", p.name))
                    == Some(&Value::String("integer".into()));
                let item = match s.trim().parse::<i64>() {
                    Ok(n) if item_is_int => Value::from(n),
                    _ => Value::String(s.clone()),
                };
                *v = Value::Array(vec![item]);
            }
            _ => {}
        }
    }
    let has = |name: &str| {
        action
            .params
            .iter()
            .any(|p| p.name == name && p.location == ParamLocation::Path)
    };
    if has("owner") && has("repo") && !args.contains_key("owner") {
        if let Some(Value::String(r)) = args.get("repo") {
            if let Some((owner, repo)) = r.split_once('/') {
                if !owner.is_empty() && !repo.is_empty() && !repo.contains('/') {
                    let (owner, repo) = (owner.to_string(), repo.to_string());
                    args.insert("owner".into(), Value::String(owner));
                    args.insert("repo".into(), Value::String(repo));
                }
            }
        }
    }
}

/// Coerces, then validates `args` against the action's input schema. Takes the arguments by
/// value: coercion happens in place, and the map travels on into the request unchanged.
pub fn validate(
    validators: &Validators,
    id: ActionId,
    action: &Action,
    args: Value,
) -> Result<ValidatedArgs, ArgProblems> {
    let refuse = |problems: Vec<Problem>, more: bool| ArgProblems {
        problems,
        more,
        usage: usage(action),
    };
    let mut map = match args {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            return Err(refuse(
                vec![Problem::NotAnObject {
                    given: type_name(&other),
                }],
                false,
            ));
        }
    };
    coerce(action, &mut map);
    let validator = validators
        .get(id, action)
        .map_err(|message| refuse(vec![Problem::Schema { message }], false))?;
    let instance = Value::Object(map);
    let mut problems = Vec::new();
    let mut more = false;
    for error in validator.iter_errors(&instance) {
        let path = error.instance_path().to_string();
        let at = if path.is_empty() {
            "arguments".to_string()
        } else {
            path.trim_start_matches('/').to_string()
        };
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let known = known_keys(action, &path);
                for u in unexpected {
                    let suggestion = known
                        .iter()
                        .filter(|_| u.len() <= 64)
                        .map(|k| (strsim::levenshtein(k, u), k))
                        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
                        .min()
                        .map(|(_, k)| k.clone());
                    problems.push(Problem::Unknown {
                        at: at.clone(),
                        name: crate::outbound::clip(u, 100).into_owned(),
                        suggestion,
                    });
                }
            }
            ValidationErrorKind::Required { property } => {
                let required = if path.is_empty() {
                    action
                        .input_schema
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| {
                            r.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default()
                } else {
                    Vec::new()
                };
                problems.push(Problem::Missing {
                    at,
                    name: property.as_str().unwrap_or_default().to_string(),
                    required,
                });
            }
            _ => problems.push(Problem::Invalid {
                at,
                message: crate::outbound::clip(&error.to_string(), 300).into_owned(),
                given: short(error.instance()),
            }),
        }
        if problems.len() >= MAX_PROBLEMS {
            more = true;
            problems.truncate(MAX_PROBLEMS);
            break;
        }
    }
    match instance {
        Value::Object(map) if problems.is_empty() => Ok(ValidatedArgs(map)),
        _ => Err(refuse(problems, more)),
    }
}

/// Property names accepted at a pointer of the arguments (top level or inside `body`).
fn known_keys(action: &Action, pointer: &str) -> Vec<String> {
    let node: Option<&Value> = match pointer {
        "" => Some(&action.input_schema),
        "/body" => action.body_schema(),
        _ => None,
    };
    node.and_then(|n| n.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Every argument of `action`: what a model needs to repair a call.
pub fn usage(action: &Action) -> Vec<Usage> {
    let mut out: Vec<Usage> = action
        .params
        .iter()
        .map(|p| Usage {
            name: p.name.clone(),
            ty: p.ty.clone(),
            values: if p.enum_values.len() <= 8 {
                p.enum_values.clone()
            } else {
                Vec::new()
            },
            required: p.required,
        })
        .collect();
    if let Some(b) = &action.body {
        let props = b
            .properties
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join(",");
        out.push(Usage {
            name: BODY_ARG.to_string(),
            ty: format!("{{{props}}}"),
            values: Vec::new(),
            required: b.required,
        });
    }
    out.push(Usage {
        name: SUDO_ARG.to_string(),
        ty: "string".into(),
        values: Vec::new(),
        required: false,
    });
    out
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 60 {
        s
    } else {
        format!("{}…", s.chars().take(59).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixture() -> crate::catalog::Catalog {
        let bytes = std::fs::read(crate::testing::FIXTURE).unwrap();
        crate::catalog::Catalog::build(&crate::spec::Spec::parse(&bytes).unwrap()).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(128)))]

        /// Any arguments for any action are refused with problems and a usage line, or
        /// validate; validated arguments always build a request (or a build error) whose path
        /// arguments stay inside their segments. Nothing panics.
        #[test]
        fn any_arguments_validate_or_are_refused(which in any::<usize>(), args in crate::testing::json()) {
            let catalog = fixture();
            let validators = Validators::new(&catalog);
            let id = catalog.id_at(which % catalog.len()).unwrap();
            let action = &catalog[id];
            match validate(&validators, id, action, args) {
                Ok(valid) => {
                    if let Ok(req) = crate::exec::request::build(action, &valid) {
                        let template_segments = action.path.matches('/').count();
                        let multi = action.params.iter().any(|p| crate::exec::request::is_multi_segment(&p.name));
                        prop_assert!(multi || req.path.matches('/').count() == template_segments, "{}", req.path);
                        prop_assert!(!req.path.split('/').any(|s| s == ".." || s == "."), "{}", req.path);
                    }
                }
                Err(p) => {
                    prop_assert!(!p.problems.is_empty());
                    prop_assert!(p.usage.iter().any(|u| u.name == crate::catalog::SUDO_ARG));
                }
            }
        }

        /// Coercion only ever turns strings into the declared scalar types; it never panics.
        #[test]
        fn coercion_is_total(which in any::<usize>(), args in proptest::collection::btree_map("[a-z_]{1,10}", crate::testing::json(), 0..6)) {
            let catalog = fixture();
            let action = &catalog.actions()[which % catalog.len()];
            let mut map: Map<String, Value> = args.into_iter().collect();
            let keys: Vec<String> = map.keys().cloned().collect();
            coerce(action, &mut map);
            for k in keys {
                prop_assert!(map.contains_key(&k));
            }
        }
    }
}

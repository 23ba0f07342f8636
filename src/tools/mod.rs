//! The dynamic surface's tools, independent of any transport.
//!
//! Each tool takes its JSON arguments and answers a [`ToolOutput`]: a compact text for the model,
//! the same facts as structured JSON, and whether it is an error the model should act on. The
//! MCP server, the HTTP gateway and the CLI wrap these functions; none re-implements them.

pub mod card;
pub mod execute;
pub mod find;
pub mod raw;

use serde_json::Value;

use crate::audit::{Facts, OutcomeKind};

/// What a tool call answers.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Text for the model (compact, bounded).
    pub text: String,
    /// The same facts as JSON (`structuredContent`).
    pub structured: Value,
    /// True when the call failed in a way the model should read and fix.
    pub is_error: bool,
    /// What the audit log records about the call.
    pub facts: Facts,
}

impl ToolOutput {
    /// True for the answer to a tool the server does not offer.
    pub fn is_unknown_tool(&self) -> bool {
        matches!(&self.facts.kind, OutcomeKind::Denied(code) if code == crate::mcp::UNKNOWN_TOOL)
    }

    /// A successful answer.
    pub fn ok(text: String, structured: Value) -> ToolOutput {
        ToolOutput {
            text,
            structured,
            is_error: false,
            facts: Facts::default(),
        }
    }

    /// An error the model can act on; `structured` carries `{"error": message, …}`.
    pub fn error(message: impl Into<String>, mut structured: Value) -> ToolOutput {
        let message = message.into();
        if let Value::Object(map) = &mut structured {
            map.insert("error".into(), Value::String(message.clone()));
        } else {
            structured = serde_json::json!({ "error": message });
        }
        ToolOutput {
            text: message,
            structured,
            is_error: true,
            facts: Facts {
                kind: OutcomeKind::Error,
                ..Facts::default()
            },
        }
    }
}

/// The arguments of a tool call as an object (`null` counts as `{}`).
pub(crate) fn object_args(
    args: &Value,
) -> Result<std::borrow::Cow<'_, serde_json::Map<String, Value>>, Box<ToolOutput>> {
    match args {
        Value::Object(m) => Ok(std::borrow::Cow::Borrowed(m)),
        Value::Null => Ok(std::borrow::Cow::Owned(serde_json::Map::new())),
        other => Err(Box::new(ToolOutput::error(
            format!(
                "arguments must be an object, got {}",
                crate::outbound::clip(&other.to_string(), 100)
            ),
            serde_json::json!({}),
        ))),
    }
}

/// Reads an optional unsigned integer argument within `min..=max`.
pub(crate) fn int_arg(
    args: &serde_json::Map<String, Value>,
    key: &str,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => {
            // Models often send numbers as strings; accept "5" but nothing fuzzier.
            let n = v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
            match n {
                Some(n) if (min..=max).contains(&n) => Ok(n),
                _ => Err(format!(
                    "`{key}` must be an integer from {min} to {max}, got {}",
                    crate::outbound::clip(&v.to_string(), 100)
                )),
            }
        }
    }
}

/// Reads an optional boolean argument: `true`/`false` or the strings `"true"`/`"false"`;
/// anything else is an error (a guard argument must never be silently ignored).
pub fn bool_arg(args: &serde_json::Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
        Some(v) => Err(format!(
            "`{key}` must be true or false, got {}",
            crate::outbound::clip(&v.to_string(), 100)
        )),
    }
}

/// Refuses arguments a tool does not know, with a suggestion for near misses.
pub(crate) fn check_known(
    args: &serde_json::Map<String, Value>,
    known: &[&str],
) -> Result<(), String> {
    for key in args.keys() {
        if !known.contains(&key.as_str()) {
            // Long keys are nobody's typo (and the distance is quadratic).
            let hint = known
                .iter()
                .filter(|_| key.len() <= 64)
                .min_by_key(|k| edit_distance(k, key))
                .filter(|k| edit_distance(k, key) <= 3)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            return Err(format!(
                "unknown argument `{}`{hint}; accepted: {}",
                crate::outbound::clip(key, 100),
                known.join(", ")
            ));
        }
    }
    Ok(())
}

/// Levenshtein distance (small strings only).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

//! The dynamic surface's tools, independent of any transport.
//!
//! Each tool takes its arguments (an object, checked once by the transport) and answers a
//! [`ToolOutput`] rendered by `render`. The MCP server, the HTTP gateway and the CLI wrap these
//! functions; none re-implements them.

pub mod execute;
pub mod find;
pub mod raw;

use serde_json::Value;

pub use crate::render::ToolOutput;

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

/// Reads an optional string argument; any other type is an error naming it.
pub(crate) fn str_arg<'a>(
    args: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(format!(
            "`{key}` must be a string, got {}",
            crate::outbound::clip(&other.to_string(), 100)
        )),
    }
}

/// The checks every calling tool starts with: only `known` arguments, and its `dry_run` flag.
pub(crate) fn call_flags(
    args: &serde_json::Map<String, Value>,
    known: &[&str],
) -> Result<bool, String> {
    check_known(args, known)?;
    Ok(bool_arg(args, "dry_run")?.unwrap_or(false))
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
                .min_by_key(|k| strsim::levenshtein(k, key))
                .filter(|k| strsim::levenshtein(k, key) <= 3)
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

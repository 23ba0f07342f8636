//! Turning an action and its validated arguments into exactly the right Gitea request.

use base64::Engine;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_json::Value;

use super::args::ValidatedArgs;
use crate::catalog::{Action, BODY_ARG, CollectionFormat, ParamLocation, SUDO_ARG};
use crate::gitea::{Body, Part, Request};

/// Characters escaped inside one path segment (RFC 3986 `pchar` minus what proxies mangle).
pub(crate) const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// A request that cannot be built from otherwise valid arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(pub String);

pub use crate::catalog::route::is_multi_segment;

/// Builds the request for `action` with `args`.
pub fn build(action: &Action, args: &ValidatedArgs) -> Result<Request, BuildError> {
    let args = args.as_map();
    let mut path = String::with_capacity(action.path.len() + 32);
    let mut rest = action.path.as_str();
    while let Some(start) = rest.find('{') {
        path.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 1..start + end];
        let value = args
            .get(name)
            .ok_or_else(|| BuildError(format!("missing path argument `{name}`")))?;
        path.push_str(&encode_path_value(name, value)?);
        rest = &rest[start + end + 1..];
    }
    path.push_str(rest);

    let mut query = Vec::new();
    for p in action
        .params
        .iter()
        .filter(|p| p.location == ParamLocation::Query)
    {
        let Some(v) = args.get(&p.name) else { continue };
        match v {
            Value::Null => {}
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(scalar).collect();
                match p.collection_format {
                    // Gitea's array filters are repeated (`labels=a&labels=b`).
                    Some(CollectionFormat::Multi) | None => {
                        query.extend(items.into_iter().map(|i| (p.name.clone(), i)));
                    }
                    Some(CollectionFormat::Csv) => query.push((p.name.clone(), items.join(","))),
                    Some(CollectionFormat::Ssv) => query.push((p.name.clone(), items.join(" "))),
                    Some(CollectionFormat::Tsv) => query.push((p.name.clone(), items.join("\t"))),
                    Some(CollectionFormat::Pipes) => query.push((p.name.clone(), items.join("|"))),
                }
            }
            other => query.push((p.name.clone(), scalar(other))),
        }
    }

    let sudo = args
        .get(SUDO_ARG)
        .and_then(Value::as_str)
        .map(str::to_string);
    let body = if action.is_multipart() {
        multipart(action, args)?
    } else {
        match (&action.body, args.get(BODY_ARG)) {
            (Some(b), Some(v)) if !b.content_type.contains("json") => {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Body::Text(text, b.content_type.clone())
            }
            (Some(_), Some(v)) => Body::Json(v.clone()),
            _ => Body::None,
        }
    };
    Ok(Request {
        method: action.method,
        path,
        query,
        sudo,
        body,
    })
}

/// Encodes one path argument: a single segment, or for file paths each segment separately.
fn encode_path_value(name: &str, value: &Value) -> Result<String, BuildError> {
    let text = scalar(value);
    if text.is_empty() {
        return Err(BuildError(format!("path argument `{name}` is empty")));
    }
    if text.chars().any(char::is_control) {
        return Err(BuildError(format!(
            "path argument `{name}` contains control characters"
        )));
    }
    if is_multi_segment(name) {
        let segments: Vec<&str> = text.trim_start_matches('/').split('/').collect();
        if segments
            .iter()
            .any(|s| *s == "." || *s == ".." || s.is_empty())
        {
            return Err(BuildError(format!(
                "path argument `{name}` must be a relative file path without empty, `.` or `..` segments, got {text:?}"
            )));
        }
        Ok(segments
            .iter()
            .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
            .collect::<Vec<_>>()
            .join("/"))
    } else {
        if text == "." || text == ".." {
            return Err(BuildError(format!(
                "path argument `{name}` cannot be {text:?}"
            )));
        }
        Ok(utf8_percent_encode(&text, SEGMENT).to_string())
    }
}

/// A JSON scalar as Gitea expects it in a path or query.
fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn multipart(action: &Action, args: &serde_json::Map<String, Value>) -> Result<Body, BuildError> {
    let mut parts = Vec::new();
    for p in action
        .params
        .iter()
        .filter(|p| p.location == ParamLocation::FormData)
    {
        let Some(v) = args.get(&p.name) else { continue };
        if p.is_file {
            let filename = v
                .get("filename")
                .and_then(Value::as_str)
                .unwrap_or("upload")
                .to_string();
            let encoded = v
                .get("content_base64")
                .and_then(Value::as_str)
                .unwrap_or("");
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .map_err(|e| {
                    BuildError(format!(
                        "`{}.content_base64` is not valid base64: {e}",
                        p.name
                    ))
                })?;
            let content_type = v
                .get("content_type")
                .and_then(Value::as_str)
                .filter(|c| c.contains('/'))
                .unwrap_or("application/octet-stream")
                .to_string();
            parts.push(Part {
                name: p.name.clone(),
                filename: Some(filename),
                content_type,
                bytes,
            });
        } else {
            parts.push(Part {
                name: p.name.clone(),
                filename: None,
                content_type: "text/plain; charset=utf-8".into(),
                bytes: scalar(v).into_bytes(),
            });
        }
    }
    Ok(Body::Multipart(parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_values_stay_inside_their_segment() {
        let s = |v: &str| encode_path_value("owner", &Value::String(v.into()));
        assert_eq!(s("a b/c?d#e%").unwrap(), "a%20b%2Fc%3Fd%23e%25");
        assert_eq!(s("ünï").unwrap(), "%C3%BCn%C3%AF");
        assert!(s("..").is_err() && s(".").is_err() && s("").is_err() && s("a\u{0}").is_err());
        let f = |v: &str| encode_path_value("filepath", &Value::String(v.into()));
        assert_eq!(f("docs/a b.md").unwrap(), "docs/a%20b.md");
        assert_eq!(f("/README.md").unwrap(), "README.md");
        for bad in ["a/../b", "./a", "a//b", "..", "a/."] {
            assert!(f(bad).is_err(), "{bad}");
        }
        assert_eq!(encode_path_value("index", &Value::from(12)).unwrap(), "12");
    }
}

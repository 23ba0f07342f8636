//! Helpers of the Prism contract test (`tests/prism_contract.rs`): minimal arguments from an
//! action's input schema, a recording pass-through proxy in front of Prism, and the rule that
//! tells a request Prism rejected from one it accepted.
//!
//! Why a proxy: Prism 5.16 reports request violations in two ways. An operation that declares a
//! 422 (or 400/415) response — most of Gitea's do, as `validationError` — gets that response
//! *mocked*: status 422, an empty body, and the violations only in the `sl-violations` header. An
//! operation without one gets Prism's own `application/problem+json` body
//! (`type: https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY`, `validation: [...]`). A tool
//! output does not carry response headers, so the test sends every call through this proxy, which
//! records exactly what went to Prism and what came back.

#![allow(dead_code)] // each test crate uses its own part

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aegis_gitea_mcp::catalog::{Action, NAME_PATTERN};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Map, Value, json};

/// The file value given for every multipart file field ("hello").
pub fn file_value() -> Value {
    json!({"filename": "a.txt", "content_base64": "aGVsbG8="})
}

/// A value for a path parameter that names a user, organisation, team or repository.
fn name_value(property: &str) -> &'static str {
    match property {
        "repo" | "template_repo" => "demo",
        "org" => "acme",
        "team" => "devs",
        _ => "alice",
    }
}

/// Minimal arguments for `action`: every required argument, plus the body (with its own
/// required fields) and every file field even when optional, since Prism validates those.
pub fn minimal_arguments(action: &Action) -> Value {
    let schema = &*action.input_schema;
    let required: Vec<&str> = required_of(schema);
    let mut out = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    for (name, prop) in props {
        let is_file = action.file_params().any(|p| &p.name == name);
        let wanted = required.contains(&name.as_str()) || name == "body" || is_file;
        if !wanted {
            continue;
        }
        let value = if is_file {
            file_value()
        } else {
            minimal(prop, schema, name, 0)
        };
        out.insert(name.clone(), value);
    }
    Value::Object(out)
}

fn required_of(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A minimal instance of `schema` (refs followed into `root`); `name` is the property it fills.
fn minimal(schema: &Value, root: &Value, name: &str, depth: usize) -> Value {
    assert!(
        depth < 64,
        "schema nesting too deep (a required cycle?) at {name}"
    );
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let target = r
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .unwrap_or_else(|| panic!("unresolvable $ref {r}"));
        return minimal(target, root, name, depth + 1);
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(v) = schema.get("const") {
        return v.clone();
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return minimal(first, root, name, depth + 1);
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") | None if schema.get("properties").is_none() => string_value(schema, name),
        Some("integer") | Some("number") => number_value(schema),
        Some("boolean") => json!(true),
        Some("array") => {
            let min_items = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            if min_items == 0 {
                return json!([]);
            }
            let item = schema
                .get("items")
                .cloned()
                .unwrap_or(json!({"type": "string"}));
            let one = minimal(&item, root, name, depth + 1);
            Value::Array(vec![one; min_items as usize])
        }
        Some("object") | None => {
            let props = schema.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for field in required_of(schema) {
                let prop = props
                    .and_then(|p| p.get(field))
                    .cloned()
                    .unwrap_or(json!({}));
                out.insert(field.to_string(), minimal(&prop, root, field, depth + 1));
            }
            Value::Object(out)
        }
        Some(other) => panic!("unexpected type {other:?} at {name}: {schema}"),
    }
}

fn string_value(schema: &Value, name: &str) -> Value {
    if schema.get("pattern").and_then(Value::as_str) == Some(NAME_PATTERN) {
        return json!(name_value(name));
    }
    let base = match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-01T00:00:00Z".to_string(),
        Some("date") => "2026-01-01".to_string(),
        Some("email") => "a@example.com".to_string(),
        Some("uri") | Some("url") => "https://example.com/".to_string(),
        Some("byte") => "aGVsbG8=".to_string(),
        // Fields Gitea decodes as base64 (e.g. `content_base64` of a wiki page).
        _ if name.ends_with("base64") => "aGVsbG8=".to_string(),
        _ => "x".to_string(),
    };
    let min_len = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    if base.chars().count() >= min_len {
        json!(base)
    } else {
        json!("x".repeat(min_len))
    }
}

fn number_value(schema: &Value) -> Value {
    let exclusive = schema.get("exclusiveMinimum");
    let mut n = match (schema.get("minimum").and_then(Value::as_i64), exclusive) {
        (Some(m), Some(Value::Bool(true))) => m + 1,
        (Some(m), _) => m,
        (None, Some(v)) if v.is_i64() => v.as_i64().unwrap_or(0) + 1,
        (None, _) => 1,
    };
    if let Some(max) = schema.get("maximum").and_then(Value::as_i64) {
        n = n.min(max);
    }
    json!(n)
}

// ---------------------------------------------------------------------------------------------
// The recording proxy

/// Longest request or response body kept in a record (bytes); Prism's answers are far smaller.
const KEEP_BODY: usize = 256 * 1024;
/// Longest body shown in a report line (characters).
const SHOW_BODY: usize = 600;

/// One request that went through the proxy and what came back.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// `METHOD /path?query` as sent.
    pub request_line: String,
    /// The request's Content-Type, if any.
    pub request_content_type: Option<String>,
    /// The request body (lossy text, at most [`KEEP_BODY`] bytes).
    pub request_body: String,
    /// Prism's status, or `None` when the request never got an answer from Prism.
    pub status: Option<u16>,
    /// Prism's Content-Type, if any.
    pub content_type: Option<String>,
    /// The parsed `sl-violations` header, if any.
    pub violations: Option<Value>,
    /// The response body (lossy text, at most [`KEEP_BODY`] bytes).
    pub body: String,
    /// Why the request was not forwarded, or why Prism gave no answer.
    pub failure: Option<String>,
}

struct Shared {
    upstream: String,
    client: reqwest::Client,
    log: Mutex<Vec<Exchange>>,
}

/// A pass-through proxy to Prism on an ephemeral loopback port, recording every exchange.
pub struct RecordingProxy {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl RecordingProxy {
    /// Starts a proxy in front of `upstream` (Prism's base URL).
    pub async fn start(upstream: &str) -> RecordingProxy {
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(20))
            .build()
            .expect("proxy client");
        let shared = Arc::new(Shared {
            upstream: upstream.trim_end_matches('/').to_string(),
            client,
            log: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the recording proxy");
        let url = format!("http://{}", listener.local_addr().expect("proxy address"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        RecordingProxy { url, shared, task }
    }

    /// The exchanges recorded since the last call.
    pub fn take(&self) -> Vec<Exchange> {
        std::mem::take(&mut *self.shared.log.lock().expect("proxy log"))
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The bytes as text (lossy UTF-8), at most [`KEEP_BODY`] bytes of them.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(KEEP_BODY)]).into_owned()
}

/// `text` on one line (CR/LF shown as `\r`/`\n`), at most [`SHOW_BODY`] characters.
fn one_line(text: &str) -> String {
    let text = text.replace('\r', "\\r").replace('\n', "\\n");
    if text.chars().count() <= SHOW_BODY {
        text
    } else {
        let mut s: String = text.chars().take(SHOW_BODY).collect();
        s.push('…');
        s
    }
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// The first multipart part without a Content-Type header, if any. Prism 5.16 dies on such a
/// part (`Cannot read properties of undefined (reading 'trim')` in parse-multipart-data), which
/// would take every later action down with it; the proxy refuses to forward it instead.
pub fn multipart_part_without_content_type(content_type: &str, body: &[u8]) -> Option<String> {
    let boundary = content_type
        .split(';')
        .map(str::trim)
        .find_map(|p| p.strip_prefix("boundary="))?
        .trim_matches('"');
    let delimiter = format!("--{boundary}");
    let parts = split_bytes(body, delimiter.as_bytes());
    for part in parts.iter().skip(1) {
        if part.starts_with(b"--") {
            break; // closing delimiter
        }
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let end = find(part, b"\r\n\r\n").unwrap_or(part.len());
        let head = String::from_utf8_lossy(&part[..end]).to_ascii_lowercase();
        if !head.lines().any(|l| l.starts_with("content-type:")) {
            return Some(head.lines().next().unwrap_or("").to_string());
        }
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn split_bytes<'a>(hay: &'a [u8], needle: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = hay;
    while let Some(i) = find(rest, needle) {
        out.push(&rest[..i]);
        rest = &rest[i + needle.len()..];
    }
    out.push(rest);
    out
}

async fn forward(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let request_line = format!("{} {path_and_query}", parts.method);
    let request_content_type = header_text(&parts.headers, header::CONTENT_TYPE);
    let body = axum::body::to_bytes(body, 64 << 20)
        .await
        .unwrap_or_default();
    let mut record = Exchange {
        request_line,
        request_content_type: request_content_type.clone(),
        request_body: lossy(&body),
        status: None,
        content_type: None,
        violations: None,
        body: String::new(),
        failure: None,
    };
    let refuse = |shared: &Shared, mut record: Exchange, why: String| {
        record.failure = Some(why.clone());
        shared.log.lock().expect("proxy log").push(record);
        Response::builder()
            .status(StatusCode::BAD_GATEWAY)
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from(format!("recording proxy: {why}")))
            .expect("proxy response")
    };
    if let Some(ct) = request_content_type
        .as_deref()
        .filter(|c| c.to_ascii_lowercase().starts_with("multipart/"))
    {
        if let Some(part) = multipart_part_without_content_type(ct, &body) {
            let why = format!(
                "not forwarded: multipart part without a Content-Type header ({part}); \
                 Prism 5.16 crashes on it"
            );
            return refuse(&shared, record, why);
        }
    }
    let url = format!("{}{path_and_query}", shared.upstream);
    let mut outgoing = shared.client.request(parts.method.clone(), &url);
    for (name, value) in &parts.headers {
        if matches!(
            name.as_str(),
            "host" | "content-length" | "connection" | "transfer-encoding" | "keep-alive"
        ) {
            continue;
        }
        outgoing = outgoing.header(name, value);
    }
    let answer = match outgoing.body(body.clone()).send().await {
        Ok(a) => a,
        Err(e) => {
            let why = format!("Prism gave no answer: {e}");
            return refuse(&shared, record, why);
        }
    };
    let status = answer.status();
    let headers = answer.headers().clone();
    let bytes = match answer.bytes().await {
        Ok(b) => b,
        Err(e) => {
            let why = format!("Prism's answer broke off: {e}");
            return refuse(&shared, record, why);
        }
    };
    record.status = Some(status.as_u16());
    record.content_type = header_text(&headers, header::CONTENT_TYPE);
    record.violations = headers
        .get("sl-violations")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t)));
    record.body = lossy(&bytes);
    shared.log.lock().expect("proxy log").push(record);
    let mut response = Response::builder().status(status.as_u16());
    for (name, value) in &headers {
        if matches!(
            name.as_str(),
            "content-length" | "connection" | "transfer-encoding" | "keep-alive"
        ) {
            continue;
        }
        response = response.header(name, value);
    }
    response
        .header(
            header::CONTENT_LENGTH,
            HeaderValue::from(bytes.len() as u64),
        )
        .body(Body::from(bytes))
        .expect("proxy response")
}

// ---------------------------------------------------------------------------------------------
// Judging Prism's answers

/// The `type` prefix of Prism's own problem+json errors.
pub const PRISM_ERRORS: &str = "https://stoplight.io/prism/errors#";

/// Prism's problem types that mean "your request does not fit the document".
const REJECTING_PROBLEMS: [&str; 6] = [
    "UNPROCESSABLE_ENTITY",
    "INVALID_CONTENT_TYPE",
    "UNAUTHORIZED",
    "NO_PATH_MATCHED_ERROR",
    "NO_METHOD_MATCHED_ERROR",
    "NOT_ACCEPTABLE",
];

/// What Prism made of one action's requests.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// Prism took every request as valid (its status for the last one).
    Accepted(u16),
    /// Prism rejected a request; the reasons are Prism's own words.
    Rejected(Vec<String>),
    /// No request reached Prism; the text says what happened instead.
    NotSent,
    /// A request was refused by the proxy or got no answer.
    Broken(String),
}

/// `location.joined: message` for each request violation in a Prism validation list.
fn request_violations(list: &Value, in_header: bool) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter(|v| v.get("severity").and_then(Value::as_str).unwrap_or("Error") == "Error")
        .filter_map(|v| {
            let location: Vec<&str> = v
                .get("location")
                .and_then(Value::as_array)
                .map(|l| l.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            // The header lists request and response violations, prefixed by "request" or
            // "response"; only the former are about what we sent.
            if in_header && location.first() != Some(&"request") {
                return None;
            }
            let message = v.get("message").and_then(Value::as_str).unwrap_or("");
            let code = v.get("code").map(|c| match c {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            Some(format!(
                "{} [{}]: {message}",
                location.join("."),
                code.unwrap_or_default()
            ))
        })
        .collect()
}

/// Why Prism rejected one exchange, or `None` when it did not.
pub fn rejection(exchange: &Exchange) -> Option<Vec<String>> {
    let mut reasons = Vec::new();
    if let Some(list) = &exchange.violations {
        reasons.extend(request_violations(list, true));
    }
    let problem = exchange
        .content_type
        .as_deref()
        .is_some_and(|c| c.starts_with("application/problem+json"));
    if problem {
        if let Ok(body) = serde_json::from_str::<Value>(&exchange.body) {
            let kind = body
                .get("type")
                .and_then(Value::as_str)
                .and_then(|t| t.strip_prefix(PRISM_ERRORS));
            if let Some(kind) = kind.filter(|k| REJECTING_PROBLEMS.contains(k)) {
                let listed = body
                    .get("validation")
                    .map(|l| request_violations(l, false))
                    .unwrap_or_default();
                if listed.is_empty() {
                    let detail = body
                        .get("detail")
                        .or_else(|| body.get("title"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    reasons.push(format!("{kind}: {detail}"));
                } else {
                    reasons.extend(listed.into_iter().map(|r| format!("{kind}: {r}")));
                }
            }
        }
    }
    (!reasons.is_empty()).then_some(reasons)
}

/// Judges the exchanges of one action.
pub fn judge(exchanges: &[Exchange]) -> Judgement {
    let Some(last) = exchanges.last() else {
        return Judgement::NotSent;
    };
    let mut reasons = Vec::new();
    for e in exchanges {
        if let Some(why) = &e.failure {
            return Judgement::Broken(format!("{}: {why}", e.request_line));
        }
        if let Some(r) = rejection(e) {
            reasons.extend(r);
        }
    }
    if reasons.is_empty() {
        Judgement::Accepted(last.status.unwrap_or(0))
    } else {
        reasons.dedup();
        Judgement::Rejected(reasons)
    }
}

/// A one-line description of an exchange for reports.
pub fn describe(e: &Exchange) -> String {
    let mut s = format!(
        "{} [{}] {} -> {}",
        e.request_line,
        e.request_content_type
            .as_deref()
            .unwrap_or("no content-type"),
        if e.request_body.is_empty() {
            "(no body)".to_string()
        } else {
            one_line(&e.request_body)
        },
        e.status
            .map(|s| s.to_string())
            .unwrap_or_else(|| "no answer".into())
    );
    if let Some(ct) = &e.content_type {
        s.push_str(&format!(" [{ct}]"));
    }
    if !e.body.is_empty() && e.status.is_some_and(|s| s >= 400) {
        s.push_str(&format!(" {}", one_line(&e.body)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_multipart_parts_without_a_content_type() {
        let ct = "multipart/form-data; boundary=XX";
        let good = b"--XX\r\nContent-Disposition: form-data; name=\"a\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--XX--\r\n";
        assert_eq!(multipart_part_without_content_type(ct, good), None);
        let bad = b"--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nhi\r\n--XX--\r\n";
        assert!(multipart_part_without_content_type(ct, bad).is_some());
    }
}

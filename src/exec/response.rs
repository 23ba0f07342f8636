//! Turning Gitea's answer into something a model can use within its context budget.
//!
//! Every answer is bounded. JSON lists are cut at a whole item and say how to get the rest;
//! long strings are shortened before anything is cut blindly; text (diffs, patches, raw files)
//! is returned as text within the bound; binary as base64 up to the file-size limit.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::audit::{Facts, OutcomeKind};
use crate::catalog::{Action, ResponseKind};
use crate::gitea::Response;

/// What a call produced, before a surface wraps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Text for the model.
    pub text: String,
    /// Structured content (always an object).
    pub structured: Value,
    /// True when the model should read this as a failure to fix.
    pub is_error: bool,
    /// Gitea's HTTP status, when a request was sent.
    pub status: Option<u16>,
    /// What the audit log records about the call.
    pub facts: Facts,
}

impl Outcome {
    /// An error that happened before any request was sent.
    pub fn refused(message: impl Into<String>, structured: Value) -> Outcome {
        let message = message.into();
        let mut structured = structured;
        if let Value::Object(m) = &mut structured {
            m.insert("error".into(), Value::String(message.clone()));
        }
        Outcome {
            text: message,
            structured,
            is_error: true,
            status: None,
            facts: Facts {
                kind: OutcomeKind::Error,
                ..Facts::default()
            },
        }
    }

    /// Adds what the audit log needs: the action and the request (method, path).
    pub fn about(
        mut self,
        action: Option<&str>,
        request: Option<&crate::gitea::Request>,
    ) -> Outcome {
        if self.facts.action.is_none() {
            self.facts.action = action.map(str::to_string);
        }
        if self.facts.request.is_none() {
            self.facts.request = request.map(|r| (r.method.as_str().to_string(), r.path.clone()));
        }
        self
    }
}

/// Limits of one answer.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest answer returned to the model.
    pub max_response_bytes: usize,
    /// Largest binary file returned as base64.
    pub max_file_size_bytes: usize,
}

impl Limits {
    /// The room for the data of one answer: half the bound, because the answer carries it
    /// twice (as text for the model and as structured content).
    pub fn data_budget(&self) -> usize {
        self.max_response_bytes / 2
    }

    /// How many bytes to read from Gitea for an action of this kind: room to cut JSON lists at
    /// a whole item, one more byte than allowed for files to detect an oversized one.
    pub fn read_limit(&self, kind: ResponseKind) -> usize {
        match kind {
            ResponseKind::Binary => self.max_file_size_bytes + 1,
            _ => self.max_response_bytes.saturating_mul(8).max(1 << 20),
        }
    }
}

/// Shapes Gitea's answer to `action` (or to a raw request when `action` is `None`).
pub fn shape(
    action: Option<&Action>,
    args: &Map<String, Value>,
    resp: Response,
    limits: Limits,
) -> Outcome {
    let status = resp.status;
    let mut out = shape_answer(action, args, resp, limits);
    out.facts.status = Some(status);
    if out.is_error {
        // Every error result carries `error`, whatever branch produced it.
        if let Value::Object(m) = &mut out.structured {
            m.entry("error")
                .or_insert_with(|| json!({"message": out.text}));
        }
    }
    out.facts.kind = if out.is_error {
        OutcomeKind::Error
    } else {
        OutcomeKind::Ok
    };
    out
}

fn shape_answer(
    action: Option<&Action>,
    args: &Map<String, Value>,
    resp: Response,
    limits: Limits,
) -> Outcome {
    let status = resp.status;
    let name = action.map(|a| a.name.as_str().to_string());
    let mut structured = Map::new();
    structured.insert("status".into(), json!(status));
    if let Some(n) = &name {
        structured.insert("action".into(), json!(n));
    }
    if status >= 400 {
        return gitea_error(action, resp, structured);
    }
    if let Some(location) = resp
        .location
        .as_deref()
        .filter(|_| (300..400).contains(&status))
    {
        // Only writes get here: reads follow redirects in the client.
        let location = crate::outbound::clip(location, 300);
        structured.insert("location".into(), json!(location));
        structured.insert(
            "error".into(),
            json!({"message": format!("redirected to {location}"), "hint": "writes never follow redirects"}),
        );
        return Outcome {
            text: format!(
                "Gitea answered {status}, redirecting to {location}. A write never follows a redirect, so the request was sent once and not repeated there. If the instance has moved, fix GITEA_URL; otherwise check whether the write took effect before repeating it."
            ),
            structured: Value::Object(structured),
            is_error: true,
            status: Some(status),
            facts: Facts::default(),
        };
    }
    let kind = classify(action, &resp);
    let outcome_text = match kind {
        ResponseKind::Empty | ResponseKind::Redirect if resp.body.is_empty() => {
            format!("done: Gitea answered {status} with no content")
        }
        ResponseKind::Binary => {
            if resp.truncated || resp.body.len() > limits.max_file_size_bytes {
                let size = resp
                    .declared_len
                    .map(|n| format!("{n} bytes"))
                    .unwrap_or_else(|| "more bytes".into());
                return Outcome {
                    text: format!(
                        "the file is {size}, over the {}-byte limit (MAX_FILE_SIZE_BYTES); fetch a smaller file or ask the operator to raise the limit",
                        limits.max_file_size_bytes
                    ),
                    structured: Value::Object(structured),
                    is_error: true,
                    status: Some(status),
                    facts: Facts::default(),
                };
            }
            let b64 = base64::engine::general_purpose::STANDARD.encode(&resp.body);
            let content_type = resp
                .content_type
                .as_deref()
                .unwrap_or("application/octet-stream");
            let size = resp.body.len();
            // The base64 is bounded by MAX_FILE_SIZE_BYTES and sent once when it does not fit
            // the text's share of MAX_RESPONSE_BYTES.
            let text = if b64.len() <= limits.data_budget() {
                format!("binary content ({size} bytes, {content_type}) as base64:\n{b64}")
            } else {
                format!(
                    "binary content ({size} bytes, {content_type}): too long for the text; the base64 is in structuredContent.content_base64 ({} characters)",
                    b64.len()
                )
            };
            structured.insert("content_type".into(), json!(content_type));
            structured.insert("size".into(), json!(size));
            structured.insert(crate::outbound::BASE64_FIELD.into(), json!(b64));
            text
        }
        ResponseKind::Text | ResponseKind::Redirect | ResponseKind::Empty => {
            let text = String::from_utf8_lossy(&resp.body).into_owned();
            let (text, cut) = cut_text(&text, limits.data_budget());
            if cut || resp.truncated {
                structured.insert(
                    "truncated".into(),
                    json!({"shown_bytes": text.len(), "total_bytes": resp.declared_len, "how_to_get_rest": "ask for a narrower range (a single file, a smaller diff)"}),
                );
            }
            structured.insert("text".into(), json!(text));
            if cut || resp.truncated {
                format!(
                    "{text}\n[cut at {} bytes of {}]",
                    text.len(),
                    total_label(&resp)
                )
            } else {
                text
            }
        }
        ResponseKind::Json => {
            if resp.truncated {
                return Outcome {
                    text: format!(
                        "the answer is larger than {} bytes and was not read; narrow the call (a smaller `limit`, a `page`, a filter, or a more specific action)",
                        resp.body.len()
                    ),
                    structured: Value::Object(structured),
                    is_error: true,
                    status: Some(status),
                    facts: Facts::default(),
                };
            }
            let data: Value = match serde_json::from_slice(&resp.body) {
                Ok(v) => v,
                Err(e) if resp.body.is_empty() => {
                    let _ = e;
                    Value::Null
                }
                Err(e) => {
                    return Outcome {
                        text: format!(
                            "Gitea answered {status} with malformed JSON ({e}); the call may have succeeded: check before repeating it"
                        ),
                        structured: Value::Object(structured),
                        is_error: true,
                        status: Some(status),
                        facts: Facts::default(),
                    };
                }
            };
            // Serialized once: the text is also the size check.
            let whole = serde_json::to_string(&data).unwrap_or_default();
            let (data, cut, mut text) = if whole.len() <= limits.data_budget() {
                (data, None, whole)
            } else {
                let (data, cut) = fit_json(data, limits.data_budget());
                let text = serde_json::to_string(&data).unwrap_or_default();
                (data, cut, text)
            };
            if let Some(paging) = paging(args, &data, &resp, cut.as_ref()) {
                text.push_str(&format!("\n[paging: {}]", paging_line(&paging)));
                structured.insert("paging".into(), paging);
            }
            if let Some(cut) = cut {
                text.push_str(&format!("\n[{}]", cut["note"].as_str().unwrap_or("cut")));
                structured.insert("truncated".into(), cut);
            }
            structured.insert("data".into(), data);
            text
        }
    };
    Outcome {
        text: outcome_text,
        structured: Value::Object(structured),
        is_error: false,
        status: Some(status),
        facts: Facts::default(),
    }
}

/// The kind of the answer: the action's documented kind, corrected by the actual content type.
fn classify(action: Option<&Action>, resp: &Response) -> ResponseKind {
    let ct = resp
        .content_type
        .as_deref()
        .unwrap_or("")
        .to_ascii_lowercase();
    if resp.body.is_empty() {
        return ResponseKind::Empty;
    }
    if ct.contains("json") {
        return ResponseKind::Json;
    }
    if ct.starts_with("text/") || ct.contains("xml") || ct.contains("javascript") {
        return ResponseKind::Text;
    }
    match action.map(|a| a.response) {
        Some(ResponseKind::Json) if ct.is_empty() => ResponseKind::Json,
        Some(ResponseKind::Text) => ResponseKind::Text,
        _ if std::str::from_utf8(&resp.body).is_ok() && ct.is_empty() => ResponseKind::Text,
        _ => ResponseKind::Binary,
    }
}

fn total_label(resp: &Response) -> String {
    resp.declared_len
        .map(|n| format!("{n}"))
        .unwrap_or_else(|| "more".into())
}

/// Cuts text at a character boundary within `max` bytes.
fn cut_text(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_string(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), true)
}

/// Shortens a JSON answer to fit `max` bytes: a list keeps its first items; otherwise long
/// strings are shortened. Returns the note describing the cut, if any.
fn fit_json(data: Value, max: usize) -> (Value, Option<Value>) {
    let size = |v: &Value| {
        serde_json::to_string(v)
            .map(|s| s.len())
            .unwrap_or(usize::MAX)
    };
    if size(&data) <= max {
        return (data, None);
    }
    if let Value::Array(items) = &data {
        // The largest prefix that fits (binary search over the count).
        let (mut lo, mut hi) = (0usize, items.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if size(&Value::Array(items[..mid].to_vec())) <= max {
                lo = mid
            } else {
                hi = mid - 1
            }
        }
        let total = items.len();
        let kept = Value::Array(items[..lo].to_vec());
        let note = json!({
            "note": format!("showing {lo} of {total} items: the rest did not fit in the answer; ask for a smaller `limit` or the next `page`"),
            "shown_items": lo, "total_items": total,
        });
        return (kept, Some(note));
    }
    let mut data = data;
    for cap in [4000usize, 1000, 200] {
        shorten_strings(&mut data, cap);
        if size(&data) <= max {
            return (
                data,
                Some(
                    json!({"note": format!("long text fields were shortened to {cap} characters to fit the answer; fetch the field with a narrower action for the full text")}),
                ),
            );
        }
    }
    let text = serde_json::to_string(&data).unwrap_or_default();
    let (cut, _) = cut_text(&text, max);
    (
        Value::String(cut),
        Some(json!({"note": "the answer was cut to fit; use a narrower action or filter"})),
    )
}

fn shorten_strings(v: &mut Value, cap: usize) {
    match v {
        Value::String(s) if s.chars().count() > cap => {
            let short: String = s.chars().take(cap).collect();
            *s = format!("{short}… [{} more characters]", s.chars().count() - cap);
        }
        Value::Array(items) => items.iter_mut().for_each(|i| shorten_strings(i, cap)),
        Value::Object(m) => m.values_mut().for_each(|i| shorten_strings(i, cap)),
        _ => {}
    }
}

/// Paging facts for a list answer: page, limit, total count, whether there is more, and the
/// exact arguments for the next page.
fn paging(
    args: &Map<String, Value>,
    data: &Value,
    resp: &Response,
    cut: Option<&Value>,
) -> Option<Value> {
    let items = data.as_array().map(Vec::len);
    if resp.total_count.is_none() && resp.link.is_none() {
        return None;
    }
    let page = args.get("page").and_then(Value::as_u64).unwrap_or(1).max(1);
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .or(items.map(|n| n as u64));
    let link_next = resp
        .link
        .as_deref()
        .is_some_and(|l| l.contains("rel=\"next\""));
    let has_next = cut.is_some()
        || link_next
        || matches!((resp.total_count, limit), (Some(t), Some(l)) if l > 0 && page * l < t);
    let mut out = json!({"page": page, "limit": limit, "total_count": resp.total_count, "has_next": has_next});
    if has_next {
        let mut next = args.clone();
        next.insert("page".into(), json!(page + 1));
        if let Some(shown) = cut.and_then(|c| c["shown_items"].as_u64()) {
            // The page did not fit: continue right after the last item shown. With page/limit
            // paging that means a limit dividing the offset of the next item.
            let requested = limit.unwrap_or(shown).max(1);
            let (page, limit) = continue_after(page, requested, shown.max(1));
            next.insert("limit".into(), json!(limit));
            next.insert("page".into(), json!(page));
        }
        out["next_arguments"] = Value::Object(next);
    }
    Some(out)
}

/// The page and limit that start right after the `shown` first items of page `page` (of
/// `requested` items): the largest limit not above `shown` that divides the offset.
fn continue_after(page: u64, requested: u64, shown: u64) -> (u64, u64) {
    let offset = (page - 1) * requested + shown;
    let limit = (1..=shown).rev().find(|d| offset % d == 0).unwrap_or(1);
    (offset / limit + 1, limit)
}

fn paging_line(p: &Value) -> String {
    let mut s = format!(
        "page {} limit {} total {} has_next {}",
        p["page"], p["limit"], p["total_count"], p["has_next"]
    );
    if let Some(next) = p.get("next_arguments") {
        s.push_str(&format!("; next: {next}"));
    }
    s
}

/// Longest Gitea error message repeated to the model.
const ERROR_MESSAGE_CHARS: usize = 1000;

/// Gitea's error answer as an error result with a hint.
fn gitea_error(
    action: Option<&Action>,
    resp: Response,
    mut structured: Map<String, Value>,
) -> Outcome {
    let status = resp.status;
    let body: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    let message = body
        .get("message")
        .and_then(Value::as_str)
        .map(|m| crate::outbound::clip(m, ERROR_MESSAGE_CHARS).into_owned())
        .or_else(|| {
            let t = String::from_utf8_lossy(&resp.body);
            let t = t.trim();
            (!t.is_empty()).then(|| crate::outbound::clip(t, ERROR_MESSAGE_CHARS).into_owned())
        })
        .unwrap_or_else(|| "(no message)".into());
    let scopes = action
        .map(|a| {
            a.scopes
                .scopes()
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let hint = match status {
        401 => "the Gitea token is missing, expired or invalid".to_string(),
        403 if !scopes.is_empty() => format!(
            "Gitea refused: this route needs the token scope {} (and the user must have access)",
            scopes.join(" and ")
        ),
        403 => "Gitea refused: the user lacks permission for this".to_string(),
        404 => "not found: check owner, repo, index or id, and that the token's user can see the repository".to_string(),
        405 => "Gitea does not allow this here (e.g. already merged, or not allowed by settings)".to_string(),
        409 => "conflict: Gitea rejected the request as it stands (the message says why)".to_string(),
        422 => "Gitea rejected the arguments (the message says which); fix them and retry".to_string(),
        429 => "rate limited by Gitea; wait and retry".to_string(),
        s if s >= 500 => "Gitea failed; retry later".to_string(),
        _ => "Gitea rejected the request (the message says why)".to_string(),
    };
    structured.insert("error".into(), json!({"message": message, "hint": hint}));
    if !scopes.is_empty() && status == 403 {
        structured.insert("required_scopes".into(), json!(scopes));
    }
    Outcome {
        text: format!("Gitea answered {status}: {message}\nhint: {hint}"),
        structured: Value::Object(structured),
        is_error: true,
        status: Some(status),
        facts: Facts::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, ct: &str, body: &str) -> Response {
        Response {
            status,
            content_type: Some(ct.into()),
            total_count: None,
            link: None,
            body: body.as_bytes().to_vec(),
            truncated: false,
            declared_len: Some(body.len() as u64),
            retry_after: None,
            attempts: 1,
            location: None,
        }
    }

    fn limits(max: usize) -> Limits {
        Limits {
            max_response_bytes: max,
            max_file_size_bytes: 16,
        }
    }

    #[test]
    fn lists_are_cut_at_whole_items_with_next_page_arguments() {
        let items: Vec<Value> = (0..50)
            .map(|i| json!({"id": i, "title": "x".repeat(30)}))
            .collect();
        let mut r = resp(200, "application/json", &Value::Array(items).to_string());
        r.total_count = Some(120);
        r.link = Some("<https://g/api/v1/x?page=2>; rel=\"next\"".into());
        let args: Map<String, Value> = json!({"owner": "a", "limit": 50})
            .as_object()
            .unwrap()
            .clone();
        let out = shape(None, &args, r, limits(1000));
        assert!(!out.is_error);
        let shown = out.structured["truncated"]["shown_items"].as_u64().unwrap();
        assert!(shown > 0 && shown < 50);
        assert_eq!(
            out.structured["data"].as_array().unwrap().len() as u64,
            shown
        );
        assert_eq!(out.structured["paging"]["total_count"], 120);
        assert_eq!(out.structured["paging"]["has_next"], true);
        assert_eq!(out.structured["paging"]["next_arguments"]["limit"], shown);
        assert!(out.text.contains("showing") && out.text.contains("[paging:"));
    }

    #[test]
    fn a_cut_page_continues_right_after_the_last_item_shown() {
        assert_eq!(continue_after(1, 50, 12), (2, 12));
        // Page 2 of 30 with 12 shown: the next item is number 43 (offset 42): limit 7, page 7.
        assert_eq!(continue_after(2, 30, 12), (7, 7));
        let (p, l) = continue_after(3, 50, 17);
        assert_eq!((p - 1) * l, 2 * 50 + 17);
    }

    #[test]
    fn next_page_arguments_when_the_page_fits() {
        let mut r = resp(200, "application/json", "[1,2,3]");
        r.total_count = Some(7);
        let args: Map<String, Value> = json!({"limit": 3, "state": "open"})
            .as_object()
            .unwrap()
            .clone();
        let out = shape(None, &args, r, limits(1000));
        assert_eq!(
            out.structured["paging"]["next_arguments"],
            json!({"limit": 3, "state": "open", "page": 2})
        );
        let mut last = resp(200, "application/json", "[7]");
        last.total_count = Some(7);
        let args: Map<String, Value> = json!({"limit": 3, "page": 3}).as_object().unwrap().clone();
        let out = shape(None, &args, last, limits(1000));
        assert_eq!(out.structured["paging"]["has_next"], false);
    }

    #[test]
    fn errors_carry_status_message_and_hint() {
        let out = shape(
            None,
            &Map::new(),
            resp(
                404,
                "application/json",
                r#"{"message":"repo not found","url":"u"}"#,
            ),
            limits(1000),
        );
        assert!(out.is_error);
        assert_eq!(out.status, Some(404));
        assert!(
            out.text.contains("404")
                && out.text.contains("repo not found")
                && out.text.contains("check owner")
        );
        let out = shape(None, &Map::new(), resp(500, "text/plain", ""), limits(1000));
        assert!(out.is_error && out.text.contains("retry later"));
    }

    #[test]
    fn malformed_json_is_an_error_that_warns_about_repeating() {
        let out = shape(
            None,
            &Map::new(),
            resp(200, "application/json", "{\"a\": [1,"),
            limits(1000),
        );
        assert!(
            out.is_error
                && out.text.contains("malformed JSON")
                && out.text.contains("before repeating")
        );
    }

    #[test]
    fn text_and_binary_bounds() {
        let out = shape(
            None,
            &Map::new(),
            resp(200, "text/plain", &"é".repeat(600)),
            limits(1001),
        );
        assert!(out.structured["text"].as_str().unwrap().len() <= 1001);
        assert!(out.text.contains("[cut at"));
        let small = resp(200, "application/octet-stream", "\u{1}\u{2}\u{3}");
        let out = shape(None, &Map::new(), small, limits(1000));
        assert_eq!(out.structured["content_base64"], "AQID");
        let mut big = resp(200, "application/octet-stream", "0123456789abcdefg");
        big.truncated = true;
        let out = shape(None, &Map::new(), big, limits(1000));
        assert!(
            out.is_error
                && out.text.contains("17 bytes")
                && out.text.contains("MAX_FILE_SIZE_BYTES")
        );
    }
}

//! Turning Gitea's answer into facts that fit a model's context budget.
//!
//! Every answer is bounded. JSON lists are cut at a whole item and say how to get the rest;
//! long strings are shortened before anything is cut blindly; text (diffs, patches, raw files)
//! is kept within the bound; binary files up to the file-size limit, as base64. What the model
//! reads about it is written by `render`.

use base64::Engine;
use serde_json::{Map, Value};

use super::outcome::{
    CallResult, Executed, JsonCut, Paging, Refusal, RequestLine, Shaped, TextCut,
};
use crate::catalog::{Action, ResponseKind};
use crate::gitea::Response;

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

/// Longest Gitea error message kept.
const ERROR_MESSAGE_CHARS: usize = 1000;

/// Shapes Gitea's answer to `request` for `action` (`None` for a raw request to an unknown
/// path); `args` are the call's arguments (for the next page's).
pub fn shape(
    action: Option<&Action>,
    request: RequestLine,
    args: &Map<String, Value>,
    resp: Response,
    limits: Limits,
) -> CallResult {
    let status = resp.status;
    let name = action.map(|a| a.name.clone());
    if status >= 400 {
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
            .unwrap_or_default();
        return Err(Refusal::Gitea {
            action: name,
            request,
            status,
            message,
            scopes: action
                .map(|a| a.scopes.scopes().to_vec())
                .unwrap_or_default(),
        });
    }
    if let Some(location) = resp
        .location
        .as_deref()
        .filter(|_| (300..400).contains(&status))
    {
        // Only writes get here: reads follow redirects in the client.
        return Err(Refusal::Redirected {
            action: name,
            request,
            status,
            location: crate::outbound::clip(location, 300).into_owned(),
        });
    }
    let body = match classify(action, &resp) {
        ResponseKind::Empty | ResponseKind::Redirect if resp.body.is_empty() => Shaped::Empty,
        ResponseKind::Binary => {
            if resp.truncated || resp.body.len() > limits.max_file_size_bytes {
                return Err(Refusal::FileTooLarge {
                    action: name,
                    request,
                    status,
                    size: resp.declared_len,
                    limit: limits.max_file_size_bytes,
                });
            }
            Shaped::Binary {
                content_type: resp
                    .content_type
                    .clone()
                    .unwrap_or_else(|| "application/octet-stream".into()),
                size: resp.body.len(),
                base64: base64::engine::general_purpose::STANDARD.encode(&resp.body),
            }
        }
        ResponseKind::Text | ResponseKind::Redirect | ResponseKind::Empty => {
            let text = String::from_utf8_lossy(&resp.body).into_owned();
            let (text, cut) = cut_text(&text, limits.data_budget());
            let cut = (cut || resp.truncated).then_some(TextCut {
                shown_bytes: text.len(),
                total_bytes: resp.declared_len,
            });
            Shaped::Text { text, cut }
        }
        ResponseKind::Json => {
            if resp.truncated {
                return Err(Refusal::AnswerTooLarge {
                    action: name,
                    request,
                    status,
                    read: resp.body.len(),
                });
            }
            let data: Value = match serde_json::from_slice(&resp.body) {
                Ok(v) => v,
                Err(_) if resp.body.is_empty() => Value::Null,
                Err(e) => {
                    return Err(Refusal::MalformedJson {
                        action: name,
                        request,
                        status,
                        error: e.to_string(),
                    });
                }
            };
            // Serialized once: the size check is also the text the model reads.
            let whole = serde_json::to_string(&data).unwrap_or_default();
            let (data, cut, serialized) = if whole.len() <= limits.data_budget() {
                (data, None, whole)
            } else {
                let (data, cut) = fit_json(data, limits.data_budget());
                let serialized = serde_json::to_string(&data).unwrap_or_default();
                (data, cut, serialized)
            };
            let paging = paging(args, &data, &resp, cut.as_ref());
            Shaped::Json {
                data,
                serialized,
                paging,
                cut,
            }
        }
    };
    Ok(Executed::new(name, request, status, body))
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
/// strings are shortened. Returns how it was cut, if it was.
fn fit_json(data: Value, max: usize) -> (Value, Option<JsonCut>) {
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
        return (kept, Some(JsonCut::Items { shown: lo, total }));
    }
    let mut data = data;
    for cap in [4000usize, 1000, 200] {
        shorten_strings(&mut data, cap);
        if size(&data) <= max {
            return (data, Some(JsonCut::Strings { cap }));
        }
    }
    let text = serde_json::to_string(&data).unwrap_or_default();
    let (cut, _) = cut_text(&text, max);
    (Value::String(cut), Some(JsonCut::Blind))
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
    cut: Option<&JsonCut>,
) -> Option<Paging> {
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
    let next_arguments = has_next.then(|| {
        let mut next = args.clone();
        next.insert("page".into(), Value::from(page + 1));
        if let Some(JsonCut::Items { shown, .. }) = cut {
            // The page did not fit: continue right after the last item shown. With page/limit
            // paging that means a limit dividing the offset of the next item.
            let shown = (*shown as u64).max(1);
            let requested = limit.unwrap_or(shown).max(1);
            let (page, limit) = continue_after(page, requested, shown);
            next.insert("limit".into(), Value::from(limit));
            next.insert("page".into(), Value::from(page));
        }
        next
    });
    Some(Paging {
        page,
        limit,
        total_count: resp.total_count,
        has_next,
        next_arguments,
    })
}

/// The page and limit that start right after the `shown` first items of page `page` (of
/// `requested` items): the largest limit not above `shown` that divides the offset.
fn continue_after(page: u64, requested: u64, shown: u64) -> (u64, u64) {
    let offset = (page - 1) * requested + shown;
    let limit = (1..=shown).rev().find(|d| offset % d == 0).unwrap_or(1);
    (offset / limit + 1, limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::HttpMethod;
    use serde_json::json;

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

    fn get() -> RequestLine {
        RequestLine {
            method: HttpMethod::Get,
            path: "/x".into(),
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn lists_are_cut_at_whole_items_with_next_page_arguments() {
        let items: Vec<Value> = (0..50)
            .map(|i| json!({"id": i, "title": "x".repeat(30)}))
            .collect();
        let mut r = resp(200, "application/json", &Value::Array(items).to_string());
        r.total_count = Some(120);
        r.link = Some("<https://g/api/v1/x?page=2>; rel=\"next\"".into());
        let args = obj(json!({"owner": "a", "limit": 50}));
        let Ok(Executed {
            body:
                Shaped::Json {
                    data,
                    serialized,
                    paging,
                    cut,
                },
            ..
        }) = shape(None, get(), &args, r, limits(2000))
        else {
            panic!("a JSON answer")
        };
        let Some(JsonCut::Items { shown, total: 50 }) = cut else {
            panic!("cut at whole items: {cut:?}")
        };
        assert!(shown > 0 && shown < 50);
        assert_eq!(data.as_array().unwrap().len(), shown);
        assert_eq!(serialized, data.to_string());
        let paging = paging.expect("paging");
        assert_eq!((paging.total_count, paging.has_next), (Some(120), true));
        assert_eq!(paging.next_arguments.unwrap()["limit"], shown as u64);
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
        let paging_of =
            |r: Response, args: Value| match shape(None, get(), &obj(args), r, limits(1000)) {
                Ok(Executed {
                    body: Shaped::Json { paging, .. },
                    ..
                }) => paging.expect("paging"),
                other => panic!("{other:?}"),
            };
        let mut r = resp(200, "application/json", "[1,2,3]");
        r.total_count = Some(7);
        let p = paging_of(r, json!({"limit": 3, "state": "open"}));
        assert_eq!(
            Value::Object(p.next_arguments.unwrap()),
            json!({"limit": 3, "state": "open", "page": 2})
        );
        let mut last = resp(200, "application/json", "[7]");
        last.total_count = Some(7);
        assert!(!paging_of(last, json!({"limit": 3, "page": 3})).has_next);
    }

    #[test]
    fn errors_carry_status_message_and_scopes() {
        let big = "m".repeat(5000);
        let body = json!({"message": big, "url": "u"}).to_string();
        match shape(
            None,
            get(),
            &Map::new(),
            resp(404, "application/json", &body),
            limits(1000),
        ) {
            Err(Refusal::Gitea {
                status: 404,
                message,
                ..
            }) => {
                assert!(message.chars().count() < 1100, "clipped: {}", message.len());
            }
            other => panic!("{other:?}"),
        }
        match shape(
            None,
            get(),
            &Map::new(),
            resp(500, "text/plain", "boom"),
            limits(1000),
        ) {
            Err(Refusal::Gitea {
                status: 500,
                message,
                ..
            }) => assert_eq!(message, "boom"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_json_and_redirects_are_refusals() {
        let r = resp(200, "application/json", "{\"a\": [1,");
        assert!(matches!(
            shape(None, get(), &Map::new(), r, limits(1000)),
            Err(Refusal::MalformedJson { status: 200, .. })
        ));
        let mut r = resp(307, "text/html", "");
        r.location = Some("https://elsewhere/x".into());
        assert!(matches!(
            shape(None, get(), &Map::new(), r, limits(1000)),
            Err(Refusal::Redirected { status: 307, location, .. }) if location == "https://elsewhere/x"
        ));
    }

    #[test]
    fn text_and_binary_bounds() {
        match shape(
            None,
            get(),
            &Map::new(),
            resp(200, "text/plain", &"é".repeat(600)),
            limits(1001),
        ) {
            Ok(Executed {
                body: Shaped::Text { text, cut: Some(c) },
                ..
            }) => {
                assert!(text.len() <= 500);
                assert_eq!(c.shown_bytes, text.len());
            }
            other => panic!("{other:?}"),
        }
        let small = resp(200, "application/octet-stream", "\u{1}\u{2}\u{3}");
        match shape(None, get(), &Map::new(), small, limits(1000)) {
            Ok(Executed {
                body: Shaped::Binary {
                    base64, size: 3, ..
                },
                ..
            }) => assert_eq!(base64, "AQID"),
            other => panic!("{other:?}"),
        }
        let mut big = resp(200, "application/octet-stream", "0123456789abcdefg");
        big.truncated = true;
        assert!(matches!(
            shape(None, get(), &Map::new(), big, limits(1000)),
            Err(Refusal::FileTooLarge {
                size: Some(17),
                limit: 16,
                ..
            })
        ));
    }
}

//! Small helpers of the fake Gitea: query strings, paging like Gitea, time stamps, hashes,
//! multipart parsing and the reply type.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Where Gitea's error bodies point (`setting.API.SwaggerURL`); the fake uses a fixed address.
pub const DOCS_URL: &str = "https://docs.gitea.com/api/1.28/";

/// Gitea's `setting.API.DefaultPagingNum`.
pub const DEFAULT_PAGING_NUM: usize = 30;
/// Gitea's `setting.API.MaxResponseItems`.
pub const MAX_RESPONSE_ITEMS: usize = 50;

/// An answer before it becomes an HTTP response.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(status: u16, value: &Value) -> Reply {
        Reply {
            status,
            headers: vec![(
                "content-type".into(),
                "application/json;charset=utf-8".into(),
            )],
            body: serde_json::to_vec(value).expect("serialise JSON"),
        }
    }

    pub fn empty(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn bytes(status: u16, content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body,
        }
    }

    /// Gitea's `APIError`: `{"message": …, "url": …}`.
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply::json(
            status,
            &json!({ "message": message.into(), "url": DOCS_URL }),
        )
    }

    /// Gitea's `APIErrorNotFound`: a fixed message plus the causes in `errors`.
    pub fn not_found(errors: &[String]) -> Reply {
        Reply::json(
            404,
            &json!({
                "message": "The target couldn't be found.",
                "url": DOCS_URL,
                "errors": errors,
            }),
        )
    }

    /// A binding error: `[Field]: Rule` with 422.
    pub fn validation(field: &str, rule: &str) -> Reply {
        Reply::error(422, format!("[{field}]: {rule}"))
    }

    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Reply {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }
}

/// Handler result: the error side is an answer as well.
pub type Res = Result<Reply, Reply>;

/// Percent-decodes `s`; with `plus_is_space`, `+` becomes a space (query strings).
pub fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%'
            && i + 3 <= bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
        {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            i += 3;
            continue;
        }
        out.push(if b == b'+' && plus_is_space { b' ' } else { b });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `a=1&b=x+y` into decoded pairs, in order.
pub fn parse_query(raw: &str) -> Vec<(String, String)> {
    raw.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k, true), percent_decode(v, true))
        })
        .collect()
}

/// Go's `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Go's `url.Values.Encode`: sorted by key (stable for repeated keys), escaped.
pub fn encode_query(pairs: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = pairs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted
        .iter()
        .map(|(k, v)| format!("{}={}", query_escape(k), query_escape(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// RFC 3339 (UTC, `Z`) for a Unix time stamp.
pub fn rfc3339(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// A 40-hex-digit identifier (the shape of a git SHA-1) derived from `data` with SHA-256.
pub fn sha40(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    digest.iter().take(20).map(|b| format!("{b:02x}")).collect()
}

/// The "blob SHA" the fake reports for file content (`sha40("blob <len>\0<content>")`).
pub fn blob_sha(content: &[u8]) -> String {
    let mut data = format!("blob {}\0", content.len()).into_bytes();
    data.extend_from_slice(content);
    sha40(&data)
}

/// `page` and `limit` as Gitea reads them (`utils.GetListOptions`).
#[derive(Debug, Clone, Copy)]
pub struct Paging {
    pub page: usize,
    pub limit: usize,
}

impl Paging {
    pub fn from_query(query: &[(String, String)]) -> Paging {
        let int = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.trim().parse::<i64>().ok())
                .unwrap_or(0)
        };
        let page = int("page");
        let limit = int("limit");
        Paging {
            page: if page <= 0 { 1 } else { page as usize },
            limit: if limit <= 0 {
                DEFAULT_PAGING_NUM
            } else {
                (limit as usize).min(MAX_RESPONSE_ITEMS)
            },
        }
    }

    /// The slice of `items` for this page.
    pub fn slice<T: Clone>(&self, items: &[T]) -> Vec<T> {
        let start = (self.page - 1).saturating_mul(self.limit);
        items.iter().skip(start).take(self.limit).cloned().collect()
    }

    /// Gitea's `Link` header (`GenerateLinkHeader`): next, last, first, prev, with absolute URLs
    /// that keep the rest of the query. `None` when there is only one page.
    pub fn link_header(
        &self,
        base_url: &str,
        path: &str,
        query: &[(String, String)],
        total: usize,
    ) -> Option<String> {
        let total_pages = if total == 0 {
            1
        } else {
            total.div_ceil(self.limit)
        };
        let current = self.page.min(total_pages);
        let link = |page: usize, rel: &str| {
            let mut q: Vec<(String, String)> =
                query.iter().filter(|(k, _)| k != "page").cloned().collect();
            q.push(("page".into(), page.to_string()));
            format!("<{base_url}{path}?{}>; rel=\"{rel}\"", encode_query(&q))
        };
        let mut links = Vec::new();
        if total > current * self.limit {
            links.push(link(current + 1, "next"));
        }
        if current != total_pages {
            links.push(link(total_pages, "last"));
        }
        if current != 1 {
            links.push(link(1, "first"));
        }
        if current > 1 {
            links.push(link(current - 1, "prev"));
        }
        (!links.is_empty()).then(|| links.join(","))
    }
}

/// One part of a `multipart/form-data` body.
#[derive(Debug, Clone)]
pub struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub data: Vec<u8>,
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| &hay[i..i + needle.len()] == needle)
}

/// The value of `key` in a header parameter list such as `form-data; name="a"; filename="b"`.
fn header_param(value: &str, key: &str) -> Option<String> {
    value.split(';').skip(1).find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case(key)
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

/// Splits a `multipart/form-data` body. `content_type` is the request's header.
pub fn parse_multipart(content_type: &str, body: &[u8]) -> Result<Vec<Part>, String> {
    let boundary = header_param(content_type, "boundary")
        .filter(|b| !b.is_empty())
        .ok_or("no multipart boundary")?;
    let delim = format!("--{boundary}").into_bytes();
    let mut parts = Vec::new();
    let mut pos = find(body, &delim, 0).ok_or("no opening boundary")? + delim.len();
    loop {
        if body[pos..].starts_with(b"--") {
            return Ok(parts);
        }
        // Skip the CRLF after the boundary.
        if body[pos..].starts_with(b"\r\n") {
            pos += 2;
        }
        let head_end = find(body, b"\r\n\r\n", pos).ok_or("unterminated part headers")?;
        let head = String::from_utf8_lossy(&body[pos..head_end]).into_owned();
        let data_start = head_end + 4;
        let mut next_delim = b"\r\n".to_vec();
        next_delim.extend_from_slice(&delim);
        let data_end = find(body, &next_delim, data_start).ok_or("unterminated part")?;
        let mut part = Part {
            name: String::new(),
            filename: None,
            content_type: None,
            data: body[data_start..data_end].to_vec(),
        };
        for line in head.split("\r\n") {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if name.trim().eq_ignore_ascii_case("content-disposition") {
                part.name = header_param(value, "name").unwrap_or_default();
                part.filename = header_param(value, "filename");
            } else if name.trim().eq_ignore_ascii_case("content-type") {
                part.content_type = Some(value.to_string());
            }
        }
        parts.push(part);
        pos = data_end + next_delim.len();
        if pos >= body.len() {
            return Ok(parts);
        }
    }
}

/// The content type Gitea's raw endpoint would send for a file name.
pub fn content_type_for(path: &str) -> &'static str {
    let ext = path
        .rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "txt" | "md" | "rs" | "go" | "py" | "toml" | "yaml" | "yml" | "c" | "h" | "sh" | "html"
        | "htm" | "css" | "js" | "ts" | "xml" | "csv" | "ini" | "cfg" | "lock" => {
            "text/plain; charset=utf-8"
        }
        "json" => "application/json",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" | "tgz" => "application/gzip",
        _ => "application/octet-stream",
    }
}

//! What leaves the process: every answer to a client is scrubbed of secrets and bounded.
//!
//! The transports call [`Secrets::scrub_value`] / [`Secrets::scrub_str`] and [`fit`] on every
//! tool answer, resource and error just before it is serialized, so the guarantees hold for
//! every surface whatever produced the answer — including text Gitea echoed back (a token
//! quoted in an error page, a password repeated in a validation message) and caller input
//! repeated in an error (a 2 MB action name). Upstream code clips what it echoes ([`clip`]) so
//! answers stay readable; this module is the backstop that makes the bound hold.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The structured field that carries a binary file as base64; it is bounded by
/// `MAX_FILE_SIZE_BYTES` instead of the answer bound (it is sent once, not twice).
pub const BASE64_FIELD: &str = "content_base64";

/// What a scrubbed secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not scrubbed (they would wreck ordinary text; Gitea itself
/// requires passwords of at least 8 characters and tokens have 40).
pub const MIN_SECRET_LEN: usize = 6;

/// Field names whose values are secrets wherever they appear in a call (previews mask them,
/// answers are scrubbed of them).
pub const SECRET_FIELDS: [&str; 9] = [
    "password",
    "passwd",
    "secret",
    "token",
    "access_token",
    "client_secret",
    "passphrase",
    "private_key",
    "new_password",
];

fn mentions_secret(s: &str) -> bool {
    s.to_ascii_lowercase().contains("secret")
}

fn v_mentions_secret(v: &Value) -> bool {
    match v {
        Value::String(s) => mentions_secret(s),
        Value::Array(items) => items.iter().any(v_mentions_secret),
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| mentions_secret(k) || v_mentions_secret(v)),
        _ => false,
    }
}

/// `s` cut to at most `max_chars` characters, saying how much was left out.
pub fn clip(s: &str, max_chars: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max_chars) {
        None => Cow::Borrowed(s),
        Some((end, _)) => {
            let rest = s[end..].chars().count();
            Cow::Owned(format!("{}… [{rest} more characters]", &s[..end]))
        }
    }
}

/// The secrets of one call: scrubbed from everything the call answers.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    /// Every spelling to replace, longest first.
    needles: Vec<String>,
}

impl Secrets {
    /// No secrets yet.
    pub fn new() -> Secrets {
        Secrets::default()
    }

    /// Adds a secret and the spellings it takes when echoed inside JSON or a URL.
    pub fn add(&mut self, secret: &str) {
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        let json = serde_json::to_string(secret).unwrap_or_default();
        let json = json.trim_matches('"');
        let url = percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
            .to_string();
        for spelling in [secret, json, &url] {
            if !self.needles.iter().any(|n| n == spelling) {
                self.needles.push(spelling.to_string());
            }
        }
        self.needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
    }

    /// Adds the values of secret-named fields anywhere in `args` (passwords, tokens; and the
    /// `data` of Actions secrets when the call is about secrets).
    pub fn add_arguments(&mut self, args: &Map<String, Value>) {
        let about_secrets = args
            .iter()
            .any(|(k, v)| mentions_secret(k) || v_mentions_secret(v));
        self.collect(args, about_secrets);
    }

    fn collect(&mut self, m: &Map<String, Value>, about_secrets: bool) {
        for (k, v) in m {
            let k = k.to_ascii_lowercase();
            let secret = SECRET_FIELDS.contains(&k.as_str()) || (about_secrets && k == "data");
            match v {
                Value::String(s) if secret => self.add(s),
                other => self.collect_value(other, about_secrets),
            }
        }
    }

    fn collect_value(&mut self, v: &Value, about_secrets: bool) {
        match v {
            Value::Object(m) => self.collect(m, about_secrets),
            Value::Array(items) => items
                .iter()
                .for_each(|i| self.collect_value(i, about_secrets)),
            _ => {}
        }
    }

    /// True when there is nothing to scrub.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `s` with every secret replaced by [`REDACTED`].
    pub fn scrub_str<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(s);
        for n in &self.needles {
            if out.contains(n.as_str()) {
                out = Cow::Owned(out.replace(n.as_str(), REDACTED));
            }
        }
        out
    }

    /// Scrubs every string and key inside `v`.
    pub fn scrub_value(&self, v: &mut Value) {
        if self.is_empty() {
            return;
        }
        match v {
            Value::String(s) => {
                if let Cow::Owned(clean) = self.scrub_str(s) {
                    *s = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.scrub_value(i)),
            Value::Object(m) => {
                let dirty = m.keys().any(|k| matches!(self.scrub_str(k), Cow::Owned(_)));
                if dirty {
                    let old = std::mem::take(m);
                    for (k, mut v) in old {
                        self.scrub_value(&mut v);
                        m.insert(self.scrub_str(&k).into_owned(), v);
                    }
                } else {
                    m.values_mut().for_each(|v| self.scrub_value(v));
                }
            }
            _ => {}
        }
    }
}

/// The serialized size of a value.
pub fn json_len(v: &Value) -> usize {
    serde_json::to_string(v).map_or(usize::MAX, |s| s.len())
}

/// Cuts `text` at a character boundary so that it and `note` fit `max` bytes.
pub fn cut(text: &mut String, max: usize, note: &str) {
    if text.len() <= max {
        return;
    }
    let mut end = max.saturating_sub(note.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    if note.len() <= max {
        text.push_str(note);
    }
}

/// Makes `v` fit `max` serialized bytes: long strings are shortened, long lists keep their
/// first items, and as a last resort only small top-level fields are kept. Returns whether it
/// changed anything.
pub fn fit_value(v: &mut Value, max: usize) -> bool {
    if json_len(v) <= max {
        return false;
    }
    for cap in [4000usize, 1000, 200, 40] {
        shorten_strings(v, cap);
        if json_len(v) <= max {
            return true;
        }
    }
    for keep in [100usize, 20, 5, 1] {
        shorten_lists(v, keep);
        if json_len(v) <= max {
            return true;
        }
    }
    let small: Map<String, Value> = match v {
        Value::Object(m) => std::mem::take(m)
            .into_iter()
            .filter(|(k, x)| k.len() <= 64 && !x.is_object() && !x.is_array() && json_len(x) <= 200)
            .collect(),
        _ => Map::new(),
    };
    let mut out = small;
    out.insert(
        "truncated".into(),
        Value::String("this answer did not fit MAX_RESPONSE_BYTES; ask for less".into()),
    );
    *v = Value::Object(out);
    while json_len(v) > max {
        let Value::Object(m) = v else { break };
        let Some(k) = m.keys().find(|k| *k != "truncated").cloned() else {
            *v = Value::Object(Map::new());
            break;
        };
        m.remove(&k);
    }
    true
}

fn shorten_strings(v: &mut Value, cap: usize) {
    match v {
        Value::String(s) => {
            if let Cow::Owned(short) = clip(s, cap) {
                *s = short;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| shorten_strings(i, cap)),
        Value::Object(m) => m.values_mut().for_each(|i| shorten_strings(i, cap)),
        _ => {}
    }
}

fn shorten_lists(v: &mut Value, keep: usize) {
    match v {
        Value::Array(items) => {
            if items.len() > keep {
                let dropped = items.len() - keep;
                items.truncate(keep);
                items.push(Value::String(format!("… {dropped} more items")));
            }
            items.iter_mut().for_each(|i| shorten_lists(i, keep));
        }
        Value::Object(m) => {
            if m.len() > keep.max(20) {
                let keys: Vec<String> = m.keys().skip(keep.max(20)).cloned().collect();
                for k in &keys {
                    m.remove(k);
                }
                m.insert(
                    "…".into(),
                    Value::String(format!("{} more fields", keys.len())),
                );
            }
            m.values_mut().for_each(|i| shorten_lists(i, keep));
        }
        _ => {}
    }
}

/// Makes a text and its structured copy fit `max` bytes together (the base64 of a binary file
/// aside: [`BASE64_FIELD`] is bounded by the file-size limit). The text keeps at most half
/// when both are large.
pub fn fit(text: &mut String, structured: &mut Value, max: usize) {
    let base64 = match structured {
        Value::Object(m) => m.remove(BASE64_FIELD),
        _ => None,
    };
    let total = text.len() + json_len(structured);
    if total > max {
        let s_len = json_len(structured);
        let text_room = max.saturating_sub(s_len.min(max / 2));
        cut(text, text_room, "\n[answer cut to fit MAX_RESPONSE_BYTES]");
        fit_value(structured, max.saturating_sub(text.len()));
    }
    if let (Some(b), Value::Object(m)) = (base64, structured) {
        m.insert(BASE64_FIELD.into(), b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn clip_says_what_it_left_out() {
        assert_eq!(clip("hello", 10), "hello");
        assert_eq!(clip("héllo wörld", 5), "héllo… [6 more characters]");
    }

    #[test]
    fn secrets_are_scrubbed_in_every_spelling_and_place() {
        let mut s = Secrets::new();
        s.add("tok-abc\"123");
        s.add("short");
        let mut v = json!({
            "message": "bad token tok-abc\"123",
            "echo": "Authorization: token tok-abc\\\"123",
            "url": "https://x/?t=tok%2Dabc%22123",
            "tok-abc\"123": [1, "short"],
        });
        s.scrub_value(&mut v);
        let text = v.to_string();
        assert!(!text.contains("tok-abc"), "{text}");
        assert!(
            text.contains("short"),
            "short strings are not secrets: {text}"
        );
        assert_eq!(s.scrub_str("a tok-abc\"123 b"), format!("a {REDACTED} b"));
    }

    #[test]
    fn secrets_come_from_secret_named_arguments() {
        let mut s = Secrets::new();
        let obj = |v: Value| v.as_object().cloned().unwrap();
        s.add_arguments(&obj(
            json!({"arguments": {"body": {"username": "bob", "password": "pw-hunter2"}}}),
        ));
        s.add_arguments(&obj(
            json!({"path": "/repos/a/b/actions/secrets/X", "body": {"data": "s3cr3t-data"}}),
        ));
        s.add_arguments(&obj(json!({"body": {"data": "plain-data-value"}})));
        assert_eq!(
            s.scrub_str("pw-hunter2 s3cr3t-data bob"),
            format!("{REDACTED} {REDACTED} bob")
        );
        assert_eq!(s.scrub_str("plain-data-value"), "plain-data-value");
    }

    #[test]
    fn answers_fit_the_bound_together() {
        let mut text = "x".repeat(100_000);
        let mut structured =
            json!({"status": 200, "data": ["y".repeat(100_000)], "content_base64": "QUJD"});
        fit(&mut text, &mut structured, 10_000);
        let without_b64 = {
            let mut s = structured.clone();
            s.as_object_mut().unwrap().remove(BASE64_FIELD);
            json_len(&s)
        };
        assert!(
            text.len() + without_b64 <= 10_000,
            "{} + {without_b64}",
            text.len()
        );
        assert_eq!(structured["status"], 200);
        assert_eq!(
            structured[BASE64_FIELD], "QUJD",
            "the file is bounded on its own"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(64)))]

        #[test]
        fn fit_always_fits(text in "\\PC{0,400}", keys in proptest::collection::vec("\\PC{0,30}", 0..20),
                            max in 200usize..2000) {
            let mut text = text;
            let mut structured = Value::Object(keys.iter().map(|k| (k.clone(), json!([k, k, {"k": k}]))).collect());
            fit(&mut text, &mut structured, max);
            prop_assert!(text.len() + json_len(&structured) <= max);
        }

        #[test]
        fn scrubbing_removes_every_occurrence(prefix in "\\PC{0,50}", secret in "[!-Z^-~]{6,40}", suffix in "\\PC{0,50}") {
            let mut s = Secrets::new();
            s.add(&secret);
            let text = format!("{prefix}{secret}{suffix}{secret}");
            prop_assert!(!s.scrub_str(&text).contains(&secret));
        }
    }
}

//! Who is calling: API keys, Gitea-token pass-through, or nobody (loopback only).
//!
//! API keys are kept as sha256 hashes; a presented key is hashed and compared with every stored
//! hash in constant time. In pass-through mode each caller's Gitea token is checked once against
//! `GET /api/v1/user` and the answer cached briefly under a hash of the token, never the token.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::HeaderMap;

use crate::config::Secret;
use crate::digest::sha256_hex;
use crate::gitea::GiteaClient;
use crate::store::Store;

/// How clients authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// No authentication (refused unless listening on loopback).
    None,
    /// `Authorization: Bearer <key>` with keys from `API_KEYS_FILE`.
    ApiKey,
    /// Each client sends its own Gitea token; calls run under it.
    GiteaToken,
}

impl std::str::FromStr for AuthMode {
    type Err = String;

    fn from_str(s: &str) -> Result<AuthMode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(AuthMode::None),
            "api-key" | "api_key" | "apikey" => Ok(AuthMode::ApiKey),
            "gitea-token" | "gitea_token" => Ok(AuthMode::GiteaToken),
            other => Err(format!(
                "AUTH_MODE (--auth-mode) {other:?}: expected none, api-key or gitea-token"
            )),
        }
    }
}

/// One stored API key.
#[derive(Debug, Clone)]
struct StoredKey {
    hash: [u8; 32],
    label: String,
}

/// The API keys from `API_KEYS_FILE`.
///
/// Format: one key per line, `<sha256 hex of the key> [label]`; `#` starts a comment. Make a
/// line with `aegis-gitea-mcp api-key hash` (reads the key from standard input).
#[derive(Debug, Clone, Default)]
pub struct ApiKeys {
    keys: Vec<StoredKey>,
}

impl ApiKeys {
    /// Reads and checks a keys file; errors name the line.
    pub fn load(path: &Path) -> Result<ApiKeys, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("API_KEYS_FILE {}: {e}", path.display()))?;
        ApiKeys::parse(&text).map_err(|e| format!("API_KEYS_FILE {}: {e}", path.display()))
    }

    /// Parses the keys file format.
    pub fn parse(text: &str) -> Result<ApiKeys, String> {
        let mut keys = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (hash, label) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let hash = hash.trim().strip_prefix("sha256:").unwrap_or(hash.trim());
            let bytes = decode_hex32(hash).ok_or_else(|| {
                format!("line {}: expected a sha256 hex digest (64 characters) of the key, then an optional label", i + 1)
            })?;
            let label = if label.trim().is_empty() {
                format!("key-{}", &hash[..8])
            } else {
                label.trim().to_string()
            };
            keys.push(StoredKey { hash: bytes, label });
        }
        if keys.is_empty() {
            return Err("no keys: add lines made with `aegis-gitea-mcp api-key hash`".into());
        }
        Ok(ApiKeys { keys })
    }

    /// The label of the key, if `presented` is one of the stored keys. Compares against every
    /// stored hash in constant time, so timing tells nothing about which or how much matched.
    pub fn check(&self, presented: &str) -> Option<&str> {
        let h = sha256_bytes(presented.as_bytes());
        let mut found: Option<&str> = None;
        for k in &self.keys {
            let mut diff = 0u8;
            for (a, b) in h.iter().zip(k.hash.iter()) {
                diff |= a ^ b;
            }
            if diff == 0 && found.is_none() {
                found = Some(&k.label);
            }
        }
        found
    }

    /// How many keys are loaded.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no key is loaded.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The line to put in `API_KEYS_FILE` for `key`.
pub fn key_line(key: &str, label: &str) -> String {
    format!("{} {}", sha256_hex(key.as_bytes()), label)
}

fn sha256_bytes(b: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(b).into()
}

fn decode_hex32(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
        let hi = (chunk[0] as char).to_digit(16)?;
        let lo = (chunk[1] as char).to_digit(16)?;
        out[i] = (hi * 16 + lo) as u8;
    }
    Some(out)
}

/// The credential a request presents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presented {
    /// Nothing.
    Missing,
    /// Something that is not a usable credential (wrong scheme, bad characters).
    Malformed,
    /// A bearer/token value.
    Value(String),
}

/// Reads `Authorization: Bearer <v>` (or `token <v>`, scheme case-insensitive), else
/// `?api_key=` when `allow_query` is on.
pub fn presented(
    headers: &HeaderMap,
    query: Option<&str>,
    allow_query: bool,
    allow_token_scheme: bool,
) -> Presented {
    if let Some(v) = headers.get(axum::http::header::AUTHORIZATION) {
        let Ok(v) = v.to_str() else {
            return Presented::Malformed;
        };
        let Some((scheme, value)) = v.trim().split_once(' ') else {
            return Presented::Malformed;
        };
        let scheme = scheme.to_ascii_lowercase();
        let value = value.trim();
        let ok_scheme = scheme == "bearer" || (allow_token_scheme && scheme == "token");
        if !ok_scheme || value.is_empty() || !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Presented::Malformed;
        }
        return Presented::Value(value.to_string());
    }
    if allow_query {
        if let Some(q) = query {
            for pair in q.split('&') {
                if let Some(v) = pair.strip_prefix("api_key=") {
                    let v = percent_encoding::percent_decode_str(v)
                        .decode_utf8_lossy()
                        .into_owned();
                    return if v.is_empty() {
                        Presented::Malformed
                    } else {
                        Presented::Value(v)
                    };
                }
            }
        }
    }
    Presented::Missing
}

/// Cache of verified Gitea tokens: hash of the token → user login.
#[derive(Debug)]
pub struct TokenCache {
    ttl: Duration,
    entries: Mutex<HashMap<String, (String, Instant)>>,
}

/// Most tokens remembered at once (a bound on memory under a flood of random tokens).
const TOKEN_CACHE_MAX: usize = 10_000;

/// Why a pass-through token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenCheck {
    /// Gitea accepted it; the user's login.
    User(String),
    /// Gitea refused it.
    Invalid,
    /// Gitea could not be asked.
    Unavailable(String),
}

impl TokenCache {
    /// A cache keeping answers for `ttl`.
    pub fn new(ttl: Duration) -> TokenCache {
        TokenCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Verifies `token` against `GET /api/v1/user` (cached here, and in the shared store so
    /// that the other replicas need not ask Gitea again; both keep only hashes of tokens).
    pub async fn verify(&self, client: &GiteaClient, store: &Store, token: &str) -> TokenCheck {
        let key = sha256_hex(token.as_bytes());
        let now = Instant::now();
        if let Some((login, at)) = self
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            if now.duration_since(*at) < self.ttl {
                return TokenCheck::User(login.clone());
            }
        }
        if let Some(login) = store.cached(STORE_USE, &key).await {
            self.remember(key, &login, now);
            return TokenCheck::User(login);
        }
        let secret = Secret::new(token);
        match client
            .get_bytes("/api/v1/user", Some(&secret), crate::exec::SMALL_READ_LIMIT)
            .await
        {
            Ok(bytes) => {
                let login = serde_json::from_slice::<serde_json::Value>(&bytes)
                    .ok()
                    .and_then(|v| v.get("login").and_then(|l| l.as_str()).map(str::to_string));
                let Some(login) = login else {
                    return TokenCheck::Unavailable("Gitea answered /user without a login".into());
                };
                store.cache(STORE_USE, &key, &login, self.ttl).await;
                self.remember(key, &login, now);
                TokenCheck::User(login)
            }
            Err(crate::gitea::Error::Status {
                status: 401 | 403, ..
            }) => TokenCheck::Invalid,
            Err(e) => TokenCheck::Unavailable(e.to_string()),
        }
    }
}

impl TokenCache {
    fn remember(&self, key: String, login: &str, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= TOKEN_CACHE_MAX {
            let ttl = self.ttl;
            entries.retain(|_, (_, at)| now.duration_since(*at) < ttl);
            if entries.len() >= TOKEN_CACHE_MAX {
                entries.clear();
            }
        }
        entries.insert(key, (login.to_string(), now));
    }
}

/// The shared store's name for verified tokens.
const STORE_USE: &str = "token";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_file_parses_and_checks() {
        let text = format!(
            "# team keys\n{}\n{}  # no label\n",
            key_line("s3cret-a", "ci-bot"),
            sha256_hex(b"s3cret-b")
        );
        let keys = ApiKeys::parse(&text).unwrap();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys.check("s3cret-a"), Some("ci-bot"));
        assert!(keys.check("s3cret-b").unwrap().starts_with("key-"));
        assert_eq!(keys.check("s3cret-c"), None);
        assert_eq!(keys.check(""), None);
        let err = ApiKeys::parse("not-a-hash label\n").unwrap_err();
        assert!(err.starts_with("line 1:"), "{err}");
        assert!(ApiKeys::parse("# nothing\n").is_err());
    }

    #[test]
    fn credentials_are_read_from_the_header_or_when_allowed_the_query() {
        let mut h = HeaderMap::new();
        assert_eq!(
            presented(&h, Some("api_key=k"), false, false),
            Presented::Missing
        );
        assert_eq!(
            presented(&h, Some("x=1&api_key=k%21"), true, false),
            Presented::Value("k!".into())
        );
        h.insert("authorization", "BEARER abc".parse().unwrap());
        assert_eq!(
            presented(&h, None, false, false),
            Presented::Value("abc".into())
        );
        h.insert("authorization", "token abc".parse().unwrap());
        assert_eq!(presented(&h, None, false, false), Presented::Malformed);
        assert_eq!(
            presented(&h, None, false, true),
            Presented::Value("abc".into())
        );
        h.insert("authorization", "Basic".parse().unwrap());
        assert_eq!(presented(&h, None, false, true), Presented::Malformed);
    }
}

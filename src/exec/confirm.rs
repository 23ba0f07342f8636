//! Confirmation of destructive calls: a one-use token bound to the caller, the action and its
//! exact arguments, valid for a few minutes.
//!
//! A token has exactly one spelling: `c<expiry>.<nonce>.<mac>` with a 10-digit expiry (Unix
//! seconds), a 16-hex-digit random nonce and a 32-hex-digit HMAC-SHA256 tag (truncated to 128
//! bits) over the digest of the call, the expiry and the nonce. Anything else is refused before
//! any state is touched; the tag is checked (in constant time) before the one-use record is, so
//! forged tokens cost no memory; one use is recorded by nonce, so no other spelling of the same
//! token can be redeemed again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::digest::sha256_hex;
use crate::store::Store;

type HmacSha256 = Hmac<Sha256>;

/// Length of the expiry field (Unix seconds, no leading zero).
const EXPIRY_DIGITS: usize = 10;
/// Random bytes in a nonce (16 hex digits).
const NONCE_BYTES: usize = 8;
/// Bytes of the HMAC tag kept (32 hex digits).
const TAG_BYTES: usize = 16;
/// The length of every token: `c` + expiry + `.` + nonce + `.` + tag.
pub const TOKEN_LEN: usize = 1 + EXPIRY_DIGITS + 1 + 2 * NONCE_BYTES + 1 + 2 * TAG_BYTES;

/// Why a confirmation token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfirmError {
    /// Not a token this server issues (wrong shape or spelling).
    #[error("the confirmation token is malformed: use the exact token from the preview")]
    Malformed,
    /// Already redeemed.
    #[error("the confirmation token was already used")]
    Used,
    /// The token was issued for another caller, action or arguments (or forged).
    #[error(
        "the confirmation token was issued for a different call (another caller, action or arguments)"
    )]
    Mismatch,
    /// The token is too old.
    #[error("the confirmation token has expired")]
    Expired,
}

/// A token's fields, parsed strictly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parsed {
    expiry: u64,
    nonce: [u8; NONCE_BYTES],
    tag: [u8; TAG_BYTES],
}

/// Parses the one canonical spelling of a token; `None` for anything else.
fn parse(token: &str) -> Option<Parsed> {
    let b = token.as_bytes();
    if b.len() != TOKEN_LEN || b[0] != b'c' {
        return None;
    }
    let expiry = &b[1..1 + EXPIRY_DIGITS];
    let dot1 = 1 + EXPIRY_DIGITS;
    let nonce_at = dot1 + 1;
    let dot2 = nonce_at + 2 * NONCE_BYTES;
    let tag_at = dot2 + 1;
    if b[dot1] != b'.' || b[dot2] != b'.' {
        return None;
    }
    if expiry[0] == b'0' || !expiry.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let expiry = std::str::from_utf8(expiry).ok()?.parse().ok()?;
    Some(Parsed {
        expiry,
        nonce: lower_hex(&b[nonce_at..dot2])?,
        tag: lower_hex(&b[tag_at..])?,
    })
}

/// Decodes lower-case hex (upper case is another spelling, hence refused).
fn lower_hex<const N: usize>(s: &[u8]) -> Option<[u8; N]> {
    if s.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in s.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Issues and redeems confirmation tokens.
///
/// Tokens are verifiable without storage (the tag); one use is enforced by claiming the nonce
/// until the token expires: in the shared [`Store`] for a server (memory, or Redis so that every
/// replica sees the claim), in a small file for the one-shot CLI, whose key derives from the
/// configured credentials so that a later process can verify it.
pub struct Confirmations {
    ttl: Duration,
    keys: Mutex<KeyRing>,
    used: Used,
}

enum Used {
    /// Claimed in the shared store.
    Store(Arc<Store>),
    /// Remembered in a file (the CLI).
    File {
        path: PathBuf,
        memory: Mutex<HashMap<[u8; NONCE_BYTES], u64>>,
    },
}

impl std::fmt::Debug for Confirmations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let used = match &self.used {
            Used::Store(s) => format!("store ({})", s.kind().as_str()),
            Used::File { path, .. } => path.display().to_string(),
        };
        f.debug_struct("Confirmations")
            .field("ttl", &self.ttl)
            .field("used", &used)
            .finish_non_exhaustive()
    }
}

/// The operating system's random number generator failed (no token can be issued safely).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the operating system's random number generator failed: {0}")]
pub struct RandomError(String);

/// Why no confirmation can be issued or recorded: the call is refused (fail closed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// No random nonce could be drawn.
    #[error(transparent)]
    Random(#[from] RandomError),
    /// The one-use record could not be written to the shared store.
    #[error(transparent)]
    Store(#[from] crate::store::Error),
}

fn random<const N: usize>() -> Result<[u8; N], RandomError> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| RandomError(e.to_string()))?;
    Ok(out)
}

/// A confirmation key derived from a secret (a key file's line, or the CLI's credentials).
fn derive_key(material: &str) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(b"aegis-gitea-mcp confirmation key v1")
        .expect("HMAC takes a key of any length");
    mac.update(material.as_bytes());
    mac.finalize().into_bytes().into()
}

/// The shortest secret accepted in a key file (e.g. `openssl rand -hex 32` gives 64).
pub const MIN_KEY_CHARS: usize = 32;

/// Errors reading `CONFIRM_KEY_FILE`.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// The file cannot be read.
    #[error("CONFIRM_KEY_FILE (--confirm-key-file) {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no usable secret.
    #[error(
        "CONFIRM_KEY_FILE (--confirm-key-file) {path}: {why}; write one secret of at least {MIN_KEY_CHARS} characters per line (e.g. `openssl rand -hex 32`), the first signs, the others are still accepted"
    )]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong (never the secret itself).
        why: String,
    },
}

/// Parses a key file: one secret per line (blank lines and `#` comments ignored).
fn parse_key_file(path: &std::path::Path, text: &str) -> Result<Vec<[u8; 32]>, KeyFileError> {
    let mut keys = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.chars().count() < MIN_KEY_CHARS {
            return Err(KeyFileError::Invalid {
                path: path.display().to_string(),
                why: format!("line {} is shorter than {MIN_KEY_CHARS} characters", i + 1),
            });
        }
        keys.push(derive_key(line));
    }
    if keys.is_empty() {
        return Err(KeyFileError::Invalid {
            path: path.display().to_string(),
            why: "it holds no secret".into(),
        });
    }
    Ok(keys)
}

/// The keys tokens are signed and checked with.
struct KeyRing {
    /// Signs new tokens (and checks them).
    signing: [u8; 32],
    /// The key file's other lines: still accepted.
    accepted: Vec<[u8; 32]>,
    /// Keys replaced while running, accepted until the expiry given (one TTL after the change),
    /// so tokens issued just before a rotation stay redeemable.
    retired: Vec<([u8; 32], u64)>,
    /// The key file and the digest of the text last loaded from it.
    file: Option<(PathBuf, String)>,
}

impl KeyRing {
    fn fixed(key: [u8; 32]) -> KeyRing {
        KeyRing {
            signing: key,
            accepted: Vec::new(),
            retired: Vec::new(),
            file: None,
        }
    }

    /// Re-reads the key file when it changed; a file that cannot be read or parsed keeps the
    /// keys in use (with a warning): a bad edit must not stop confirmations.
    fn refresh(&mut self, ttl: Duration) {
        let Some((path, loaded)) = &self.file else {
            return;
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(
                    "cannot re-read CONFIRM_KEY_FILE {}: {e}; keeping the keys in use",
                    path.display()
                );
                return;
            }
        };
        let digest = crate::digest::sha256_hex(text.as_bytes());
        if &digest == loaded {
            return;
        }
        let keys = match parse_key_file(path, &text) {
            Ok(k) => k,
            Err(e) => {
                tracing::warn!("{e}; keeping the keys in use");
                return;
            }
        };
        let now = now_secs();
        let until = now + ttl.as_secs() + 1;
        self.retired.retain(|(_, u)| *u >= now);
        for old in std::iter::once(self.signing).chain(self.accepted.iter().copied()) {
            if !keys.contains(&old) {
                self.retired.push((old, until));
            }
        }
        self.signing = keys[0];
        self.accepted = keys[1..].to_vec();
        self.retired.retain(|(k, _)| !keys.contains(k));
        tracing::info!(
            keys = keys.len(),
            "CONFIRM_KEY_FILE changed: new tokens are signed with its first key; replaced keys are accepted for one TTL"
        );
        self.file = Some((path.clone(), digest));
    }

    /// Every key a token may have been signed with now.
    fn verifying(&self, now: u64) -> impl Iterator<Item = &[u8; 32]> {
        std::iter::once(&self.signing).chain(&self.accepted).chain(
            self.retired
                .iter()
                .filter(move |(_, u)| *u >= now)
                .map(|(k, _)| k),
        )
    }
}

impl Confirmations {
    /// Tokens valid for `ttl` under a random key that dies with the process; one use is
    /// claimed in `store`.
    pub fn new(ttl: Duration, store: Arc<Store>) -> Result<Confirmations, RandomError> {
        Ok(Confirmations {
            ttl,
            keys: Mutex::new(KeyRing::fixed(random()?)),
            used: Used::Store(store),
        })
    }

    /// Tokens under the keys of `path` (shared by every replica that reads the same file), one
    /// use claimed in `store`. The file is re-read when it changes: its first secret signs, the
    /// others are accepted, and a secret removed from it is accepted for one more TTL.
    pub fn from_key_file(
        ttl: Duration,
        path: &std::path::Path,
        store: Arc<Store>,
    ) -> Result<Confirmations, KeyFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyFileError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let keys = parse_key_file(path, &text)?;
        Ok(Confirmations {
            ttl,
            keys: Mutex::new(KeyRing {
                signing: keys[0],
                accepted: keys[1..].to_vec(),
                retired: Vec::new(),
                file: Some((
                    path.to_path_buf(),
                    crate::digest::sha256_hex(text.as_bytes()),
                )),
            }),
            used: Used::Store(store),
        })
    }

    /// Tokens that a later process with the same `key_material` can redeem once; redeemed
    /// nonces are remembered in `used_file`.
    pub fn persistent(ttl: Duration, key_material: &str, used_file: PathBuf) -> Confirmations {
        Confirmations {
            ttl,
            keys: Mutex::new(KeyRing::fixed(derive_key(key_material))),
            used: Used::File {
                path: used_file,
                memory: Mutex::new(HashMap::new()),
            },
        }
    }

    /// How long a token stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, KeyRing> {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        keys.refresh(self.ttl);
        keys
    }

    /// Issues a token for `digest` (see [`digest`]).
    pub fn issue(&self, digest: &str) -> Result<String, RandomError> {
        let nonce: [u8; NONCE_BYTES] = random()?;
        let expiry = now_secs() + self.ttl.as_secs();
        let tag = tag(&self.keys().signing, digest, expiry, &nonce);
        Ok(format!("c{expiry}.{}.{}", hex(&nonce), hex(&tag)))
    }

    /// Redeems `token` for `digest`. Checks, in this order: the spelling, the tag (nothing is
    /// stored for a token this server did not issue for this call), the expiry, one use. A
    /// shared store that cannot record the use refuses the token without consuming it.
    pub async fn redeem(&self, token: &str, digest: &str) -> Result<(), Redeem> {
        let parsed = parse(token.trim()).ok_or(ConfirmError::Malformed)?;
        let now = now_secs();
        let signed = self.keys().verifying(now).any(|key| {
            bool::from(tag(key, digest, parsed.expiry, &parsed.nonce).ct_eq(&parsed.tag))
        });
        if !signed {
            return Err(ConfirmError::Mismatch.into());
        }
        if parsed.expiry < now {
            return Err(ConfirmError::Expired.into());
        }
        match &self.used {
            Used::Store(store) => {
                let left = Duration::from_secs(parsed.expiry - now + 1);
                match store.claim_once("confirm", &hex(&parsed.nonce), left).await {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(ConfirmError::Used.into()),
                    Err(e) => Err(Redeem::Unavailable(Unavailable::Store(e))),
                }
            }
            Used::File { path, memory } => {
                let mut used = memory.lock().unwrap_or_else(|e| e.into_inner());
                load_used(path, &mut used, now);
                if used.contains_key(&parsed.nonce) {
                    return Err(ConfirmError::Used.into());
                }
                used.insert(parsed.nonce, parsed.expiry);
                store_used(path, &used);
                Ok(())
            }
        }
    }

    /// How many redeemed nonces this process remembers (for tests of the memory bound).
    pub fn remembered(&self) -> usize {
        match &self.used {
            Used::Store(s) => s.claims_in_memory(),
            Used::File { memory, .. } => memory.lock().unwrap_or_else(|e| e.into_inner()).len(),
        }
    }
}

/// Why a token was not redeemed: refused, or the one-use record could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Redeem {
    /// The token is not accepted.
    #[error(transparent)]
    Refused(#[from] ConfirmError),
    /// The token may be good, but its use cannot be recorded: refused without consuming it.
    #[error(transparent)]
    Unavailable(Unavailable),
}

fn tag(key: &[u8; 32], digest: &str, expiry: u64, nonce: &[u8; NONCE_BYTES]) -> [u8; TAG_BYTES] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(format!("v1\n{digest}\n{expiry}\n").as_bytes());
    mac.update(nonce);
    let full = mac.finalize().into_bytes();
    let mut out = [0u8; TAG_BYTES];
    out.copy_from_slice(&full[..TAG_BYTES]);
    out
}

fn load_used(file: &std::path::Path, used: &mut HashMap<[u8; NONCE_BYTES], u64>, now: u64) {
    if let Ok(text) = std::fs::read_to_string(file) {
        for line in text.lines() {
            let Some((n, e)) = line.split_once(' ') else {
                continue;
            };
            if let (Some(n), Ok(e)) = (lower_hex(n.as_bytes()), e.parse::<u64>()) {
                used.insert(n, e);
            }
        }
    }
    used.retain(|_, e| *e >= now);
}

fn store_used(file: &std::path::Path, used: &HashMap<[u8; NONCE_BYTES], u64>) {
    let text: String = used
        .iter()
        .map(|(n, e)| format!("{} {e}\n", hex(n)))
        .collect();
    if let Err(e) = std::fs::write(file, text) {
        tracing::warn!(
            "cannot record a used confirmation token in {}: {e}",
            file.display()
        );
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A digest of who calls which action with which arguments, independent of key order.
pub fn digest(principal: &str, action: &str, args: &Map<String, Value>) -> String {
    let mut canonical = String::new();
    write_object(args, &mut canonical);
    // The principal is length-prefixed so that no choice of names can shift the boundaries.
    sha256_hex(format!("{}:{principal}\n{action}\n{canonical}", principal.len()).as_bytes())
}

/// A digest of arguments alone (audit records), independent of key order.
pub fn args_digest(tool: &str, args: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(args, &mut canonical);
    sha256_hex(format!("{tool}\n{canonical}").as_bytes())
}

fn write_object(m: &Map<String, Value>, out: &mut String) {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    out.push('{');
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String(k.clone()).to_string());
        out.push(':');
        write_canonical(&m[k], out);
    }
    out.push('}');
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => write_object(m, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn store() -> Confirmations {
        Confirmations::new(Duration::from_secs(60), Arc::new(Store::memory())).unwrap()
    }

    /// Runs a future to completion (for the property tests).
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[tokio::test]
    async fn tokens_are_bound_one_use_and_expire() {
        let c = store();
        let d = digest(
            "local",
            "gitea_repo_delete",
            &obj(json!({"owner": "a", "repo": "b"})),
        );
        assert_eq!(
            d,
            digest(
                "local",
                "gitea_repo_delete",
                &obj(json!({"repo": "b", "owner": "a"}))
            ),
            "key order does not matter"
        );
        let t = c.issue(&d).unwrap();
        assert_eq!(t.len(), TOKEN_LEN);
        assert_eq!(c.redeem(&t, &d).await, Ok(()));
        assert_eq!(
            c.redeem(&t, &d).await,
            Err(Redeem::Refused(ConfirmError::Used)),
            "one use"
        );
        let t = c.issue(&d).unwrap();
        let other = digest(
            "local",
            "gitea_repo_delete",
            &obj(json!({"owner": "a", "repo": "c"})),
        );
        assert_eq!(
            c.redeem(&t, &other).await,
            Err(Redeem::Refused(ConfirmError::Mismatch))
        );
        assert_eq!(
            c.redeem(&t, &d).await,
            Ok(()),
            "a wrong attempt stores nothing"
        );
        assert_ne!(
            c.issue(&d).unwrap(),
            c.issue(&d).unwrap(),
            "tokens are unique"
        );
        // Another caller cannot redeem it.
        let t = c.issue(&d).unwrap();
        let mallory = digest(
            "mallory",
            "gitea_repo_delete",
            &obj(json!({"owner": "a", "repo": "b"})),
        );
        assert_eq!(
            c.redeem(&t, &mallory).await,
            Err(Redeem::Refused(ConfirmError::Mismatch))
        );
        // A forged tag and garbage are refused.
        let forged = format!("{}0000", &t[..t.len() - 4]);
        assert_eq!(
            c.redeem(&forged, &d).await,
            Err(Redeem::Refused(ConfirmError::Mismatch))
        );
        assert_eq!(
            c.redeem("confirm-123", &d).await,
            Err(Redeem::Refused(ConfirmError::Malformed))
        );
        // Another key cannot redeem it.
        assert_eq!(
            store().redeem(&t, &d).await,
            Err(Redeem::Refused(ConfirmError::Mismatch))
        );
    }

    #[tokio::test]
    async fn an_expired_token_is_refused() {
        let c = Confirmations::new(Duration::ZERO, Arc::new(Store::memory())).unwrap();
        let d = digest("local", "x", &Map::new());
        // Expiry = now: valid this second at most; a token from a second ago is expired.
        let nonce = [7u8; NONCE_BYTES];
        let expiry = now_secs() - 1;
        let t = format!(
            "c{expiry}.{}.{}",
            hex(&nonce),
            hex(&tag(&c.keys().signing, &d, expiry, &nonce))
        );
        assert_eq!(
            c.redeem(&t, &d).await,
            Err(Redeem::Refused(ConfirmError::Expired))
        );
    }

    #[tokio::test]
    async fn other_spellings_of_a_token_are_refused_before_any_state() {
        let c = store();
        let d = digest("local", "gitea_repo_delete", &obj(json!({"owner": "a"})));
        let t = c.issue(&d).unwrap();
        let (expiry, rest) = t[1..].split_once('.').unwrap();
        let spellings = [
            format!("c0{expiry}.{rest}"),
            format!("c00{expiry}.{rest}"),
            format!("c+{expiry}.{rest}"),
            format!("c {expiry}.{rest}"),
            format!("C{expiry}.{rest}"),
            t.to_uppercase(),
            format!("{t}0"),
            format!("{t}."),
            t.replacen('.', "..", 1),
        ];
        for s in &spellings {
            assert_eq!(
                c.redeem(s, &d).await,
                Err(Redeem::Refused(ConfirmError::Malformed)),
                "{s}"
            );
        }
        assert_eq!(c.remembered(), 0, "nothing stored for refused spellings");
        assert_eq!(c.redeem(&t, &d).await, Ok(()));
        for s in &spellings {
            assert!(c.redeem(s, &d).await.is_err(), "{s}");
        }
        assert_eq!(c.remembered(), 1);
    }

    #[tokio::test]
    async fn forged_tokens_cost_no_memory() {
        let c = store();
        let d = digest("local", "x", &Map::new());
        for i in 0..1000u64 {
            let forged = format!("c{}.{:016x}.{:032x}", now_secs() + 100_000 + i, i, i);
            assert_eq!(
                c.redeem(&forged, &d).await,
                Err(Redeem::Refused(ConfirmError::Mismatch))
            );
        }
        assert_eq!(c.remembered(), 0);
    }

    #[tokio::test]
    async fn persistent_tokens_work_across_instances_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("used");
        let d = digest("local", "gitea_repo_delete", &obj(json!({"owner": "a"})));
        let first = Confirmations::persistent(Duration::from_secs(60), "url+token", file.clone());
        let t = first.issue(&d).unwrap();
        let second = Confirmations::persistent(Duration::from_secs(60), "url+token", file.clone());
        assert_eq!(second.redeem(&t, &d).await, Ok(()));
        let third = Confirmations::persistent(Duration::from_secs(60), "url+token", file.clone());
        assert_eq!(
            third.redeem(&t, &d).await,
            Err(Redeem::Refused(ConfirmError::Used)),
            "one use across processes"
        );
        let other = Confirmations::persistent(Duration::from_secs(60), "other", file);
        assert_eq!(
            other.redeem(&t, &d).await,
            Err(Redeem::Refused(ConfirmError::Mismatch))
        );
    }

    #[tokio::test]
    async fn replicas_sharing_a_key_file_and_a_store_redeem_each_others_tokens_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("confirm.key");
        std::fs::write(&file, format!("# shared\n{}\n", "a".repeat(40))).unwrap();
        let shared = Arc::new(Store::memory());
        let ttl = Duration::from_secs(60);
        let a = Confirmations::from_key_file(ttl, &file, shared.clone()).unwrap();
        let b = Confirmations::from_key_file(ttl, &file, shared).unwrap();
        let d = digest("alice", "gitea_repo_delete", &obj(json!({"owner": "a"})));
        let t = a.issue(&d).unwrap();
        assert_eq!(b.redeem(&t, &d).await, Ok(()));
        assert_eq!(
            a.redeem(&t, &d).await,
            Err(Redeem::Refused(ConfirmError::Used))
        );
        // A replica with its own random key cannot.
        let c = store();
        assert_eq!(
            c.redeem(&a.issue(&d).unwrap(), &d).await,
            Err(Redeem::Refused(ConfirmError::Mismatch))
        );
    }

    #[tokio::test]
    async fn a_rotated_key_is_accepted_for_one_ttl_and_new_tokens_use_the_new_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("confirm.key");
        let (old, new) = ("o".repeat(32), "n".repeat(32));
        std::fs::write(&file, &old).unwrap();
        let a =
            Confirmations::from_key_file(Duration::from_secs(60), &file, Arc::new(Store::memory()))
                .unwrap();
        let d = digest("alice", "x", &Map::new());
        let before = a.issue(&d).unwrap();
        std::fs::write(&file, &new).unwrap();
        let after = a.issue(&d).unwrap();
        assert_eq!(
            a.redeem(&before, &d).await,
            Ok(()),
            "the replaced key is still accepted"
        );
        // A replica that only knows the new key accepts the new token, not the old one.
        let b =
            Confirmations::from_key_file(Duration::from_secs(60), &file, Arc::new(Store::memory()))
                .unwrap();
        assert_eq!(b.redeem(&after, &d).await, Ok(()));
        let older = {
            std::fs::write(&file, &old).unwrap();
            let o = Confirmations::from_key_file(
                Duration::from_secs(60),
                &file,
                Arc::new(Store::memory()),
            )
            .unwrap();
            o.issue(&d).unwrap()
        };
        std::fs::write(&file, &new).unwrap();
        assert_eq!(
            b.redeem(&older, &d).await,
            Err(Redeem::Refused(ConfirmError::Mismatch))
        );
        // A replaced key whose TTL has passed is no longer accepted.
        let z =
            Confirmations::from_key_file(Duration::ZERO, &file, Arc::new(Store::memory())).unwrap();
        std::fs::write(&file, &old).unwrap();
        let _ = z.issue(&d).unwrap();
        let ring = z.keys();
        let now = now_secs() + 2;
        assert_eq!(
            ring.verifying(now).count(),
            1,
            "only the signing key after one TTL"
        );
    }

    #[tokio::test]
    async fn a_bad_key_file_is_refused_at_start_and_kept_through_a_bad_edit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("confirm.key");
        for (text, why) in [("", "no secret"), ("short\n", "shorter than 32")] {
            std::fs::write(&file, text).unwrap();
            let e = Confirmations::from_key_file(
                Duration::from_secs(60),
                &file,
                Arc::new(Store::memory()),
            )
            .unwrap_err();
            assert!(e.to_string().contains(why), "{e}");
            assert!(!e.to_string().contains("short\n"));
        }
        let missing = Confirmations::from_key_file(
            Duration::from_secs(60),
            &dir.path().join("nope"),
            Arc::new(Store::memory()),
        )
        .unwrap_err();
        assert!(
            missing.to_string().contains("CONFIRM_KEY_FILE"),
            "{missing}"
        );
        std::fs::write(&file, "k".repeat(32)).unwrap();
        let a =
            Confirmations::from_key_file(Duration::from_secs(60), &file, Arc::new(Store::memory()))
                .unwrap();
        let d = digest("alice", "x", &Map::new());
        let t = a.issue(&d).unwrap();
        std::fs::write(&file, "oops").unwrap();
        assert_eq!(
            a.redeem(&t, &d).await,
            Ok(()),
            "a bad edit keeps the keys in use"
        );
        std::fs::remove_file(&file).unwrap();
        assert!(a.issue(&d).is_ok(), "so does a removed file");
    }

    #[tokio::test]
    async fn a_store_that_cannot_record_the_use_refuses_without_consuming_the_token() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let down = Arc::new(
            Store::redis(
                &crate::config::Secret::new(format!("redis://127.0.0.1:{port}")),
                "t",
                None,
            )
            .unwrap(),
        );
        let c = Confirmations::new(Duration::from_secs(60), down).unwrap();
        let d = digest("alice", "x", &Map::new());
        let t = c.issue(&d).unwrap();
        assert!(matches!(
            c.redeem(&t, &d).await,
            Err(Redeem::Unavailable(Unavailable::Store(_)))
        ));
        // Forged tokens are still refused before the store is asked.
        assert_eq!(
            c.redeem(&format!("{}0000", &t[..t.len() - 4]), &d).await,
            Err(Redeem::Refused(ConfirmError::Mismatch))
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(256)))]

        /// Any string is either refused or is the one token issued; nothing panics, and a
        /// refused string stores nothing.
        #[test]
        fn arbitrary_strings_never_redeem(s in "\\PC{0,80}") {
            let c = store();
            let d = digest("local", "x", &Map::new());
            prop_assert!(block_on(c.redeem(&s, &d)).is_err());
            prop_assert_eq!(c.remembered(), 0);
        }

        /// Mutating one byte of a valid token never yields another redeemable token.
        #[test]
        fn one_byte_mutations_never_redeem(i in 0usize..TOKEN_LEN, b in any::<u8>()) {
            let c = store();
            let d = digest("local", "x", &Map::new());
            let t = c.issue(&d).unwrap();
            let mut bytes = t.clone().into_bytes();
            prop_assume!(bytes[i] != b);
            bytes[i] = b;
            let mutated = String::from_utf8_lossy(&bytes).into_owned();
            prop_assert!(block_on(c.redeem(&mutated, &d)).is_err());
            prop_assert_eq!(block_on(c.redeem(&t, &d)), Ok(()));
        }
    }
}

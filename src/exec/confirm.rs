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
use std::sync::Mutex;
use std::time::Duration;

use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::digest::sha256_hex;

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
/// Tokens are verifiable without storage (the tag); one use is enforced by remembering redeemed
/// nonces until their tokens expire: in memory for a server, in a small file for the one-shot
/// CLI, whose key derives from the configured credentials so that a later process can verify it.
pub struct Confirmations {
    ttl: Duration,
    key: [u8; 32],
    used: Mutex<HashMap<[u8; NONCE_BYTES], u64>>,
    used_file: Option<PathBuf>,
}

impl std::fmt::Debug for Confirmations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confirmations")
            .field("ttl", &self.ttl)
            .field("used_file", &self.used_file)
            .finish_non_exhaustive()
    }
}

/// The operating system's random number generator failed (no token can be issued safely).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the operating system's random number generator failed: {0}")]
pub struct RandomError(String);

fn random<const N: usize>() -> Result<[u8; N], RandomError> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| RandomError(e.to_string()))?;
    Ok(out)
}

impl Confirmations {
    /// Tokens valid for `ttl`, under a random key that dies with the process.
    pub fn new(ttl: Duration) -> Result<Confirmations, RandomError> {
        Ok(Confirmations {
            ttl,
            key: random()?,
            used: Mutex::new(HashMap::new()),
            used_file: None,
        })
    }

    /// Tokens that a later process with the same `key_material` can redeem once; redeemed
    /// nonces are remembered in `used_file`.
    pub fn persistent(ttl: Duration, key_material: &str, used_file: PathBuf) -> Confirmations {
        let mut mac = HmacSha256::new_from_slice(b"aegis-gitea-mcp confirmation key v1")
            .expect("HMAC takes a key of any length");
        mac.update(key_material.as_bytes());
        Confirmations {
            ttl,
            key: mac.finalize().into_bytes().into(),
            used: Mutex::new(HashMap::new()),
            used_file: Some(used_file),
        }
    }

    /// How long a token stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Issues a token for `digest` (see [`digest`]).
    pub fn issue(&self, digest: &str) -> Result<String, RandomError> {
        let nonce: [u8; NONCE_BYTES] = random()?;
        let expiry = now_secs() + self.ttl.as_secs();
        let tag = self.tag(digest, expiry, &nonce);
        Ok(format!("c{expiry}.{}.{}", hex(&nonce), hex(&tag)))
    }

    fn tag(&self, digest: &str, expiry: u64, nonce: &[u8; NONCE_BYTES]) -> [u8; TAG_BYTES] {
        let mut mac =
            HmacSha256::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        mac.update(format!("v1\n{digest}\n{expiry}\n").as_bytes());
        mac.update(nonce);
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&full[..TAG_BYTES]);
        tag
    }

    /// Redeems `token` for `digest`. Checks, in this order: the spelling, the tag (nothing is
    /// stored for a token this server did not issue for this call), the expiry, one use.
    pub fn redeem(&self, token: &str, digest: &str) -> Result<(), ConfirmError> {
        let parsed = parse(token.trim()).ok_or(ConfirmError::Malformed)?;
        let expected = self.tag(digest, parsed.expiry, &parsed.nonce);
        if !bool::from(expected.ct_eq(&parsed.tag)) {
            return Err(ConfirmError::Mismatch);
        }
        let now = now_secs();
        if parsed.expiry < now {
            return Err(ConfirmError::Expired);
        }
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        self.load_used(&mut used, now);
        if used.contains_key(&parsed.nonce) {
            return Err(ConfirmError::Used);
        }
        used.insert(parsed.nonce, parsed.expiry);
        self.store_used(&used);
        Ok(())
    }

    fn load_used(&self, used: &mut HashMap<[u8; NONCE_BYTES], u64>, now: u64) {
        if let Some(text) = self
            .used_file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
        {
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

    fn store_used(&self, used: &HashMap<[u8; NONCE_BYTES], u64>) {
        if let Some(file) = &self.used_file {
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
    }

    /// How many redeemed nonces are remembered (for tests of the memory bound).
    pub fn remembered(&self) -> usize {
        self.used.lock().unwrap_or_else(|e| e.into_inner()).len()
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
        Confirmations::new(Duration::from_secs(60)).unwrap()
    }

    #[test]
    fn tokens_are_bound_one_use_and_expire() {
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
        assert_eq!(c.redeem(&t, &d), Ok(()));
        assert_eq!(c.redeem(&t, &d), Err(ConfirmError::Used), "one use");
        let t = c.issue(&d).unwrap();
        let other = digest(
            "local",
            "gitea_repo_delete",
            &obj(json!({"owner": "a", "repo": "c"})),
        );
        assert_eq!(c.redeem(&t, &other), Err(ConfirmError::Mismatch));
        assert_eq!(c.redeem(&t, &d), Ok(()), "a wrong attempt stores nothing");
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
        assert_eq!(c.redeem(&t, &mallory), Err(ConfirmError::Mismatch));
        // A forged tag and garbage are refused.
        let forged = format!("{}0000", &t[..t.len() - 4]);
        assert_eq!(c.redeem(&forged, &d), Err(ConfirmError::Mismatch));
        assert_eq!(c.redeem("confirm-123", &d), Err(ConfirmError::Malformed));
        // Another key cannot redeem it.
        assert_eq!(store().redeem(&t, &d), Err(ConfirmError::Mismatch));
    }

    #[test]
    fn an_expired_token_is_refused() {
        let c = Confirmations::new(Duration::ZERO).unwrap();
        let d = digest("local", "x", &Map::new());
        // Expiry = now: valid this second at most; a token from a second ago is expired.
        let nonce = [7u8; NONCE_BYTES];
        let expiry = now_secs() - 1;
        let t = format!(
            "c{expiry}.{}.{}",
            hex(&nonce),
            hex(&c.tag(&d, expiry, &nonce))
        );
        assert_eq!(c.redeem(&t, &d), Err(ConfirmError::Expired));
    }

    #[test]
    fn other_spellings_of_a_token_are_refused_before_any_state() {
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
            assert_eq!(c.redeem(s, &d), Err(ConfirmError::Malformed), "{s}");
        }
        assert_eq!(c.remembered(), 0, "nothing stored for refused spellings");
        assert_eq!(c.redeem(&t, &d), Ok(()));
        for s in &spellings {
            assert!(c.redeem(s, &d).is_err(), "{s}");
        }
        assert_eq!(c.remembered(), 1);
    }

    #[test]
    fn forged_tokens_cost_no_memory() {
        let c = store();
        let d = digest("local", "x", &Map::new());
        for i in 0..1000u64 {
            let forged = format!("c{}.{:016x}.{:032x}", now_secs() + 100_000 + i, i, i);
            assert_eq!(c.redeem(&forged, &d), Err(ConfirmError::Mismatch));
        }
        assert_eq!(c.remembered(), 0);
    }

    #[test]
    fn persistent_tokens_work_across_instances_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("used");
        let d = digest("local", "gitea_repo_delete", &obj(json!({"owner": "a"})));
        let first = Confirmations::persistent(Duration::from_secs(60), "url+token", file.clone());
        let t = first.issue(&d).unwrap();
        let second = Confirmations::persistent(Duration::from_secs(60), "url+token", file.clone());
        assert_eq!(second.redeem(&t, &d), Ok(()));
        let third = Confirmations::persistent(Duration::from_secs(60), "url+token", file.clone());
        assert_eq!(
            third.redeem(&t, &d),
            Err(ConfirmError::Used),
            "one use across processes"
        );
        let other = Confirmations::persistent(Duration::from_secs(60), "other", file);
        assert_eq!(other.redeem(&t, &d), Err(ConfirmError::Mismatch));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(256)))]

        /// Any string is either refused or is the one token issued; nothing panics, and a
        /// refused string stores nothing.
        #[test]
        fn arbitrary_strings_never_redeem(s in "\\PC{0,80}") {
            let c = store();
            let d = digest("local", "x", &Map::new());
            prop_assert!(c.redeem(&s, &d).is_err());
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
            prop_assert!(c.redeem(&mutated, &d).is_err());
            prop_assert_eq!(c.redeem(&t, &d), Ok(()));
        }
    }
}

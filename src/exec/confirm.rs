//! Confirmation of destructive calls: a one-use token bound to the action and its exact
//! arguments, valid for a few minutes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::spec::sha256_hex;

/// Why a confirmation token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfirmError {
    /// No such token (never issued, already used, or expired and pruned).
    #[error("the confirmation token is unknown, already used or expired")]
    Unknown,
    /// The token was issued for other arguments or another action.
    #[error("the confirmation token was issued for a different action or different arguments")]
    Mismatch,
    /// The token is too old.
    #[error("the confirmation token has expired")]
    Expired,
}

/// Issues and redeems confirmation tokens.
///
/// A token is `c<expiry>.<mac>`, the MAC binding the digest of the action and its exact
/// arguments to the expiry under a key. The token is therefore verifiable without storage;
/// one use is enforced by remembering redeemed tokens until they expire (in memory for a
/// server, in a small file for the one-shot CLI, whose key derives from the configured
/// credentials so that a later process can verify it).
#[derive(Debug)]
pub struct Confirmations {
    ttl: Duration,
    key: String,
    used: Mutex<HashMap<String, u64>>,
    used_file: Option<PathBuf>,
    counter: AtomicU64,
}

impl Confirmations {
    /// Tokens valid for `ttl`, under a key that dies with the process.
    pub fn new(ttl: Duration) -> Confirmations {
        let key = sha256_hex(
            format!(
                "{:?}{}{:p}",
                std::time::SystemTime::now(),
                std::process::id(),
                &ttl
            )
            .as_bytes(),
        );
        Confirmations {
            ttl,
            key,
            used: Mutex::new(HashMap::new()),
            used_file: None,
            counter: AtomicU64::new(0),
        }
    }

    /// Tokens that a later process with the same `key_material` can redeem once; redeemed
    /// tokens are remembered in `used_file`.
    pub fn persistent(ttl: Duration, key_material: &str, used_file: PathBuf) -> Confirmations {
        let key = sha256_hex(format!("aegis-gitea-mcp confirmation\n{key_material}").as_bytes());
        Confirmations {
            ttl,
            key,
            used: Mutex::new(HashMap::new()),
            used_file: Some(used_file),
            counter: AtomicU64::new(0),
        }
    }

    /// How long a token stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Issues a token for `digest` (see [`digest`]).
    pub fn issue(&self, digest: &str) -> String {
        // A counter keeps two tokens for the same call within one second distinct.
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let expiry = now_secs() + self.ttl.as_secs();
        let nonce =
            &sha256_hex(format!("{}:{n}:{:?}", self.key, std::time::SystemTime::now()).as_bytes())
                [..8];
        format!("c{expiry}.{nonce}.{}", self.mac(digest, expiry, nonce))
    }

    fn mac(&self, digest: &str, expiry: u64, nonce: &str) -> String {
        sha256_hex(format!("{}\n{digest}\n{expiry}\n{nonce}", self.key).as_bytes())[..32]
            .to_string()
    }

    /// Redeems `token` for `digest`. A token is used up by any attempt, right or wrong.
    pub fn redeem(&self, token: &str, digest: &str) -> Result<(), ConfirmError> {
        let token = token.trim();
        let mut parts = token.strip_prefix('c').unwrap_or("").splitn(3, '.');
        let (Some(expiry), Some(nonce), Some(mac)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(ConfirmError::Unknown);
        };
        let expiry: u64 = expiry.parse().map_err(|_| ConfirmError::Unknown)?;
        let now = now_secs();
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        self.load_used(&mut used, now);
        if used.contains_key(token) {
            return Err(ConfirmError::Unknown);
        }
        used.insert(token.to_string(), expiry);
        self.store_used(&used);
        if expiry < now {
            return Err(ConfirmError::Expired);
        }
        if !constant_time_eq(mac.as_bytes(), self.mac(digest, expiry, nonce).as_bytes()) {
            // Either forged or issued for other arguments; both mean "not for this call".
            return Err(ConfirmError::Mismatch);
        }
        Ok(())
    }

    fn load_used(&self, used: &mut HashMap<String, u64>, now: u64) {
        if let Some(text) = self
            .used_file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
        {
            for line in text.lines() {
                if let Some((t, e)) = line.split_once(' ') {
                    if let Ok(e) = e.parse::<u64>() {
                        used.insert(t.to_string(), e);
                    }
                }
            }
        }
        used.retain(|_, e| *e >= now);
    }

    fn store_used(&self, used: &HashMap<String, u64>) {
        if let Some(file) = &self.used_file {
            let text: String = used.iter().map(|(t, e)| format!("{t} {e}\n")).collect();
            if let Err(e) = std::fs::write(file, text) {
                tracing::warn!(
                    "cannot record a used confirmation token in {}: {e}",
                    file.display()
                );
            }
        }
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A digest of an action and its arguments, independent of key order.
pub fn digest(action: &str, args: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(args, &mut canonical);
    sha256_hex(format!("{action}\n{canonical}").as_bytes())
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
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
    use serde_json::json;

    #[test]
    fn tokens_are_bound_one_use_and_expire() {
        let c = Confirmations::new(Duration::from_secs(60));
        let d = digest("gitea_repo_delete", &json!({"owner": "a", "repo": "b"}));
        assert_eq!(
            d,
            digest("gitea_repo_delete", &json!({"repo": "b", "owner": "a"})),
            "key order does not matter"
        );
        let t = c.issue(&d);
        assert_eq!(c.redeem(&t, &d), Ok(()));
        assert_eq!(c.redeem(&t, &d), Err(ConfirmError::Unknown), "one use");
        let t = c.issue(&d);
        let other = digest("gitea_repo_delete", &json!({"owner": "a", "repo": "c"}));
        assert_eq!(c.redeem(&t, &other), Err(ConfirmError::Mismatch));
        assert_eq!(
            c.redeem(&t, &d),
            Err(ConfirmError::Unknown),
            "a wrong attempt uses the token up"
        );
        assert_ne!(c.issue(&d), c.issue(&d), "tokens are unique");
        // A forged token (right shape, wrong MAC) and garbage are refused.
        let t = c.issue(&d);
        let forged = format!("{}0000", &t[..t.len() - 4]);
        assert_eq!(c.redeem(&forged, &d), Err(ConfirmError::Mismatch));
        assert_eq!(c.redeem("confirm-123", &d), Err(ConfirmError::Unknown));
        // Expired: a token whose expiry is in the past.
        let parts: Vec<&str> = t.splitn(3, '.').collect();
        let past = format!("c1.{}.{}", parts[1], parts[2]);
        assert_eq!(c.redeem(&past, &d), Err(ConfirmError::Expired));
        // Another key cannot redeem it.
        let other_process = Confirmations::new(Duration::from_secs(60));
        let t = c.issue(&d);
        assert_eq!(other_process.redeem(&t, &d), Err(ConfirmError::Mismatch));
    }

    #[test]
    fn persistent_tokens_work_across_instances_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("used");
        let d = digest("gitea_repo_delete", &json!({"owner": "a"}));
        let first = Confirmations::persistent(Duration::from_secs(60), "url+token", file.clone());
        let t = first.issue(&d);
        let second = Confirmations::persistent(Duration::from_secs(60), "url+token", file.clone());
        assert_eq!(second.redeem(&t, &d), Ok(()));
        let third = Confirmations::persistent(Duration::from_secs(60), "url+token", file);
        assert_eq!(
            third.redeem(&t, &d),
            Err(ConfirmError::Unknown),
            "one use across processes"
        );
    }
}

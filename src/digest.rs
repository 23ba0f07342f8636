//! SHA-256 as lower-case hex: document pins, audit chains, hashed API keys and tokens, argument
//! digests. One function, below every module that needs it.

/// Hex sha256 of a byte string.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

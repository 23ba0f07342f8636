//! Where the document comes from, and the sha256 pin that guards it.

use std::path::{Path, PathBuf};

use super::Error;
use crate::digest::sha256_hex;

/// The file an operator pins with `aegis-gitea-mcp spec pin`, relative to the working directory.
pub const DEFAULT_PINNED_SPEC: &str = "spec/gitea-swagger.v1.json";

/// Where the API description is read from, in order of precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecSource {
    /// A file named by `--spec` / `GITEA_SPEC`, or the pinned `spec/gitea-swagger.v1.json`.
    File(PathBuf),
    /// The instance's own `GET {GITEA_URL}/swagger.v1.json`.
    Instance,
}

impl SpecSource {
    /// Chooses the source: an explicit file first, then the pinned file when present, else the
    /// instance.
    pub fn choose(explicit: Option<&Path>, pinned: &Path) -> SpecSource {
        match explicit {
            Some(p) => SpecSource::File(p.to_path_buf()),
            None if pinned.is_file() => SpecSource::File(pinned.to_path_buf()),
            None => SpecSource::Instance,
        }
    }

    /// A short description for logs and `doctor`.
    pub fn describe(&self) -> String {
        match self {
            SpecSource::File(p) => format!("file {}", p.display()),
            SpecSource::Instance => "the instance's /swagger.v1.json".to_string(),
        }
    }
}

/// Reads a document from disk.
pub fn read_spec_file(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Read {
        path: path.display().to_string(),
        source,
    })
}

/// The pin file that sits beside a pinned document (`<file>.sha256`).
pub fn pin_path_for(spec: &Path) -> PathBuf {
    let mut name = spec.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

/// Reads the configured pin: the `GITEA_SPEC_SHA256` value when given, else the `.sha256` file
/// beside the document, else none.
///
/// The file may be a bare digest or `sha256sum` output (`<digest>  <name>`).
pub fn read_pin(
    env_value: Option<&str>,
    spec_file: Option<&Path>,
) -> Result<Option<String>, Error> {
    if let Some(v) = env_value.map(str::trim).filter(|v| !v.is_empty()) {
        return normalise_pin(v, "GITEA_SPEC_SHA256").map(Some);
    }
    let Some(file) = spec_file.map(pin_path_for) else {
        return Ok(None);
    };
    match std::fs::read_to_string(&file) {
        Ok(text) => {
            let first = text.split_whitespace().next().unwrap_or("");
            normalise_pin(first, &file.display().to_string()).map(Some)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Read {
            path: file.display().to_string(),
            source,
        }),
    }
}

fn normalise_pin(value: &str, origin: &str) -> Result<String, Error> {
    let v = value.trim().to_ascii_lowercase();
    if v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(v)
    } else {
        Err(Error::BadPin {
            origin: origin.to_string(),
            value: value.chars().take(80).collect(),
        })
    }
}

/// Refuses `bytes` when a pin is configured and differs from their sha256. Returns the hash.
pub fn verify_pin(bytes: &[u8], pin: Option<&str>) -> Result<String, Error> {
    let actual = sha256_hex(bytes);
    match pin {
        Some(expected) if expected != actual => Err(Error::PinMismatch {
            expected: expected.to_string(),
            actual,
        }),
        _ => Ok(actual),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_file_wins_then_pinned_then_instance() {
        let dir = tempfile::tempdir().unwrap();
        let pinned = dir.path().join("pinned.json");
        assert_eq!(SpecSource::choose(None, &pinned), SpecSource::Instance);
        std::fs::write(&pinned, "{}").unwrap();
        assert_eq!(
            SpecSource::choose(None, &pinned),
            SpecSource::File(pinned.clone())
        );
        let explicit = dir.path().join("x.json");
        assert_eq!(
            SpecSource::choose(Some(&explicit), &pinned),
            SpecSource::File(explicit)
        );
    }

    #[test]
    fn pin_from_env_or_file_and_mismatch_names_both_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("s.json");
        assert_eq!(read_pin(None, Some(&spec)).unwrap(), None);
        let good = sha256_hex(b"doc");
        std::fs::write(pin_path_for(&spec), format!("{good}  s.json\n")).unwrap();
        assert_eq!(
            read_pin(None, Some(&spec)).unwrap().as_deref(),
            Some(good.as_str())
        );
        assert_eq!(verify_pin(b"doc", Some(&good)).unwrap(), good);
        let err = verify_pin(b"other", Some(&good)).unwrap_err().to_string();
        assert!(
            err.contains(&good) && err.contains(&sha256_hex(b"other")),
            "{err}"
        );
        let upper = good.to_ascii_uppercase();
        assert_eq!(read_pin(Some(&upper), Some(&spec)).unwrap(), Some(good));
        let err = read_pin(Some("abc"), None).unwrap_err().to_string();
        assert!(
            err.contains("GITEA_SPEC_SHA256") && err.contains("64 hexadecimal"),
            "{err}"
        );
    }
}

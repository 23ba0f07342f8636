//! Where the document comes from, and the sha256 pin that guards it.

use std::path::{Path, PathBuf};

use super::Error;
use crate::digest::sha256_hex;

/// The file `aegis-gitea-mcp spec pin` wrote before pins moved to the config directory,
/// relative to the working directory; still read (with a warning) when it exists.
pub const DEFAULT_PINNED_SPEC: &str = "spec/gitea-swagger.v1.json";

/// Where the pinned document of the instance at `base` lives under `config_dir`:
/// `pins/<host>[_<port>][_<path>]/gitea-swagger.v1.json`, so a pin is found whatever the
/// working directory, and one instance's document is never used for another.
pub fn pinned_spec_path(config_dir: &Path, base: &reqwest::Url) -> PathBuf {
    let mut name = base.host_str().unwrap_or("instance").to_string();
    if let Some(port) = base.port() {
        name.push_str(&format!("_{port}"));
    }
    for seg in base
        .path_segments()
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
    {
        name.push('_');
        name.push_str(seg);
    }
    let name: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => c,
            _ => '_',
        })
        .collect();
    // `..` and friends cannot climb out: only the characters above survive, and a name of dots
    // alone is made harmless.
    let name = if name.chars().all(|c| c == '.') {
        format!("_{name}")
    } else {
        name
    };
    config_dir
        .join("pins")
        .join(name)
        .join("gitea-swagger.v1.json")
}

/// Where the API description is read from, in order of precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecSource {
    /// A file named by `--spec` / `GITEA_SPEC`.
    File(PathBuf),
    /// The instance's document pinned with `spec pin` (in the config directory, or the
    /// working directory's `spec/gitea-swagger.v1.json`).
    Pinned(PathBuf),
    /// The instance's own `GET {GITEA_URL}/swagger.v1.json`.
    Instance,
}

impl SpecSource {
    /// Chooses the source: an explicit file first, then the first pinned candidate that exists,
    /// else the instance.
    pub fn choose(explicit: Option<&Path>, pinned: &[PathBuf]) -> SpecSource {
        match explicit {
            Some(p) => SpecSource::File(p.to_path_buf()),
            None => match pinned.iter().find(|p| p.is_file()) {
                Some(p) => SpecSource::Pinned(p.clone()),
                None => SpecSource::Instance,
            },
        }
    }

    /// The file read, if the source is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            SpecSource::File(p) | SpecSource::Pinned(p) => Some(p),
            SpecSource::Instance => None,
        }
    }

    /// A short description for logs and `doctor`.
    pub fn describe(&self) -> String {
        match self {
            SpecSource::File(p) => format!("file {}", p.display()),
            SpecSource::Pinned(p) => format!("pinned file {}", p.display()),
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
        let legacy = dir.path().join("legacy.json");
        let candidates = [pinned.clone(), legacy.clone()];
        assert_eq!(SpecSource::choose(None, &candidates), SpecSource::Instance);
        std::fs::write(&legacy, "{}").unwrap();
        assert_eq!(
            SpecSource::choose(None, &candidates),
            SpecSource::Pinned(legacy.clone())
        );
        std::fs::write(&pinned, "{}").unwrap();
        assert_eq!(
            SpecSource::choose(None, &candidates),
            SpecSource::Pinned(pinned.clone())
        );
        let explicit = dir.path().join("x.json");
        assert_eq!(
            SpecSource::choose(Some(&explicit), &candidates),
            SpecSource::File(explicit)
        );
    }

    #[test]
    fn pins_are_per_instance_and_stay_inside_the_config_directory() {
        let dir = Path::new("/cfg");
        let at = |u: &str| pinned_spec_path(dir, &reqwest::Url::parse(u).unwrap());
        assert_eq!(
            at("https://git.example.com"),
            Path::new("/cfg/pins/git.example.com/gitea-swagger.v1.json")
        );
        assert_eq!(
            at("http://127.0.0.1:3000/gitea/"),
            Path::new("/cfg/pins/127.0.0.1_3000_gitea/gitea-swagger.v1.json")
        );
        assert_ne!(at("https://a.example"), at("https://b.example"));
        for hostile in [
            "http://[::1]:8080/",
            "http://h/%2e%2e/%2e%2e/",
            "http://h/../../etc",
        ] {
            let p = at(hostile);
            assert_eq!(
                p.parent().unwrap().parent().unwrap(),
                dir.join("pins"),
                "{p:?}"
            );
            assert!(
                p.components().all(|c| c != std::path::Component::ParentDir),
                "{p:?}"
            );
        }
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

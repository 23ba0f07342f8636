//! Helpers shared by the integration tests: the fixture, the upstream API descriptions, the
//! binary as a child process (a clean environment, its output, its pipes read on threads) and
//! an HTTP client.
//!
//! The upstream documents live outside the repository (they are not ours), in `$GITEA_SPEC_DIR`
//! or, by default, `../shared/spec` beside the checkout. `build.rs` sets `cfg(shared_spec)` when
//! all three are there; the tests that read them carry
//! `#[cfg_attr(not(shared_spec), ignore = "…")]`, so without them they count as ignored, never
//! as passed.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use aegis_gitea_mcp::spec::Spec;
use base64::Engine as _;

/// The fixture API description every test may use.
pub const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/gitea-mini.swagger.json"
);

/// The fixture document, parsed once per test binary.
pub fn fixture_spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(|| {
        aegis_gitea_mcp::app::load_spec_file(Path::new(FIXTURE), None).expect("the fixture loads")
    })
}

/// `bytes` in standard base64 (Gitea's file contents).
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The three documents and how many operations each one has (per `SOURCE.md`).
#[allow(dead_code)] // not every test crate walks all three
pub const FULL_SPECS: [(&str, usize); 3] = [
    ("gitea-swagger.v1.json", 482),
    ("gitea-swagger.newest.v1.json", 537),
    ("forgejo-swagger.v1.json", 506),
];

/// The directory of the upstream documents: `GITEA_SPEC_DIR`, else `../shared/spec`.
pub fn spec_dir() -> PathBuf {
    match std::env::var_os("GITEA_SPEC_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/spec"),
    }
}

/// The path of `name` in the spec directory. The tests that call it are ignored when the
/// documents are absent (`cfg(shared_spec)`, set by `build.rs`), so a missing file here fails.
pub fn spec_path(name: &str) -> PathBuf {
    let path = spec_dir().join(name);
    assert!(
        path.is_file(),
        "{name} is missing: {} does not exist (set GITEA_SPEC_DIR)",
        path.display()
    );
    path
}

/// The bytes of `name` (see [`spec_path`]).
pub fn spec_bytes(name: &str) -> Vec<u8> {
    let path = spec_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

// ---- the binary as a process ------------------------------------------------------------------

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_aegis-gitea-mcp");

/// The variables the binary reads (and the proxy settings its HTTP client would follow);
/// [`bin_without_host_settings`] lets none of them in from the host.
pub const HOST_SETTINGS: [&str; 32] = [
    "GITEA_URL",
    "GITEA_HOST",
    "GITEA_TOKEN",
    "GITEA_ACCESS_TOKEN",
    "GITEA_SPEC",
    "GITEA_SPEC_SHA256",
    "TOOLSETS",
    "READ_ONLY",
    "DISABLED_TOOLS",
    "DISABLED_TOOLS_ALLOW_UNKNOWN",
    "GITEA_CA_FILE",
    "GITEA_INSECURE",
    "GITEA_TIMEOUT_SECS",
    "GITEA_CONNECT_TIMEOUT_SECS",
    "GITEA_MAX_CONCURRENCY",
    "GITEA_RETRIES",
    "MAX_RESPONSE_BYTES",
    "MAX_FILE_SIZE_BYTES",
    "SAFE_MODE",
    "GITEA_READONLY",
    "CONFIRM_DESTRUCTIVE",
    "RAW_REQUESTS",
    "RAW_UNKNOWN_PATHS",
    "AUDIT_LOG",
    "LOG_LEVEL",
    "RUST_LOG",
    "HTTP_PROXY",
    "http_proxy",
    "AEGIS_CONFIG_DIR",
    "XDG_CONFIG_HOME",
    "GITEA_DEBUG",
    "LOG_FORMAT",
];

/// The binary with the host's environment less [`HOST_SETTINGS`] (`PATH`, `HOME`… stay), so
/// only the settings the test sets reach it.
pub fn bin_without_host_settings() -> Command {
    let mut cmd = Command::new(BIN);
    for var in HOST_SETTINGS {
        cmd.env_remove(var);
        // Every generic name also reads as AEGIS_<NAME>.
        cmd.env_remove(format!("AEGIS_{var}"));
    }
    // Pins in the user's own config directory must not change what a test sees.
    cmd.env("AEGIS_CONFIG_DIR", NO_CONFIG_DIR);
    cmd
}

/// A config directory that holds nothing (tests that pin give their own).
pub const NO_CONFIG_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/no-config-dir");

/// The binary with an empty environment: only the variables the test sets reach it.
pub fn bin_with_empty_env() -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear();
    cmd
}

/// A finished process's stdout, as (lossy) UTF-8.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A finished process's stderr, as (lossy) UTF-8.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Calls `each` on a new thread with every line `pipe` yields (its newline included; the last
/// one may have none) until end of file, a read error, or `each` returning `false`.
pub fn on_each_line(
    pipe: impl Read + Send + 'static,
    mut each: impl FnMut(&[u8]) -> bool + Send + 'static,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if !each(&line) {
                        break;
                    }
                }
            }
        }
    })
}

/// The bytes a child wrote to one of its pipes, gathered as they come (see [`Captured::gather`]).
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Starts a thread that appends everything `pipe` yields, as it comes, until end of file or
    /// a read error; returns that thread.
    pub fn gather(&self, mut pipe: impl Read + Send + 'static) -> JoinHandle<()> {
        let sink = self.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.append(&buf[..n]);
            }
        })
    }

    /// Appends `bytes`.
    pub fn append(&self, bytes: &[u8]) {
        self.0.lock().unwrap().extend_from_slice(bytes);
    }

    /// What was gathered so far, as (lossy) UTF-8.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

// ---- HTTP -------------------------------------------------------------------------------------

/// A reqwest client builder that ignores the host's proxy settings (with rustls' ring provider
/// installed, as reqwest needs one).
pub fn http_client_builder() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy()
}

/// A client from [`http_client_builder`] whose every request gives up after `timeout`.
pub fn http_client(timeout: std::time::Duration) -> reqwest::Client {
    http_client_builder()
        .timeout(timeout)
        .build()
        .expect("reqwest client")
}

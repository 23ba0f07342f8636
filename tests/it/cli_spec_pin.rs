//! `spec pin` and `spec check` against a loopback server that serves a swagger document.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;

use crate::common::{FIXTURE, bin_without_host_settings, stderr, stdout};

/// Serves `body` at `/swagger.v1.json` (404 elsewhere) for `requests` connections; returns the
/// base URL.
fn serve(body: Vec<u8>, requests: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            let _ = reader.read_line(&mut line);
            // Drain the headers.
            let mut h = String::new();
            while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
                h.clear();
            }
            let (status, payload) = if line.starts_with("GET /swagger.v1.json ") {
                ("200 OK", body.clone())
            } else {
                ("404 Not Found", b"{\"message\":\"not found\"}".to_vec())
            };
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                payload.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&payload);
        }
    });
    format!("http://{addr}")
}

/// Runs the binary in `cwd` with `config` as its config directory.
fn run_in(cwd: &Path, config: &Path, url: &str, args: &[&str]) -> Output {
    bin_without_host_settings()
        .args(args)
        .current_dir(cwd)
        .env("AEGIS_CONFIG_DIR", config)
        .env("GITEA_URL", url)
        .env("NO_PROXY", "*")
        .output()
        .expect("run the binary")
}

fn run(dir: &Path, url: &str, args: &[&str]) -> Output {
    run_in(dir, &dir.join("config"), url, args)
}

/// Where `spec pin` keeps the document of the instance at `url` (`http://127.0.0.1:PORT`).
fn pinned_at(config: &Path, url: &str) -> std::path::PathBuf {
    let host = url.trim_start_matches("http://").replace(':', "_");
    config.join("pins").join(host).join("gitea-swagger.v1.json")
}

#[test]
fn pin_writes_the_document_and_its_hash_then_check_compares() {
    let doc = std::fs::read(FIXTURE).expect("fixture");
    let dir = tempfile::tempdir().expect("tempdir");
    let url = serve(doc.clone(), 1);
    let out = run(dir.path(), &url, &["spec", "pin"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let config = dir.path().join("config");
    let pinned = pinned_at(&config, &url);
    assert_eq!(std::fs::read(&pinned).expect("pinned file"), doc);
    let hash = aegis_gitea_mcp::digest::sha256_hex(&doc);
    let pin = std::fs::read_to_string(pinned.with_extension("json.sha256")).expect("pin file");
    assert_eq!(pin, format!("{hash}  gitea-swagger.v1.json\n"));
    assert!(stdout(&out).contains(&hash));
    assert!(
        !dir.path().join("spec").exists(),
        "nothing is written to the working directory"
    );

    // The pinned file is now the default source from any working directory (the instance has
    // stopped answering), it is named in the log, and it is checked against its pin.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let out = run_in(
        elsewhere.path(),
        &config,
        &url,
        &["--log-level=info", "catalog", "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let log = stderr(&out);
    assert!(
        log.contains(&pinned.display().to_string()) && log.contains(".sha256"),
        "the log names the document and its pin: {log}"
    );
    assert!(!log.contains("unpinned"), "{log}");
    std::fs::write(
        &pinned,
        String::from_utf8_lossy(&doc).replace("Get a repository", "Get a repo!"),
    )
    .expect("edit");
    let out = run_in(elsewhere.path(), &config, &url, &["catalog"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&hash),
        "the error names the pinned hash"
    );

    // Same document: identical, exit 0.
    std::fs::write(&pinned, &doc).expect("restore");
    let pinned_arg = format!("--pinned={}", pinned.display());
    let out = run(
        dir.path(),
        &serve(doc.clone(), 1),
        &["spec", "check", &pinned_arg],
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(stdout(&out).contains("identical"));

    // The instance dropped one operation and added another: exit 1 with both listed.
    let changed = String::from_utf8_lossy(&doc).replace("\"getVersion\"", "\"getServerVersion\"");
    let out = run(
        dir.path(),
        &serve(changed.into_bytes(), 1),
        &["spec", "check", &pinned_arg],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("added: 1\n  getServerVersion"), "{text}");
    assert!(text.contains("removed: 1\n  getVersion"), "{text}");
}

#[test]
fn pin_refuses_a_document_it_cannot_use() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = serve(
        b"{\"swagger\": \"2.0\", \"paths\": {\"/x\": {\"get\": {}}}}".to_vec(),
        1,
    );
    let out = run(dir.path(), &url, &["spec", "pin"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("/paths/~1x/get/operationId"));
    assert!(
        !dir.path().join("config").exists() && !dir.path().join("spec").exists(),
        "nothing is written"
    );
}

#[test]
fn an_instance_without_its_document_says_what_to_do() {
    // `serve` answers 404 for everything but /swagger.v1.json; an empty body there is not
    // what a disabled swagger looks like, so serve 404 for every path instead.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming().take(2) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            let mut h = String::new();
            while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
                h.clear();
            }
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    let dir = tempfile::tempdir().expect("tempdir");
    for args in [&["catalog"][..], &["spec", "pin"][..]] {
        let out = run(dir.path(), &url, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("ENABLE_SWAGGER")
                && err.contains("--spec FILE")
                && err.contains("spec pin")
                && err.contains(
                    &pinned_at(&dir.path().join("config"), &url)
                        .display()
                        .to_string()
                ),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn an_unpinned_live_instance_is_warned_about() {
    let doc = std::fs::read(FIXTURE).expect("fixture");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(dir.path(), &serve(doc, 1), &["catalog", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("WARN") && err.contains("unpinned") && err.contains("spec pin"),
        "{err}"
    );
}

#[test]
fn an_older_pin_in_the_working_directory_is_used_and_warned_about() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("spec")).expect("mkdir");
    std::fs::copy(FIXTURE, dir.path().join("spec/gitea-swagger.v1.json")).expect("copy");
    let out = run(dir.path(), "http://127.0.0.1:9", &["catalog", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("working directory") && err.contains("spec pin"),
        "{err}"
    );
}

//! `aegis-gitea-mcp catalog`, driven as a process over the mini fixture.
//!
//! Every command starts from a clean environment for the variables the binary reads, so the
//! host's configuration cannot leak in; variables a test needs are set on that command only.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use crate::common::{FIXTURE, bin_without_host_settings, stderr, stdout};
use aegis_gitea_mcp::catalog::Domain;
use aegis_gitea_mcp::digest::sha256_hex;
use serde_json::Value;

/// `aegis-gitea-mcp catalog --spec <fixture> <args>`, run in `dir` with a clean environment.
fn catalog(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = bin_without_host_settings();
    cmd.envs(env.iter().copied())
        .current_dir(dir)
        .arg("catalog")
        .args(["--spec", FIXTURE])
        .args(args);
    cmd.output().expect("the binary runs")
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

fn json_rows(o: &Output) -> Vec<Value> {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
    match serde_json::from_slice::<Value>(&o.stdout) {
        Ok(Value::Array(rows)) => rows,
        Ok(other) => panic!("expected a JSON array, got {other}"),
        Err(e) => panic!("stdout is not JSON ({e}): {}", stdout(o)),
    }
}

#[test]
fn json_rows_have_exactly_the_documented_fields() {
    let dir = tmp();
    let rows = json_rows(&catalog(dir.path(), &["--json"], &[]));
    assert_eq!(rows.len(), 46);
    let expected: BTreeSet<&str> = [
        "name",
        "operation_id",
        "method",
        "path",
        "domain",
        "summary",
        "read_only",
        "destructive",
        "idempotent",
        "scopes",
        "deprecated",
        "user_content",
    ]
    .into_iter()
    .collect();
    for row in &rows {
        let obj = row.as_object().expect("each row is an object");
        let keys: BTreeSet<&str> = obj.keys().map(String::as_str).collect();
        assert_eq!(keys, expected, "{row}");
        for flag in [
            "read_only",
            "destructive",
            "idempotent",
            "deprecated",
            "user_content",
        ] {
            assert!(obj[flag].is_boolean(), "{flag} in {row}");
        }
        assert!(obj["scopes"].is_array(), "{row}");
    }
    // Issues, comments and raw files carry what users wrote; the version does not.
    for (name, user) in [
        ("gitea_issue_get", true),
        ("gitea_issue_get_comments", true),
        ("gitea_repo_get_raw_file", false),
        ("gitea_pull_download_diff_or_patch", true),
        ("gitea_misc_get_version", false),
        ("gitea_repo_get_single_commit", true),
    ] {
        let r = rows.iter().find(|r| r["name"] == name).expect(name);
        assert_eq!(r["user_content"], user, "{name}");
    }
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row {name}"))
    };
    let comment = row("gitea_issue_create_comment");
    assert_eq!(comment["operation_id"], "issueCreateComment");
    assert_eq!(comment["method"], "POST");
    assert_eq!(
        comment["path"],
        "/repos/{owner}/{repo}/issues/{index}/comments"
    );
    assert_eq!(comment["domain"], "issue");
    assert_eq!(comment["scopes"], serde_json::json!(["write:issue"]));
    assert_eq!(comment["read_only"], false);
    assert_eq!(
        row("gitea_misc_get_version")["scopes"],
        serde_json::json!([])
    );
    assert_eq!(
        row("gitea_issue_delete_comment_deprecated")["deprecated"],
        true
    );
    assert_eq!(row("gitea_repo_delete")["destructive"], true);
}

#[test]
fn domain_filters_the_listing() {
    let dir = tmp();
    let rows = json_rows(&catalog(dir.path(), &["--json", "--domain", "pull"], &[]));
    let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "gitea_pull_create",
            "gitea_pull_create_review",
            "gitea_pull_download_diff_or_patch",
            "gitea_pull_get",
            "gitea_pull_is_merged",
            "gitea_pull_list",
            "gitea_pull_list_reviews",
            "gitea_pull_merge"
        ]
    );
    assert!(rows.iter().all(|r| r["domain"] == "pull"));
    // Domain names are case-insensitive.
    let upper = json_rows(&catalog(dir.path(), &["--json", "--domain", "PULL"], &[]));
    assert_eq!(upper.len(), 8);
}

#[test]
fn an_unknown_domain_is_a_usage_error_listing_the_domains() {
    let dir = tmp();
    let o = catalog(dir.path(), &["--domain", "pulls"], &[]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("\"pulls\""), "{err}");
    for d in Domain::ALL {
        assert!(err.contains(d.as_str()), "{d} missing from: {err}");
    }
}

#[test]
fn written_docs_check_clean_until_edited() {
    let dir = tmp();
    let docs = dir.path().join("actions.md");
    let docs_arg = docs.to_str().expect("a UTF-8 temporary path");

    let o = catalog(dir.path(), &["--write-docs", "--docs", docs_arg], &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let written = std::fs::read_to_string(&docs).expect("the inventory was written");
    assert!(written.contains("`gitea_issue_create`"), "{written}");
    assert!(written.contains("gitea-mini.swagger.json"), "{written}");

    let o = catalog(dir.path(), &["--check-docs", "--docs", docs_arg], &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(stderr(&o).contains("up to date"), "{}", stderr(&o));

    std::fs::write(
        &docs,
        written.replace("gitea_issue_create", "gitea_issue_make"),
    )
    .expect("the inventory can be edited");
    let o = catalog(dir.path(), &["--check-docs", "--docs", docs_arg], &[]);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    assert!(stderr(&o).contains("stale"), "{}", stderr(&o));
}

#[test]
fn a_pin_mismatch_names_both_hashes() {
    let dir = tmp();
    let actual = sha256_hex(&std::fs::read(FIXTURE).expect("the fixture is readable"));
    let zeros = "0".repeat(64);
    let o = catalog(dir.path(), &["--json"], &[("GITEA_SPEC_SHA256", &zeros)]);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains(&zeros) && err.contains(&actual), "{err}");

    // The right pin (in any case) is accepted.
    let upper = actual.to_ascii_uppercase();
    let rows = json_rows(&catalog(
        dir.path(),
        &["--json"],
        &[("GITEA_SPEC_SHA256", &upper)],
    ));
    assert_eq!(rows.len(), 46);
}

#[test]
fn a_bad_read_only_value_is_a_usage_error_naming_the_variable() {
    let dir = tmp();
    let o = catalog(dir.path(), &["--json"], &[("READ_ONLY", "maybe")]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("READ_ONLY") && err.contains("maybe"), "{err}");
}

#[test]
fn policy_variables_mark_withheld_actions_in_the_table() {
    let dir = tmp();
    let o = catalog(
        dir.path(),
        &["--domain", "repo"],
        &[("READ_ONLY", "true"), ("DISABLED_TOOLS", "repoGet")],
    );
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{out}"))
    };
    assert!(
        line("gitea_repo_get").contains("DISABLED_TOOLS entry \"repoGet\""),
        "{out}"
    );
    assert!(line("gitea_repo_delete").contains("read-only"), "{out}");
    assert!(
        !line("gitea_repo_get_contents").contains("withheld"),
        "{out}"
    );
    // The flag column is explained, and each flag is what the legend says.
    let err = stderr(&o);
    assert!(
        err.contains("flags: R read-only, D destructive, d deprecated"),
        "{err}"
    );
    let flags = |name: &str| {
        line(name)
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(flags("gitea_repo_get"), "R--");
    assert_eq!(flags("gitea_repo_delete"), "-D-");
}

#[test]
fn a_closed_standard_output_ends_the_command_quietly() {
    let dir = tmp();
    let mut child = bin_without_host_settings()
        .current_dir(dir.path())
        .args(["catalog", "--json", "--spec", FIXTURE])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // `catalog | head -0`: the reader is gone before the first line is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("the binary ends");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_malformed_url_is_quoted_without_its_password() {
    let dir = tmp();
    for url in [
        "https://user:hunter2@git.example.com:99999/",
        "https://hunter2@git example.com/",
    ] {
        let o = catalog(dir.path(), &["--gitea-url", url], &[]);
        assert_eq!(o.status.code(), Some(2), "{url}: {}", stderr(&o));
        assert!(stderr(&o).contains("GITEA_URL"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("hunter2"), "{}", stderr(&o));
    }
}

#[test]
fn a_disabled_tools_entry_that_matches_nothing_stops_the_start() {
    let dir = tmp();
    let o = catalog(
        dir.path(),
        &[],
        &[("DISABLED_TOOLS", "gitea_repo_delete, repoDeleet")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("\"repoDeleet\""), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("DISABLED_TOOLS_ALLOW_UNKNOWN"),
        "{}",
        stderr(&o)
    );
    let o = catalog(
        dir.path(),
        &["--json"],
        &[
            ("DISABLED_TOOLS", "gitea_repo_delete, repoDeleet"),
            ("DISABLED_TOOLS_ALLOW_UNKNOWN", "true"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("repoDeleet"),
        "still warned: {}",
        stderr(&o)
    );
}

#[test]
fn a_missing_document_names_its_cause_once() {
    let dir = tmp();
    let o = bin_without_host_settings()
        .current_dir(dir.path())
        .args(["catalog", "--spec", "/nonexistent/gitea.json"])
        .output()
        .expect("the binary runs");
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("/nonexistent/gitea.json"), "{err}");
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
}

#[test]
fn find_without_a_match_says_so_and_exits_1() {
    let dir = tmp();
    let find = |query: &str, json: bool| {
        let mut cmd = bin_without_host_settings();
        cmd.current_dir(dir.path())
            .args(["find", query, "--spec", FIXTURE]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().expect("the binary runs")
    };
    let o = find("zzqx wvvk", false);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("no action matches \"zzqx wvvk\""),
        "{}",
        stderr(&o)
    );
    // JSON callers still get the (empty) answer on stdout.
    let o = find("zzqx wvvk", true);
    assert_eq!(o.status.code(), Some(1));
    let answer: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(answer["results"], serde_json::json!([]));
    // A need the fixture has is found, exit 0.
    let o = find("create a pull request", false);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(stdout(&o).contains("gitea_pull_create"), "{}", stdout(&o));
}

/// Withheld-by-read-only lines of `catalog --domain repo` run with `args` and `env`.
fn read_only_marks(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, bool, String) {
    let dir = tmp();
    let mut cmd = bin_without_host_settings();
    cmd.envs(env.iter().copied())
        .current_dir(dir.path())
        .args(args)
        .args(["--spec", FIXTURE, "--domain", "repo"]);
    let o = cmd.output().expect("the binary runs");
    let out = stdout(&o);
    let marked = out
        .lines()
        .any(|l| l.starts_with("gitea_repo_delete ") && l.contains("read-only"));
    (o.status.code(), marked, stderr(&o))
}

#[test]
fn a_bare_boolean_flag_never_swallows_the_next_word() {
    // Before the subcommand, after it, and explicit.
    for args in [
        &["--read-only", "catalog"][..],
        &["catalog", "--read-only"][..],
        &["--read-only=true", "catalog"][..],
        &["--safe-mode", "--raw-requests", "--read-only", "catalog"][..],
    ] {
        let (code, marked, err) = read_only_marks(args, &[]);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(marked, "{args:?}: the delete is not withheld");
    }
    let (code, marked, err) = read_only_marks(&["--read-only=false", "catalog"], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!marked);
    // The old reading of `--read-only false` as a value is gone: `false` is not a subcommand.
    let (code, _, _) = read_only_marks(&["--read-only", "false", "catalog"], &[]);
    assert_eq!(code, Some(2));
}

#[test]
fn gitea_readonly_from_the_official_server_is_honoured() {
    let (code, marked, err) = read_only_marks(&["catalog"], &[("GITEA_READONLY", "true")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(marked, "GITEA_READONLY=true must withhold writes");
    // READ_ONLY, the flag, wins when both are set; a bad value names the variable it came from.
    let (_, marked, _) = read_only_marks(
        &["catalog"],
        &[("GITEA_READONLY", "true"), ("READ_ONLY", "false")],
    );
    assert!(!marked);
    let (code, _, err) = read_only_marks(&["catalog"], &[("GITEA_READONLY", "maybe")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("GITEA_READONLY") && err.contains("\"maybe\""),
        "{err}"
    );
}

#[test]
fn prefixed_variables_win_and_empty_values_are_unset() {
    let (code, marked, err) = read_only_marks(
        &["catalog"],
        &[("AEGIS_READ_ONLY", "true"), ("READ_ONLY", "false")],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(marked, "AEGIS_READ_ONLY wins over READ_ONLY");
    let (code, marked, err) =
        read_only_marks(&["catalog"], &[("AEGIS_READ_ONLY", ""), ("READ_ONLY", "1")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        marked,
        "an empty AEGIS_READ_ONLY is unset: READ_ONLY applies"
    );
    let (code, marked, err) = read_only_marks(&["catalog"], &[("READ_ONLY", "")]);
    assert_eq!(code, Some(0), "an empty value is no error: {err}");
    assert!(!marked);
}

#[test]
fn a_bad_value_names_the_variable_it_came_from() {
    for (var, value, expected) in [
        (
            "GITEA_TIMEOUT_SECS",
            "abc",
            "GITEA_TIMEOUT_SECS (--gitea-timeout): expected a whole number from 1 to 3600",
        ),
        (
            "AEGIS_MAX_RESPONSE_BYTES",
            "5",
            "AEGIS_MAX_RESPONSE_BYTES (--max-response-bytes)",
        ),
        (
            "GITEA_URL",
            "ftp://x",
            "GITEA_URL (--gitea-url): expected an http or https URL",
        ),
        (
            "SAFE_MODE",
            "perhaps",
            "SAFE_MODE (--safe-mode): expected true or false",
        ),
    ] {
        let (code, _, err) = read_only_marks(&["catalog"], &[(var, value)]);
        assert_eq!(code, Some(2), "{var}: {err}");
        assert!(err.contains(expected), "{var}: {err}");
    }
    // A token pasted with its line break is refused without being shown.
    let (code, _, err) = read_only_marks(&["catalog"], &[("GITEA_TOKEN", "secret-part\nmore")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("GITEA_TOKEN (--gitea-token)") && !err.contains("secret-part"),
        "{err}"
    );
}

#[test]
fn gitea_debug_from_the_official_server_turns_on_debug_logs() {
    let (code, _, err) = read_only_marks(&["catalog"], &[("GITEA_DEBUG", "true")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("loaded the API description"),
        "info and debug lines: {err}"
    );
    let (_, _, err) = read_only_marks(&["catalog"], &[]);
    assert!(
        !err.contains("loaded the API description"),
        "warn by default: {err}"
    );
}

#[test]
fn help_lists_a_commands_own_options_first_and_only_the_options_it_reads() {
    let help = |args: &[&str]| {
        let o = bin_without_host_settings()
            .args(args)
            .output()
            .expect("the binary runs");
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        stdout(&o)
    };
    let catalog = help(&["catalog", "--help"]);
    let own = catalog.find("--json").expect("catalog's own option");
    let global = catalog
        .find("Global options:")
        .expect("a heading for the global options");
    assert!(
        own < global && catalog[global..].contains("--gitea-url"),
        "{catalog}"
    );
    assert_eq!(catalog.matches("[env: LOG_LEVEL").count(), 1, "{catalog}");
    for args in [
        &["audit", "verify", "--help"][..],
        &["api-key", "hash", "--help"][..],
    ] {
        let text = help(args);
        assert!(
            !text.contains("--gitea-url") && !text.contains("Global options"),
            "{args:?}: {text}"
        );
    }
    assert!(help(&["--help"]).contains("Examples:"));
}

/// README's configuration table, row by row, against the flag definitions (`settings`).
#[test]
fn the_readme_configuration_table_matches_the_definitions() {
    let o = bin_without_host_settings()
        .arg("settings")
        .output()
        .expect("the binary runs");
    let settings: serde_json::Value = serde_json::from_slice(&o.stdout).expect("settings JSON");
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("| variable | flag | default | meaning |")
        .expect("the table");
    let rows: Vec<Vec<&str>> = readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .filter(|cells: &Vec<&str>| cells.get(1) != Some(&"—"))
        .collect();
    let settings = settings.as_array().expect("an array");
    assert_eq!(rows.len(), settings.len(), "one README row per setting");
    for s in settings {
        let flag = format!("`{}`", s["flag"].as_str().expect("flag"));
        let row = rows
            .iter()
            .find(|r| r.get(1) == Some(&flag.as_str()))
            .unwrap_or_else(|| panic!("README has no row for {flag}"));
        for name in s["env"].as_array().expect("env") {
            let name = name.as_str().expect("a name");
            // The AEGIS_ spellings of generic names are one rule, stated above the table.
            if name.starts_with("AEGIS_") && name != "AEGIS_CONFIG_DIR" {
                continue;
            }
            assert!(
                row[0].contains(&format!("`{name}`")),
                "{flag}: {name} missing in {:?}",
                row[0]
            );
        }
        if let Some(default) = s["default"].as_str() {
            assert!(
                row[2].contains(&format!("`{default}`")),
                "{flag}: default {default} vs {:?}",
                row[2]
            );
        }
    }
}

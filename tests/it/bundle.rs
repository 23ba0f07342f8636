//! The MCP bundle (`bundle/manifest.json`, packed by `scripts/bundle.sh`) as a host installs it:
//! the manifest's environment names only variables the server reads, and an unpacked bundle
//! (the debug binary at the entry point) started from `mcp_config` the way Claude Desktop does,
//! with `${__dirname}` and `${user_config.*}` substituted, serves the three dynamic tools against
//! the fake Gitea and honours the read-only switch. `server.json` (the registry entry) describes
//! the same variables and version.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{BIN, FIXTURE};
use crate::mcp_stdio::{DYNAMIC_TOOLS, Mcp, assert_clean_end, is_error, names, text_of};
use crate::support::FakeGitea;
use serde_json::{Value, json};

const TOKEN: &str = "bundle-test-token";

fn read_json(relative: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative} is not JSON: {e}"))
}

fn manifest() -> Value {
    read_json("bundle/manifest.json")
}

fn mcp_env(manifest: &Value) -> BTreeMap<String, String> {
    manifest["server"]["mcp_config"]["env"]
        .as_object()
        .expect("mcp_config.env")
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().expect("env values are strings").to_string(),
            )
        })
        .collect()
}

/// Replaces every `${name}` of `variables` in the strings of `value`; an unknown name stays as it
/// is. This is what `getMcpConfigForManifest` of `@anthropic-ai/mcpb` does for a host.
fn substitute(value: &Value, variables: &BTreeMap<String, String>) -> Value {
    match value {
        Value::String(s) => {
            let mut out = s.clone();
            for (name, replacement) in variables {
                out = out.replace(&format!("${{{name}}}"), replacement);
            }
            Value::String(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute(v, variables)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, variables)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The `mcp_config` a host runs for a bundle unpacked at `dir` with the user's `settings`:
/// the manifest's defaults, overridden by the settings (booleans as "true"/"false").
fn host_config(manifest: &Value, dir: &Path, settings: &Value) -> Value {
    let mut merged = serde_json::Map::new();
    for (key, option) in manifest["user_config"].as_object().expect("user_config") {
        if let Some(default) = option.get("default") {
            merged.insert(key.clone(), default.clone());
        }
    }
    for (key, value) in settings.as_object().expect("settings are an object") {
        merged.insert(key.clone(), value.clone());
    }
    let mut variables = BTreeMap::from([
        ("__dirname".to_string(), dir.display().to_string()),
        ("/".to_string(), "/".to_string()),
        ("pathSeparator".to_string(), "/".to_string()),
    ]);
    for (key, value) in merged {
        let text = match value {
            Value::String(s) => s,
            Value::Bool(b) => b.to_string(),
            other => other.to_string(),
        };
        variables.insert(format!("user_config.{key}"), text);
    }
    substitute(&manifest["server"]["mcp_config"], &variables)
}

/// Every variable `serve --help` names in an `[env: …]` marker (aliases included).
fn variables_the_server_reads() -> BTreeSet<String> {
    let out = Command::new(BIN)
        .env_clear()
        .args(["serve", "--help"])
        .output()
        .expect("serve --help runs");
    assert!(out.status.success(), "serve --help failed");
    // Help is wrapped at spaces: join the lines before reading the markers.
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut names = BTreeSet::new();
    for marker in help.split("[env: ").skip(1) {
        let inside = marker.split(']').next().unwrap_or_default();
        for word in inside.split([',', ' ']) {
            let word = word.trim_end_matches('=');
            if !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                names.insert(word.to_string());
            }
        }
    }
    names
}

/// Lays out an unpacked bundle in a fresh folder: the manifest and the binary under test at the
/// entry point (hard-linked where it can be).
fn unpacked_bundle(manifest: &Value) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("bundle-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a temporary folder");
    let entry = dir.path().join(
        manifest["server"]["entry_point"]
            .as_str()
            .expect("entry_point"),
    );
    std::fs::create_dir_all(entry.parent().expect("entry point in a folder")).expect("mkdir");
    if std::fs::hard_link(BIN, &entry).is_err() {
        std::fs::copy(BIN, &entry).expect("copy the binary");
    }
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).expect("write");
    dir
}

/// The process a host starts for `config`: its command, arguments and environment only, in the
/// bundle's folder.
fn start(config: &Value, dir: &Path) -> Mcp {
    let mut cmd = Command::new(PathBuf::from(
        config["command"].as_str().expect("mcp_config.command"),
    ));
    cmd.env_clear().current_dir(dir);
    for arg in config["args"].as_array().into_iter().flatten() {
        cmd.arg(arg.as_str().expect("args are strings"));
    }
    for (k, v) in config["env"].as_object().into_iter().flatten() {
        cmd.env(k, v.as_str().expect("env values are strings"));
    }
    Mcp::spawn_command(cmd)
}

/// A fake Gitea that serves the fixture as its `/swagger.v1.json` (the bundle names no spec
/// file), with `alice/demo` and a token of alice's with every scope.
async fn fake_instance() -> FakeGitea {
    let spec = std::fs::read(FIXTURE).expect("read the fixture");
    let fake = FakeGitea::start_with_spec(spec).await;
    fake.seed_repo("alice", "demo");
    fake.seed_issues("alice", "demo", 1);
    fake.add_token(TOKEN, "alice", &["all"]);
    fake
}

fn create_issue() -> Value {
    json!({"action": "gitea_issue_create", "arguments": {"owner": "alice", "repo": "demo", "body": {"title": "from the bundle"}}})
}

#[test]
fn bundle_manifest_env_names_only_variables_the_server_reads() {
    let m = manifest();
    let known = variables_the_server_reads();
    assert!(
        [
            "GITEA_URL",
            "GITEA_TOKEN",
            "READ_ONLY",
            "TOOLSETS",
            "LISTEN"
        ]
        .iter()
        .all(|v| known.contains(*v)),
        "the help markers were not read: {known:?}"
    );
    let env = mcp_env(&m);
    assert!(!env.is_empty());
    for name in env.keys() {
        assert!(
            known.contains(name),
            "bundle/manifest.json sets {name}, which the server does not read (serve --help names {known:?})"
        );
    }
    // Each setting maps to one user_config option, and every option is used.
    let options: BTreeSet<String> = m["user_config"]
        .as_object()
        .expect("user_config")
        .keys()
        .cloned()
        .collect();
    let used: BTreeSet<String> = env
        .values()
        .map(|v| {
            v.strip_prefix("${user_config.")
                .and_then(|rest| rest.strip_suffix('}'))
                .unwrap_or_else(|| panic!("{v} is not one ${{user_config.x}}"))
                .to_string()
        })
        .collect();
    assert_eq!(
        used, options,
        "user_config options and mcp_config.env disagree"
    );
}

#[test]
fn bundle_manifest_and_server_json_agree_with_the_crate() {
    let m = manifest();
    assert_eq!(
        m["version"],
        env!("CARGO_PKG_VERSION"),
        "bundle/manifest.json"
    );
    assert_eq!(m["server"]["type"], "binary");
    let entry = m["server"]["entry_point"].as_str().expect("entry_point");
    assert_eq!(entry, "server/aegis-gitea-mcp");
    assert_eq!(
        m["server"]["mcp_config"]["command"],
        format!("${{__dirname}}/{entry}")
    );
    let tools: BTreeSet<String> = m["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("tool name").to_string())
        .collect();
    assert_eq!(tools, DYNAMIC_TOOLS.iter().map(|t| t.to_string()).collect());

    let registry = read_json("server.json");
    assert_eq!(
        registry["version"],
        env!("CARGO_PKG_VERSION"),
        "server.json"
    );
    let package = &registry["packages"][0];
    assert_eq!(package["registryType"], "mcpb");
    assert_eq!(package["transport"]["type"], "stdio");
    let described: BTreeSet<String> = package["environmentVariables"]
        .as_array()
        .expect("environmentVariables")
        .iter()
        .map(|e| e["name"].as_str().expect("name").to_string())
        .collect();
    assert_eq!(
        described,
        mcp_env(&m).into_keys().collect(),
        "server.json describes other variables than bundle/manifest.json sets"
    );
}

#[test]
fn bundle_with_only_the_required_settings_leaves_nothing_unsubstituted() {
    let m = manifest();
    let required: Vec<&String> = m["user_config"]
        .as_object()
        .expect("user_config")
        .iter()
        .filter(|(_, o)| o["required"] == true)
        .map(|(k, _)| k)
        .collect();
    assert_eq!(required, ["gitea_url"]);
    let config = host_config(
        &m,
        Path::new("/opt/bundle"),
        &json!({"gitea_url": "https://gitea.example.com"}),
    );
    // A host keeps `${user_config.x}` as it is when x has neither a value nor a default.
    assert!(!config.to_string().contains("${"), "{config}");
    assert_eq!(config["command"], "/opt/bundle/server/aegis-gitea-mcp");
    assert_eq!(config["env"]["READ_ONLY"], "true", "read-only by default");
    assert_eq!(config["env"]["GITEA_URL"], "https://gitea.example.com");
}

/// An installed bundle against a fresh fake instance: the user's settings are the instance's
/// URL and token plus `extra`; past `initialize`, its tools checked to be the three dynamic ones.
/// The folder must outlive the server.
async fn installed(extra: Value) -> (FakeGitea, tempfile::TempDir, Value, Mcp) {
    let m = manifest();
    let fake = fake_instance().await;
    let dir = unpacked_bundle(&m);
    let mut settings = json!({"gitea_url": fake.url(), "gitea_token": TOKEN});
    for (k, v) in extra.as_object().expect("extra settings") {
        settings[k] = v.clone();
    }
    let config = host_config(&m, dir.path(), &settings);
    let mut mcp = start(&config, dir.path());
    let init = mcp.initialize().await;
    assert_eq!(init["serverInfo"]["name"], "aegis-gitea-mcp", "{init}");
    assert_eq!(
        names(&mcp.tools().await),
        DYNAMIC_TOOLS.iter().map(|t| t.to_string()).collect()
    );
    (fake, dir, config, mcp)
}

/// The reason code of a withheld call.
fn withheld(out: &Value) -> &Value {
    assert!(is_error(out), "{out}");
    &out["structuredContent"]["withheld"]["code"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundle_installed_serves_the_three_tools_read_only_by_default() {
    let (fake, _dir, config, mut mcp) = installed(json!({})).await;
    assert_eq!(config["env"]["READ_ONLY"], "true");
    fake.clear_requests();
    let out = mcp.call_tool("gitea_execute_action", create_issue()).await;
    assert_eq!(withheld(&out), "read_only", "{out}");
    assert!(text_of(&out).contains("read-only"), "{out}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    // Reads go through, under the user's token.
    let out = mcp
        .call_tool(
            "gitea_execute_action",
            json!({"action": "gitea_issue_get", "arguments": {"owner": "alice", "repo": "demo", "index": 1}}),
        )
        .await;
    assert!(!is_error(&out), "{out}");
    assert_clean_end(&mcp.close().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundle_with_read_only_off_lets_writes_through() {
    let (fake, _dir, config, mut mcp) =
        installed(json!({"read_only": false, "toolsets": "issue"})).await;
    assert_eq!(config["env"]["READ_ONLY"], "false");
    fake.clear_requests();
    let out = mcp.call_tool("gitea_execute_action", create_issue()).await;
    assert!(!is_error(&out), "{out}");
    assert_eq!(
        fake.count("POST", "/api/v1/repos/alice/demo/issues"),
        1,
        "{:?}",
        fake.requests()
    );
    // The toolsets setting is honoured too: repository actions are withheld.
    let out = mcp
        .call_tool(
            "gitea_execute_action",
            json!({"action": "gitea_repo_get", "arguments": {"owner": "alice", "repo": "demo"}}),
        )
        .await;
    assert_eq!(withheld(&out), "toolsets", "{out}");
    assert_clean_end(&mcp.close().await);
}

//! Compiles curated data into Rust: `spec/overrides.toml` → `$OUT_DIR/overrides.rs`
//! (action-name overrides, a `phf` map), `index/vocabulary.toml` → `$OUT_DIR/vocabulary.rs`
//! (search synonyms and verb intents, `phf` maps) and `index/ui-labels.toml` →
//! `$OUT_DIR/ui_labels.rs` (the web UI's labels read as needs, a static table).

use std::collections::BTreeMap;
use std::env;
use std::fs;
use std::path::Path;

/// Reads and parses a curated TOML file, rebuilding when it changes.
fn read_toml<T: serde::de::DeserializeOwned>(source: &str) -> T {
    println!("cargo::rerun-if-changed={source}");
    let text = fs::read_to_string(source).unwrap_or_else(|e| panic!("cannot read {source}: {e}"));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{source} is not valid: {e}"))
}

#[derive(serde::Deserialize)]
struct Overrides {
    #[serde(default)]
    names: BTreeMap<String, String>,
}

fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && name.starts_with("gitea_")
        && name.len() > "gitea_".len()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

#[derive(serde::Deserialize)]
struct Vocabulary {
    synonyms: BTreeMap<String, String>,
    intent: BTreeMap<String, Vec<String>>,
}

/// Intent classes in the order of `search::Intent`'s discriminants.
const INTENTS: [&str; 5] = ["delete", "create", "update", "list", "get"];

fn vocabulary() {
    let source = "index/vocabulary.toml";
    let vocab: Vocabulary = read_toml(source);
    let mut synonyms = phf_codegen::Map::new();
    for (phrase, words) in &vocab.synonyms {
        let key = phrase.trim().to_lowercase();
        assert!(
            key == *phrase,
            "{source}: synonym key {phrase:?} must be lower-case and trimmed"
        );
        assert!(
            key.split(' ').count() <= 3,
            "{source}: {phrase:?} is longer than three words"
        );
        assert!(
            !words.trim().is_empty(),
            "{source}: {phrase:?} expands to nothing"
        );
        synonyms.entry(phrase.as_str(), format!("{:?}", words.trim()));
    }
    let mut intents = phf_codegen::Map::new();
    let mut seen = BTreeMap::new();
    for (class, words) in &vocab.intent {
        let code = INTENTS
            .iter()
            .position(|c| c == class)
            .unwrap_or_else(|| panic!("{source}: unknown intent class {class:?}"));
        for w in words {
            if let Some(other) = seen.insert(w.clone(), class.clone()) {
                panic!("{source}: {w:?} is in both {other} and {class}");
            }
            intents.entry(w.as_str(), code.to_string());
        }
    }
    let code = format!(
        "/// User words and phrases → the Gitea words they stand for (`index/vocabulary.toml`).\n\
         static SYNONYMS: phf::Map<&'static str, &'static str> = {};\n\
         /// Verb words → intent class index (`index/vocabulary.toml`).\n\
         static INTENT_WORDS: phf::Map<&'static str, u8> = {};\n",
        synonyms.build(),
        intents.build()
    );
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("vocabulary.rs");
    fs::write(&out, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}

#[derive(serde::Deserialize)]
struct UiLabels {
    actions: BTreeMap<String, Vec<String>>,
    settings: BTreeMap<String, Vec<String>>,
}

fn ui_labels() {
    let source = "index/ui-labels.toml";
    let labels: UiLabels = read_toml(source);
    let mut entries = String::new();
    for (label, operations) in labels.actions.iter().chain(&labels.settings) {
        assert!(
            label.trim().to_lowercase() == *label && !label.is_empty(),
            "{source}: label {label:?} must be lower-case, trimmed and not empty"
        );
        assert!(
            !operations.is_empty(),
            "{source}: {label:?} names no operation"
        );
        entries.push_str(&format!("    ({label:?}, &{operations:?}),\n"));
    }
    let code = format!(
        "/// Gitea's web UI's labels and the operationIds each names (`index/ui-labels.toml`).\n\
         static UI_LABELS: &[(&str, &[&str])] = &[\n{entries}];\n"
    );
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("ui_labels.rs");
    fs::write(&out, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}

/// The upstream swagger documents the full-document tests read: `cfg(shared_spec)` when all
/// three are present (in `GITEA_SPEC_DIR`, else `../shared/spec`), so that those tests are
/// ignored, with their reason, where they cannot run.
fn shared_spec() {
    println!("cargo::rustc-check-cfg=cfg(shared_spec)");
    println!("cargo::rerun-if-env-changed=GITEA_SPEC_DIR");
    let dir = match env::var_os("GITEA_SPEC_DIR").filter(|d| !d.is_empty()) {
        Some(d) => std::path::PathBuf::from(d),
        None => {
            Path::new(&env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("../shared/spec")
        }
    };
    if dir.is_dir() {
        println!("cargo::rerun-if-changed={}", dir.display());
    }
    let files = [
        "gitea-swagger.v1.json",
        "gitea-swagger.newest.v1.json",
        "forgejo-swagger.v1.json",
    ];
    if files.iter().all(|f| dir.join(f).is_file()) {
        println!("cargo::rustc-cfg=shared_spec");
    }
}

/// The git commit the binary is built from (`AEGIS_GIT_COMMIT`, for `--version`): the short
/// hash, `unknown` outside a git checkout.
fn git_commit() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo::rustc-env=AEGIS_GIT_COMMIT={commit}");
    // A new commit or a checkout changes HEAD or the ref it names (worktrees included).
    let mut watched = vec!["HEAD".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            println!("cargo::rerun-if-changed={path}");
        }
    }
}

fn main() {
    git_commit();
    shared_spec();
    vocabulary();
    ui_labels();
    let source = "spec/overrides.toml";
    let overrides: Overrides = read_toml(source);
    let mut map = phf_codegen::Map::new();
    for (operation_id, name) in &overrides.names {
        assert!(
            valid_name(name),
            "{source}: {operation_id} = {name:?} is not a valid action name"
        );
        map.entry(operation_id.as_str(), format!("{name:?}"));
    }
    let code = format!(
        "/// Action-name overrides from `spec/overrides.toml`, keyed by operationId.\n\
         static NAME_OVERRIDES: phf::Map<&'static str, &'static str> = {};\n",
        map.build()
    );
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("overrides.rs");
    fs::write(&out, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}

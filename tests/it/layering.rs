//! The layering of `src/`, checked from its `use` lines: every module may use only the
//! modules below it (ARCHITECTURE.md, "Imports point downstream only"), and only the transports
//! speak a wire protocol.

use std::collections::BTreeMap;
use std::path::Path;

/// The library's top-level modules, lowest first.
const LAYERS: [&str; 19] = [
    "digest", "spec", "catalog", "policy", "config", "search", "state", "store", "metrics",
    "outbound", "gitea", "exec", "audit", "render", "tools", "app", "doctor", "mcp", "http",
];

/// Crates that speak MCP or HTTP-server: only these modules may use them.
const WIRE: [(&str, &[&str]); 3] = [
    ("rmcp", &["mcp", "http"]),
    ("axum", &["mcp", "http"]),
    ("hyper", &["http"]),
];

/// The source of `dir`'s files, without their `#[cfg(test)]` modules.
fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a source file");
            let code = match text.find("#[cfg(test)]") {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            out.push((path.display().to_string(), code));
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for the crate roots and the CLI).
fn module_of(src: &Path, file: &str) -> Option<String> {
    let rel = Path::new(file).strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    let name = first.trim_end_matches(".rs").to_string();
    (!matches!(name.as_str(), "lib" | "main" | "cli")).then_some(name)
}

/// Every `crate::<module>` a source names, `use crate::{a, b::c}` groups included.
fn crate_references(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

#[test]
fn imports_point_downstream_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (file, code) in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let own = rank(&module).unwrap_or_else(|| {
            panic!("{file}: module {module} has no place in LAYERS; add it where it belongs")
        });
        *seen.entry(module.clone()).or_default() += 1;
        for dep in crate_references(code) {
            if dep == module {
                continue;
            }
            let theirs = rank(&dep)
                .unwrap_or_else(|| panic!("{file}: crate::{dep} is not a module in LAYERS"));
            assert!(
                theirs < own,
                "{file}: {module} uses crate::{dep}, which sits above it (imports point downstream only)"
            );
        }
        for (krate, allowed) in WIRE {
            let uses =
                code.contains(&format!("{krate}::")) || code.contains(&format!("use {krate}"));
            assert!(
                !uses || allowed.contains(&module.as_str()),
                "{file}: {module} uses {krate}; only {allowed:?} speak the wire protocol"
            );
        }
    }
    for layer in LAYERS {
        assert!(
            seen.contains_key(layer),
            "LAYERS names {layer}, which src/ no longer has"
        );
    }
}

#[test]
fn the_reference_scanner_sees_groups_and_paths() {
    let code = "use crate::{exec::Call, render};\nlet x = crate::outbound::clip(s, 3);";
    assert_eq!(crate_references(code), ["exec", "render", "outbound"]);
}

/// ARCHITECTURE.md names a test for each invariant; a renamed or deleted test must not leave
/// the document pointing at nothing. Also holds the document's layer order to `LAYERS`.
#[test]
fn architecture_names_tests_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let invariants = doc
        .split("## Invariants")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("an Invariants section");
    let mut named = 0;
    for quoted in invariants.split('`').skip(1).step_by(2) {
        let Some((module, test)) = quoted.split_once("::") else {
            continue;
        };
        let file = root.join("tests/it").join(format!("{module}.rs"));
        let code = std::fs::read_to_string(&file).unwrap_or_else(|e| {
            panic!("ARCHITECTURE.md names `{quoted}`: {}: {e}", file.display())
        });
        assert!(
            code.contains(&format!("fn {test}(")),
            "ARCHITECTURE.md names `{quoted}`, but {} has no such test",
            file.display()
        );
        named += 1;
    }
    assert!(named >= 12, "only {named} tests named under Invariants");
    let order = LAYERS.map(|l| format!("`{l}`")).join(", ");
    let flowing = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flowing.contains(&order),
        "ARCHITECTURE.md should list the layers in the order of LAYERS: {order}"
    );
}

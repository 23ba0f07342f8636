//! Compiles `spec/overrides.toml` into a `phf` map (`$OUT_DIR/overrides.rs`).

use std::collections::BTreeMap;
use std::env;
use std::fs;
use std::path::Path;

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

fn main() {
    let source = "spec/overrides.toml";
    println!("cargo::rerun-if-changed={source}");
    let text = fs::read_to_string(source).unwrap_or_else(|e| panic!("cannot read {source}: {e}"));
    let overrides: Overrides =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{source} is not valid: {e}"));
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

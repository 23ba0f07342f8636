//! The actions' input schemas, compiled for validation: once per action, on first use.

use std::sync::OnceLock;

use super::{Action, ActionId, Catalog};

/// Compiled input schemas, one per action of a catalog, compiled on first use and kept.
#[derive(Debug)]
pub struct Validators {
    compiled: Vec<OnceLock<Result<jsonschema::Validator, String>>>,
}

impl Validators {
    /// Room for every action of `catalog`.
    pub fn new(catalog: &Catalog) -> Validators {
        Validators {
            compiled: (0..catalog.len()).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The validator of action `id` (compiled now if it is the first use).
    pub fn get(&self, id: ActionId, action: &Action) -> Result<&jsonschema::Validator, String> {
        let cell = self.compiled.get(id.index()).ok_or("unknown action id")?;
        cell.get_or_init(|| {
            jsonschema::validator_for(&action.input_schema).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| format!("the input schema of {} does not compile: {e}", action.name))
    }
}

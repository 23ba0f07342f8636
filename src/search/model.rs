//! The learned ranking model (`index/model.json`, written by `aegis-gitea-mcp fit`): two linear
//! scorers over the features of `features.rs`, keyed by feature name.

use serde_json::{Map, Value, json};

use super::features;

/// The committed model, compiled in.
const COMMITTED: &str = include_str!("../../index/model.json");

/// Format version of the model file.
pub const FORMAT: u64 = 1;

/// Two linear scorers: stage one ranks every matched action, stage two re-ranks the best
/// `candidates` of stage one.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Stage-one weights (the first [`features::STAGE1`] features).
    pub stage1: Vec<f32>,
    /// Stage-two weights (all [`features::COUNT`] features).
    pub stage2: Vec<f32>,
    /// How many stage-one candidates stage two sees.
    pub candidates: usize,
    /// Free-form facts about the fit (training file, rows, settings), kept in the file.
    pub provenance: Value,
}

impl Model {
    /// The model committed in `index/model.json`.
    pub fn committed() -> Result<Model, String> {
        Model::parse(COMMITTED).map_err(|e| format!("index/model.json: {e}"))
    }

    /// A model with every weight zero (only for fitting).
    pub fn zero(candidates: usize) -> Model {
        Model {
            stage1: vec![0.0; features::STAGE1],
            stage2: vec![0.0; features::COUNT],
            candidates,
            provenance: Value::Null,
        }
    }

    /// Parses the JSON form. Unknown feature names are errors (the code and the file disagree);
    /// missing ones weigh zero.
    pub fn parse(text: &str) -> Result<Model, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if v["format"].as_u64() != Some(FORMAT) {
            return Err(format!("format must be {FORMAT}"));
        }
        let names = features::names();
        let weights = |key: &str, n: usize| -> Result<Vec<f32>, String> {
            let mut out = vec![0.0f32; n];
            let obj = v[key]
                .as_object()
                .ok_or_else(|| format!("`{key}` must be an object of weights"))?;
            for (name, w) in obj {
                let i = names[..n]
                    .iter()
                    .position(|x| x == name)
                    .ok_or_else(|| format!("`{key}` has the unknown feature {name:?}"))?;
                out[i] = w
                    .as_f64()
                    .filter(|w| w.is_finite())
                    .ok_or_else(|| format!("`{key}.{name}` must be a number"))?
                    as f32;
            }
            Ok(out)
        };
        let candidates = v["candidates"]
            .as_u64()
            .filter(|&c| (1..=10_000).contains(&c))
            .ok_or("`candidates` must be a positive integer")? as usize;
        Ok(Model {
            stage1: weights("stage1", features::STAGE1)?,
            stage2: weights("stage2", features::COUNT)?,
            candidates,
            provenance: v.get("provenance").cloned().unwrap_or(Value::Null),
        })
    }

    /// The JSON form (weights rounded to six decimals, names in feature order).
    pub fn to_json(&self) -> String {
        let names = features::names();
        let obj = |w: &[f32]| -> Value {
            let mut m = Map::new();
            for (name, &x) in names.iter().zip(w) {
                m.insert(name.clone(), json!(round6(x)));
            }
            Value::Object(m)
        };
        let v = json!({
            "format": FORMAT,
            "candidates": self.candidates,
            "provenance": self.provenance,
            "stage1": obj(&self.stage1),
            "stage2": obj(&self.stage2),
        });
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The same model with its weights rounded as the file stores them.
    pub fn rounded(mut self) -> Model {
        for w in self.stage1.iter_mut().chain(self.stage2.iter_mut()) {
            *w = round6(*w) as f32;
        }
        self
    }
}

fn round6(x: f32) -> f64 {
    (f64::from(x) * 1e6).round() / 1e6
}

/// Dot product of sparse features with weights.
pub fn dot(weights: &[f32], x: &[(u16, f32)]) -> f32 {
    x.iter()
        .map(|&(i, v)| weights.get(i as usize).copied().unwrap_or(0.0) * v)
        .sum()
}

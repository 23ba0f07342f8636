//! The learned ranking model (`index/model.json`, written by `aegis-gitea-mcp fit`): two linear
//! scorers over the features of `features.rs`, keyed by feature name.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::boost::{NO_SPLIT, Tree};
use super::features;

/// The committed model, compiled in.
const COMMITTED: &str = include_str!("../../index/model.json");

/// Format version of the model file.
pub const FORMAT: u64 = 1;

/// Per word of the query, its learned weights: one per verb class of the action, one per scope,
/// item and collection ([`WORD_CLASS`], [`WORD_SCOPE`], [`WORD_ITEM`]).
pub const WORD_WEIGHTS: usize = 14;
/// First of the verb-class weights (delete, create, update, list, get).
pub const WORD_CLASS: usize = 0;
/// First of the scope weights (in `Scope::ALL` order).
pub const WORD_SCOPE: usize = 5;
/// First of the collection / item weights.
pub const WORD_ITEM: usize = 12;

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
    /// Boosted trees over the stage-two features, added to the linear score of its best
    /// `boost_top` candidates (may be empty).
    pub trees: Vec<Tree>,
    /// How many of stage two's best candidates (by the linear score) the trees re-rank.
    pub boost_top: usize,
    /// Stage two's word × shape weights: per stemmed word of the query, how much it counts for
    /// an action of each verb class, scope, and item or collection (fitted jointly with
    /// `stage2`; a query's words count by their mean).
    pub words: BTreeMap<String, [f32; WORD_WEIGHTS]>,
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
            trees: Vec::new(),
            boost_top: 0,
            words: BTreeMap::new(),
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
        let mut trees = Vec::new();
        for (i, t) in v["trees"].as_array().into_iter().flatten().enumerate() {
            let nums = |key: &str| -> Result<Vec<f32>, String> {
                t[key]
                    .as_array()
                    .ok_or_else(|| format!("tree {i}: `{key}` must be an array"))?
                    .iter()
                    .map(|x| {
                        x.as_f64()
                            .filter(|x| x.is_finite())
                            .map(|x| x as f32)
                            .ok_or_else(|| format!("tree {i}: `{key}` must hold numbers"))
                    })
                    .collect()
            };
            let feature = t["feature"]
                .as_array()
                .ok_or_else(|| format!("tree {i}: `feature` must be an array"))?
                .iter()
                .map(|f| match f.as_str() {
                    None => Ok(NO_SPLIT),
                    Some(name) => names
                        .iter()
                        .position(|x| x == name)
                        .map(|p| p as u16)
                        .ok_or_else(|| format!("tree {i} has the unknown feature {name:?}")),
                })
                .collect::<Result<Vec<u16>, String>>()?;
            let threshold = nums("threshold")?;
            let leaf = nums("leaf")?;
            if threshold.len() != feature.len() || leaf.len() != feature.len() + 1 {
                return Err(format!("tree {i}: sizes do not make a complete tree"));
            }
            trees.push(Tree {
                feature,
                threshold,
                leaf,
            });
        }
        let boost_top = v["boost_top"].as_u64().unwrap_or(0) as usize;
        let mut words = BTreeMap::new();
        for (word, ws) in v["words"].as_object().into_iter().flatten() {
            let ws = ws
                .as_array()
                .filter(|a| a.len() == WORD_WEIGHTS)
                .ok_or_else(|| format!("`words.{word}` must hold {WORD_WEIGHTS} numbers"))?;
            let mut out = [0.0f32; WORD_WEIGHTS];
            for (o, w) in out.iter_mut().zip(ws) {
                *o = w
                    .as_f64()
                    .filter(|w| w.is_finite())
                    .ok_or_else(|| format!("`words.{word}` must hold numbers"))?
                    as f32;
            }
            words.insert(word.clone(), out);
        }
        Ok(Model {
            trees,
            boost_top,
            words,
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
        let trees: Vec<Value> = self
            .trees
            .iter()
            .map(|t| {
                json!({
                    "feature": t.feature.iter().map(|&f| {
                        if f == NO_SPLIT { Value::Null } else { json!(names[f as usize]) }
                    }).collect::<Vec<_>>(),
                    "threshold": t.threshold.iter().map(|&x| json!(round6(x))).collect::<Vec<_>>(),
                    "leaf": t.leaf.iter().map(|&x| json!(round6(x))).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut v = json!({
            "format": FORMAT,
            "candidates": self.candidates,
            "provenance": self.provenance,
            "stage1": obj(&self.stage1),
            "stage2": obj(&self.stage2),
        });
        if !trees.is_empty() {
            v["boost_top"] = json!(self.boost_top);
            v["trees"] = Value::Array(trees);
        }
        if !self.words.is_empty() {
            let mut m = Map::new();
            for (w, ws) in &self.words {
                m.insert(
                    w.clone(),
                    Value::Array(ws.iter().map(|&x| json!(round6(x))).collect()),
                );
            }
            v["words"] = Value::Object(m);
        }
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The same model with its weights rounded as the file stores them.
    pub fn rounded(mut self) -> Model {
        for w in self.stage1.iter_mut().chain(self.stage2.iter_mut()) {
            *w = round6(*w) as f32;
        }
        for t in &mut self.trees {
            for w in t.threshold.iter_mut().chain(t.leaf.iter_mut()) {
                *w = round6(*w) as f32;
            }
        }
        for ws in self.words.values_mut() {
            for w in ws.iter_mut() {
                *w = round6(*w) as f32;
            }
        }
        self
    }
}

fn round6(x: f32) -> f64 {
    (f64::from(x) * 1e6).round() / 1e6
}

/// Sparse features as a dense vector of every feature.
pub fn dense(x: &[(u16, f32)]) -> Vec<f32> {
    let mut d = vec![0.0f32; features::COUNT];
    for &(i, v) in x {
        if let Some(slot) = d.get_mut(i as usize) {
            *slot = v;
        }
    }
    d
}

/// Dot product of two dense vectors (the shorter's length), summed in eight lanes: one running
/// sum is a chain of dependent additions, eight independent ones the compiler vectorises.
pub fn dot_dense(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let n = a.len().min(b.len());
    let (a, b) = (a[..n].chunks_exact(LANES), b[..n].chunks_exact(LANES));
    let tail: f32 = a
        .remainder()
        .iter()
        .zip(b.remainder())
        .map(|(x, y)| x * y)
        .sum();
    let mut acc = [0.0f32; LANES];
    for (x, y) in a.zip(b) {
        for k in 0..LANES {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Dot product of sparse features with weights.
pub fn dot(weights: &[f32], x: &[(u16, f32)]) -> f32 {
    x.iter()
        .map(|&(i, v)| weights.get(i as usize).copied().unwrap_or(0.0) * v)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The eight-lane sum is the plain sum up to rounding, for any length (the tail past
        /// the last full lane included) and for vectors of different lengths.
        #[test]
        fn dot_dense_is_the_dot_product(
            a in proptest::collection::vec(-10.0f32..10.0, 0..80),
            b in proptest::collection::vec(-10.0f32..10.0, 0..80),
        ) {
            let n = a.len().min(b.len());
            let exact: f64 = (0..n).map(|k| f64::from(a[k]) * f64::from(b[k])).sum();
            let scale: f64 = (0..n).map(|k| f64::from(a[k] * b[k]).abs()).sum();
            let got = f64::from(dot_dense(&a, &b));
            prop_assert!((got - exact).abs() <= 1e-5 * (1.0 + scale), "{got} vs {exact}");
        }
    }

    #[test]
    fn dot_dense_counts_every_element() {
        let a: Vec<f32> = (1..=19).map(|k| k as f32).collect();
        let ones = vec![1.0f32; 19];
        assert_eq!(dot_dense(&a, &ones), 190.0);
        assert_eq!(dot_dense(&a[..3], &ones), 6.0);
        assert_eq!(dot_dense(&[], &ones), 0.0);
    }
}

//! Labelled needs: queries people wrote for an operation, keyed by operationId
//! (`index/examples.jsonl`, written by `aegis-gitea-mcp fit` from the training set).
//!
//! They are indexed as a field of their operation's document and, one by one, for
//! nearest-example similarity. Keyed by operationId, they carry over to any document whose
//! operationIds match (older Gitea, Forgejo); an operation without examples is still found by
//! its own text and shape.
//!
//! Gitea's web UI's labels (`index/ui-labels.toml`: "Time Tracker", "Sync fork") are read as
//! needs too, one more example of each operation they name, wherever examples are drawn from
//! labelled rows (the fit, each cross-validation fold).

use std::collections::{BTreeMap, BTreeSet};

use super::EvalRow;

include!(concat!(env!("OUT_DIR"), "/ui_labels.rs"));

/// Gitea's web UI's labels, each with the operationIds it names (`index/ui-labels.toml`).
pub fn ui_labels() -> &'static [(&'static str, &'static [&'static str])] {
    UI_LABELS
}

/// The committed examples, compiled in.
const COMMITTED: &str = include_str!("../../index/examples.jsonl");

/// Labelled needs per operationId.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Examples {
    by_operation: BTreeMap<String, Vec<String>>,
    /// The needs written in the typo style (misspelt on purpose): their words are not evidence
    /// that a word is spelled right.
    misspelt: BTreeSet<String>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Line {
    op: String,
    q: Vec<String>,
    /// Positions in `q` of the needs written in the typo style.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    typo: Vec<usize>,
}

/// The style of the training set whose needs are misspelt on purpose.
pub const TYPO_STYLE: &str = "typo";

impl Examples {
    /// No examples at all (ranking by text and shape only).
    pub fn none() -> Examples {
        Examples::default()
    }

    /// The examples committed in `index/examples.jsonl`.
    pub fn committed() -> Result<Examples, String> {
        Examples::parse(COMMITTED).map_err(|e| format!("index/examples.jsonl: {e}"))
    }

    /// Every row's query, as an example of each operationId it is labelled with, and each of
    /// Gitea's web UI's labels ([`ui_labels`]) as an example of the operations it names.
    pub fn from_rows<'a>(rows: impl IntoIterator<Item = &'a EvalRow>) -> Examples {
        let mut by_operation: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut misspelt = BTreeSet::new();
        for row in rows {
            if row.cat == TYPO_STYLE {
                misspelt.insert(row.q.clone());
            }
            for op in &row.expect {
                by_operation
                    .entry(op.clone())
                    .or_default()
                    .push(row.q.clone());
            }
        }
        // Gitea's web UI's labels are needs too: each joins the examples of the operations it
        // names (index/ui-labels.toml; docs/search.md, round 38).
        for (label, operations) in UI_LABELS {
            for op in *operations {
                by_operation
                    .entry((*op).to_string())
                    .or_default()
                    .push((*label).to_string());
            }
        }
        for qs in by_operation.values_mut() {
            qs.sort();
            qs.dedup();
        }
        Examples {
            by_operation,
            misspelt,
        }
    }

    /// Parses the JSON Lines form (`{"op": …, "q": [...]}` per line).
    pub fn parse(text: &str) -> Result<Examples, String> {
        let mut by_operation = BTreeMap::new();
        let mut misspelt = BTreeSet::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let l: Line = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
            for &t in &l.typo {
                let q =
                    l.q.get(t)
                        .ok_or_else(|| format!("line {}: typo position {t} is past `q`", i + 1))?;
                misspelt.insert(q.clone());
            }
            by_operation.insert(l.op, l.q);
        }
        Ok(Examples {
            by_operation,
            misspelt,
        })
    }

    /// The JSON Lines form, one operation per line, sorted.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for (op, q) in &self.by_operation {
            let line = Line {
                op: op.clone(),
                q: q.clone(),
                typo: (0..q.len())
                    .filter(|&i| self.misspelt.contains(&q[i]))
                    .collect(),
            };
            out.push_str(&serde_json::to_string(&line).unwrap_or_default());
            out.push('\n');
        }
        out
    }

    /// The examples of `operation_id`.
    pub fn of(&self, operation_id: &str) -> &[String] {
        self.by_operation
            .get(operation_id)
            .map_or(&[], Vec::as_slice)
    }

    /// Whether `need` was written misspelt on purpose (the typo style).
    pub fn is_misspelt(&self, need: &str) -> bool {
        self.misspelt.contains(need)
    }

    /// Number of operations with examples.
    pub fn operations(&self) -> usize {
        self.by_operation.len()
    }
}

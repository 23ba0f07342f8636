//! Labelled needs: queries people wrote for an operation, keyed by operationId
//! (`index/examples.jsonl`, written by `aegis-gitea-mcp fit` from the training set).
//!
//! They are indexed as a field of their operation's document and, one by one, for
//! nearest-example similarity. Keyed by operationId, they carry over to any document whose
//! operationIds match (older Gitea, Forgejo); an operation without examples is still found by
//! its own text and shape.

use std::collections::BTreeMap;

use super::EvalRow;

/// The committed examples, compiled in.
const COMMITTED: &str = include_str!("../../index/examples.jsonl");

/// Labelled needs per operationId.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Examples {
    by_operation: BTreeMap<String, Vec<String>>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Line {
    op: String,
    q: Vec<String>,
}

impl Examples {
    /// No examples at all (ranking by text and shape only).
    pub fn none() -> Examples {
        Examples::default()
    }

    /// The examples committed in `index/examples.jsonl`.
    pub fn committed() -> Result<Examples, String> {
        Examples::parse(COMMITTED).map_err(|e| format!("index/examples.jsonl: {e}"))
    }

    /// Every row's query, as an example of each operationId it is labelled with.
    pub fn from_rows<'a>(rows: impl IntoIterator<Item = &'a EvalRow>) -> Examples {
        let mut by_operation: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for row in rows {
            for op in &row.expect {
                by_operation
                    .entry(op.clone())
                    .or_default()
                    .push(row.q.clone());
            }
        }
        for qs in by_operation.values_mut() {
            qs.sort();
            qs.dedup();
        }
        Examples { by_operation }
    }

    /// Parses the JSON Lines form (`{"op": …, "q": [...]}` per line).
    pub fn parse(text: &str) -> Result<Examples, String> {
        let mut by_operation = BTreeMap::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let l: Line = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
            by_operation.insert(l.op, l.q);
        }
        Ok(Examples { by_operation })
    }

    /// The JSON Lines form, one operation per line, sorted.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for (op, q) in &self.by_operation {
            let line = Line {
                op: op.clone(),
                q: q.clone(),
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

    /// Number of operations with examples.
    pub fn operations(&self) -> usize {
        self.by_operation.len()
    }
}

//! BM25 over small in-RAM corpora, one per field, so that each field's score is a feature of its
//! own (a single combined score, as a general-purpose engine returns, would hide which field
//! matched). Documents are bags of interned token ids; scoring a query term walks its postings.

use rustc_hash::FxHashMap as HashMap;

/// BM25's term-frequency saturation.
pub const K1: f32 = 1.2;
/// BM25's length normalisation.
pub const B: f32 = 0.75;

/// Token strings → dense ids, shared by every corpus of one index.
#[derive(Debug, Default, Clone)]
pub struct Dictionary {
    /// Keyed by words of the API document, which may come from the instance: std's seeded
    /// hashing, so no document can be written to collide (the other maps key by ids).
    ids: std::collections::HashMap<String, u32>,
}

impl Dictionary {
    /// The id of `token`, adding it when new.
    pub fn intern(&mut self, token: &str) -> u32 {
        if let Some(&id) = self.ids.get(token) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(token.to_string(), id);
        id
    }

    /// The id of a known token.
    pub fn get(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }
}

/// One term's postings: its idf and, per document, the saturated and length-normalised term
/// frequency (`tf·(k1+1) / (tf + k1·(1−b+b·len/avg))`), precomputed.
#[derive(Debug, Clone, Default)]
struct Postings {
    idf: f32,
    docs: Vec<(u32, f32)>,
}

/// One field over every document.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    terms: HashMap<u32, Postings>,
}

impl Corpus {
    /// Indexes `docs` (one bag of token ids per document, repeats counting as frequency).
    pub fn build(docs: &[Vec<u32>]) -> Corpus {
        let n = docs.len().max(1) as f32;
        let avg = (docs.iter().map(Vec::len).sum::<usize>() as f32 / n).max(1.0);
        let mut terms: HashMap<u32, Postings> = HashMap::default();
        for (d, doc) in docs.iter().enumerate() {
            let mut tf: HashMap<u32, u32> = HashMap::default();
            for &t in doc {
                *tf.entry(t).or_default() += 1;
            }
            let norm = K1 * (1.0 - B + B * doc.len() as f32 / avg);
            let mut counted: Vec<(u32, u32)> = tf.into_iter().collect();
            counted.sort_unstable();
            for (t, f) in counted {
                let f = f as f32;
                terms
                    .entry(t)
                    .or_default()
                    .docs
                    .push((d as u32, f * (K1 + 1.0) / (f + norm)));
            }
        }
        for p in terms.values_mut() {
            let df = p.docs.len() as f32;
            p.idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        }
        Corpus { terms }
    }

    /// Adds `weight × BM25(term)` of every document holding `term` into
    /// `out[doc * stride + slot]`.
    pub fn add(&self, term: u32, weight: f32, out: &mut [f32], stride: usize, slot: usize) {
        if let Some(p) = self.terms.get(&term) {
            let w = weight * p.idf;
            for &(d, tf) in &p.docs {
                out[d as usize * stride + slot] += w * tf;
            }
        }
    }

    /// Calls `f(doc, weight × BM25(term))` for every document holding `term`.
    pub fn each(&self, term: u32, weight: f32, mut f: impl FnMut(usize, f32)) {
        if let Some(p) = self.terms.get(&term) {
            let w = weight * p.idf;
            for &(d, tf) in &p.docs {
                f(d as usize, w * tf);
            }
        }
    }

    /// Heap bytes held (approximate).
    pub fn heap_bytes(&self) -> usize {
        self.terms
            .values()
            .map(|p| p.docs.capacity() * 8 + 32)
            .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rarer_terms_and_shorter_documents_score_higher() {
        let c = Corpus::build(&[vec![0, 1], vec![0, 2, 3, 4, 5, 6], vec![0]]);
        let mut out = vec![0.0; 3];
        c.add(1, 1.0, &mut out, 1, 0);
        assert!(out[0] > 0.0 && out[1] == 0.0);
        let mut common = vec![0.0; 3];
        c.add(0, 1.0, &mut common, 1, 0);
        assert!(common[0] < out[0], "a term in every document weighs less");
        assert!(common[2] > common[1], "shorter documents score higher");
    }
}

//! The catalog's per-field BM25 computed through a tantivy index, beside the same computed by
//! `bm25.rs`: the measurement behind the choice of `bm25.rs` as the index (`docs/search.md`,
//! "tantivy as the index"; `benches/find.rs` times both).
//!
//! Both index the catalog fields of [`text::document`] with the same analysis (simple tokenizer,
//! lower case, English stemmer) and score a query's stemmed terms per field into a dense
//! `actions × CATALOG_FIELDS` array, as stage one needs them: tantivy by one `TermQuery` weight
//! and scorer per term and field, `bm25.rs` by one postings walk per term and field.

use tantivy::query::{EnableScoring, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::{DocSet, Index, IndexReader, Searcher, TERMINATED, TantivyDocument, Term};

use super::bm25::{Corpus, Dictionary};
use super::text::{self, FIELDS};
use super::{analyzer, stems};
use crate::catalog::Catalog;

/// Fields scored: every field of the document but the labelled examples.
pub const CATALOG_FIELDS: usize = FIELDS - 1;

const TOKENIZER: &str = "aegis";

/// The analysed (stemmed) terms of a query, as both scorers take them.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut az = analyzer();
    let mut out = stems(&mut az, &super::vocabulary::canonical_text(query));
    out.sort();
    out.dedup();
    out
}

/// The catalog's fields in a tantivy index held in RAM (one segment, documents in catalog
/// order, so a tantivy document id is an action's position).
pub struct TantivyFields {
    fields: Vec<Field>,
    searcher: Searcher,
    /// Kept so the searcher's segment stays open.
    _reader: IndexReader,
    actions: usize,
}

impl TantivyFields {
    /// Indexes the catalog.
    pub fn build(catalog: &Catalog) -> Result<TantivyFields, String> {
        let mut sb = Schema::builder();
        let opts = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let fields: Vec<Field> = (0..CATALOG_FIELDS)
            .map(|f| sb.add_text_field(text::FieldKind::ALL[f].as_str(), opts.clone()))
            .collect();
        let index = Index::create_in_ram(sb.build());
        index.tokenizers().register(TOKENIZER, analyzer());
        let mut writer = index
            .writer_with_num_threads::<TantivyDocument>(1, 15_000_000)
            .map_err(|e| e.to_string())?;
        for a in catalog.actions() {
            let texts = text::document(a);
            let mut doc = TantivyDocument::default();
            for (f, t) in fields.iter().zip(&texts) {
                doc.add_text(*f, t);
            }
            writer.add_document(doc).map_err(|e| e.to_string())?;
        }
        writer.commit().map_err(|e| e.to_string())?;
        let reader = index.reader().map_err(|e| e.to_string())?;
        let searcher = reader.searcher();
        if searcher.segment_readers().len() != 1 {
            return Err("the catalog did not fit one segment".into());
        }
        Ok(TantivyFields {
            fields,
            searcher,
            _reader: reader,
            actions: catalog.len(),
        })
    }

    /// Adds each term's BM25 per field into `out[action * CATALOG_FIELDS + field]`
    /// (`out.len()` = actions × [`CATALOG_FIELDS`]).
    pub fn score(&self, terms: &[String], out: &mut [f32]) -> Result<(), String> {
        debug_assert_eq!(out.len(), self.actions * CATALOG_FIELDS);
        let segment = &self.searcher.segment_readers()[0];
        let scoring = EnableScoring::enabled_from_searcher(&self.searcher);
        for t in terms {
            for (f, &field) in self.fields.iter().enumerate() {
                let query = TermQuery::new(
                    Term::from_field_text(field, t),
                    IndexRecordOption::WithFreqs,
                );
                let weight = query.weight(scoring).map_err(|e| e.to_string())?;
                let mut scorer = weight.scorer(segment, 1.0).map_err(|e| e.to_string())?;
                let mut doc = scorer.doc();
                while doc != TERMINATED {
                    out[doc as usize * CATALOG_FIELDS + f] += scorer.score();
                    doc = scorer.advance();
                }
            }
        }
        Ok(())
    }
}

/// The same fields in `bm25.rs` corpora (what the index uses).
pub struct OwnFields {
    dict: Dictionary,
    fields: Vec<Corpus>,
}

impl OwnFields {
    /// Indexes the catalog.
    pub fn build(catalog: &Catalog) -> OwnFields {
        let mut az = analyzer();
        let mut dict = Dictionary::default();
        let mut docs: Vec<Vec<Vec<u32>>> = (0..CATALOG_FIELDS)
            .map(|_| Vec::with_capacity(catalog.len()))
            .collect();
        for a in catalog.actions() {
            for (f, t) in text::document(a).iter().enumerate() {
                docs[f].push(stems(&mut az, t).iter().map(|s| dict.intern(s)).collect());
            }
        }
        OwnFields {
            dict,
            fields: docs.iter().map(|d| Corpus::build(d)).collect(),
        }
    }

    /// As [`TantivyFields::score`].
    pub fn score(&self, terms: &[String], out: &mut [f32]) {
        for t in terms {
            if let Some(id) = self.dict.get(t) {
                for (f, corpus) in self.fields.iter().enumerate() {
                    corpus.add(id, 1.0, out, CATALOG_FIELDS, f);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;

    /// Both scorers rank the same way: same matches, scores within tantivy's lossy field-length
    /// encoding wherever a field averages a token or more per action (`bm25.rs` floors the
    /// average length at one token; the fixture's descriptions average fewer).
    #[test]
    fn tantivy_and_bm25_agree() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gitea-mini.swagger.json"
        );
        let spec = Spec::parse(&std::fs::read(path).unwrap()).unwrap();
        let catalog = Catalog::build(&spec).unwrap();
        let t = TantivyFields::build(&catalog).unwrap();
        let o = OwnFields::build(&catalog);
        let n = catalog.len() * CATALOG_FIELDS;
        let mut az = analyzer();
        let long_enough: Vec<bool> = (0..CATALOG_FIELDS)
            .map(|f| {
                let tokens: usize = catalog
                    .actions()
                    .iter()
                    .map(|a| stems(&mut az, &text::document(a)[f]).len())
                    .sum();
                tokens >= catalog.len()
            })
            .collect();
        assert!(long_enough.iter().filter(|&&l| l).count() >= 4);
        for q in [
            "list branches",
            "merge the pull request",
            "delete a label from an issue",
        ] {
            let terms = query_terms(q);
            let (mut a, mut b) = (vec![0.0f32; n], vec![0.0f32; n]);
            t.score(&terms, &mut a).unwrap();
            o.score(&terms, &mut b);
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert_eq!(*x > 0.0, *y > 0.0, "{q}: the same documents match");
                if long_enough[k % CATALOG_FIELDS] {
                    assert!((x - y).abs() <= 0.1 * y.max(0.1), "{q}: {x} vs {y}");
                }
            }
        }
    }
}

//! Finding the right action for a need described in the user's own words.
//!
//! Each action is a document with eight fields: name words, operationId words, summary,
//! description, path words, parameter names, a *capability* text generated from its body schema
//! and query parameters ([`text`]), and the labelled needs people wrote for it
//! (`index/examples.jsonl`, [`Examples`]). A query is analysed first ([`vocabulary::analyse`]:
//! values removed, general forge words mapped to Gitea's, typos corrected against the catalog's
//! own words, verb intent and scope cues noted). Ranking then has two linear stages whose
//! weights are learned from labelled needs ([`fit`], `index/model.json`): stage one scores
//! every matched action by BM25 per field and nearest-example similarity; stage two re-ranks
//! its best candidates with features of the action's shape — verb class, scope, item or
//! collection, the resource its path ends in — against the query's cues ([`features`]).
//!
//! The index knows nothing about policy or transports: it returns positions in
//! [`Catalog::actions`] with scores.

mod bm25;
pub mod boost;
mod eval;
pub mod examples;
pub mod features;
pub mod fit;
pub mod model;
pub mod paired;
pub mod structure;
pub mod tantivy_fields;
pub mod text;
mod translation;
pub mod vocabulary;

// Fx hashing for maps keyed by token ids and by words of the committed labelled needs, looked
// up several hundred times per query; maps keyed by the API document's own words (which may
// come from the instance) keep std's seeded hashing.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::{Arc, OnceLock};

use tantivy::tokenizer::{
    Language, LowerCaser, RawTokenizer, SimpleTokenizer, Stemmer, TextAnalyzer,
};

pub use eval::{CvReport, EvalReport, EvalRow, Metrics, evaluate, folds, parse_eval_set};
pub use examples::{Examples, ui_labels};
pub use model::Model;
pub use vocabulary::{Analysis, Intent};

use crate::catalog::{ActionId, Catalog, Domain};
use bm25::{Corpus, Dictionary};
pub use structure::Relation;
use structure::{Scope, Shape};
use text::{FIELDS, FieldKind};
use vocabulary::{Lexicon, NeedsWords, Origin, analyse_with};

/// The score given to an action named exactly by the query (above any other score).
pub const EXACT_MATCH_SCORE: f32 = 10_000.0;

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 512;

/// Errors from building the index or searching it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The query is longer than [`MAX_QUERY_CHARS`].
    #[error(
        "the query is {len} characters long; at most {MAX_QUERY_CHARS} are accepted: describe the need in a sentence"
    )]
    QueryTooLong {
        /// Its length in characters.
        len: usize,
    },
    /// The query has no words to search for.
    #[error("the query is empty: describe what you want to do, e.g. \"list open pull requests\"")]
    EmptyQuery,
    /// The index could not be built (reported once at start-up).
    #[error("the search index is unavailable: {0}")]
    Unavailable(String),
}

/// Options of one search.
#[derive(Debug, Clone, Copy)]
pub struct SearchOptions {
    /// How many hits to return.
    pub limit: usize,
    /// Only actions of this domain.
    pub domain: Option<Domain>,
    /// Only read-only actions (`Some(true)`) or only writing ones (`Some(false)`).
    pub read_only: Option<bool>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 5,
            domain: None,
            read_only: None,
        }
    }
}

/// One result: an action of the catalog the index was built from, and its relevance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The action (`catalog[hit.action]`).
    pub action: ActionId,
    /// Relevance (higher is better; only comparable within one search).
    pub score: f32,
}

/// The search index, built on a background thread so that start-up (and MCP `initialize`)
/// does not wait for it; the first search waits if it must.
#[derive(Debug, Default)]
pub struct LazyIndex {
    cell: OnceLock<Result<SearchIndex, String>>,
}

impl LazyIndex {
    /// Starts building the index of `catalog`.
    pub fn start(catalog: Arc<Catalog>) -> Arc<LazyIndex> {
        let lazy = Arc::new(LazyIndex::default());
        let target = Arc::clone(&lazy);
        let spawned = std::thread::Builder::new()
            .name("search-index".into())
            .spawn(move || {
                let _ = target
                    .cell
                    .set(SearchIndex::build(&catalog).map_err(|e| e.to_string()));
            });
        if let Err(e) = spawned {
            let _ = lazy
                .cell
                .set(Err(format!("cannot start the index thread: {e}")));
        }
        lazy
    }

    /// The index, waiting for it to be built.
    pub fn wait(&self) -> Result<&SearchIndex, Error> {
        self.cell
            .wait()
            .as_ref()
            .map_err(|e| Error::Unavailable(e.clone()))
    }

    /// The index if it is built already.
    pub fn ready(&self) -> Option<&SearchIndex> {
        self.cell.get().and_then(|r| r.as_ref().ok())
    }
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// The analysis of [`analyzer`], each distinct token stemmed once: the index of the newest Gitea
/// document and its labelled needs stems some 46,500 tokens of under 3,000 distinct words, and
/// the stemmer took ≈ 15 % of the build (`docs/benchmarks.md`, round 54). Its stems come out as
/// [`stems`]' would (the test against [`analyzer`] keeps the two pipelines alike).
struct StemMemo {
    /// Tokens, lower-cased: the analysis before the stemmer.
    tokens: TextAnalyzer,
    /// The stemmer alone, over one whole token.
    stemmer: TextAnalyzer,
    /// Lower-cased token → its stem. Keyed by words of the API document: std's seeded hashing,
    /// as [`Dictionary`].
    memo: std::collections::HashMap<String, String>,
}

impl StemMemo {
    fn new() -> StemMemo {
        StemMemo {
            tokens: TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(LowerCaser)
                .build(),
            stemmer: TextAnalyzer::builder(RawTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
            memo: std::collections::HashMap::new(),
        }
    }

    /// Calls `each` with the stem of every token of `text`, in order.
    fn each(&mut self, text: &str, mut each: impl FnMut(&str)) {
        let mut stream = self.tokens.token_stream(text);
        while let Some(tok) = stream.next() {
            let word = tok.text.as_str();
            if let Some(stem) = self.memo.get(word) {
                each(stem);
                continue;
            }
            let mut one = self.stemmer.token_stream(word);
            // The raw tokenizer gives the whole word as one token, and the stemmer keeps it.
            let stem = one
                .next()
                .map_or_else(|| word.to_string(), |t| t.text.clone());
            each(&stem);
            self.memo.insert(word.to_string(), stem);
        }
    }

    /// The ids in `dict` of the stems of `text`'s tokens, in order (new ones added).
    fn ids(&mut self, text: &str, dict: &mut Dictionary) -> Vec<u32> {
        let mut out = Vec::new();
        self.each(text, |s| out.push(dict.intern(s)));
        out
    }
}

/// The analysed tokens (lower-cased, stemmed) of `text`, after canonical spelling.
fn stems(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(tok) = stream.next() {
        out.push(tok.text.clone());
    }
    out
}

/// Word lists of an action's shape as token ids.
#[derive(Debug, Clone, Default)]
struct ShapeIds {
    name_nouns: Vec<u32>,
    resource: Vec<u32>,
    parent: Vec<u32>,
    path: Vec<u32>,
    /// Per identifier of the path beyond the owner, what it names (`Shape::id_words`).
    id_nouns: Vec<Vec<u32>>,
}

/// Everything derived from the catalog alone (shared by every examples/model combination, so
/// cross-validation builds it once).
pub(crate) struct Base {
    lexicon: Lexicon,
    dict: Dictionary,
    /// One corpus per field but the examples.
    fields: Vec<Corpus>,
    shapes: Vec<Shape>,
    /// Per action, whether it undoes: a DELETE, or an un-verb in its operationId
    /// (`repoUnDismissPullReview`, `repoUnresolvePullReviewComment`).
    undoes: Vec<bool>,
    /// Per action, whether it is a check: a GET that answers with no body (`204`: yes, `404`:
    /// no — `orgIsMember`, `userCheckFollowing`).
    checks: Vec<bool>,
    shape_ids: Vec<ShapeIds>,
    /// Per action, the id of its resource's first word (`shape_ids[i].resource`'s first), in
    /// one array: stage one reads it for every action, and reading it through `shape_ids`
    /// followed a pointer for each.
    resource_heads: Vec<Option<u32>>,
    /// Sorted token ids of every action's resource and name nouns: the words that can head a
    /// need's object.
    nouns: Vec<u32>,
    /// Sorted token ids of each action's own text (every field but the examples).
    doc_tokens: Vec<Vec<u32>>,
    /// Per action, parallel to `doc_tokens`: the fields (bit `f`) each token is in.
    field_masks: Vec<Vec<u8>>,
    /// Per token id, the actions whose own text has it, ascending (`doc_tokens` inverted:
    /// one walk per token instead of one per field and token).
    token_docs: Vec<Vec<u32>>,
    /// Inverse document frequency of each token over the actions' own text.
    idf: HashMap<u32, f32>,
    /// Sorted token ids of each action's name, operationId, summary and path: what learned
    /// associations point at.
    core_tokens: Vec<Vec<u32>>,
    /// The same with the capability text's: the words a need is read as a translation of
    /// (`translation.rs`; "make it private" is said in `EditOrgOption.visibility`'s words).
    translated: Vec<Vec<u32>>,
    /// Exact names and operationIds, for exact lookups.
    exact: std::collections::HashMap<String, usize>,
    /// The same, lower-cased, as a fallback.
    exact_lower: std::collections::HashMap<String, usize>,
    operation_ids: Vec<String>,
    /// Per action, its own words read as a need (see [`own_need`]).
    own_needs: Vec<String>,
    /// Token ids of the scope-cue words: organisation, team, repository, user.
    cue_ids: [Option<u32>; 4],
    /// Per action, the actions on the same resource with their relation, by position (that
    /// is, by name).
    siblings: Vec<Vec<(u32, Relation)>>,
}

/// Per token id, the documents that hold it, ascending.
fn invert(docs: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        for &t in d {
            let t = t as usize;
            if out.len() <= t {
                out.resize_with(t + 1, Vec::new);
            }
            out[t].push(i as u32);
        }
    }
    out
}

/// For every action, its siblings on the same resource (see [`Relation`]).
fn siblings_of(catalog: &Catalog) -> Vec<Vec<(u32, Relation)>> {
    let keys: Vec<(String, String, bool)> = catalog
        .actions()
        .iter()
        .map(|a| structure::resource_key(&a.path))
        .collect();
    let mut groups: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        if !k.0.is_empty() {
            groups.entry(k.0.as_str()).or_default().push(i);
        }
    }
    let actions = catalog.actions();
    keys.iter()
        .enumerate()
        .map(|(i, (key, root, item))| {
            let Some(group) = groups.get(key.as_str()) else {
                return Vec::new();
            };
            group
                .iter()
                .filter(|&&j| j != i)
                .filter_map(|&j| {
                    let (_, r, it) = &keys[j];
                    let rel = if r != root {
                        if actions[j].method != actions[i].method || it != item {
                            return None;
                        }
                        Relation::OtherScope
                    } else if it == item {
                        Relation::OtherVerb
                    } else {
                        Relation::ItemOrCollection
                    };
                    Some((j as u32, rel))
                })
                .collect()
        })
        .collect()
}

impl Base {
    /// The action the query names exactly: the whole query, in any case, or one of its words
    /// written as an identifier and typed as the document spells it ("what does
    /// `issueCreateComment` take", "gitea_pull_merge's arguments"). Inside a sentence only an
    /// identifier counts, so that a plain word equal to some document's operationId does not.
    fn named_action(&self, trimmed: &str) -> Option<usize> {
        let word = |chunk: &str| {
            let bare = chunk
                .trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                .trim_end_matches("'s")
                .trim_end_matches("’s");
            let identifier = bare.contains('_') || bare.chars().skip(1).any(char::is_uppercase);
            identifier.then(|| self.exact.get(bare)).flatten()
        };
        self.exact
            .get(trimmed)
            .or_else(|| self.exact_lower.get(&trimmed.to_ascii_lowercase()))
            .or_else(|| trimmed.split_whitespace().find_map(word))
            .copied()
    }

    fn build(catalog: &Catalog) -> Base {
        let mut az = StemMemo::new();
        let mut dict = Dictionary::default();
        let n = catalog.len();
        let mut field_docs: Vec<Vec<Vec<u32>>> =
            (0..FIELDS - 1).map(|_| Vec::with_capacity(n)).collect();
        let mut bags = Vec::with_capacity(n);
        let mut doc_tokens = Vec::with_capacity(n);
        let mut core_tokens = Vec::with_capacity(n);
        let mut translated = Vec::with_capacity(n);
        let mut field_masks = Vec::with_capacity(n);
        const CORE: [FieldKind; 4] = [
            FieldKind::Name,
            FieldKind::OperationId,
            FieldKind::Summary,
            FieldKind::Path,
        ];
        for a in catalog.actions() {
            let texts = text::document(a);
            let mut all = Vec::new();
            let mut core = Vec::new();
            let mut capability = Vec::new();
            let mut per_field = Vec::with_capacity(FIELDS - 1);
            for (f, t) in texts.iter().enumerate() {
                let ids = az.ids(t, &mut dict);
                all.extend_from_slice(&ids);
                let mut set = ids.clone();
                set.sort_unstable();
                set.dedup();
                per_field.push(set);
                if CORE.contains(&FieldKind::ALL[f]) {
                    core.extend_from_slice(&ids);
                } else if FieldKind::ALL[f] == FieldKind::Capability {
                    capability.extend_from_slice(&ids);
                }
                field_docs[f].push(ids);
            }
            all.sort_unstable();
            all.dedup();
            field_masks.push(
                all.iter()
                    .map(|&t| {
                        per_field
                            .iter()
                            .enumerate()
                            .filter(|(_, set)| contains(set, t))
                            .fold(0u8, |m, (f, _)| m | 1 << f)
                    })
                    .collect(),
            );
            doc_tokens.push(all);
            core.sort_unstable();
            core.dedup();
            capability.extend_from_slice(&core);
            capability.sort_unstable();
            capability.dedup();
            translated.push(capability);
            core_tokens.push(core);
            bags.push(surface_words(&texts));
        }
        let fields = field_docs.iter().map(|d| Corpus::build(d)).collect();
        let mut df: HashMap<u32, f32> = HashMap::default();
        for d in &doc_tokens {
            for &t in d {
                *df.entry(t).or_default() += 1.0;
            }
        }
        let idf = df
            .into_iter()
            .map(|(t, f)| (t, (1.0 + (n as f32 - f + 0.5) / (f + 0.5)).ln()))
            .collect();
        let lexicon = Lexicon::new(bags.iter().map(|b| b.iter().map(String::as_str)));
        let shapes: Vec<Shape> = catalog.actions().iter().map(structure::shape_of).collect();
        let undoes = undoing_actions(catalog, &shapes);
        let checks = catalog
            .actions()
            .iter()
            .map(|a| {
                a.method == crate::spec::HttpMethod::Get
                    && a.response == crate::spec::ResponseKind::Empty
                    && a.no_content
            })
            .collect();
        let mut ids_of = |words: &[String]| -> Vec<u32> {
            let mut out: Vec<u32> = Vec::new();
            for w in words {
                az.each(w, |s| out.push(dict.intern(s)));
            }
            out.dedup();
            out
        };
        let shape_ids: Vec<ShapeIds> = shapes
            .iter()
            .map(|s| ShapeIds {
                name_nouns: ids_of(&s.name_nouns),
                resource: ids_of(&s.resource),
                parent: ids_of(&s.parent),
                path: ids_of(&s.path_words),
                id_nouns: s.id_words.iter().map(|w| ids_of(w)).collect(),
            })
            .collect();
        let resource_heads = shape_ids
            .iter()
            .map(|s| s.resource.first().copied())
            .collect();
        let mut nouns: Vec<u32> = shape_ids
            .iter()
            .flat_map(|s| s.resource.iter().chain(&s.name_nouns).copied())
            .collect();
        nouns.sort_unstable();
        nouns.dedup();
        // Keyed by the document's names (std's seeded hashing, as `Dictionary`).
        let mut exact = std::collections::HashMap::new();
        let mut exact_lower = std::collections::HashMap::new();
        for (i, a) in catalog.actions().iter().enumerate() {
            exact.insert(a.name.as_str().to_string(), i);
            exact.insert(a.operation_id.as_str().to_string(), i);
            exact_lower.entry(a.name.as_str().to_string()).or_insert(i);
            exact_lower
                .entry(a.operation_id.as_str().to_ascii_lowercase())
                .or_insert(i);
        }
        let mut cue = |w: &str| {
            let mut first = None;
            az.each(w, |s| first = first.or(Some(dict.get(s))));
            first.flatten()
        };
        let cue_ids = [
            cue("organization"),
            cue("team"),
            cue("repository"),
            cue("user"),
        ];
        Base {
            lexicon,
            dict,
            fields,
            shapes,
            undoes,
            checks,
            shape_ids,
            resource_heads,
            nouns,
            token_docs: invert(&doc_tokens),
            doc_tokens,
            field_masks,
            idf,
            core_tokens,
            translated,
            exact,
            exact_lower,
            operation_ids: catalog
                .actions()
                .iter()
                .map(|a| a.operation_id.to_string())
                .collect(),
            own_needs: catalog.actions().iter().map(own_need).collect(),
            cue_ids,
            siblings: siblings_of(catalog),
        }
    }
}

/// An action's own words as a need for the learned lifts: its summary and the words of its
/// operationId ("Start stopwatch on an issue. issue Start Stop Watch"). Every action has one,
/// so a word of the catalog tells its action, resource, class and scope even where few
/// labelled needs use it.
fn own_need(a: &crate::catalog::Action) -> String {
    let words = crate::catalog::split_words(a.operation_id.as_str()).join(" ");
    format!("{}. {words}", a.summary)
}

/// Every lower-case surface word of a document (for typo correction), sorted, each once.
fn surface_words(texts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for w in texts.iter().flat_map(|t| vocabulary::tokenize(t)) {
        if w.contains(['-', '\'']) {
            out.extend(
                w.split(['-', '\''])
                    .filter(|p| !p.is_empty())
                    .map(str::to_string),
            );
        } else if !w.is_empty() {
            out.push(w);
        }
    }
    // Sorted rather than hashed: the words of one document are few, and the lexicon counts
    // each document's words once.
    out.sort_unstable();
    out.dedup();
    out
}

/// The labelled needs of one index: as a field of each action and one by one.
pub(crate) struct ExampleIndex {
    dict: Dictionary,
    /// Per action, its examples' tokens together (the examples field).
    field: Corpus,
    /// Per example, its tokens (nearest-example similarity).
    each: Corpus,
    /// Example → the actions it is labelled with.
    owners: Vec<Vec<u32>>,
    /// Per action, sorted token ids of its examples.
    tokens: Vec<Vec<u32>>,
    /// Per action, whether it has examples.
    has: Vec<bool>,
    /// Words of the labelled needs seen in at least [`NEEDS_WORD_MIN_EXAMPLES`] of them: kept
    /// as typed by the query analysis (a typo seldom repeats).
    needs_words: NeedsWords,
    /// Per word of the needs, how much it tells: `ln((N+1)/(df+1)) / ln(N+1)` over the N
    /// distinct needs (a word in every need tells nothing).
    info: HashMap<u32, f32>,
    /// Learned associations: example-token id → (base token id, weight), strongest first.
    associations: HashMap<u32, Vec<(u32, f32)>>,
    /// Per word of the needs, log-lift of each verb class / scope / item-or-collection /
    /// resource of the actions it was written for.
    lifts: Lifts,
    /// Per word of the needs, per action: how much better the action's words (`Base::translated`)
    /// produce it than the background does (IBM model 1, `translation.rs`).
    trans: PerWord,
    /// Per word of the needs, how much likelier than the needs' words at large it is to be
    /// found in the own text of the actions its needs were written for (see [`relevance`]):
    /// a concept's weight in the coverage features is scaled by it.
    relevance: HashMap<u32, f32>,
}

/// Log-lifts of an outcome (verb class, scope, …) given a word, from labelled needs: `log
/// P(outcome | word) / P(outcome)`, with P(outcome | word) smoothed towards P(outcome) by
/// [`LIFT_SMOOTHING`] pseudo-needs.
#[derive(Debug, Default)]
struct Lifts {
    class: HashMap<u32, [f32; 5]>,
    scope: HashMap<u32, [f32; 7]>,
    item: HashMap<u32, [f32; 2]>,
    /// Per (word, resource): log-lift of the resource.
    resource: PerWord,
    /// Per (word, action): log-lift of the action itself.
    action: PerWord,
    /// Per word id: log-lift of a resource (or an action) it was never seen with (0 for a word
    /// of no need).
    unseen: Vec<f32>,
    /// Function words of the needs → their id in the `fn_*` tables.
    fn_words: HashMap<String, u32>,
    /// Per function word, log-lift of each verb class.
    fn_class: HashMap<u32, [f32; 5]>,
    /// … scope.
    fn_scope: HashMap<u32, [f32; 7]>,
    /// … item or collection.
    fn_item: HashMap<u32, [f32; 2]>,
    /// The lead words of the needs (see [`lead_word`]) → their id in `lead_class`.
    lead_words: HashMap<String, u32>,
    /// Per lead word, log-lift of each verb class.
    lead_class: HashMap<u32, [f32; 5]>,
}

/// Values per (word, key), both ids: one sorted list per word, indexed by the word's id (the
/// ids of a dictionary are dense), so a look-up is one index and a short binary search; stage
/// two makes several per word and candidate.
#[derive(Debug, Default)]
struct PerWord {
    lists: Vec<Vec<(u32, f32)>>,
}

impl PerWord {
    fn new(entries: impl IntoIterator<Item = ((u32, u32), f32)>) -> PerWord {
        let mut lists: Vec<Vec<(u32, f32)>> = Vec::new();
        for ((w, k), v) in entries {
            let w = w as usize;
            if lists.len() <= w {
                lists.resize_with(w + 1, Vec::new);
            }
            lists[w].push((k, v));
        }
        for l in &mut lists {
            l.sort_unstable_by_key(|e| e.0);
        }
        PerWord { lists }
    }

    /// The word's `(key, value)` pairs, by key.
    fn list(&self, w: u32) -> &[(u32, f32)] {
        self.lists.get(w as usize).map_or(&[], Vec::as_slice)
    }

    fn get(&self, w: u32, k: u32) -> Option<f32> {
        let l = self.lists.get(w as usize)?;
        l.binary_search_by_key(&k, |e| e.0).ok().map(|j| l[j].1)
    }
}

/// Pseudo-needs of the m-estimate that smooths [`Lifts`].
pub const LIFT_SMOOTHING: f32 = 2.0;

fn lift_table<const K: usize>(
    counts: &HashMap<u32, [f32; K]>,
    prior: &[f32; K],
) -> HashMap<u32, [f32; K]> {
    let total: f32 = prior.iter().sum::<f32>().max(1.0);
    let p: Vec<f32> = prior.iter().map(|c| (c / total).max(1e-4)).collect();
    counts
        .iter()
        .map(|(&w, c)| {
            let n: f32 = c.iter().sum();
            let mut out = [0.0f32; K];
            for k in 0..K {
                let cond = (c[k] + LIFT_SMOOTHING * p[k]) / (n + LIFT_SMOOTHING);
                out[k] = (cond / p[k]).ln();
            }
            (w, out)
        })
        .collect()
}

impl Lifts {
    fn build(base: &Base, examples: &[Vec<u32>], owners: &[Vec<u32>]) -> Lifts {
        let mut class: HashMap<u32, [f32; 5]> = HashMap::default();
        let mut scope: HashMap<u32, [f32; 7]> = HashMap::default();
        let mut item: HashMap<u32, [f32; 2]> = HashMap::default();
        let mut resource: HashMap<(u32, u32), f32> = HashMap::default();
        let mut action: HashMap<(u32, u32), f32> = HashMap::default();
        let mut pa: HashMap<u32, f32> = HashMap::default();
        let mut word: HashMap<u32, f32> = HashMap::default();
        let (mut pc, mut ps, mut pi) = ([0.0f32; 5], [0.0f32; 7], [0.0f32; 2]);
        let mut pr: HashMap<u32, f32> = HashMap::default();
        for (e, toks) in examples.iter().enumerate() {
            let mut q = toks.clone();
            q.sort_unstable();
            q.dedup();
            for &a in &owners[e] {
                let a = a as usize;
                let shape = &base.shapes[a];
                let c = class_code(shape.class);
                let s = scope_code(shape.scope);
                let it = usize::from(shape.on_item);
                let r = base.shape_ids[a].resource.first().copied();
                pc[c] += 1.0;
                ps[s] += 1.0;
                pi[it] += 1.0;
                *pa.entry(a as u32).or_default() += 1.0;
                if let Some(r) = r {
                    *pr.entry(r).or_default() += 1.0;
                }
                for &w in &q {
                    class.entry(w).or_default()[c] += 1.0;
                    scope.entry(w).or_default()[s] += 1.0;
                    item.entry(w).or_default()[it] += 1.0;
                    *word.entry(w).or_default() += 1.0;
                    *action.entry((w, a as u32)).or_default() += 1.0;
                    if let Some(r) = r {
                        *resource.entry((w, r)).or_default() += 1.0;
                    }
                }
            }
        }
        let total: f32 = pr.values().sum::<f32>().max(1.0);
        let p_res = |r: u32| (pr.get(&r).copied().unwrap_or(0.0) / total).max(1e-4);
        let a_total: f32 = pa.values().sum::<f32>().max(1.0);
        let action = PerWord::new(action.into_iter().map(|((w, a), c)| {
            let n = word[&w];
            let p = (pa.get(&a).copied().unwrap_or(0.0) / a_total).max(1e-4);
            (
                (w, a),
                ((c + LIFT_SMOOTHING * p) / (n + LIFT_SMOOTHING) / p).ln(),
            )
        }));
        let mut unseen = vec![0.0f32; word.keys().max().map_or(0, |&w| w as usize + 1)];
        for (&w, &n) in &word {
            unseen[w as usize] = (LIFT_SMOOTHING / (n + LIFT_SMOOTHING)).ln();
        }
        let resource = PerWord::new(resource.into_iter().map(|((w, r), c)| {
            let n = word[&w];
            let p = p_res(r);
            (
                (w, r),
                ((c + LIFT_SMOOTHING * p) / (n + LIFT_SMOOTHING) / p).ln(),
            )
        }));
        Lifts {
            class: lift_table(&class, &pc),
            scope: lift_table(&scope, &ps),
            item: lift_table(&item, &pi),
            resource,
            action,
            unseen,
            ..Lifts::default()
        }
    }

    /// The log-lift of a resource or action word `w` was never seen with.
    fn unseen_of(&self, w: u32) -> f32 {
        self.unseen.get(w as usize).copied().unwrap_or(0.0)
    }

    /// The log-lift of resource `r` given word `w` (the unseen lift when they never met).
    fn resource_of(&self, w: u32, r: u32) -> f32 {
        self.resource.get(w, r).unwrap_or_else(|| self.unseen_of(w))
    }

    /// The lifts learned from the raw text of `needs` (with the actions each is labelled with):
    /// class, scope and item given each function word, and class given the lead word ("*nuke*
    /// the old board", "*punch* in on ticket 9": where a need puts its verb, whether or not the
    /// vocabulary knows it).
    fn add_text_words(&mut self, base: &Base, needs: &[(&str, &[u32])]) {
        let mut class: HashMap<u32, [f32; 5]> = HashMap::default();
        let mut scope: HashMap<u32, [f32; 7]> = HashMap::default();
        let mut item: HashMap<u32, [f32; 2]> = HashMap::default();
        let mut lead_class: HashMap<u32, [f32; 5]> = HashMap::default();
        let (mut pc, mut ps, mut pi) = ([0.0f32; 5], [0.0f32; 7], [0.0f32; 2]);
        for (q, owners) in needs {
            let tokens = vocabulary::tokenize(q);
            let ids = function_word_ids(&mut self.fn_words, &tokens, true);
            let lead = lead_word(&tokens).map(|w| {
                let next = self.lead_words.len() as u32;
                *self.lead_words.entry(w).or_insert(next)
            });
            for &a in owners.iter() {
                let shape = &base.shapes[a as usize];
                let (c, s, it) = (
                    class_code(shape.class),
                    scope_code(shape.scope),
                    usize::from(shape.on_item),
                );
                pc[c] += 1.0;
                ps[s] += 1.0;
                pi[it] += 1.0;
                for &w in &ids {
                    class.entry(w).or_default()[c] += 1.0;
                    scope.entry(w).or_default()[s] += 1.0;
                    item.entry(w).or_default()[it] += 1.0;
                }
                if let Some(w) = lead {
                    lead_class.entry(w).or_default()[c] += 1.0;
                }
            }
        }
        self.fn_class = lift_table(&class, &pc);
        self.fn_scope = lift_table(&scope, &ps);
        self.fn_item = lift_table(&item, &pi);
        self.lead_class = lift_table(&lead_class, &pc);
    }
}

/// Where a need says its verb: the first word after a word of wanting (within its reach: "I
/// want to *move* it", "how do I *flip* it"; the verb it asks of an object: "I want my plugin
/// to *start* …"), else the verb after a role lead-in ("as site admin *list* …",
/// `vocabulary::verb_after_role`), else the need's first word; never a function word.
fn lead_word(tokens: &[String]) -> Option<String> {
    let content = |w: &String| !vocabulary::is_stop_word(w) && w.chars().any(char::is_alphabetic);
    let wanted = (0..tokens.len()).find_map(|i| {
        if !vocabulary::wants_at(tokens, i) {
            return None;
        }
        if let Some(v) = vocabulary::verb_after_object(tokens, i) {
            return Some(&tokens[v]);
        }
        tokens
            .iter()
            .skip(i + 1)
            .take(vocabulary::WANT_REACH)
            .find(|w| content(w))
    });
    wanted
        .or_else(|| vocabulary::verb_after_role(tokens).map(|v| &tokens[v]))
        .or_else(|| tokens.iter().find(|w| content(w)))
        .cloned()
}

/// The distinct function words of `tokens` as keys of the word × shape weights (`~my`), sorted.
fn function_word_keys(tokens: &[String]) -> Vec<String> {
    let mut out: Vec<String> = tokens
        .iter()
        .filter(|w| vocabulary::is_stop_word(w))
        .map(|w| format!("~{w}"))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Ids of the distinct function words of `tokens` that `dict` knows.
fn known_function_words(dict: &HashMap<String, u32>, tokens: &[String]) -> Vec<u32> {
    let mut out: Vec<u32> = tokens.iter().filter_map(|w| dict.get(w).copied()).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Ids of the distinct function words of `tokens` (added to `dict` when `grow`).
fn function_word_ids(dict: &mut HashMap<String, u32>, tokens: &[String], grow: bool) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for w in tokens {
        if !vocabulary::is_stop_word(w) {
            continue;
        }
        let id = match dict.get(w) {
            Some(&id) => id,
            None if grow => {
                let id = dict.len() as u32;
                dict.insert(w.clone(), id);
                id
            }
            None => continue,
        };
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out.sort_unstable();
    out
}

fn scope_code(s: Scope) -> usize {
    Scope::ALL.iter().position(|&x| x == s).unwrap_or(0)
}

/// See `NeedsWords::repeated`.
pub const NEEDS_WORD_MIN_EXAMPLES: usize = 2;
/// See `NeedsWords::spelled`: a word of this many needs not misspelt on purpose.
pub const SPELLED_MIN_EXAMPLES: usize = 2;
/// The least weight of a word in the sums of the learned lifts (see `ExampleIndex::info`).
pub const MIN_WORD_WEIGHT: f32 = 0.05;

/// An association needs this many labelled (need, action) pairs…
pub const ASSOCIATION_MIN_PAIRS: f32 = 2.0;
/// … this share of the needs with the word pointing at an action whose core text has the other…
pub const ASSOCIATION_MIN_SHARE: f32 = 0.25;
/// … and this many times the share of actions whose core text has it.
pub const ASSOCIATION_MIN_LIFT: f32 = 4.0;
/// Most associations kept per word.
pub const ASSOCIATIONS_PER_WORD: usize = 5;
/// Pseudo-needs of the m-estimate that smooths a word's [`relevance`] towards 1 (chosen by
/// cross-validation among 0.3, 1, 3 and 10).
pub const RELEVANCE_SMOOTHING: f32 = 1.0;

impl ExampleIndex {
    /// Indexes `examples` for the actions of `base` (operationIds without an action are
    /// ignored). Examples are analysed like queries, so a typo or a forge word in one meets the
    /// same word in a query.
    fn build(base: &Base, examples: &Examples) -> ExampleIndex {
        let mut az = StemMemo::new();
        let mut dict = Dictionary::default();
        let n = base.operation_ids.len();
        let mut per_action: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut seen: HashMap<&str, usize> = HashMap::default();
        // Words of the needs, counted once per need (and apart for the needs misspelt on
        // purpose).
        let mut counts: HashMap<String, usize> = HashMap::default();
        let mut spelled: HashMap<String, usize> = HashMap::default();
        let mut distinct: HashSet<&str> = HashSet::default();
        // Whether the lexicon knows a word, asked once per word (it stems the word to answer).
        let mut known: HashMap<String, bool> = HashMap::default();
        let mut knows = |w: &String| match known.get(w) {
            Some(&k) => k,
            None => *known
                .entry(w.clone())
                .or_insert_with(|| base.lexicon.knows(w)),
        };
        for op in &base.operation_ids {
            for q in examples.of(op) {
                if distinct.insert(q.as_str()) {
                    let words: HashSet<String> = vocabulary::tokenize(q)
                        .into_iter()
                        .flat_map(|w| {
                            let mut v = vocabulary::hyphen_parts(&w);
                            if v.len() > 1 {
                                v.push(w);
                            }
                            v
                        })
                        .filter(|w| !knows(w))
                        .collect();
                    let misspelt = examples.is_misspelt(q);
                    for w in words {
                        *counts.entry(w.clone()).or_default() += 1;
                        if !misspelt {
                            *spelled.entry(w).or_default() += 1;
                        }
                    }
                }
            }
        }
        let needs_words = NeedsWords {
            spelled: spelled
                .into_iter()
                .filter(|(_, c)| *c >= SPELLED_MIN_EXAMPLES)
                .map(|(w, _)| w)
                .collect(),
            repeated: counts
                .iter()
                .filter(|(_, c)| **c >= NEEDS_WORD_MIN_EXAMPLES)
                .map(|(w, _)| w.clone())
                .collect(),
            seen: counts.into_keys().collect(),
        };
        // The catalog's id of each need word's stem, when the catalog has it (for `relevance`).
        let mut ex_base: HashMap<u32, u32> = HashMap::default();
        // A need's terms (its words and what they stand for) as stem ids.
        let mut need_ids = |text: &str| -> Vec<u32> {
            let a = analyse_with(text, &base.lexicon, &needs_words);
            let mut ids = Vec::new();
            for t in &a.terms {
                az.each(vocabulary::canonical(&t.word), |s| {
                    let id = dict.intern(s);
                    if let Some(b) = base.dict.get(s) {
                        ex_base.insert(id, b);
                    }
                    ids.push(id);
                });
            }
            ids
        };
        let mut each_docs: Vec<Vec<u32>> = Vec::new();
        let mut owners: Vec<Vec<u32>> = Vec::new();
        for (i, op) in base.operation_ids.iter().enumerate() {
            for q in examples.of(op) {
                let e = match seen.get(q.as_str()) {
                    Some(&e) => e,
                    None => {
                        each_docs.push(need_ids(q));
                        owners.push(Vec::new());
                        seen.insert(q.as_str(), each_docs.len() - 1);
                        each_docs.len() - 1
                    }
                };
                owners[e].push(i as u32);
                per_action[i].extend_from_slice(&each_docs[e]);
            }
        }
        // The needs' words weigh by how many needs use them (`info`) and are associated with the
        // catalog's words; the actions' own needs only join the lifts. Without labelled needs
        // there is nothing to join: the lifts stay empty, as the ranking was fitted to have
        // them learned from needs (own needs alone make one-need lifts it never saw).
        let needs_count = each_docs.len();
        let own_needs = if needs_count == 0 {
            &[][..]
        } else {
            &base.own_needs[..]
        };
        for (i, text) in own_needs.iter().enumerate() {
            each_docs.push(need_ids(text));
            owners.push(vec![i as u32]);
        }
        // Each labelled need's distinct words, sorted: what the counts below read.
        let distinct: Vec<Vec<u32>> = each_docs[..needs_count]
            .iter()
            .map(|d| {
                let mut u = d.clone();
                u.sort_unstable();
                u.dedup();
                u
            })
            .collect();
        let mut need_df: HashMap<u32, f32> = HashMap::default();
        for &t in distinct.iter().flatten() {
            *need_df.entry(t).or_default() += 1.0;
        }
        let n_needs = needs_count as f32 + 1.0;
        let info = need_df
            .iter()
            .map(|(&t, &df)| (t, (n_needs / (df + 1.0)).ln() / n_needs.ln().max(1e-6)))
            .collect();
        let associations = associations(base, &distinct, &owners[..needs_count]);
        let relevance = relevance(base, &ex_base, &distinct, &owners[..needs_count], &need_df);
        let trans = PerWord::new(translation::learn(
            &base.translated,
            &each_docs[..needs_count],
            &owners[..needs_count],
        ));
        let mut lifts = Lifts::build(base, &each_docs, &owners);
        each_docs.truncate(needs_count);
        owners.truncate(needs_count);
        {
            let mut texts: Vec<&str> = vec![""; each_docs.len()];
            for (q, &e) in &seen {
                texts[e] = q;
            }
            let needs: Vec<(&str, &[u32])> = texts
                .iter()
                .zip(&owners)
                .map(|(q, o)| (*q, o.as_slice()))
                .collect();
            lifts.add_text_words(base, &needs);
        }
        let field = Corpus::build(&per_action);
        let each = Corpus::build(&each_docs);
        let has = per_action.iter().map(|d| !d.is_empty()).collect();
        let tokens = per_action
            .into_iter()
            .map(|mut d| {
                d.sort_unstable();
                d.dedup();
                d
            })
            .collect();
        ExampleIndex {
            info,
            dict,
            field,
            each,
            owners,
            tokens,
            has,
            needs_words,
            associations,
            lifts,
            trans,
            relevance,
        }
    }
}

/// How well each word of the needs tells what the right action's own text says: the share of
/// the needs using it whose labelled action's own text (any field but the examples) has its
/// stem, over the same share for every word of the needs, smoothed towards 1 by
/// [`RELEVANCE_SMOOTHING`] pseudo-needs. The words of a need's story (`script`, `bot`,
/// `weekly`) are seldom in its action's text, the ones that name the thing (`assignees`,
/// `milestone`) usually: a concept the needs show to be context weighs less in coverage.
/// `examples`: each need's distinct words, sorted; `need_df`: how many needs use each word.
fn relevance(
    base: &Base,
    ex_base: &HashMap<u32, u32>,
    examples: &[Vec<u32>],
    owners: &[Vec<u32>],
    need_df: &HashMap<u32, f32>,
) -> HashMap<u32, f32> {
    let m = RELEVANCE_SMOOTHING;
    let mut hit: HashMap<u32, f32> = HashMap::default();
    for (q, owners) in examples.iter().zip(owners) {
        for &w in q {
            let found = ex_base.get(&w).is_some_and(|&b| {
                owners
                    .iter()
                    .any(|&a| contains(&base.doc_tokens[a as usize], b))
            });
            if found {
                *hit.entry(w).or_default() += 1.0;
            }
        }
    }
    let all_df: f32 = need_df.values().sum();
    let all_hit: f32 = hit.values().sum();
    let prior = (all_hit / all_df.max(1.0)).max(1e-3);
    need_df
        .iter()
        .map(|(&w, &d)| {
            let h = hit.get(&w).copied().unwrap_or(0.0);
            (w, ((h + m * prior) / (d + m)) / prior)
        })
        .collect()
}

/// Word associations learned from labelled needs: a word of the needs (`wipe`, `ticket`)
/// points at a word of the labelled actions' core text (`delete`, `issue`) when that word
/// follows it much more often than chance. General word-to-word links, not need-to-action
/// pairs: they carry over to actions that have no examples.
/// `examples`: each need's distinct words, sorted.
fn associations(
    base: &Base,
    examples: &[Vec<u32>],
    owners: &[Vec<u32>],
) -> HashMap<u32, Vec<(u32, f32)>> {
    let n_actions = base.core_tokens.len().max(1) as f32;
    let mut df: HashMap<u32, f32> = HashMap::default();
    for core in &base.core_tokens {
        for &t in core {
            *df.entry(t).or_default() += 1.0;
        }
    }
    let mut word: HashMap<u32, f32> = HashMap::default();
    let mut pair: HashMap<(u32, u32), f32> = HashMap::default();
    for (e, q) in examples.iter().enumerate() {
        for &a in &owners[e] {
            let core = &base.core_tokens[a as usize];
            for &w in q {
                *word.entry(w).or_default() += 1.0;
                for &d in core {
                    *pair.entry((w, d)).or_default() += 1.0;
                }
            }
        }
    }
    let mut out: HashMap<u32, Vec<(u32, f32)>> = HashMap::default();
    let mut pairs: Vec<((u32, u32), f32)> = pair.into_iter().collect();
    pairs.sort_unstable_by_key(|&(k, _)| k);
    for ((w, d), c) in pairs {
        let share = c / word[&w];
        let base_rate = df.get(&d).copied().unwrap_or(1.0) / n_actions;
        if c >= ASSOCIATION_MIN_PAIRS
            && share >= ASSOCIATION_MIN_SHARE
            && share / base_rate >= ASSOCIATION_MIN_LIFT
        {
            out.entry(w).or_default().push((d, share));
        }
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(ASSOCIATIONS_PER_WORD);
    }
    out
}

/// One analysed query term with its ids in both dictionaries.
#[derive(Debug, Clone, Copy)]
struct QTerm {
    base: Option<u32>,
    ex: Option<u32>,
    /// 0: typed or corrected by the user; 1: added by the vocabulary; 2: learned association.
    group: usize,
    /// Term weight (1 but for learned associations: their strength).
    weight: f32,
}

/// A query ready for scoring.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    analysis: Analysis,
    terms: Vec<QTerm>,
    /// Sorted base ids of every term.
    base_ids: Vec<u32>,
    /// Per concept, its tokens' ids (base, examples).
    concepts: Vec<Vec<(Option<u32>, Option<u32>)>>,
    /// Per concept, its rarity: the largest idf of its tokens in the catalog, at least 1.
    concept_weights: Vec<f32>,
    /// The sum of `concept_weights`.
    concept_total: f32,
    /// Base ids of the words the user typed (for the typo guard).
    typed: Vec<u32>,
    /// 0 none, 1 delete, 2 create, 3 update, 4 list, 5 get.
    intent: usize,
    /// Scope cues: self, admin, organisation/team, repository, user.
    cues: [bool; features::CUES],
    /// Example-dictionary ids of the words the user typed (for the learned lifts).
    words: Vec<u32>,
    /// Weight of each of `words` in the sums of the learned lifts: how much it tells, ÷ √ of
    /// what all of them tell.
    word_weights: Vec<f32>,
    /// Ids of the query's function words (see `Lifts::fn_words`).
    fn_words: Vec<u32>,
    /// Id of the query's lead word (see [`lead_word`]) in `Lifts::lead_words`, when a need
    /// led with it too.
    lead: Option<u32>,
    /// The query holds an `owner/name`-like value.
    slash_value: bool,
    /// The query holds a number.
    number_value: bool,
    /// Per number of the query with a noun before it (`issue 12`, `run 1042`), that noun's
    /// base ids (through the vocabulary: `ticket 3` → `issue`).
    valued: Vec<Vec<u32>>,
    /// Stems of the typed and vocabulary terms (keys of the word × shape weights).
    stems: Vec<String>,
    /// Sorted base ids of the object phrase's words, and of its head's.
    object_ids: Vec<u32>,
    head_ids: Vec<u32>,
    /// Whether the object's head is plural (`None`: no object).
    head_plural: Option<bool>,
    /// Example-dictionary ids of the head's words (for its resource lift).
    head_ex: Vec<u32>,
    /// The query's function words, as keys of the word × shape weights (`~my`, `~every`).
    fn_keys: Vec<String>,
    /// The mean of the word × shape weights of `stems` (see [`Model::words`]).
    word_shape: [f32; model::WORD_WEIGHTS],
}

impl Query {
    /// Notes the values of the raw query: an `owner/name`-like chunk, a number.
    fn note_values(&mut self, raw: &str) {
        for chunk in raw.split_whitespace() {
            let c = chunk.trim_matches(|c: char| !c.is_alphanumeric());
            if c.contains('/') && !c.contains("://") && !c.starts_with('/') {
                self.slash_value = true;
            }
            let digits = c.trim_start_matches('#');
            if is_number(digits) || issue_reference(c) {
                self.number_value = true;
            }
        }
    }
}

/// Per action, whether it undoes something: a DELETE, or an operationId with an un-verb — `un`
/// before a word (`UnDismiss`) or a word `un` + another operationId word (`Unresolve`: `resolve`
/// is one; `Unadopted` is no undoing: `adopted` is none).
fn undoing_actions(catalog: &Catalog, shapes: &[Shape]) -> Vec<bool> {
    let words: Vec<Vec<String>> = catalog
        .actions()
        .iter()
        .map(|a| {
            crate::catalog::split_words(a.operation_id.as_str())
                .into_iter()
                .map(|w| w.to_lowercase())
                .collect()
        })
        .collect();
    let known: HashSet<&str> = words.iter().flatten().map(String::as_str).collect();
    words
        .iter()
        .zip(shapes)
        .map(|(ws, s)| {
            s.class == Intent::Delete
                || ws.iter().enumerate().any(|(k, w)| {
                    (w == "un" && k + 1 < ws.len())
                        || w.strip_prefix("un")
                            .is_some_and(|r| r.len() >= 3 && known.contains(r))
                })
        })
        .collect()
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|d| d.is_ascii_digit())
}

/// Whether `chunk` is an `owner/name#12` reference.
fn issue_reference(chunk: &str) -> bool {
    chunk.rsplit_once('#').is_some_and(|(repo, n)| {
        is_number(n) && repo.split('/').filter(|p| !p.is_empty()).count() == 2
    })
}

/// For each number of `raw` with a word before it (`issue 12`, `issue #12`, `pull request 42`),
/// the words that word stands for: a two-word phrase the vocabulary translates, else the word's
/// translation, else the word.
fn valued_nouns(raw: &str) -> Vec<Vec<String>> {
    let chunks = vocabulary::numbered_chunks(raw);
    let mut out = Vec::new();
    for (k, c) in chunks.iter().enumerate() {
        // `acme/web#19`: the forges' notation for an issue or pull request of a repository.
        if issue_reference(c) {
            out.push(vec!["issue".to_string(), "pull".to_string()]);
            continue;
        }
        let digits = c.trim_start_matches('#');
        if k == 0 || !is_number(digits) {
            continue;
        }
        let word = chunks[k - 1].trim_end_matches('#');
        if !word.chars().any(char::is_alphabetic) || vocabulary::is_stop_word(word) {
            continue;
        }
        let two = (k >= 2).then(|| format!("{} {word}", chunks[k - 2]));
        // "PR 12" through the vocabulary, "pull request 12" as typed: both number a pull
        // request, not a request.
        let phrase = two
            .as_deref()
            .and_then(|t| {
                vocabulary::synonyms_of(t).or_else(|| vocabulary::is_compound(t).then_some(t))
            })
            .or_else(|| vocabulary::synonyms_of(word))
            .unwrap_or(word);
        out.push(phrase.split_whitespace().map(str::to_string).collect());
    }
    out
}

/// Stage-one features of every action for one query.
pub(crate) struct Stage1 {
    /// `n × STAGE1`, row per action.
    x: Vec<f32>,
    /// Whether any query term matched the action.
    matched: Vec<bool>,
}

impl Stage1 {
    fn row(&self, i: usize) -> &[f32] {
        &self.x[i * features::STAGE1..(i + 1) * features::STAGE1]
    }
}

fn intent_code(i: Option<Intent>) -> usize {
    match i {
        None => 0,
        Some(Intent::Delete) => 1,
        Some(Intent::Create) => 2,
        Some(Intent::Update) => 3,
        Some(Intent::List) => 4,
        Some(Intent::Get) => 5,
    }
}

fn class_code(i: Intent) -> usize {
    intent_code(Some(i)) - 1
}

fn contains(sorted: &[u32], id: u32) -> bool {
    sorted.binary_search(&id).is_ok()
}

/// The search index over one catalog.
pub struct SearchIndex {
    base: Arc<Base>,
    examples: ExampleIndex,
    model: Model,
    /// `model.trees`, laid out for evaluation.
    forest: boost::Forest,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("actions", &self.base.shapes.len())
            .finish()
    }
}

/// Sparse features of one candidate: (feature index, value).
type Sparse = Vec<(u16, f32)>;

/// One feature's part in a hit's score (for `find --explain`).
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    /// The feature's name.
    pub feature: String,
    /// Its value.
    pub value: f32,
    /// Value × weight.
    pub part: f32,
}

impl SearchIndex {
    /// Builds the index for `catalog` with the committed examples and model.
    pub fn build(catalog: &Catalog) -> Result<SearchIndex, Error> {
        let examples = Examples::committed().map_err(Error::Unavailable)?;
        let model = Model::committed().map_err(Error::Unavailable)?;
        Ok(SearchIndex::with(catalog, &examples, model))
    }

    /// Builds the index for `catalog` with the given examples and model.
    pub fn with(catalog: &Catalog, examples: &Examples, model: Model) -> SearchIndex {
        SearchIndex::from_base(Arc::new(Base::build(catalog)), examples, model)
    }

    pub(crate) fn from_base(base: Arc<Base>, examples: &Examples, model: Model) -> SearchIndex {
        let examples = ExampleIndex::build(&base, examples);
        SearchIndex {
            forest: boost::Forest::new(&model.trees),
            base,
            examples,
            model,
        }
    }

    /// The siblings of action `best` on the same resource — other verbs on its path, the item or
    /// collection form, the look-alike in another scope — leaving out `shown`, same scope first,
    /// at most `max`: a near miss is one step from the right action.
    pub fn siblings(&self, best: usize, shown: &[usize], max: usize) -> Vec<(usize, Relation)> {
        let mut out: Vec<(usize, Relation)> = self
            .base
            .siblings
            .get(best)
            .into_iter()
            .flatten()
            .map(|&(j, r)| (j as usize, r))
            .filter(|(j, _)| !shown.contains(j))
            .collect();
        // Positions follow the catalog's order, by name.
        out.sort_by_key(|&(j, r)| (r == Relation::OtherScope, j));
        out.truncate(max);
        out
    }

    /// Heap bytes the index holds, approximately (corpora postings only).
    pub fn approx_heap_bytes(&self) -> usize {
        self.base
            .fields
            .iter()
            .map(Corpus::heap_bytes)
            .sum::<usize>()
            + self.examples.field.heap_bytes()
            + self.examples.each.heap_bytes()
    }

    /// Searches for `query`. Hostile input never fails except for length and emptiness.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>, Error> {
        Ok(self
            .run(query, opts, false)?
            .into_iter()
            .map(|(h, _)| h)
            .collect())
    }

    /// Searches and explains each hit's score: its largest feature contributions.
    pub fn explain(
        &self,
        query: &str,
        opts: &SearchOptions,
    ) -> Result<Vec<(Hit, Vec<Contribution>)>, Error> {
        let names = features::names();
        let prepared = self.prepare(query);
        Ok(self
            .run(query, opts, true)?
            .into_iter()
            .map(|(h, x)| {
                let mut parts: Vec<Contribution> = x
                    .iter()
                    .map(|&(i, v)| Contribution {
                        feature: names[i as usize].clone(),
                        value: v,
                        part: v * self.model.stage2[i as usize],
                    })
                    .filter(|c| c.part != 0.0)
                    .collect();
                // What the boosted trees add beyond the linear score (for candidates below the
                // re-ranked top: the shift that keeps them below it).
                let words = prepared
                    .as_ref()
                    .map_or(0.0, |q| self.word_part(q, h.action.index()));
                if words != 0.0 {
                    parts.push(Contribution {
                        feature: "words".into(),
                        value: 1.0,
                        part: words,
                    });
                }
                // The linear part as the ranking sums it (`stage2_ranked`), so that a hit the
                // trees did not re-rank shows no part of theirs.
                let linear = model::dot_dense(&model::dense(&x), &self.model.stage2);
                let rest = h.score - linear - words;
                if !self.model.trees.is_empty() && rest != 0.0 {
                    parts.push(Contribution {
                        feature: "trees".into(),
                        value: 1.0,
                        part: rest,
                    });
                }
                parts.sort_by(|a, b| b.part.abs().total_cmp(&a.part.abs()));
                (h, parts)
            })
            .collect())
    }

    /// The hits, each with its features when `with_features` is set (else an empty list).
    fn run(
        &self,
        query: &str,
        opts: &SearchOptions,
        with_features: bool,
    ) -> Result<Vec<(Hit, Sparse)>, Error> {
        let len = query.chars().count();
        if len > MAX_QUERY_CHARS {
            return Err(Error::QueryTooLong { len });
        }
        let trimmed = query
            .trim()
            .trim_matches(|c: char| c == '"' || c == '\'' || c == '`');
        if trimmed.is_empty() {
            return Err(Error::EmptyQuery);
        }
        let limit = opts.limit.max(1);
        let keep = |i: usize| {
            let s = &self.base.shapes[i];
            opts.domain.is_none_or(|d| s.domain == d)
                && opts.read_only.is_none_or(|r| s.read_only == r)
        };
        // An exact action name or operationId ranks that action first.
        let exact = self.base.named_action(trimmed).filter(|&i| keep(i));
        let analysis = analyse_with(trimmed, &self.base.lexicon, &self.examples.needs_words);
        if analysis.terms.is_empty() {
            return match exact {
                Some(i) => Ok(vec![(
                    Hit {
                        action: ActionId::of_index(i),
                        score: EXACT_MATCH_SCORE,
                    },
                    Vec::new(),
                )]),
                // Words, but none the catalog or the vocabulary knows: no match, not an error.
                None if !vocabulary::tokenize(trimmed).is_empty() => Ok(Vec::new()),
                None => Err(Error::EmptyQuery),
            };
        }
        let mut q = self.query(analysis, trimmed);
        q.note_values(trimmed);
        let s1 = self.stage1(&q);
        let cands = self.stage1_candidates(&q, &s1, keep);
        let mut ranked = self.stage2_ranked(&q, &s1, &cands);
        // Only the shown hits; an exact match below takes one of their places.
        ranked.truncate(limit);
        let hits = ranked.into_iter().map(|(action, score)| {
            let x = if with_features {
                self.stage2(&q, &s1, action)
            } else {
                Vec::new()
            };
            let hit = Hit {
                action: ActionId::of_index(action),
                score,
            };
            (hit, x)
        });
        let mut hits: Vec<(Hit, Sparse)> = hits.collect();
        if let Some(i) = exact {
            hits.retain(|h| h.0.action.index() != i);
            hits.insert(
                0,
                (
                    Hit {
                        action: ActionId::of_index(i),
                        score: EXACT_MATCH_SCORE,
                    },
                    Vec::new(),
                ),
            );
        }
        hits.truncate(limit);
        Ok(hits)
    }

    /// The analysed form of a query (for diagnostics and tests).
    pub fn analyse(&self, query: &str) -> Analysis {
        analyse_with(query, &self.base.lexicon, &self.examples.needs_words)
    }

    /// Prepares a query: term ids, concepts, intent and scope cues.
    pub(crate) fn prepare(&self, query: &str) -> Option<Query> {
        let analysis = analyse_with(query, &self.base.lexicon, &self.examples.needs_words);
        (!analysis.terms.is_empty()).then(|| {
            let mut q = self.query(analysis, query);
            q.note_values(query);
            q
        })
    }

    fn query(&self, analysis: Analysis, raw: &str) -> Query {
        let mut az = analyzer();
        let base = &self.base;
        let ex = &self.examples;
        let mut terms: Vec<QTerm> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let mut typed = Vec::new();
        // Strongest origin first, so a token typed and also added by the vocabulary counts as
        // typed.
        let mut ordered: Vec<&vocabulary::Term> = analysis.terms.iter().collect();
        ordered.sort_by_key(|t| !matches!(t.origin, Origin::Typed | Origin::Corrected));
        for t in ordered {
            let group = usize::from(!matches!(t.origin, Origin::Typed | Origin::Corrected));
            for s in stems(&mut az, vocabulary::canonical(&t.word)) {
                if t.origin == Origin::Typed {
                    if let Some(id) = base.dict.get(&s) {
                        typed.push(id);
                    }
                }
                if seen.contains(&s) {
                    continue;
                }
                terms.push(QTerm {
                    base: base.dict.get(&s),
                    ex: ex.dict.get(&s),
                    group,
                    weight: 1.0,
                });
                seen.push(s);
            }
        }
        // Learned associations of the query's words, each once, at their strength.
        let mut learned: Vec<QTerm> = Vec::new();
        for t in &terms {
            let Some(links) = t.ex.and_then(|e| ex.associations.get(&e)) else {
                continue;
            };
            for &(d, w) in links {
                if terms.iter().any(|x| x.base == Some(d)) {
                    continue;
                }
                match learned.iter_mut().find(|x| x.base == Some(d)) {
                    Some(x) => x.weight = x.weight.max(w),
                    None => learned.push(QTerm {
                        base: Some(d),
                        ex: None,
                        group: 2,
                        weight: w,
                    }),
                }
            }
        }
        terms.extend(learned);
        let mut base_ids: Vec<u32> = terms
            .iter()
            .filter(|t| t.group < 2)
            .filter_map(|t| t.base)
            .collect();
        base_ids.sort_unstable();
        base_ids.dedup();
        let concepts: Vec<Vec<(Option<u32>, Option<u32>)>> = analysis
            .concepts
            .iter()
            .map(|words| {
                words
                    .iter()
                    .flat_map(|w| stems(&mut az, vocabulary::canonical(w)))
                    .map(|s| (base.dict.get(&s), ex.dict.get(&s)))
                    .collect::<Vec<_>>()
            })
            .filter(|c| !c.is_empty())
            .collect();
        let concept_weights: Vec<f32> = concepts
            .iter()
            .map(|c| {
                let rarity = c
                    .iter()
                    .filter_map(|(b, _)| b.and_then(|b| base.idf.get(&b)))
                    .copied()
                    .fold(1.0f32, f32::max);
                // A concept none of whose words the needs use keeps its rarity alone.
                let relevance = c
                    .iter()
                    .filter_map(|(_, e)| e.and_then(|e| ex.relevance.get(&e)))
                    .copied()
                    .reduce(f32::max)
                    .unwrap_or(1.0);
                rarity * relevance
            })
            .collect();
        let concept_total = concept_weights.iter().sum();
        // The need's object and its head: the phrase's last word that names some action's
        // resource or a noun of its name ("a private *repository* owned by…"), else its last.
        let object_stems: Vec<Vec<String>> = analysis
            .object
            .iter()
            .map(|&c| {
                analysis.concepts[c]
                    .iter()
                    .flat_map(|w| stems(&mut az, vocabulary::canonical(w)))
                    .collect()
            })
            .collect();
        let is_noun = |s: &String| base.dict.get(s).is_some_and(|b| contains(&base.nouns, b));
        let head = object_stems
            .iter()
            .rposition(|c| c.iter().any(is_noun))
            .or(object_stems.len().checked_sub(1));
        let (mut object_ids, mut head_ids, mut head_ex) = (Vec::new(), Vec::new(), Vec::new());
        for (k, c) in object_stems.iter().enumerate() {
            for s in c {
                if let Some(b) = base.dict.get(s) {
                    object_ids.push(b);
                    if Some(k) == head {
                        head_ids.push(b);
                    }
                }
                if let Some(e) = ex.dict.get(s).filter(|_| Some(k) == head) {
                    head_ex.push(e);
                }
            }
        }
        for v in [&mut object_ids, &mut head_ids, &mut head_ex] {
            v.sort_unstable();
            v.dedup();
        }
        // In a long need, what comes after "I want to" is what is wanted.
        let mut intent = analysis.wanted.or(analysis.primary_intent());
        if intent == Some(Intent::Get) && (analysis.wants_collection || analysis.plural) {
            intent = Some(Intent::List);
        }
        let has = |id: Option<u32>| id.is_some_and(|id| contains(&base_ids, id));
        let [org, team, repo, user] = base.cue_ids;
        let cues = [
            analysis.about_self,
            analysis.about_admin,
            has(org) || has(team),
            has(repo),
            has(user) && !analysis.about_self,
        ];
        let mut words: Vec<u32> = terms
            .iter()
            .filter(|t| t.group < 2)
            .filter_map(|t| t.ex)
            .collect();
        words.sort_unstable();
        words.dedup();
        let tokens = vocabulary::tokenize(raw);
        let fn_words = known_function_words(&ex.lifts.fn_words, &tokens);
        let lead = lead_word(&tokens).and_then(|w| ex.lifts.lead_words.get(&w).copied());
        let mut word_weights: Vec<f32> = words
            .iter()
            // A word only the actions' own words use (see `own_need`) weighs in full.
            .map(|w| ex.info.get(w).copied().unwrap_or(1.0).max(MIN_WORD_WEIGHT))
            .collect();
        // Summed, ÷ √ of the weights' sum rather than averaged: a long need's many context
        // words dilute a mean, while the evidence of its telling words adds up.
        let total: f32 = word_weights.iter().sum();
        for v in &mut word_weights {
            *v /= total.sqrt().max(1e-6);
        }
        let mut word_shape = [0.0f32; model::WORD_WEIGHTS];
        if !self.model.words.is_empty() && !seen.is_empty() {
            let m = 1.0 / seen.len() as f32;
            for s in &seen {
                add_scaled(&mut word_shape, self.model.words.get(s), m);
            }
        }
        let fn_keys = function_word_keys(&tokens);
        if !self.model.words.is_empty() && !fn_keys.is_empty() {
            let m = 1.0 / (fn_keys.len() as f32).sqrt();
            for s in &fn_keys {
                add_scaled(&mut word_shape, self.model.words.get(s), m);
            }
        }
        // "remove my eyes *reaction*": the head says one or many, whatever else is plural (by
        // the words the head stands for: a translated "tickets" reads as `issue`).
        let head_plural = head.map(|k| {
            analysis.concepts[analysis.object[k]]
                .iter()
                .any(|w| vocabulary::is_plural(w))
        });
        let valued = valued_nouns(raw)
            .into_iter()
            .map(|words| {
                let mut v: Vec<u32> = words
                    .iter()
                    .flat_map(|w| stems(&mut az, vocabulary::canonical(w)))
                    .filter_map(|s| base.dict.get(&s))
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .filter(|v| !v.is_empty())
            .collect();
        Query {
            valued,
            head_plural,
            object_ids,
            head_ids,
            head_ex,
            fn_keys,
            stems: seen,
            word_shape,
            word_weights,
            fn_words,
            lead,
            words,
            slash_value: false,
            number_value: false,
            intent: intent_code(intent),
            analysis,
            terms,
            base_ids,
            concepts,
            concept_weights,
            concept_total,
            typed,
            cues,
        }
    }

    /// Stage-one features of every action.
    pub(crate) fn stage1(&self, q: &Query) -> Stage1 {
        use features::{BM25, HAS_EXAMPLES, KNN_BEST, KNN_TOP, STAGE1};
        let n = self.base.shapes.len();
        let ex = &self.examples;
        // Row per action; the features filled by walking postings other than BM25's are
        // gathered in dense vectors first, and written with the rest of each row.
        let mut x = vec![0.0f32; n * STAGE1];
        let mut knn = vec![0.0f32; ex.owners.len()];
        let examples_slot = (FieldKind::Examples as usize) * features::GROUPS;
        for t in &q.terms {
            if let Some(id) = t.base {
                for (f, corpus) in self.base.fields.iter().enumerate() {
                    corpus.add(id, t.weight, &mut x, STAGE1, f * features::GROUPS + t.group);
                }
            }
            if let Some(id) = t.ex {
                ex.field
                    .add(id, t.weight, &mut x, STAGE1, examples_slot + t.group);
                ex.each.each(id, t.weight, |e, s| knn[e] += s);
            }
        }
        // Rarity-weighted share of the query's concepts each action's own text (any field) and
        // its text or examples cover, from the concept tokens' postings: a concept counts once
        // per action (`seen_*` holds the last concept counted).
        let (mut by_doc, mut by_all) = (vec![0.0f32; n], vec![0.0f32; n]);
        if !q.concepts.is_empty() {
            let (mut seen_doc, mut seen_all) = (vec![u32::MAX; n], vec![u32::MAX; n]);
            for (c, (concept, &w)) in q.concepts.iter().zip(&q.concept_weights).enumerate() {
                let c = c as u32;
                for &(b, e) in concept {
                    for &i in b
                        .and_then(|b| self.base.token_docs.get(b as usize))
                        .into_iter()
                        .flatten()
                    {
                        let i = i as usize;
                        if seen_doc[i] != c {
                            seen_doc[i] = c;
                            by_doc[i] += w;
                            if seen_all[i] != c {
                                seen_all[i] = c;
                                by_all[i] += w;
                            }
                        }
                    }
                    if let Some(e) = e {
                        ex.field.each(e, 0.0, |i, _| {
                            if seen_all[i] != c {
                                seen_all[i] = c;
                                by_all[i] += w;
                            }
                        });
                    }
                }
            }
            let m = 1.0 / q.concept_total;
            for v in by_doc.iter_mut().chain(by_all.iter_mut()) {
                *v *= m;
            }
        }
        // Each BM25 feature divided by its best value for this query: scores of long and
        // short queries become comparable. Row by row (the matrix is row-major).
        let mut matched = vec![false; n];
        let mut max = [0.0f32; BM25];
        for (row, m) in x.chunks_exact(STAGE1).zip(&mut matched) {
            let row: &[f32; BM25] = row[..BM25].try_into().expect("a row holds the BM25 block");
            // Branch-free (`f32::max` is not, for NaN's sake; these are never NaN) so that the
            // columns go in vectors: this runs for every action.
            let mut any = false;
            for (best, &v) in max.iter_mut().zip(row) {
                *best = if v > *best { v } else { *best };
                any |= v > 0.0;
            }
            *m = any;
        }
        let max = max.map(|m| if m > 0.0 { m } else { 1.0 });
        let best = knn.iter().copied().fold(0.0f32, f32::max);
        let (mut knn_best, mut knn_top) = (vec![0.0f32; n], vec![false; n]);
        if best > 0.0 {
            for (e, &s) in knn.iter().enumerate() {
                if s <= 0.0 {
                    continue;
                }
                for &a in &ex.owners[e] {
                    let slot = &mut knn_best[a as usize];
                    *slot = slot.max(s / best);
                    if s == best {
                        knn_top[a as usize] = true;
                    }
                }
            }
        }
        // Verb intent × verb class, and the learned lifts of class, scope and item given the
        // query's words (weighted sums, see `Query::word_weights`), for every action.
        let lifts = &ex.lifts;
        let (mut lc, mut ls, mut li) = ([0.0f32; 5], [0.0f32; 7], [0.0f32; 2]);
        if !q.words.is_empty() {
            for (w, &m) in q.words.iter().zip(&q.word_weights) {
                add_scaled(&mut lc, lifts.class.get(w), m);
                add_scaled(&mut ls, lifts.scope.get(w), m);
                add_scaled(&mut li, lifts.item.get(w), m);
            }
        }
        let (mut fc, mut fs, mut fi) = ([0.0f32; 5], [0.0f32; 7], [0.0f32; 2]);
        for w in &q.fn_words {
            add_scaled(&mut fc, lifts.fn_class.get(w), 1.0);
            add_scaled(&mut fs, lifts.fn_scope.get(w), 1.0);
            add_scaled(&mut fi, lifts.fn_item.get(w), 1.0);
        }
        // Summed over the function words, ÷ √n: a long need has many.
        if !q.fn_words.is_empty() {
            let m = (q.fn_words.len() as f32).sqrt();
            for v in fc.iter_mut().chain(fs.iter_mut()).chain(fi.iter_mut()) {
                *v /= m;
            }
        }
        let lead = q.lead.and_then(|w| lifts.lead_class.get(&w));
        // The resource's and the action's lifts given the query's words (weighted sums): from
        // each word's list, every action met by the word's unseen lift, the listed ones by
        // theirs. And how well each action's words translate the query's (IBM model 1): the
        // same weighted sum, over every action a word's translations reach.
        // Indexed by the resource's word id (a few thousand at most).
        let mut by_resource: Vec<f32> = Vec::new();
        let mut action = vec![0.0f32; n];
        let mut trans = vec![0.0f32; n];
        let mut unseen = 0.0f32;
        for (&w, &m) in q.words.iter().zip(&q.word_weights) {
            let u = lifts.unseen_of(w);
            unseen += m * u;
            for &(r, v) in lifts.resource.list(w) {
                let r = r as usize;
                if by_resource.len() <= r {
                    by_resource.resize(r + 1, 0.0);
                }
                by_resource[r] += m * (v - u);
            }
            for &(a, v) in lifts.action.list(w) {
                if let Some(slot) = action.get_mut(a as usize) {
                    *slot += m * (v - u);
                }
            }
        }
        for (&w, &m) in q.words.iter().zip(&q.word_weights) {
            for &(a, v) in ex.trans.list(w) {
                if let Some(slot) = trans.get_mut(a as usize) {
                    *slot += m * v;
                }
            }
        }
        // The rest of every action's row.
        for (i, row) in x.chunks_exact_mut(STAGE1).enumerate() {
            if matched[i] {
                for (v, m) in row[..BM25].iter_mut().zip(&max) {
                    *v /= m;
                }
            }
            row[KNN_BEST] = knn_best[i];
            row[KNN_TOP] = f32::from(u8::from(knn_top[i]));
            let shape = &self.base.shapes[i];
            let class = class_code(shape.class);
            row[features::LEX_FN_CLASS] = fc[class];
            row[features::LEX_FN_SCOPE] = fs[scope_code(shape.scope)];
            row[features::LEX_FN_ITEM] = fi[usize::from(shape.on_item)];
            row[HAS_EXAMPLES] = f32::from(u8::from(ex.has[i]));
            row[features::INTENT + q.intent * features::CLASSES + class] = 1.0;
            row[features::LEX_CLASS] = lc[class];
            row[features::LEX_SCOPE] = ls[scope_code(shape.scope)];
            row[features::LEX_ITEM] = li[usize::from(shape.on_item)];
            row[features::COVER_DOC] = by_doc[i];
            row[features::COVER_ALL] = by_all[i];
            // "nuke the old board", "I want to *flip* it to visible": the verb of a command
            // comes first, or right after the words of wanting, whether or not the vocabulary
            // knows it.
            if let Some(l) = lead {
                row[features::LEX_LEAD_CLASS] = l[class];
            }
            if !q.words.is_empty() {
                if let Some(r) = self.base.resource_heads[i] {
                    row[features::LEX_RESOURCE] =
                        unseen + by_resource.get(r as usize).copied().unwrap_or(0.0);
                }
                if ex.has[i] {
                    row[features::LEX_ACTION] = unseen + action[i];
                }
            }
            row[features::LEX_TRANS] = trans[i];
        }
        Stage1 { x, matched }
    }

    /// The best stage-one candidates that pass `keep` and the typo guard, best first.
    pub(crate) fn stage1_candidates(
        &self,
        q: &Query,
        s1: &Stage1,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<usize> {
        let mut scored: Vec<(usize, f32)> = (0..self.base.shapes.len())
            .filter(|&i| s1.matched[i] && keep(i) && self.passes_typo_guard(q, i))
            .map(|i| (i, model::dot_dense(s1.row(i), &self.model.stage1)))
            .collect();
        // The order is total (ties by position), so selecting the best before sorting them
        // gives what sorting everything gives.
        let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let k = self.model.candidates;
        if k > 0 && scored.len() > k {
            scored.select_nth_unstable_by(k - 1, order);
        }
        scored.truncate(k);
        scored.sort_unstable_by(order);
        scored.into_iter().map(|(i, _)| i).collect()
    }

    /// Stage two over `cands`, best first: the linear score, then the boosted trees re-rank the
    /// best [`Model::boost_top`] (the others follow in linear order, their scores shifted below).
    pub(crate) fn stage2_ranked(
        &self,
        q: &Query,
        s1: &Stage1,
        cands: &[usize],
    ) -> Vec<(usize, f32)> {
        let by_score = |a: &(usize, f32, usize), b: &(usize, f32, usize)| {
            b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
        };
        // Every candidate's features, dense, one row each (the trees read them again).
        let width = features::COUNT;
        let mut rows = vec![0.0f32; cands.len() * width];
        let mut scored: Vec<(usize, f32, usize)> = cands
            .iter()
            .zip(rows.chunks_exact_mut(width))
            .enumerate()
            .map(|(k, (&i, row))| {
                self.stage2_into(q, s1, i, row);
                let score = model::dot_dense(row, &self.model.stage2) + self.word_part(q, i);
                (i, score, k)
            })
            .collect();
        scored.sort_by(by_score);
        let top = if self.forest.is_empty() {
            0
        } else {
            self.model.boost_top.min(scored.len())
        };
        for h in &mut scored[..top] {
            h.1 += self.forest.eval(&rows[h.2 * width..(h.2 + 1) * width]);
        }
        if top > 0 {
            scored[..top].sort_by(by_score);
            if top < scored.len() {
                let floor = scored[..top]
                    .iter()
                    .map(|h| h.1)
                    .fold(f32::INFINITY, f32::min);
                let shift = scored[top].1 - floor + 1.0;
                for h in &mut scored[top..] {
                    h.1 -= shift;
                }
            }
        }
        scored.into_iter().map(|(i, score, _)| (i, score)).collect()
    }

    /// The word × shape weights' part in action `i`'s score (see [`Model::words`]).
    fn word_part(&self, q: &Query, i: usize) -> f32 {
        let [c, s, it] = self.word_slots(i);
        q.word_shape[c] + q.word_shape[s] + q.word_shape[it]
    }

    /// The three word × shape weights that apply to action `i`: its class, scope and item.
    pub(crate) fn word_slots(&self, i: usize) -> [usize; 3] {
        let shape = &self.base.shapes[i];
        [
            model::WORD_CLASS + class_code(shape.class),
            model::WORD_SCOPE + scope_code(shape.scope),
            model::WORD_ITEM + usize::from(shape.on_item),
        ]
    }

    /// A destructive action never surfaces from a typo alone: when the delete came from an
    /// unsure correction, some word the user really typed must match the action's own text.
    fn passes_typo_guard(&self, q: &Query, i: usize) -> bool {
        !(self.base.shapes[i].destructive
            && q.analysis.intent_from_typo
            && !q
                .typed
                .iter()
                .any(|&t| contains(&self.base.doc_tokens[i], t)))
    }

    /// All features of action `i` for the query, sparse, in feature order.
    pub(crate) fn stage2(&self, q: &Query, s1: &Stage1, i: usize) -> Sparse {
        let mut x = vec![0.0f32; features::COUNT];
        self.stage2_into(q, s1, i, &mut x);
        x.iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(j, &v)| (j as u16, v))
            .collect()
    }

    /// All features of action `i` for the query, written into `x` (dense, [`features::COUNT`]
    /// long, zero where the features are not set).
    fn stage2_into(&self, q: &Query, s1: &Stage1, i: usize, x: &mut [f32]) {
        use features::*;
        let base = &self.base;
        let shape = &base.shapes[i];
        let ids = &base.shape_ids[i];
        x[..STAGE1].copy_from_slice(s1.row(i));
        let mut put = |j: usize, v: f32| x[j] = v;
        let doc = &base.doc_tokens[i];
        let masks = &base.field_masks[i];
        let exs = &self.examples.tokens[i];
        if !q.concepts.is_empty() {
            // Per field, the rarity-weighted share of concepts it covers (one search of the
            // action's tokens gives every field a token is in).
            let mut covered = [0.0f32; FIELDS];
            for (c, &w) in q.concepts.iter().zip(&q.concept_weights) {
                let in_fields = c
                    .iter()
                    .filter_map(|(b, _)| *b)
                    .filter_map(|b| doc.binary_search(&b).ok())
                    .fold(0u8, |m, k| m | masks[k]);
                let e = c.iter().any(|(_, e)| e.is_some_and(|e| contains(exs, e)));
                for (f, v) in covered.iter_mut().enumerate().take(FIELDS - 1) {
                    if in_fields & (1 << f) != 0 {
                        *v += w;
                    }
                }
                if e {
                    covered[FieldKind::Examples as usize] += w;
                }
            }
            for (f, v) in covered.iter().enumerate() {
                put(COVER_FIELD + f, v / q.concept_total);
            }
        }
        // Share of `words` the query names; nothing to name is fully named.
        let share = |words: &[u32]| -> f32 {
            if words.is_empty() {
                return 1.0;
            }
            words.iter().filter(|&&w| contains(&q.base_ids, w)).count() as f32 / words.len() as f32
        };
        let s = share(&ids.name_nouns);
        put(NAME_COVER, s);
        put(
            NAME_MISSING,
            (ids.name_nouns.len() as f32 * (1.0 - s) / 4.0).min(1.0),
        );
        put(RESOURCE, share(&ids.resource));
        if !ids.parent.is_empty() {
            put(PARENT, share(&ids.parent));
        }
        put(PATH_COVER, share(&ids.path));
        if !q.head_ids.is_empty() {
            let names = |words: &[u32], of: &[u32]| words.iter().any(|&w| contains(of, w));
            put(
                HEAD_RESOURCE,
                f32::from(u8::from(names(&ids.resource, &q.head_ids))),
            );
            put(
                HEAD_NAME,
                f32::from(u8::from(names(&ids.name_nouns, &q.head_ids))),
            );
            if !ids.resource.is_empty() {
                put(
                    OBJECT_RESOURCE,
                    ids.resource
                        .iter()
                        .filter(|&&w| contains(&q.object_ids, w))
                        .count() as f32
                        / ids.resource.len() as f32,
                );
            }
        }
        let asks_delete = q.analysis.intents.contains(&Intent::Delete);
        put(
            UPSERT_CREATE,
            f32::from(u8::from(shape.upsert && q.intent == 2)),
        );
        put(
            DESTRUCTIVE_NO_DELETE,
            f32::from(u8::from(shape.destructive && !asks_delete)),
        );
        put(
            DESTRUCTIVE_DELETE,
            f32::from(u8::from(shape.destructive && asks_delete)),
        );
        let list = shape.class == Intent::List;
        let coll = q.analysis.wants_collection;
        let plural = q.analysis.plural;
        put(COLLECTION_LIST, f32::from(u8::from(coll && !shape.on_item)));
        put(COLLECTION_ITEM, f32::from(u8::from(coll && shape.on_item)));
        put(PLURAL_LIST, f32::from(u8::from(plural && list)));
        put(PLURAL_ITEM, f32::from(u8::from(plural && shape.on_item)));
        if let Some(p) = q.head_plural {
            put(HEAD_PLURAL_LIST, f32::from(u8::from(p && list)));
            put(HEAD_PLURAL_ITEM, f32::from(u8::from(p && shape.on_item)));
            put(HEAD_SINGULAR_LIST, f32::from(u8::from(!p && list)));
        }
        put(EXTRA_IDS, f32::from(shape.extra_ids) / 4.0);
        if !q.valued.is_empty() {
            // "delete comment 5512": a number names what the action's identifiers name, or
            // something it takes no identifier for; an identifier no number fills.
            let fills = |id: &[u32], v: &[u32]| id.iter().any(|&w| contains(v, w));
            let named = q
                .valued
                .iter()
                .filter(|v| ids.id_nouns.iter().any(|id| fills(id, v)))
                .count();
            put(IDS_NAMED, named as f32 / q.valued.len() as f32);
            put(
                IDS_STRAY,
                (q.valued.len() - named) as f32 / q.valued.len() as f32,
            );
            let unfilled = ids
                .id_nouns
                .iter()
                .filter(|id| !q.valued.iter().any(|v| fills(id, v)))
                .count();
            put(IDS_UNFILLED, (unfilled as f32 / 4.0).min(1.0));
        }
        // "undo the dismissal", "take back my reaction": the action that did it is the
        // look-alike, the one that undoes it the answer.
        if q.analysis.undoing {
            let undoes = self.base.undoes[i];
            put(UNDO_UNDOES, f32::from(u8::from(undoes)));
            put(UNDO_DOES, f32::from(u8::from(!undoes && !shape.read_only)));
        }
        // "is bob a member of acme": a yes/no question is answered by a check, not a read.
        if self.base.checks[i] {
            if q.analysis.asks_whether {
                put(ASK_CHECK, 1.0);
            } else {
                put(NOASK_CHECK, 1.0);
            }
        }
        put(DEPTH, f32::from(shape.depth) / 6.0);
        put(DEPRECATED, f32::from(u8::from(shape.deprecated)));
        let scope = scope_code(shape.scope);
        let lifts = &self.examples.lifts;
        if !q.words.is_empty() {
            let res = ids.resource.first().copied();
            let strongest = |words: &[u32], r: u32| {
                words
                    .iter()
                    .map(|&w| lifts.resource_of(w, r))
                    .fold(f32::MIN, f32::max)
            };
            if let (Some(r), false) = (res, q.head_ex.is_empty()) {
                put(LEX_HEAD_RESOURCE, strongest(&q.head_ex, r));
            }
            // The one word that points at the resource most, whatever the others say.
            if let Some(r) = res {
                put(LEX_RESOURCE_MAX, strongest(&q.words, r));
            }
        }
        put(
            VALUE_SLASH_REPO,
            f32::from(u8::from(q.slash_value && shape.names_repository)),
        );
        put(
            VALUE_NUMBER_ITEM,
            f32::from(u8::from(q.number_value && shape.on_item)),
        );
        put(SCOPE + scope, 1.0);
        for (c, &on) in q.cues.iter().enumerate() {
            if on {
                put(SCOPE_CUE + scope * CUES + c, 1.0);
            }
        }
    }

    /// Why `query` ranks as it does, for error analysis (`eval --cv --misses`): its analysed
    /// terms and cues, the rank of the best of `expect` after stage one (over every matched
    /// action) and after stage two, and the stage-two features that most separate the first hit
    /// from it (`part(first) − part(expected)`).
    pub fn diagnose(&self, query: &str, expect: &[String]) -> serde_json::Value {
        use serde_json::json;
        let Some(q) = self.prepare(query) else {
            return json!({"terms": []});
        };
        let want: Vec<usize> = (0..self.len())
            .filter(|&i| expect.iter().any(|e| e == self.operation_id(i)))
            .collect();
        let s1 = self.stage1(&q);
        let score1 = |i: usize| model::dot_dense(s1.row(i), &self.model.stage1);
        let mut all: Vec<(usize, f32)> = (0..self.len())
            .filter(|&i| s1.matched[i] && self.passes_typo_guard(&q, i))
            .map(|i| (i, score1(i)))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let stage1_rank = all
            .iter()
            .position(|(i, _)| want.contains(i))
            .map(|p| p + 1);
        let cands = self.stage1_candidates(&q, &s1, |_| true);
        let scored = self.stage2_ranked(&q, &s1, &cands);
        let names = features::names();
        let best_want = scored.iter().find(|(i, _)| want.contains(i));
        let mut diff: Vec<(String, f32)> = Vec::new();
        if let (Some(top), Some(w)) = (scored.first(), best_want) {
            let mut parts = vec![0.0f32; features::COUNT];
            for (j, v) in self.stage2(&q, &s1, top.0) {
                parts[j as usize] += v * self.model.stage2[j as usize];
            }
            for (j, v) in self.stage2(&q, &s1, w.0) {
                parts[j as usize] -= v * self.model.stage2[j as usize];
            }
            diff = parts
                .iter()
                .enumerate()
                .filter(|(_, p)| p.abs() > 1e-3)
                .map(|(j, &p)| (names[j].clone(), (p * 100.0).round() / 100.0))
                .collect();
            diff.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
            diff.truncate(8);
        }
        let cues: Vec<&str> = ["self", "admin", "org", "repo", "user"]
            .iter()
            .zip(q.cues)
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect();
        let diff: Vec<String> = diff
            .into_iter()
            .map(|(n, p)| format!("{n}={p:+}"))
            .collect();
        const INTENT_NAMES: [&str; 6] = ["none", "delete", "create", "update", "list", "get"];
        let terms: Vec<String> = q
            .analysis
            .terms
            .iter()
            .map(|t| format!("{}:{:?}", t.word, t.origin))
            .collect();
        let learned = q.terms.iter().filter(|t| t.group == 2).count();
        json!({
            "dropped": q.analysis.dropped,
            "corrections": q.analysis.corrections.iter().map(|(a, b)| format!("{a}>{b}")).collect::<Vec<_>>(),
            "terms": terms,
            "learned": learned,
            "concepts": q.analysis.concepts,
            "intents": format!("{:?}", q.analysis.intents),
            "intent": INTENT_NAMES[q.intent],
            "cues": cues,
            "collection": q.analysis.wants_collection,
            "plural": q.analysis.plural,
            "stage1_rank": stage1_rank,
            "matched": all.len(),
            "diff": diff,
        })
    }

    /// The operationId of each action, by position.
    pub(crate) fn operation_id(&self, i: usize) -> &str {
        &self.base.operation_ids[i]
    }

    /// Number of actions.
    pub(crate) fn len(&self) -> usize {
        self.base.shapes.len()
    }
}

/// Adds `m ×` each lift of `l` (when the word has lifts) into `acc`.
fn add_scaled<L: AsRef<[f32]>>(acc: &mut [f32], l: Option<&L>, m: f32) {
    if let Some(l) = l {
        for (a, v) in acc.iter_mut().zip(l.as_ref()) {
            *a += v * m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        Base, Dictionary, Examples, Model, SearchIndex, StemMemo, analyzer, class_code, lead_word,
        stems, valued_nouns,
    };
    use crate::catalog::Catalog;
    use crate::spec::Spec;

    /// An operation answering `code` with a bare description.
    fn op(id: &str, code: &str) -> serde_json::Value {
        serde_json::json!({"operationId": id, "responses": {code: {"description": "ok"}}})
    }

    /// The catalog of a document with these `paths`.
    fn catalog_of(paths: serde_json::Value) -> Catalog {
        let doc = serde_json::json!({
            "swagger": "2.0",
            "info": {"title": "Gitea API", "version": "1.0"},
            "basePath": "/api/v1",
            "paths": paths,
        });
        let spec = Spec::parse(doc.to_string().as_bytes()).expect("the document parses");
        Catalog::build(&spec).expect("the catalog builds")
    }

    /// A catalog of boards: list, create, get and delete.
    fn boards() -> Catalog {
        catalog_of(serde_json::json!({
            "/boards": {"get": op("listBoards", "200"), "post": op("createBoard", "201")},
            "/boards/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": true, "type": "integer"}],
                "delete": op("deleteBoard", "204"),
                "get": op("getBoard", "200"),
            },
        }))
    }

    /// The index of the action `operation_id` in `catalog`.
    fn position(catalog: &Catalog, operation_id: &str) -> usize {
        catalog
            .actions()
            .iter()
            .position(|a| a.operation_id.as_str() == operation_id)
            .expect("the action exists")
    }

    /// The actions that undo (a DELETE, an un-verb of another operationId's verb) and the
    /// checks (a GET answering with no body), in a document of six operations.
    #[test]
    fn undoing_actions_and_checks_are_told_from_the_document() {
        let json = |id: &str| {
            serde_json::json!({"operationId": id, "produces": ["application/json"],
                "responses": {"200": {"description": "ok", "schema": {"type": "object"}}}})
        };
        let catalog = catalog_of(serde_json::json!({
            // Paths without parameters: only operationIds, methods and answers count.
            "/reviews/dismissals": {"post": json("repoDismissPullReview")},
            "/reviews/undismissals": {"post": json("repoUnDismissPullReview")},
            "/user/blocks": {"delete": op("userUnblockUser", "204")},
            "/admin/unadopted": {"get": json("adminUnadoptedList")},
            "/orgs/members/check": {"get": op("orgIsMember", "204")},
            "/orgs/members": {"get": json("orgListMembers")},
            // A download: its body is undocumented, but it has one; not a check.
            "/repos/archive": {"get": op("repoGetArchive", "200")},
        }));
        let base = Base::build(&catalog);
        let flagged = |flags: &[bool]| -> Vec<&str> {
            let mut out: Vec<&str> = catalog
                .actions()
                .iter()
                .zip(flags)
                .filter(|(_, f)| **f)
                .map(|(a, _)| a.operation_id.as_str())
                .collect();
            out.sort_unstable();
            out
        };
        assert_eq!(
            flagged(&base.undoes),
            ["repoUnDismissPullReview", "userUnblockUser"],
            "`Unadopted` undoes nothing: no operationId says `adopted`"
        );
        assert_eq!(flagged(&base.checks), ["orgIsMember"]);
    }

    #[test]
    fn the_lead_word_is_the_first_or_the_wanted_one() {
        let cases = [
            ("nuke the old board", Some("nuke")),
            ("please punch in on ticket 9", Some("punch")),
            (
                "The flame war is over. How do I flip it to visible?",
                Some("flip"),
            ),
            ("our bot needs to yank stale cards", Some("yank")),
            // The verb asked of an object: the word after its `to`, a verb the vocabulary knows.
            ("I want my editor plugin to start the timer", Some("start")),
            ("I want my editor plugin to yank the timer", Some("editor")),
            // "How many" asks a quantity, not how to do it.
            ("count how many people upvoted it", Some("count")),
            // "Like" compares here: nothing is wanted, the first word leads.
            ("boards like Trello, then merge them", Some("boards")),
            // Nothing wanted within reach: the first word.
            ("board 3, I want it", Some("board")),
            // The verb after a role lead-in.
            ("as site admin, list every organization", Some("list")),
            ("as superuser enumerate the hooks", Some("enumerate")),
            ("as the site admin of it, delete it", Some("site")),
            ("the 12 of it", None),
        ];
        for (need, lead) in cases {
            assert_eq!(
                lead_word(&super::vocabulary::tokenize(need)).as_deref(),
                lead,
                "{need}"
            );
        }
    }

    /// A verb the vocabulary does not know ("nuke") tells the verb class by the needs it leads.
    #[test]
    fn the_lead_word_lifts_the_class_its_needs_ask_for() {
        let catalog = boards();
        let examples = Examples::parse(concat!(
            r#"{"op":"deleteBoard","q":["nuke board 3","nuke the old board for good"]}"#,
            "\n",
            r#"{"op":"getBoard","q":["show board 3","I want to see one board"]}"#,
            "\n",
            r#"{"op":"listBoards","q":["nuke nothing, list every board"]}"#,
        ))
        .expect("the examples parse");
        let model = Model::committed().expect("the committed model loads");
        let index = SearchIndex::with(&catalog, &examples, model);
        let lifts = &index.examples.lifts;
        let lift = |word: &str, op: &str| {
            let w = lifts.lead_words[word];
            let a = position(&catalog, op);
            lifts.lead_class[&w][class_code(index.base.shapes[a].class)]
        };
        assert!(lift("nuke", "deleteBoard") > 0.0);
        assert!(lift("nuke", "getBoard") < 0.0);
        // "I want to *see*": the wanted verb leads, not the pronoun before it.
        assert!(lift("see", "getBoard") > 0.0);
        assert!(!lifts.lead_words.contains_key("want"));
    }

    /// An action's own words join the needs in the learned lifts: `kanban`, which no labelled
    /// need uses, points at the resource whose summary says it; with no labelled needs at all
    /// nothing is learned.
    #[test]
    fn an_actions_own_words_teach_the_lifts_beside_the_needs() {
        let summarised = |id: &str, summary: &str| {
            serde_json::json!({"operationId": id, "summary": summary,
                "responses": {"200": {"description": "ok"}}})
        };
        let catalog = catalog_of(serde_json::json!({
            "/boards": {"get": summarised("listBoards", "List the kanban boards")},
            "/labels": {"get": summarised("listLabels", "List the labels")},
        }));
        let needs = Examples::parse(concat!(
            r#"{"op":"listBoards","q":["show every board"]}"#,
            "\n",
            r#"{"op":"listLabels","q":["show every label","which labels exist"]}"#,
        ))
        .expect("the examples parse");
        let model = Model::committed().expect("the committed model loads");
        let index = SearchIndex::with(&catalog, &needs, model.clone());
        let ex = &index.examples;
        let kanban = stems(&mut analyzer(), "kanban")[0].clone();
        let word = ex.dict.get(&kanban).expect("an own need's word is learned");
        let resource = |op: &str| index.base.shape_ids[position(&catalog, op)].resource[0];
        assert!(ex.lifts.resource_of(word, resource("listBoards")) > 0.0);
        assert!(ex.lifts.resource_of(word, resource("listLabels")) < 0.0);
        // Only the labelled needs weigh the words.
        assert!(!ex.info.contains_key(&word));

        let bare = SearchIndex::with(&catalog, &Examples::parse("").expect("empty"), model);
        assert!(bare.examples.dict.get(&kanban).is_none());
    }

    /// The boards catalog with labelled needs for deleting, reading and listing, and its index
    /// under the committed model.
    fn labelled_boards() -> (Catalog, SearchIndex) {
        let catalog = boards();
        let examples = Examples::parse(concat!(
            r#"{"op":"deleteBoard","q":["nuke board 3","zap board 4"]}"#,
            "\n",
            r#"{"op":"getBoard","q":["show board 3","fetch board 5"]}"#,
            "\n",
            r#"{"op":"listBoards","q":["every board"]}"#,
        ))
        .expect("the examples parse");
        let model = Model::committed().expect("the committed model loads");
        let index = SearchIndex::with(&catalog, &examples, model);
        (catalog, index)
    }

    /// A word the needs use for what their action's own text names (`board`) weighs more in
    /// the coverage features than one their actions' text never says (`nuke`), by how often
    /// each is found there; a concept no need's word has keeps its rarity alone (`delete`).
    #[test]
    fn concepts_weigh_by_how_often_the_needs_say_their_actions_words() {
        let (_, index) = labelled_boards();
        let ex = &index.examples;
        let stem = |w: &str| stems(&mut analyzer(), w).remove(0);
        let relevance = |w: &str| {
            ex.dict
                .get(&stem(w))
                .and_then(|e| ex.relevance.get(&e).copied())
        };
        let (board, nuke) = (
            relevance("board").expect("a word of the needs"),
            relevance("nuke").expect("a word of the needs"),
        );
        assert!(board > 1.0 && nuke < 1.0, "board {board}, nuke {nuke}");
        assert!(relevance("delete").is_none());
        let q = index
            .prepare("nuke the board, delete it")
            .expect("the query is analysed");
        let weight = |w: &str| {
            let c = q
                .analysis
                .concepts
                .iter()
                .position(|c| c.iter().any(|x| x == w))
                .expect("a concept of the query");
            q.concept_weights[c]
        };
        let rarity = |w: &str| {
            let id = index.base.dict.get(&stem(w));
            id.and_then(|b| index.base.idf.get(&b).copied())
                .unwrap_or(1.0)
                .max(1.0)
        };
        assert!((weight("board") - rarity("board") * board).abs() < 1e-6);
        assert!((weight("nuke") - rarity("nuke") * nuke).abs() < 1e-6);
        assert!((weight("delete") - rarity("delete")).abs() < 1e-6);
        assert!((q.concept_total - q.concept_weights.iter().sum::<f32>()).abs() < 1e-6);
    }

    /// Two words that ask for a delete say it more surely than one: the learned lifts are
    /// summed by how much each word tells (÷ √ of what all tell), not averaged, so a long need's
    /// telling words are not drowned by its context.
    #[test]
    fn the_words_lifts_add_up_rather_than_average() {
        let (catalog, index) = labelled_boards();
        let delete = position(&catalog, "deleteBoard");
        let lift = |q: &str| {
            let q = index.prepare(q).expect("the query is analysed");
            index.stage1(&q).row(delete)[crate::search::features::LEX_CLASS]
        };
        let (one, two) = (lift("nuke board"), lift("nuke zap board"));
        assert!(one > 0.0, "{one}");
        assert!(two > 1.2 * one, "one word {one}, two {two}");
    }

    /// The boards' index, `text` analysed as a query, and its stage one.
    fn stage_one_of(text: &str) -> (Catalog, SearchIndex, super::Query, super::Stage1) {
        let (catalog, index) = labelled_boards();
        let q = index.prepare(text).expect("the query is analysed");
        let s1 = index.stage1(&q);
        (catalog, index, q, s1)
    }

    /// Stage one scores the resource's, the action's and the lead word's lifts for every
    /// action (so an action the words point at is a candidate even when its text says little),
    /// summed from each word's list as the plain look-up would.
    #[test]
    fn stage_one_scores_the_resource_and_action_lifts_of_every_action() {
        use crate::search::features::{LEX_ACTION, LEX_LEAD_CLASS, LEX_RESOURCE};
        let (catalog, index, q, s1) = stage_one_of("nuke the board");
        let lifts = &index.examples.lifts;
        let plain = |table: &super::PerWord, key: u32| -> f32 {
            q.words
                .iter()
                .zip(&q.word_weights)
                .map(|(&w, &m)| m * table.get(w, key).unwrap_or_else(|| lifts.unseen_of(w)))
                .sum()
        };
        for i in 0..catalog.actions().len() {
            let row = s1.row(i);
            let r = index.base.shape_ids[i].resource[0];
            assert!((row[LEX_RESOURCE] - plain(&lifts.resource, r)).abs() < 1e-5);
            let action = if index.examples.has[i] {
                plain(&lifts.action, i as u32)
            } else {
                0.0
            };
            assert!((row[LEX_ACTION] - action).abs() < 1e-5, "{i}");
        }
        let (delete, get) = (
            position(&catalog, "deleteBoard"),
            position(&catalog, "getBoard"),
        );
        assert!(s1.row(delete)[LEX_ACTION] > s1.row(get)[LEX_ACTION]);
        assert!(s1.row(delete)[LEX_LEAD_CLASS] > 0.0);
        assert!(s1.row(get)[LEX_LEAD_CLASS] < 0.0);
    }

    /// Stage one writes every action's nearest-example features, BM25 block and coverage as
    /// their plain definitions give them: the action's best labelled need's similarity ÷ the
    /// query's best, the owner of the best flagged; each BM25 column scaled so that its best
    /// action scores 1; a share of the concepts, the examples adding to the text's.
    #[test]
    fn stage_one_writes_the_nearest_examples_bm25_and_coverage_of_every_action() {
        use crate::search::features::{BM25, COVER_ALL, COVER_DOC, KNN_BEST, KNN_TOP};
        let (catalog, index, q, s1) = stage_one_of("nuke the board");
        let ex = &index.examples;
        let mut sim = vec![0.0f32; ex.owners.len()];
        for t in &q.terms {
            if let Some(id) = t.ex {
                ex.each.each(id, t.weight, |e, s| sim[e] += s);
            }
        }
        let best = sim.iter().copied().fold(0.0f32, f32::max);
        assert!(best > 0.0, "the query meets the labelled needs");
        let n = catalog.actions().len();
        for i in 0..n {
            let own: Vec<f32> = (0..sim.len())
                .filter(|&e| ex.owners[e].contains(&(i as u32)))
                .map(|e| sim[e])
                .collect();
            let want = own.iter().copied().fold(0.0f32, f32::max) / best;
            let row = s1.row(i);
            assert!((row[KNN_BEST] - want).abs() < 1e-6, "{i}");
            assert_eq!(row[KNN_TOP] == 1.0, own.contains(&best), "{i}");
            assert!((0.0..=1.0 + 1e-6).contains(&row[COVER_DOC]), "{i}");
            assert!(row[COVER_ALL] >= row[COVER_DOC] && row[COVER_ALL] <= 1.0 + 1e-6);
        }
        let delete = position(&catalog, "deleteBoard");
        assert_eq!(s1.row(delete)[KNN_TOP], 1.0);
        assert!(s1.row(delete)[COVER_ALL] > 0.0);
        let tops: Vec<f32> = (0..BM25)
            .map(|c| (0..n).map(|i| s1.row(i)[c]).fold(0.0f32, f32::max))
            .collect();
        assert!(
            tops.iter().all(|&t| t == 0.0 || (t - 1.0).abs() < 1e-6),
            "{tops:?}"
        );
        assert!(tops.contains(&1.0), "{tops:?}");
    }

    /// The labelled needs teach that `nuke` is said for what the catalog calls `delete`: stage
    /// one scores how well each action's words translate the need's words (`lex.trans`),
    /// for every action, by the same weighted sum as the lifts.
    #[test]
    fn stage_one_scores_how_the_actions_words_translate_the_need() {
        use crate::search::features::{LEX_TRANS, is_evidence, names};
        assert!(is_evidence(&names()[LEX_TRANS]));
        let (catalog, index) = labelled_boards();
        let q = index.prepare("nuke it").expect("the query is analysed");
        let s1 = index.stage1(&q);
        let trans = &index.examples.trans;
        for i in 0..catalog.actions().len() {
            let want: f32 = q
                .words
                .iter()
                .zip(&q.word_weights)
                .map(|(&w, &m)| m * trans.get(w, i as u32).unwrap_or(0.0))
                .sum();
            assert!((s1.row(i)[LEX_TRANS] - want).abs() < 1e-5, "{i}");
        }
        let (delete, get, list) = (
            position(&catalog, "deleteBoard"),
            position(&catalog, "getBoard"),
            position(&catalog, "listBoards"),
        );
        assert!(s1.row(delete)[LEX_TRANS] > 0.0);
        assert!(s1.row(delete)[LEX_TRANS] > s1.row(get)[LEX_TRANS]);
        assert!(s1.row(delete)[LEX_TRANS] > s1.row(list)[LEX_TRANS]);
    }

    /// `lex.resource.max` is the one word that points at the resource most, undiluted by the
    /// words around it: the largest single-word lift, whatever else the need says.
    #[test]
    fn the_strongest_word_lifts_the_resource_whatever_the_rest_say() {
        use crate::search::features::{LEX_RESOURCE, LEX_RESOURCE_MAX, is_evidence, names};
        assert!(is_evidence(&names()[LEX_RESOURCE_MAX]));
        let catalog = catalog_of(serde_json::json!({
            "/boards": {"get": op("listBoards", "200")},
            "/labels": {"get": op("listLabels", "200")},
        }));
        let examples = Examples::parse(concat!(
            r#"{"op":"listBoards","q":["every kanban","the kanban lanes","our team kanban"]}"#,
            "\n",
            r#"{"op":"listLabels","q":["every tag","the tags of our team","team tags"]}"#,
        ))
        .expect("the examples parse");
        let model = Model::committed().expect("the committed model loads");
        let index = SearchIndex::with(&catalog, &examples, model);
        let lifts = &index.examples.lifts;
        let boards = position(&catalog, "listBoards");
        let feature = |text: &str, j: usize| {
            let q = index.prepare(text).expect("the query is analysed");
            let s1 = index.stage1(&q);
            index
                .stage2(&q, &s1, boards)
                .into_iter()
                .find(|&(k, _)| usize::from(k) == j)
                .map_or(0.0, |(_, v)| v)
        };
        // The largest single-word lift, computed apart from the feature.
        let strongest = |text: &str| {
            let q = index.prepare(text).expect("the query is analysed");
            let r = index.base.shape_ids[boards].resource[0];
            q.words
                .iter()
                .map(|&w| lifts.resource_of(w, r))
                .fold(f32::MIN, f32::max)
        };
        let (short, want) = (feature("kanban", LEX_RESOURCE_MAX), strongest("kanban"));
        assert!(want > 0.0, "`kanban` points at the boards: {want}");
        assert!((short - want).abs() < 1e-5, "{short} vs {want}");
        // Words that point elsewhere lower the weighted sum, not the strongest word's lift.
        let long_text = "kanban of team tags";
        let (long, want) = (feature(long_text, LEX_RESOURCE_MAX), strongest(long_text));
        assert!((long - want).abs() < 1e-5, "{long} vs {want}");
        assert!((long - short).abs() < 1e-5, "{long} vs {short}");
        let sum_short = feature("kanban", LEX_RESOURCE);
        let sum_long = feature(long_text, LEX_RESOURCE);
        assert!(sum_long < sum_short, "{sum_long} vs {sum_short}");
    }

    #[test]
    fn a_number_is_read_with_the_noun_before_it() {
        let v = |q: &str| valued_nouns(q);
        assert_eq!(v("delete comment 5512"), vec![vec!["comment"]]);
        // Through the vocabulary, a two-word phrase first.
        assert_eq!(v("merge PR #42"), vec![vec!["pull", "request"]]);
        // A compound noun as typed, or through the vocabulary: not the noun's last word.
        assert_eq!(v("get pull request 12"), vec![vec!["pull", "request"]]);
        assert_eq!(v("close merge request 4"), vec![vec!["pull", "request"]]);
        assert_eq!(v("the old request 3"), vec![vec!["request"]]);
        assert_eq!(
            v("attachment 9 on comment 1203"),
            vec![vec!["attachment"], vec!["comment"]]
        );
        // `owner/name#N` numbers an issue or a pull request, whatever comes before it.
        assert_eq!(v("close acme/web#19"), vec![vec!["issue", "pull"]]);
        assert_eq!(v("pin acme/web#3."), vec![vec!["issue", "pull"]]);
        // No noun before it: a stop word, another number, nothing, a value.
        for q in [
            "move it to 3",
            "12 34",
            "42",
            "see a/b/c#4",
            "acme/web#x",
            "#",
        ] {
            assert!(v(q).is_empty(), "{q:?}: {:?}", v(q));
        }
    }

    /// The memo's stems and ids are those of the analyzer it stands in for, on the texts an
    /// index analyses (words of every case, hyphens, digits, other scripts, and a capital whose
    /// lower case adds a mark that is no letter, `İ`) and on the same text again.
    #[test]
    fn the_stem_memo_gives_the_analyzers_ids() {
        let mut az = analyzer();
        let mut memo = StemMemo::new();
        let (mut plain, mut memoised) = (Dictionary::default(), Dictionary::default());
        let texts = [
            "List the repository's Issues; list issues by labels",
            "pre-receive hooks, re-run jobs, GPG keys v1.4.0 #12 oauth2",
            "Straße ÉTÉ İstanbul Ǆemal ﬁle naïve — 仓库 列表",
            "",
            "   ",
            "List the repository's Issues; list issues by labels",
        ];
        for text in texts {
            let want: Vec<u32> = stems(&mut az, text)
                .iter()
                .map(|s| plain.intern(s))
                .collect();
            assert_eq!(memo.ids(text, &mut memoised), want, "{text:?}");
        }
        assert!(memo.memo.len() > 10, "the memo keeps what it stemmed");
    }

    proptest::proptest! {
        /// Any text: the memo answers as the analyzer does, the second time too.
        #[test]
        fn the_stem_memo_agrees_on_any_text(text in "\\PC{0,60}") {
            let mut memo = StemMemo::new();
            let want = stems(&mut analyzer(), &text);
            for _ in 0..2 {
                let mut got = Vec::new();
                memo.each(&text, |s| got.push(s.to_string()));
                proptest::prop_assert_eq!(&got, &want);
            }
        }
    }
}

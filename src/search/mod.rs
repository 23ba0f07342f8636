//! Finding the right action for a need described in the user's own words.
//!
//! A tantivy index over the catalog is built in RAM at start-up. Each action is one document
//! with several fields (name words, operationId words, summary, description, path words,
//! parameter and body-property names with enum values), each with its
//! own boost. A query is analysed first ([`vocabulary::analyse`]: values removed, phrases and
//! words mapped through the curated vocabulary, typos corrected against the catalog's own words,
//! verb intent and scope cues noted), then scored with BM25 per field, then re-ranked by intent:
//! what kind of action the query asks for, read against write, single item against collection,
//! the user's own things against anybody's, site administration or not.
//!
//! The index knows nothing about policy or transports: it returns positions in
//! [`Catalog::actions`] with scores.

mod eval;
pub mod vocabulary;

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{Language, LowerCaser, SimpleTokenizer, Stemmer, TextAnalyzer};
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument, Term as TantivyTerm};

pub use eval::{EvalReport, EvalRow, Metrics, evaluate, parse_eval_set};
pub use vocabulary::{Analysis, Intent};

use crate::catalog::{Action, Catalog, Domain, HttpMethod, ParamLocation, split_words};
use vocabulary::{Lexicon, Origin, analyse};

/// The score given to an action named exactly by the query (above any BM25 score).
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
    /// tantivy failed (a bug, not an input problem).
    #[error("search index error: {0}")]
    Index(#[from] tantivy::TantivyError),
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

/// One result: a position in [`Catalog::actions`] and its relevance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Index into the catalog's actions.
    pub action: usize,
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

/// The fields of an action document, each with its boost.
#[derive(Debug, Clone, Copy)]
struct Fields {
    name: Field,
    operation_id: Field,
    summary: Field,
    description: Field,
    path: Field,
    params: Field,
    position: Field,
}

/// How much a match in each field counts. The summary is the best description of what an action
/// does; the name and path are precise but terse; descriptions are long and noisy.
const BOOSTS: [(FieldKind, f32); 6] = [
    (FieldKind::Name, 2.0),
    (FieldKind::OperationId, 1.0),
    (FieldKind::Summary, 2.5),
    (FieldKind::Description, 0.4),
    (FieldKind::Path, 1.2),
    (FieldKind::Params, 1.0),
];

#[derive(Debug, Clone, Copy)]
enum FieldKind {
    Name,
    OperationId,
    Summary,
    Description,
    Path,
    Params,
}

impl Fields {
    fn get(&self, kind: FieldKind) -> Field {
        match kind {
            FieldKind::Name => self.name,
            FieldKind::OperationId => self.operation_id,
            FieldKind::Summary => self.summary,
            FieldKind::Description => self.description,
            FieldKind::Path => self.path,
            FieldKind::Params => self.params,
        }
    }
}

/// What the ranking needs to know about each action, computed once.
#[derive(Debug, Clone)]
struct ActionTraits {
    class: Intent,
    destructive: bool,
    deprecated: bool,
    admin: bool,
    /// `/user/…`: the authenticated user's own things.
    own: bool,
    /// `/users/{username}/…`: somebody's things.
    someone: bool,
    read_only: bool,
    domain: Domain,
    /// The path ends in a parameter: the action targets one item.
    on_item: bool,
    /// A PUT that creates or replaces (its summary says "create or update").
    upsert: bool,
    /// Analysed tokens of the nouns of the action's name (verbs and scope words left out).
    name_nouns: Vec<String>,
    /// Required path parameters beyond the owner (`owner`, `repo`, `org`, `username`…):
    /// identifiers of a sub-resource the caller must already know (a PR index, a workflow id).
    extra_ids: u8,
}

/// The search index over one catalog.
pub struct SearchIndex {
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
    lexicon: Lexicon,
    traits: Vec<ActionTraits>,
    /// Doc address → action position, per segment.
    positions: Vec<Vec<u32>>,
    /// Analysed tokens of each action's document (all fields but parameter docs), for
    /// coordination: how many of the query's concepts an action covers.
    doc_tokens: Vec<HashSet<String>>,
    /// Exact names and operationIds, for exact lookups.
    exact: std::collections::HashMap<String, usize>,
    /// The same, lower-cased, as a fallback (two operationIds may differ only in case:
    /// `userGetOAuth2Application` and `userGetOauth2Application`).
    exact_lower: std::collections::HashMap<String, usize>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("actions", &self.traits.len())
            .finish()
    }
}

const ANALYZER: &str = "aegis";

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Text as words: identifiers split (`branch_protections` → `branch protections`,
/// `getByID` → `get by id`).
fn words_of(text: &str) -> String {
    split_words(text)
        .iter()
        .map(|w| vocabulary::canonical(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words a domain stands for in the name field.
fn domain_words(d: Domain) -> &'static str {
    match d {
        Domain::Repo => "repository",
        Domain::Pull => "pull request",
        Domain::Org => "organization",
        other => other.as_str(),
    }
}

impl SearchIndex {
    /// Builds the index for `catalog`.
    pub fn build(catalog: &Catalog) -> Result<SearchIndex, Error> {
        let mut builder = Schema::builder();
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let fields = Fields {
            name: builder.add_text_field("name", text.clone()),
            operation_id: builder.add_text_field("operation_id", text.clone()),
            summary: builder.add_text_field("summary", text.clone()),
            description: builder.add_text_field("description", text.clone()),
            path: builder.add_text_field("path", text.clone()),
            params: builder.add_text_field("params", text),
            position: builder.add_u64_field("position", FAST | STORED),
        };
        let index = Index::create_in_ram(builder.build());
        index.tokenizers().register(ANALYZER, analyzer());
        // One thread, one segment: building ~500 small documents is faster without merging.
        let mut writer = index.writer_with_num_threads(1, 15_000_000)?;
        let mut bags: Vec<HashSet<String>> = Vec::with_capacity(catalog.len());
        let mut doc_tokens: Vec<HashSet<String>> = Vec::with_capacity(catalog.len());
        for (i, a) in catalog.actions().iter().enumerate() {
            let doc_text = DocText::of(a);
            let mut doc = TantivyDocument::default();
            doc.add_text(fields.name, &doc_text.name);
            doc.add_text(fields.operation_id, &doc_text.operation_id);
            doc.add_text(fields.summary, &doc_text.summary);
            doc.add_text(fields.description, &doc_text.description);
            doc.add_text(fields.path, &doc_text.path);
            doc.add_text(fields.params, &doc_text.params);
            doc.add_u64(fields.position, i as u64);
            writer.add_document(doc)?;
            bags.push(doc_text.surface_words());
            doc_tokens.push(doc_text.tokens(&mut analyzer()));
        }
        writer.commit()?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let searcher = reader.searcher();
        let mut positions = Vec::new();
        for segment in searcher.segment_readers() {
            let column = segment.fast_fields().u64("position")?;
            positions.push(
                (0..segment.max_doc())
                    .map(|d| column.first(d).unwrap_or(0) as u32)
                    .collect(),
            );
        }
        let lexicon = Lexicon::new(bags.iter().map(|b| b.iter().map(String::as_str).collect()));
        let traits = catalog.actions().iter().map(traits_of).collect();
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
        Ok(SearchIndex {
            reader,
            fields,
            analyzer: analyzer(),
            lexicon,
            traits,
            positions,
            doc_tokens,
            exact,
            exact_lower,
        })
    }

    /// Searches for `query`. Hostile input never fails except for length and emptiness.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>, Error> {
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
            let t = &self.traits[i];
            opts.domain.is_none_or(|d| t.domain == d)
                && opts.read_only.is_none_or(|r| t.read_only == r)
        };
        // An exact action name or operationId ranks that action first.
        let exact = self
            .exact
            .get(trimmed)
            .or_else(|| self.exact_lower.get(&trimmed.to_ascii_lowercase()))
            .copied()
            .filter(|&i| keep(i));
        let analysis = analyse(trimmed, &self.lexicon);
        if analysis.terms.is_empty() {
            return match exact {
                Some(i) => Ok(vec![Hit {
                    action: i,
                    score: EXACT_MATCH_SCORE,
                }]),
                // Words, but none the catalog or the vocabulary knows: no match, not an error.
                None if !vocabulary::tokenize(trimmed).is_empty() => Ok(Vec::new()),
                None => Err(Error::EmptyQuery),
            };
        }
        let (query, tokens) = self.query_for(&analysis);
        let concepts = self.concept_tokens(&analysis);
        let searcher = self.reader.searcher();
        let filtered = opts.domain.is_some() || opts.read_only.is_some();
        let candidates = if filtered { 200 } else { 60 };
        let top = searcher.search(&query, &TopDocs::with_limit(candidates).order_by_score())?;
        // Analysed tokens of the words the user typed (not corrected, not from the vocabulary);
        // only the typo guard below needs them.
        let typed: HashSet<String> = if !analysis.intent_from_typo {
            HashSet::new()
        } else {
            let mut analyzer = self.analyzer.clone();
            let mut out = HashSet::new();
            for t in analysis.terms.iter().filter(|t| t.origin == Origin::Typed) {
                let mut stream = analyzer.token_stream(vocabulary::canonical(&t.word));
                while let Some(tok) = stream.next() {
                    out.insert(tok.text.clone());
                }
            }
            out
        };
        let mut hits: Vec<Hit> = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let Some(&pos) = self
                .positions
                .get(addr.segment_ord as usize)
                .and_then(|p| p.get(addr.doc_id as usize))
            else {
                continue;
            };
            let i = pos as usize;
            if !keep(i) {
                continue;
            }
            let t = &self.traits[i];
            // A destructive action never surfaces from a typo alone: when the delete came from
            // an unsure correction, some word the user really typed must match the action.
            if t.destructive
                && analysis.intent_from_typo
                && !typed.iter().any(|tok| self.doc_tokens[i].contains(tok))
            {
                continue;
            }
            hits.push(Hit {
                action: i,
                score: score
                    * rank_factor(t, &analysis, &tokens)
                    * coordination(&self.doc_tokens[i], &concepts),
            });
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.action.cmp(&b.action)));
        if let Some(i) = exact {
            hits.retain(|h| h.action != i);
            hits.insert(
                0,
                Hit {
                    action: i,
                    score: EXACT_MATCH_SCORE,
                },
            );
        }
        hits.truncate(limit);
        Ok(hits)
    }

    /// The analysed form of a query (for diagnostics and tests).
    pub fn analyse(&self, query: &str) -> Analysis {
        analyse(query, &self.lexicon)
    }

    /// Each concept of the query as analysed tokens.
    fn concept_tokens(&self, analysis: &Analysis) -> Vec<Vec<String>> {
        let mut analyzer = self.analyzer.clone();
        analysis
            .concepts
            .iter()
            .map(|words| {
                let mut toks = Vec::new();
                for w in words {
                    let mut stream = analyzer.token_stream(vocabulary::canonical(w));
                    while let Some(tok) = stream.next() {
                        toks.push(tok.text.clone());
                    }
                }
                toks
            })
            .filter(|t: &Vec<String>| !t.is_empty())
            .collect()
    }

    /// The tantivy query for an analysis, and the set of analysed tokens it searches.
    fn query_for(&self, analysis: &Analysis) -> (BooleanQuery, HashSet<String>) {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut analyzer = self.analyzer.clone();
        let mut seen = HashSet::new();
        for term in &analysis.terms {
            let weight = match term.origin {
                Origin::Typed => 1.0,
                Origin::Translated => 0.9,
                Origin::Corrected => 0.8,
                Origin::Synonym => 0.5,
            };
            let mut stream = analyzer.token_stream(vocabulary::canonical(&term.word));
            while let Some(tok) = stream.next() {
                if !seen.insert(tok.text.clone()) {
                    continue;
                }
                for (kind, boost) in BOOSTS {
                    let field = self.fields.get(kind);
                    let q = TermQuery::new(
                        TantivyTerm::from_field_text(field, &tok.text),
                        IndexRecordOption::WithFreqs,
                    );
                    clauses.push((
                        Occur::Should,
                        Box::new(BoostQuery::new(Box::new(q), boost * weight)),
                    ));
                }
            }
        }
        (BooleanQuery::new(clauses), seen)
    }
}

/// The text of each field of an action's document.
struct DocText {
    name: String,
    operation_id: String,
    summary: String,
    description: String,
    tags: String,
    path: String,
    params: String,
}

impl DocText {
    fn of(a: &Action) -> DocText {
        let action_part = a
            .name
            .as_str()
            .strip_prefix("gitea_")
            .unwrap_or(a.name.as_str());
        let path = a
            .path
            .split('/')
            .filter(|s| !s.is_empty() && !s.starts_with('{'))
            .map(words_of)
            .collect::<Vec<_>>()
            .join(" ");
        let mut params = Vec::new();
        for p in &a.params {
            if p.location != ParamLocation::Path {
                params.push(words_of(&p.name));
            }
            params.extend(p.enum_values.iter().map(|v| words_of(v)));
        }
        if let Some(b) = &a.body {
            params.extend(b.properties.iter().map(|p| words_of(p)));
            collect_body_enums(&a.input_schema, &mut params);
        }
        DocText {
            name: format!("{} {}", domain_words(a.domain), words_of(action_part)),
            operation_id: words_of(a.operation_id.as_str()),
            summary: vocabulary::canonical_text(&a.summary),
            description: vocabulary::canonical_text(&a.description),
            tags: a.tags.join(" "),
            path,
            params: params.join(" "),
        }
    }

    /// The analysed tokens of the document's fields (parameter docs left out: too noisy).
    fn tokens(&self, analyzer: &mut TextAnalyzer) -> HashSet<String> {
        let mut out = HashSet::new();
        for text in [
            &self.name,
            &self.operation_id,
            &self.summary,
            &self.description,
            &self.tags,
            &self.path,
            &self.params,
        ] {
            let mut stream = analyzer.token_stream(text);
            while let Some(tok) = stream.next() {
                out.insert(tok.text.clone());
            }
        }
        out
    }

    /// Every lower-case surface word of the document (for typo correction).
    fn surface_words(&self) -> HashSet<String> {
        [
            &self.name,
            &self.operation_id,
            &self.summary,
            &self.description,
            &self.tags,
            &self.path,
            &self.params,
        ]
        .iter()
        .flat_map(|t| vocabulary::tokenize(t))
        .flat_map(|w| w.split(['-', '\'']).map(str::to_string).collect::<Vec<_>>())
        .filter(|w| !w.is_empty())
        .collect()
    }
}

/// Enum values of the body's top-level properties (merge styles, states, …).
fn collect_body_enums(schema: &serde_json::Value, out: &mut Vec<String>) {
    let body = schema.pointer("/properties/body");
    let target = match body.and_then(|b| b.get("$ref")).and_then(|r| r.as_str()) {
        Some(r) => r.strip_prefix('#').and_then(|p| schema.pointer(p)),
        None => body,
    };
    if let Some(props) = target
        .and_then(|t| t.get("properties"))
        .and_then(|p| p.as_object())
    {
        for prop in props.values() {
            // Enums often live in their own definition (`ReviewStateType`, `MergeStyle`).
            let prop = match prop.get("$ref").and_then(|r| r.as_str()) {
                Some(r) => r
                    .strip_prefix('#')
                    .and_then(|p| schema.pointer(p))
                    .unwrap_or(prop),
                None => prop,
            };
            let items = prop.get("items").unwrap_or(prop);
            for node in [prop, items] {
                if let Some(values) = node.get("enum").and_then(|e| e.as_array()) {
                    out.extend(values.iter().filter_map(|v| v.as_str()).map(words_of));
                }
            }
        }
    }
}

/// Verbs in an operationId that make a POST change something that exists rather than create.
const UPDATE_VERBS: [&str; 10] = [
    "edit", "update", "rename", "transfer", "set", "move", "read", "mark", "replace", "lock",
];

/// Name words that say who owns the target rather than what it is.
const SCOPE_WORDS: [&str; 8] = [
    "current",
    "repository",
    "organization",
    "user",
    "admin",
    "by",
    "all",
    "of",
];

fn traits_of(a: &Action) -> ActionTraits {
    let words = split_words(a.operation_id.as_str());
    let action_part = a
        .name
        .as_str()
        .strip_prefix("gitea_")
        .unwrap_or(a.name.as_str());
    let action_part = action_part
        .strip_prefix(a.domain.as_str())
        .unwrap_or(action_part);
    let mut az = analyzer();
    let mut name_nouns = Vec::new();
    for w in action_part.split('_').filter(|w| !w.is_empty()) {
        let w = vocabulary::canonical(w);
        if vocabulary::intent_of(w).is_some()
            || SCOPE_WORDS.contains(&w)
            || UPDATE_VERBS.contains(&w)
        {
            continue;
        }
        let mut stream = az.token_stream(w);
        while let Some(tok) = stream.next() {
            name_nouns.push(tok.text.clone());
        }
    }
    let class = match a.method {
        HttpMethod::Delete => Intent::Delete,
        HttpMethod::Get | HttpMethod::Head | HttpMethod::Options => {
            if a.returns_list {
                Intent::List
            } else {
                Intent::Get
            }
        }
        HttpMethod::Patch => Intent::Update,
        // A body-less PUT adds a relation (star, follow, add member) unless its name says it
        // changes state ("read", "set"); with a body it replaces.
        HttpMethod::Put => {
            if a.body.is_some() || words.iter().any(|w| UPDATE_VERBS.contains(&w.as_str())) {
                Intent::Update
            } else {
                Intent::Create
            }
        }
        HttpMethod::Post => {
            if words.iter().any(|w| UPDATE_VERBS.contains(&w.as_str())) {
                Intent::Update
            } else {
                Intent::Create
            }
        }
    };
    ActionTraits {
        class,
        destructive: a.annotations.destructive,
        deprecated: a.deprecated,
        admin: a.domain == Domain::Admin,
        own: a.path == "/user" || a.path.starts_with("/user/"),
        someone: a.path.starts_with("/users/{"),
        read_only: a.annotations.read_only,
        domain: a.domain,
        on_item: a.path.ends_with('}'),
        upsert: a.method == HttpMethod::Put && a.summary.to_ascii_lowercase().contains("create"),
        extra_ids: a
            .params
            .iter()
            .filter(|p| {
                p.location == ParamLocation::Path
                    && !crate::catalog::NAME_PARAMS.contains(&p.name.as_str())
            })
            .count()
            .min(4) as u8,
        name_nouns,
    }
}

/// Share of the query's concepts an action covers, mapped to a multiplier: an action that
/// matches one rare word of a five-concept query should not beat one that matches four.
fn coordination(doc: &HashSet<String>, concepts: &[Vec<String>]) -> f32 {
    if concepts.is_empty() {
        return 1.0;
    }
    let covered = concepts
        .iter()
        .filter(|c| c.iter().any(|t| doc.contains(t)))
        .count();
    COORDINATION_FLOOR + (1.0 - COORDINATION_FLOOR) * covered as f32 / concepts.len() as f32
}

/// Multiplier per required identifier beyond the owner (see `ActionTraits::extra_ids`).
const EXTRA_ID_FACTOR: f32 = 0.95;

/// The multiplier for an action that covers none of the query's concepts.
const COORDINATION_FLOOR: f32 = 0.5;

/// How well an action's kind fits the query's intent (row: query, column: action).
fn intent_fit(query: Option<Intent>, action: Intent) -> f32 {
    use Intent::*;
    match (query, action) {
        (Some(Delete), Delete) => 1.6,
        (Some(Delete), Update) => 0.7,
        (Some(Delete), _) => 0.5,
        (Some(Create), Create) => 1.4,
        (Some(Create), Update) => 0.9,
        (Some(Create), Delete) => 0.3,
        (Some(Create), _) => 0.6,
        (Some(Update), Update) => 1.4,
        (Some(Update), Create) => 0.9,
        (Some(Update), Delete) => 0.4,
        (Some(Update), _) => 0.6,
        (Some(List), List) => 1.4,
        (Some(List), Get) => 1.15,
        (Some(Get), Get) => 1.4,
        (Some(Get), List) => 1.15,
        (Some(List | Get), Delete) => 0.2,
        (Some(List | Get), _) => 0.5,
        // A query without a verb ("my followers", "stargazers") names something to look at.
        (None, Delete) => 0.4,
        (None, Create | Update) => 0.7,
        (None, List | Get) => 1.0,
    }
}

fn rank_factor(t: &ActionTraits, q: &Analysis, query_tokens: &HashSet<String>) -> f32 {
    let mut intent = q.primary_intent();
    if intent == Some(Intent::Get) && (q.wants_collection || q.plural) {
        intent = Some(Intent::List);
    }
    let mut f = intent_fit(intent, t.class);
    if t.upsert {
        f = f.max(intent_fit(intent, Intent::Create));
    }
    // Prefer the action whose name the query explains: "create a pull request" fits
    // `gitea_pull_create` better than `gitea_pull_create_review_requests`.
    if !t.name_nouns.is_empty() {
        let matched = t
            .name_nouns
            .iter()
            .filter(|n| query_tokens.contains(*n))
            .count();
        f *= 0.7 + 0.3 * matched as f32 / t.name_nouns.len() as f32;
    }
    let asks_delete = q.intents.contains(&Intent::Delete);
    if t.destructive && !asks_delete {
        f *= 0.6;
    }
    if q.wants_collection && !t.on_item {
        f *= 1.15;
    } else if q.plural && t.class == Intent::List {
        f *= 1.08;
    }
    // Between equally good answers, the one that needs fewer identifiers the user has not
    // given is the better first step ("commits on a branch" before "commits of PR n").
    f *= EXTRA_ID_FACTOR.powi(i32::from(t.extra_ids));
    if t.deprecated {
        f *= 0.8;
    }
    if t.admin {
        f *= if q.about_admin { 1.4 } else { 0.75 };
    }
    if q.about_self {
        if t.own {
            f *= 1.25;
        } else if t.someone {
            f *= 0.85;
        }
    }
    f
}

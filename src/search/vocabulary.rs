//! The curated vocabulary (`index/vocabulary.toml`, compiled by `build.rs`) and the analysis of
//! a user's query: normalisation, phrase synonyms, verb intent, scope cues, typo correction.

use std::borrow::Cow;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

include!(concat!(env!("OUT_DIR"), "/vocabulary.rs"));

/// What the labelled needs say about the words the catalog does not use.
#[derive(Debug, Default, Clone)]
pub struct NeedsWords {
    /// Words of needs not written misspelt on purpose: spelled right, kept as typed even when
    /// one edit from a catalog word ("take" is not "make").
    pub spelled: HashSet<String>,
    /// Words in two needs or more: kept as typed unless one edit from a catalog word (a typo
    /// seldom repeats, but some do).
    pub repeated: HashSet<String>,
    /// Every word of the needs: kept as typed when no correction exists.
    pub seen: HashSet<String>,
}

/// What kind of action a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Intent {
    /// Remove something.
    Delete,
    /// Make something new (or trigger something).
    Create,
    /// Change something that exists.
    Update,
    /// Enumerate a collection.
    List,
    /// Read one thing.
    Get,
}

impl Intent {
    fn from_code(code: u8) -> Option<Intent> {
        Some(match code {
            0 => Intent::Delete,
            1 => Intent::Create,
            2 => Intent::Update,
            3 => Intent::List,
            4 => Intent::Get,
            _ => return None,
        })
    }

    /// True for list and get.
    pub fn is_read(self) -> bool {
        matches!(self, Intent::List | Intent::Get)
    }
}

/// The intent class of a word or phrase, if it is a verb the vocabulary knows. A gerund
/// (`merging`, `watching`) counts as its base verb; a past participle or a third-person / plural
/// form does not (`the uploaded artifacts`, `keys registered on my profile`, `forks of a repo`):
/// in a need such words describe a thing rather than ask for an action, and as nouns they are
/// often plural (cross-validated, `docs/search.md`, round 7).
pub fn intent_of(word: &str) -> Option<Intent> {
    let lookup = |w: &str| {
        INTENT_WORDS
            .get(w)
            .and_then(|&c| Intent::from_code(c))
            .or_else(|| undoing_intent(w))
    };
    if let Some(i) = lookup(word) {
        return Some(i);
    }
    let stem = word.strip_suffix("ing").filter(|s| s.len() >= 3)?;
    lookup(stem).or_else(|| lookup(&format!("{stem}e")))
}

/// The intent the vocabulary's one-word verbs with the stem `word` agree on, if they do
/// (`delet` → *delete*); none for a word that is not its own stem or whose verbs disagree.
fn intent_of_stem(word: &str) -> Option<Intent> {
    static BY_STEM: std::sync::OnceLock<HashMap<String, Option<Intent>>> =
        std::sync::OnceLock::new();
    let by_stem = BY_STEM.get_or_init(|| {
        let mut m: HashMap<String, Option<Intent>> = HashMap::default();
        for (key, &code) in INTENT_WORDS.entries().filter(|(k, _)| !k.contains(' ')) {
            let int = Intent::from_code(code);
            m.entry(stem(key))
                .and_modify(|e| {
                    if *e != int {
                        *e = None;
                    }
                })
                .or_insert(int);
        }
        m
    });
    // The map first: most words are no verb's stem, and stemming is the costlier look-up.
    let int = (*by_stem.get(word)?)?;
    (stem(word) == word).then_some(int)
}

/// The intent of an un-verb the vocabulary does not list ("unregister", "unpin", "unresolve"):
/// undoing a creation deletes, undoing a change is a change.
fn undoing_intent(w: &str) -> Option<Intent> {
    let rest = w.strip_prefix("un")?.trim_start_matches('-');
    match INTENT_WORDS.get(rest).and_then(|&c| Intent::from_code(c))? {
        Intent::Create => Some(Intent::Delete),
        Intent::Update => Some(Intent::Update),
        _ => None,
    }
}

/// Words that ask for a whole collection rather than one item.
const COLLECTION_WORDS: &[&str] = &[
    "all",
    "every",
    "everyone",
    "everything",
    "list",
    "lists",
    "many",
];

/// Gitea words a user word or phrase stands for. A plural the vocabulary does not list is read
/// as its singular (`squads` as `squad`, `build agents` as `build agent`), unless the singular is
/// a verb: `gives`, `opens` describe rather than ask (see [`intent_of`]).
pub fn synonyms_of(phrase: &str) -> Option<&'static str> {
    SYNONYMS
        .get(phrase)
        .copied()
        .or_else(|| singular_synonyms(phrase))
}

/// The synonyms of a phrase whose last word is a plural the vocabulary lists only in the
/// singular (`directories` → `directory`, `addresses` → `address`, `squads` → `squad`).
fn singular_synonyms(phrase: &str) -> Option<&'static str> {
    let last = phrase.rsplit(' ').next()?;
    if !is_plural_form(last) {
        return None;
    }
    let head = &phrase[..phrase.len() - last.len()];
    let ies = last.strip_suffix("ies");
    let mut key = String::with_capacity(phrase.len());
    let singulars = [
        ies.map(|s| (s, "y")),
        last.strip_suffix("es").map(|s| (s, "")),
        last.strip_suffix('s').map(|s| (s, "")),
    ];
    singulars.into_iter().flatten().find_map(|(stem, end)| {
        key.clear();
        key.push_str(head);
        key.push_str(stem);
        key.push_str(end);
        let found = SYNONYMS.get(key.as_str()).copied()?;
        intent_of(&key[head.len()..]).is_none().then_some(found)
    })
}

/// Ends like an English plural (`-s`, not `-ss` / `-us` / `-is`), four letters or more, or
/// three when the vocabulary lists the first two as a word: `PRs`, `MRs` (not `its`, `has`).
fn is_plural_form(w: &str) -> bool {
    let stem = w.strip_suffix('s').unwrap_or(w);
    let long_enough = w.len() > 3 || (w.len() == 3 && SYNONYMS.contains_key(stem));
    long_enough && w.ends_with('s') && !["ss", "us", "is"].iter().any(|e| w.ends_with(e))
}

/// True when the vocabulary translates some word into exactly this phrase of two words or
/// more: a compound noun such as `pull request` or `gpg key`, typed as such. (A few
/// translations are word lists, `delete remove`, which nobody types before a number.)
pub fn is_compound(phrase: &str) -> bool {
    phrase.contains(' ') && SYNONYMS.values().any(|v| *v == phrase)
}

/// Words that carry no meaning for finding an action.
const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "of",
    "in",
    "on",
    "to",
    "for",
    "from",
    "with",
    "by",
    "at",
    "as",
    "into",
    "onto",
    "and",
    "or",
    "but",
    "so",
    "it",
    "its",
    "it's",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "i",
    "i'm",
    "im",
    "me",
    "my",
    "mine",
    "we",
    "our",
    "ours",
    "us",
    "you",
    "your",
    "they",
    "their",
    "them",
    "he",
    "she",
    "his",
    "her",
    "be",
    "been",
    "was",
    "were",
    "am",
    "can",
    "could",
    "would",
    "should",
    "will",
    "shall",
    "may",
    "might",
    "must",
    "do",
    "did",
    "done",
    "please",
    "need",
    "want",
    "wants",
    "like",
    "just",
    "some",
    "any",
    "about",
    "via",
    "using",
    "through",
    "then",
    "than",
    "also",
    "too",
    "very",
    "now",
    "right",
    "again",
    "one",
    "ones",
    "only",
    "how",
    "when",
    "where",
    "why",
    "if",
    "not",
    "no",
    "yes",
    "let",
    "lets",
    "let's",
    "have",
    "has",
    "had",
    "get",
    "gets",
    "got",
    "up",
    "out",
    "off",
    "over",
    "without",
    "each",
    "own",
    "given",
    "instead",
    "something",
    "anything",
    "everything",
    "someone",
    "sure",
    "okay",
    "ok",
    "hey",
    "hi",
    "thanks",
    "kindly",
    "quick",
    "quickly",
    "is",
    "are",
    "does",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "all",
    "every",
    "way",
    "thing",
    "things",
    "stuff",
    "them",
    "it'd",
    "i've",
    "i'd",
    "we're",
    "they're",
    "don't",
    "doesn't",
    "isn't",
    "keep",
    "keeps",
    "new",
    "same",
    // The forge's own name: every action is one of its actions, so it never tells them apart.
    "gitea",
    "forgejo",
];

/// The parts of a hyphenated word.
pub fn hyphen_parts(w: &str) -> Vec<String> {
    w.split('-')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `w` is a function word (no meaning for finding an action by its text; its learned
/// lifts of verb class, scope and item may still tell: "my", "every", "one").
pub fn is_stop_word(w: &str) -> bool {
    // A contraction the list does not name is one too ("shouldn't", "can't", "we'll"): read as
    // text, its parts `shouldn` and `t` would be words of the need.
    stop_words().contains(w) || w.trim_matches('\'').contains('\'')
}

/// [`STOP_WORDS`] as a set: a query asks about each of its words, and a scan of the list
/// compared a word with up to 155 entries. (Fx hashing: the set is fixed, so no input can be
/// written to collide in it.)
fn stop_words() -> &'static HashSet<&'static str> {
    static SET: std::sync::OnceLock<HashSet<&'static str>> = std::sync::OnceLock::new();
    SET.get_or_init(|| STOP_WORDS.iter().copied().collect())
}

/// Words that point at the authenticated user's own things.
/// ("I need…" is not about the user's things; "show me" is an idiom, handled in [`analyse`].)
const SELF_WORDS: &[&str] = &["my", "me", "mine", "myself"];
/// Words that point at site administration.
const ADMIN_WORDS: &[&str] = &[
    "admin",
    "administrator",
    "site",
    "instance",
    "sysadmin",
    "server-wide",
    "instance-wide",
    "site-wide",
];

/// How a query term came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Typed by the user.
    Typed,
    /// A typo correction of a typed word.
    Corrected,
    /// From the vocabulary, for a word or phrase the catalog does not use: a translation.
    Translated,
    /// From the vocabulary, for a word the catalog uses too: an expansion.
    Synonym,
}

/// One search term with its weight.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// Lower-case surface word (analysed further by the index).
    pub word: String,
    /// How it came to be.
    pub origin: Origin,
}

/// The analysed query.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Terms to search, deduplicated by word (the strongest origin wins).
    pub terms: Vec<Term>,
    /// Intents, in the order their verbs appear; a need that asks about its verb ("can bob
    /// create…", "how many people upvoted…") has *get* first.
    pub intents: Vec<Intent>,
    /// Whether an intent came only from an unsure reading of a typo: a correction, or a cut-off
    /// verb read by its stem (`delet`).
    pub intent_from_typo: bool,
    /// The user talks about their own things ("my", "me", "I").
    pub about_self: bool,
    /// The user talks about site administration.
    pub about_admin: bool,
    /// The user asks for a whole collection ("all", "every", "list").
    pub wants_collection: bool,
    /// A noun of the query is plural (a weaker collection cue).
    pub plural: bool,
    /// The query's concepts: for each typed word or phrase, the words it stands for. Ranking
    /// prefers actions that cover more of them (coordination).
    pub concepts: Vec<Vec<String>>,
    /// The intent of the last verb right after a word of wanting ("I want to *merge*", "how
    /// do I *delete*"), or asked about in a question about the operation ("which call
    /// *removes* it"): in a long need, what is wanted rather than the context told before; the
    /// ask comes last (cross-validated, `docs/search.md`, round 30).
    pub wanted: Option<Intent>,
    /// The object of the need: indices into `concepts` of the noun phrase after the first verb
    /// (or the wanted verb; the query's first phrase when no verb comes first), up to the first
    /// word that adds no concept ("delete the *issue comment* from…"). The search takes its
    /// last catalog noun as the head.
    pub object: Vec<usize>,
    /// Typed words the analysis dropped: neither known nor correctable (for diagnostics).
    pub dropped: Vec<String>,
    /// Typed words corrected, with their correction (for diagnostics).
    pub corrections: Vec<(String, String)>,
    /// The need undoes something ("undo", "revert", "take back", "lift" a block): the action
    /// that does it is the wrong one, the one that undoes it the right one.
    pub undoing: bool,
    /// The need asks a yes/no question about a state ("is bob a member", "does she follow
    /// me", "check whether…"): a check answers it.
    pub asks_whether: bool,
}

impl Analysis {
    /// The first intent, if any.
    pub fn primary_intent(&self) -> Option<Intent> {
        self.intents.first().copied()
    }
}

/// See [`Lexicon::in_catalog`].
const CATALOG_WORD_MIN_ACTIONS: u32 = 3;

/// The words of the catalog, for typo correction and partial words.
#[derive(Debug, Default)]
pub struct Lexicon {
    /// Word → number of actions it appears in (vocabulary-only words count 0).
    freq: HashMap<String, u32>,
    /// Stems of the catalog's words ("tagged" is known through "tag").
    stems: HashSet<String>,
    /// Words bucketed by length, for bounded edit-distance scans.
    by_len: Vec<Vec<String>>,
}

impl Lexicon {
    /// Builds the lexicon from each action's bag of words, each word once per bag.
    pub fn new<'a, D>(docs: impl Iterator<Item = D>) -> Lexicon
    where
        D: IntoIterator<Item = &'a str>,
    {
        let mut freq: HashMap<String, u32> = HashMap::default();
        for words in docs {
            for w in words {
                // A word is new once and seen again in many bags: no copy for those.
                match freq.get_mut(w) {
                    Some(n) => *n += 1,
                    None => {
                        freq.insert(w.to_string(), 1);
                    }
                }
            }
        }
        // Vocabulary words are corrections targets too.
        for (key, expansion) in SYNONYMS.entries() {
            for w in expansion
                .split(' ')
                .chain(std::iter::once(*key).filter(|k| !k.contains(' ')))
            {
                freq.entry(w.to_string()).or_insert(0);
            }
        }
        for key in INTENT_WORDS.keys().filter(|k| !k.contains(' ')) {
            freq.entry(key.to_string()).or_insert(0);
        }
        let mut by_len: Vec<Vec<String>> = Vec::new();
        // Function words are never what a typo meant to say ("docs" is not "does").
        for w in freq.keys().filter(|w| !stop_words().contains(w.as_str())) {
            let n = w.chars().count();
            if by_len.len() <= n {
                by_len.resize(n + 1, Vec::new());
            }
            by_len[n].push(w.clone());
        }
        for bucket in &mut by_len {
            bucket.sort();
        }
        let stems = freq
            .iter()
            .filter(|(_, f)| **f > 0)
            .map(|(w, _)| stem(w))
            .collect();
        Lexicon {
            freq,
            stems,
            by_len,
        }
    }

    /// True when the catalog uses this word as a term of its own: in at least
    /// [`CATALOG_WORD_MIN_ACTIONS`] actions. A word a description mentions once ("project")
    /// is still read in the user's sense, through the vocabulary.
    pub fn in_catalog(&self, w: &str) -> bool {
        self.freq
            .get(w)
            .is_some_and(|&f| f >= CATALOG_WORD_MIN_ACTIONS)
    }

    /// True when the catalog (or the vocabulary) uses this word, or a word of the same stem.
    pub fn knows(&self, w: &str) -> bool {
        self.freq.contains_key(w)
            || SYNONYMS.contains_key(w)
            || INTENT_WORDS.contains_key(w)
            || self.stems.contains(&stem(w))
    }

    /// The closest known word within a small edit distance, preferring one that keeps the
    /// first letter, then one that is plural (ends in `s`) as the typed word is or is not, then
    /// the commonest; else a known word this one is a prefix of (at least four letters typed).
    pub fn correct(&self, w: &str) -> Option<(String, usize)> {
        let n = w.chars().count();
        if n < 3 {
            return None;
        }
        // Two edits only on long words, and only when the first letter stands (typos rarely
        // hit it): "broken" must not become "token".
        let max = if n < 7 { 1 } else { 2 };
        let first = w.chars().next();
        let wb = w.as_bytes();
        let mut best: Option<(usize, u32, &str)> = None;
        let plural = w.ends_with('s');
        for len in n.saturating_sub(max)..=n + max {
            let Some(bucket) = self.by_len.get(len) else {
                continue;
            };
            for cand in bucket {
                // Within one edit, the first two letters of the two words must overlap; within
                // two, the first letter must stand (see above). Cheap, and exact.
                let cb = cand.as_bytes();
                let overlap = |x: u8| cb.first() == Some(&x) || cb.get(1) == Some(&x);
                if !(overlap(wb[0]) || wb.get(1).is_some_and(|&x| overlap(x))) {
                    continue;
                }
                let d = osa_distance(w, cand, max);
                if d > max || (d == 2 && cand.chars().next() != first) {
                    continue;
                }
                let f = self.freq.get(cand).copied().unwrap_or(0);
                // At the same distance, a word that keeps the typed first letter before a
                // commoner one that does not ("asigned" is `assigned`, not `signed`), then one
                // that keeps a typed final `s` or its absence ("colums" is `columns`, not
                // `column`: a plural stays one; "usre" is still `user`, not `use`).
                let keeps = |c: &str| (c.chars().next() == first, c.ends_with('s') == plural);
                let better = match best {
                    None => true,
                    Some((bd, bf, bc)) => d < bd || d == bd && (keeps(cand), f) > (keeps(bc), bf),
                };
                if better {
                    best = Some((d, f, cand));
                }
            }
        }
        // One edit away beats completing a partial word, which beats two edits away.
        if let Some((1, _, w)) = best {
            return Some((w.to_string(), 1));
        }
        if n >= 5 {
            let mut found: Option<(&str, u32)> = None;
            for bucket in self.by_len.iter().skip(n + 1) {
                for cand in bucket.iter().filter(|c| c.starts_with(w)) {
                    let f = self.freq.get(cand).copied().unwrap_or(0);
                    if found.is_none_or(|(_, bf)| f > bf) {
                        found = Some((cand, f));
                    }
                }
            }
            if let Some((w, _)) = found {
                return Some((w.to_string(), 2));
            }
        }
        if let Some((d, _, w)) = best {
            return Some((w.to_string(), d));
        }
        None
    }
}

/// The English stem of a lower-case word (the same stemmer the index uses).
pub fn stem(w: &str) -> String {
    use tantivy::tokenizer::{Language, Stemmer, TextAnalyzer, WhitespaceTokenizer};
    thread_local! {
        static STEMMER: std::cell::RefCell<TextAnalyzer> = std::cell::RefCell::new(
            TextAnalyzer::builder(WhitespaceTokenizer::default()).filter(Stemmer::new(Language::English)).build(),
        );
    }
    STEMMER.with(|s| {
        let mut analyzer = s.borrow_mut();
        let mut stream = analyzer.token_stream(w);
        match stream.next() {
            Some(tok) => tok.text.clone(),
            None => w.to_string(),
        }
    })
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions, `strsim`),
/// capped at `max + 1`. Words whose lengths or letters alone put them more than `max` edits
/// apart are not aligned: typo correction compares a word with thousands of catalog words.
fn osa_distance(a: &str, b: &str, max: usize) -> usize {
    if letter_bound(a, b) > max {
        return max + 1;
    }
    strsim::osa_distance(a, b).min(max + 1)
}

/// A lower bound of the OSA distance from the words' letter counts: a substitution changes
/// the counts' L1 distance by at most 2, an insertion or a deletion by 1, a transposition by
/// 0, so `d ≥ ⌈L1 ÷ 2⌉` (and `d ≥` the difference in length, which the L1 distance also
/// bounds). Characters are counted in 64 buckets (a shared bucket only lowers the bound).
fn letter_bound(a: &str, b: &str) -> usize {
    let mut counts = [0i32; 64];
    let (mut la, mut lb) = (0usize, 0usize);
    for c in a.chars() {
        counts[(c as usize) & 63] += 1;
        la += 1;
    }
    for c in b.chars() {
        counts[(c as usize) & 63] -= 1;
        lb += 1;
    }
    let l1: u32 = counts.iter().map(|c| c.unsigned_abs()).sum();
    (l1 as usize).div_ceil(2).max(la.abs_diff(lb))
}

/// Splits normalised text into raw tokens: lower-case, values (numbers, versions, `owner/repo`,
/// `#12`, a name after `named` or `called`) removed, everything that is not a letter, digit,
/// `-`, `'` or `+` treated as a space.
pub fn tokenize(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    // A name given after `named` / `called` / `titled` is a value, not words of the need ("an
    // org called platform-team" asks for no team): its first chunk, and the chunks after it
    // that start with a capital or a digit ("called Q3 Roadmap in…").
    let (mut naming, mut in_name) = (false, false);
    for chunk in query.split_whitespace() {
        let bare = chunk.trim_matches(|c: char| !c.is_alphanumeric());
        let starts_name = std::mem::replace(
            &mut naming,
            ["named", "called", "titled"]
                .iter()
                .any(|w| bare.eq_ignore_ascii_case(w)),
        );
        let capital_or_digit = bare
            .chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit());
        in_name = starts_name || (in_name && capital_or_digit);
        if in_name {
            continue;
        }
        // `owner/repo`, `feature/login`, URLs: values, not words.
        if chunk.contains('/') || chunk.contains('\\') {
            continue;
        }
        // One apostrophe: "can’t" is "can't", a contraction, not `can` and `t`. Copied again
        // only when the chunk has one: this runs for every word of every query.
        let mut lowered = chunk.to_lowercase();
        if lowered.contains(['\'', '’']) {
            lowered = lowered.replace('’', "'").replace("'s", "");
        }
        let mut cur = String::new();
        let push = |cur: &mut String, out: &mut Vec<String>| {
            let t = cur.trim_matches(|c| c == '-' || c == '\'');
            if is_word(t) {
                out.push(t.to_string());
            }
            cur.clear();
        };
        for c in lowered.chars() {
            if c.is_alphanumeric() || c == '-' || c == '\'' || (c == '+' && cur.is_empty()) {
                cur.push(c);
            } else {
                push(&mut cur, &mut out);
            }
        }
        push(&mut cur, &mut out);
    }
    out
}

/// A token is a word when it has a letter (drops `42`, `v1.4.0` parts, `#12`) or is `+1`.
fn is_word(t: &str) -> bool {
    if t == "+1" {
        return true;
    }
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    let digits = t.chars().filter(|c| c.is_ascii_digit()).count();
    // Versions like "v1" are values; "oauth2" and "gpg" are words.
    letters > 0 && !(letters == 1 && digits > 0 && t.starts_with('v'))
}

/// Common English words (`index/english-words.txt`: SCOWL's lists up to size 35).
const ENGLISH: &str = include_str!("../../index/english-words.txt");

/// Whether `w` is a common English word, spelled right: a word the catalog does not use is then
/// kept as typed, never "corrected" to a catalog word one or two edits away ("line" is not
/// "link", "book" not "hook", "restore" not "restart").
pub fn is_english(w: &str) -> bool {
    // A hash set: a query asks this of most of its words, and a binary search over 40,000
    // strings was 4–5 % of the find benchmark's profile (docs/benchmarks.md, round 39).
    static WORDS: std::sync::OnceLock<HashSet<&'static str>> = std::sync::OnceLock::new();
    WORDS
        .get_or_init(|| {
            ENGLISH
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
                .collect()
        })
        .contains(w)
}

/// Strength order of origins (lower is stronger).
fn rank(o: Origin) -> u8 {
    match o {
        Origin::Typed => 0,
        Origin::Translated => 1,
        Origin::Corrected => 2,
        Origin::Synonym => 3,
    }
}

/// Maps the catalog's abbreviations and spelling variants to one word, at index and query time,
/// so `repos` in a path and `repository` in a query meet (stemming alone does not join them).
pub fn canonical(word: &str) -> &str {
    match word {
        "repo" | "repos" | "repositories" => "repository",
        "org" | "orgs" | "organizations" | "organisation" | "organisations" => "organization",
        "notify" | "notifications" => "notification",
        "pulls" => "pull",
        "prs" => "pr",
        "admins" => "admin",
        _ => word,
    }
}

/// Rewrites every word of `text` to its canonical form (see [`canonical`]).
pub fn canonical_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            let lower = word.to_lowercase();
            let c = canonical(&lower);
            if c == lower {
                out.push_str(word)
            } else {
                out.push_str(c)
            }
            word.clear();
        }
    };
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Words ending in a plural `s` (a cue that a collection is wanted).
pub(crate) fn is_plural(word: &str) -> bool {
    is_plural_form(word) && intent_of(word).is_none()
}

/// Analyses a query against the lexicon.
pub fn analyse(query: &str, lexicon: &Lexicon) -> Analysis {
    analyse_with(query, lexicon, &NeedsWords::default())
}

/// Analyses a query against the lexicon and the words of the labelled needs (`needs_words`):
/// a word people used in a labelled need is kept as typed, not corrected to a catalog word
/// ("kanban" stays "kanban", for the examples and the learned associations to meet).
pub fn analyse_with(query: &str, lexicon: &Lexicon, needs: &NeedsWords) -> Analysis {
    let query = written_as_words(query, lexicon);
    let query = query.as_ref();
    // A hyphenated word the catalog, the vocabulary and the needs do not know is read as the
    // word its parts make together when that is known ("un-resolve": splitting would lose the
    // un-verb; "web-hook"), else as its parts ("thumbs-up", "instance-level").
    let tokens: Vec<String> = tokenize(query)
        .into_iter()
        .flat_map(|t| {
            if !t.contains('-')
                || lexicon.knows(&t)
                || needs.repeated.contains(&t)
                || ADMIN_WORDS.contains(&t.as_str())
            {
                return vec![t];
            }
            let joined = t.replace('-', "");
            if lexicon.knows(&joined) {
                vec![joined]
            } else {
                hyphen_parts(&t)
            }
        })
        .collect();
    let mut a = Analysis {
        about_self: tokens.iter().enumerate().any(|(i, t)| {
            let after_verb = t == "me" && i > 0 && intent_of(&tokens[i - 1]).is_some();
            (SELF_WORDS.contains(&t.as_str()) && !after_verb && !self_negated(&tokens, i))
                || (t == "am" && tokens.get(i + 1).is_some_and(|n| n == "i"))
        }),
        about_admin: tokens.iter().any(|t| ADMIN_WORDS.contains(&t.as_str())),
        wants_collection: tokens
            .iter()
            .any(|t| COLLECTION_WORDS.contains(&t.as_str())),
        ..Analysis::default()
    };
    let add = |a: &mut Analysis, word: &str, origin: Origin| {
        for w in word.split(['-', '\'']).filter(|w| !w.is_empty()) {
            if let Some(c) = a.concepts.last_mut() {
                if !c.iter().any(|x| x == w) {
                    c.push(w.to_string());
                }
            }
            match a.terms.iter_mut().find(|t| t.word == w) {
                Some(t) => {
                    if rank(origin) < rank(t.origin) {
                        t.origin = origin;
                    }
                }
                None => a.terms.push(Term {
                    word: w.to_string(),
                    origin,
                }),
            }
        }
    };
    a.asks_whether = asks_whether(&tokens);
    let numbered = words_before_numbers(query);
    let mut i = 0;
    let mut negated = false;
    // A role lead-in ("as site admin, list …") marks its verb as a word of wanting does.
    let mut marker: Option<usize> = verb_after_role(&tokens).map(|_| 0);
    // Whether the token in hand set `wanted`, for the object phrase to restart after it.
    let mut wanted_now = false;
    let note_wanted = |a: &mut Analysis, int: Intent, pos: usize, marker: Option<usize>| {
        let wanted = marker.is_some_and(|m| {
            pos > m && (pos - m <= WANT_REACH || verb_after_object(&tokens, m) == Some(pos))
        });
        if wanted {
            a.wanted = Some(int);
        }
        wanted
    };
    let mut object = ObjectPhrase::default();
    while i < tokens.len() {
        object.step(&a, std::mem::take(&mut wanted_now));
        if wants_at(&tokens, i) {
            marker = Some(i);
        }
        // Drop empty concepts left by stop words.
        if a.concepts.last().is_some_and(Vec::is_empty) {
            a.concepts.pop();
        }
        a.concepts.push(Vec::new());
        // "without merging", "not the default branch": the negated word is not what is wanted.
        if NEGATIONS.contains(&tokens[i].as_str()) {
            negated = true;
            i += 1;
            continue;
        }
        // "not my own list", "without me parsing it": the user is what is negated.
        if negated && self_negated(&tokens, i) {
            negated = false;
            i += 1;
            continue;
        }
        if negated && !is_stop_word(&tokens[i]) {
            negated = false;
            i += 1;
            continue;
        }
        // "without undoing the merge" undoes nothing: a negated cue was skipped above.
        if UNDO_CUES.contains(&tokens[i].as_str())
            || (tokens[i] == "take" && tokens.get(i + 1).is_some_and(|n| n == "back"))
        {
            a.undoing = true;
        }
        // "show me", "tell me", "give me": an idiom, not the user's own things.
        if tokens[i] == "me" && i > 0 && intent_of(&tokens[i - 1]).is_some() {
            i += 1;
            continue;
        }
        // Longest phrase first: three, two, one word.
        let mut matched = 0;
        for n in (2..=3).rev() {
            if i + n <= tokens.len() {
                let phrase = tokens[i..i + n].join(" ");
                let phrase_intent = intent_of(&phrase);
                if let Some(int) = phrase_intent {
                    a.intents.push(int);
                    wanted_now |= note_wanted(&mut a, int, i, marker);
                }
                if let Some(exp) = synonyms_of(&phrase).or(phrase_intent.map(|_| "")) {
                    if is_plural(&tokens[i + n - 1]) {
                        a.plural = true;
                    }
                    // A phrase is translated as a unit ("merge request" is a pull request).
                    for w in exp.split(' ').filter(|w| !w.is_empty()) {
                        add(&mut a, w, Origin::Translated);
                    }
                    // Its words are kept as typed beside the translation, as a translated word
                    // is (`build agent`: `build`, `agent`; `ssh key`: `ssh`, which tells it from
                    // a GPG key), for the labelled needs and the fit to weigh. Not a verb the
                    // catalog uses: in the phrase it does not mean its verb, and typed it would
                    // teach the learned lifts that it does (`merge` of "merge request" would
                    // point at reading a pull request; docs/search.md, rounds 19 and 49).
                    for w in &tokens[i..i + n] {
                        let verb = intent_of(w).is_some() && lexicon.in_catalog(w);
                        if !is_stop_word(w) && !verb {
                            add(&mut a, w, Origin::Typed);
                        }
                    }
                    matched = n;
                    break;
                }
            }
        }
        if matched > 0 {
            i += matched;
            continue;
        }
        let t = tokens[i].as_str();
        i += 1;
        // A word of the needs one edit from a catalog word is more likely a typo of it.
        let needs_word = || {
            needs.spelled.contains(t)
                || needs.repeated.contains(t) && lexicon.correct(t).is_none_or(|(_, d)| d > 1)
        };
        // "unfavorite", "unlabel": nothing knows the word, the catalog knows what it undoes.
        let undone = (!lexicon.knows(t) && !is_english(t))
            .then(|| t.strip_prefix("un"))
            .flatten()
            .map(|r| r.trim_start_matches('-'))
            .filter(|r| r.len() >= 3 && lexicon.knows(r));
        if let Some(rest) = undone {
            let int = intent_of(t).unwrap_or(Intent::Delete);
            a.intents.push(int);
            wanted_now |= note_wanted(&mut a, int, i - 1, marker);
            add(&mut a, rest, Origin::Typed);
            continue;
        }
        let (word, origin, confident) =
            if lexicon.knows(t) || is_stop_word(t) || needs_word() || is_english(t) {
                (t.to_string(), Origin::Typed, true)
            } else {
                match lexicon.correct(t) {
                    Some((c, distance)) => {
                        let confident = distance <= 1 && t.chars().count() >= 5;
                        a.corrections.push((t.to_string(), c.clone()));
                        (c, Origin::Corrected, confident)
                    }
                    None if needs.seen.contains(t) => (t.to_string(), Origin::Typed, true),
                    None => {
                        a.dropped.push(t.to_string());
                        continue;
                    }
                }
            };
        // "comment 301", "run 1042": a word a number follows is the noun it numbers. "my
        // fork", "our watch status": a word after a possessive is a noun too (`new` is an
        // adjective, and stays a cue of creation).
        let noun = numbered.iter().any(|n| n == t)
            || (i >= 2 && POSSESSIVES.contains(&tokens[i - 2].as_str()) && word != "new");
        if let Some(int) = asked_intent(&tokens, i - 1) {
            a.intents.push(int);
            a.wanted = Some(int);
            wanted_now = true;
        } else if let Some((int, sure)) = (!noun)
            .then(|| intent_of(&word).map(|i| (i, confident)))
            .flatten()
            .or_else(|| {
                // "delet", "creat": a typo that is a stem of the catalog is neither corrected nor
                // read as a verb. A typed word that is not English and is its own stem (a cut-off
                // verb, not an inflection: `uploaded` names a thing) takes the intent its stem's
                // verbs agree on, as unsure as a correction (docs/search.md, round 34).
                (!noun
                    && origin == Origin::Typed
                    && !is_english(&word)
                    && !lexicon.in_catalog(&word))
                .then(|| intent_of_stem(&word))
                .flatten()
                .map(|i| (i, false))
            })
        {
            // "stop watching", "undo adding", "stop showing it": the verb is undone, and
            // undoing a creation, or ending a reading, deletes (docs/search.md, round 46).
            let undoing =
                (2..=3).any(|k| i >= k && UNDOING_WORDS.contains(&tokens[i - k].as_str()));
            let int = if undoing && matches!(int, Intent::Create | Intent::Get | Intent::List) {
                Intent::Delete
            } else {
                int
            };
            a.intents.push(int);
            wanted_now |= note_wanted(&mut a, int, i - 1, marker);
            if !sure {
                a.intent_from_typo = true;
            }
        } else if is_plural(t) {
            a.plural = true;
        }
        let in_catalog = lexicon.in_catalog(&word);
        if let Some(exp) = synonyms_of(&word) {
            // A word the catalog never uses is searched by what it means; one it uses is only
            // widened.
            let o = if in_catalog {
                Origin::Synonym
            } else {
                Origin::Translated
            };
            for w in exp.split(' ') {
                add(&mut a, w, o);
            }
            if word.contains('-') {
                // "read-only" means "archived", not "read" and "only".
                continue;
            }
        }
        // Translated or not, the word itself is kept: no catalog text has it, but labelled
        // needs do ("ticket", "webhook"), for the examples and the learned lifts to meet it
        // (docs/search.md, round 19).
        if !is_stop_word(&word) {
            add(&mut a, &word, origin);
        }
    }
    object.step(&a, wanted_now);
    // "can bob create repositories…", "can I push to staging or is it locked", "how many
    // people upvoted it": a question asks about the verb it names; it does not do it.
    if asks_about_its_verb(&tokens) {
        a.intents.insert(0, Intent::Get);
    }
    if a.concepts.last().is_some_and(Vec::is_empty) {
        a.concepts.pop();
    }
    a.object = object.phrase;
    a
}

/// The query with a camel-case word that nothing knows split as the catalog splits its
/// identifiers: an operationId in a sentence (`issueCreateComment` → `issue Create Comment`)
/// was otherwise one unknown word, dropped. Borrowed when nothing changes, as for most queries.
fn written_as_words<'q>(query: &'q str, lexicon: &Lexicon) -> Cow<'q, str> {
    let rewrite = |chunk: &str| -> Option<String> {
        let bare = chunk.trim_matches(|c: char| !c.is_alphanumeric());
        (is_camel(bare) && !lexicon.knows(&bare.to_lowercase()))
            .then(|| chunk.replace(bare, &crate::catalog::split_words(bare).join(" ")))
    };
    if query.split_whitespace().all(|c| rewrite(c).is_none()) {
        return Cow::Borrowed(query);
    }
    let chunks: Vec<String> = query
        .split_whitespace()
        .map(|c| rewrite(c).unwrap_or_else(|| c.to_string()))
        .collect();
    Cow::Owned(chunks.join(" "))
}

/// A lower-case word with capitals inside it, and nothing but letters and digits (`hasWiki`).
fn is_camel(w: &str) -> bool {
    w.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && w.chars().any(|c| c.is_ascii_uppercase())
        && w.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Follows the object phrase of a need token by token (see [`Analysis::object`]).
#[derive(Default)]
struct ObjectPhrase {
    /// The verb the object follows has been seen.
    verb_seen: bool,
    /// The phrase has ended.
    complete: bool,
    /// How many intents the analysis had before the token in hand.
    intents: usize,
    phrase: Vec<usize>,
}

impl ObjectPhrase {
    /// Takes in the token (or phrase) just analysed: its concept is the last of `a.concepts`,
    /// empty when it added none (a stop word, a negated or dropped word); `wanted_now` when it
    /// was the wanted verb.
    fn step(&mut self, a: &Analysis, wanted_now: bool) {
        let verb = a.intents.len() > self.intents;
        self.intents = a.intents.len();
        if wanted_now {
            // "I want to *delete* …": the phrase after the wanted verb is the object.
            self.verb_seen = true;
            self.complete = false;
            self.phrase.clear();
            return;
        }
        let content = a.concepts.last().is_some_and(|c| !c.is_empty());
        if self.complete || a.concepts.is_empty() {
            return;
        }
        if self.phrase.is_empty() {
            // Articles and the like before the phrase are skipped; the first verb anchors it
            // ("add a comment": `comment` is a noun there).
            if verb && !self.verb_seen {
                self.verb_seen = true;
            } else if content {
                self.phrase.push(a.concepts.len() - 1);
            }
        } else if content {
            self.phrase.push(a.concepts.len() - 1);
        } else {
            self.complete = true;
        }
    }
}

/// Words of wanting: the verb right after one says what is wanted.
const WANT_WORDS: &[&str] = &[
    "want", "wants", "need", "needs", "like", "how", "wish", "trying", "try", "going", "please",
];
/// How many words after a word of wanting its verb may come ("I want to quickly *merge*").
pub const WANT_REACH: usize = 3;

/// Words after `how` that ask how much rather than how to ("how *many* people upvoted it",
/// "how *long* …"): the verb that follows describes what is counted, it is not the ask.
const QUANTITY_WORDS: &[&str] = &[
    "many", "much", "long", "often", "far", "old", "big", "large", "soon", "fast",
];

/// Whether `tokens[i]` is a word of wanting ("want", "need", "how", "please"), except `how`
/// asking a quantity ("how many") and `like` comparing ("a board like Trello's"): `like` wants
/// only after a subject or `would` ("I'd like to", "we would like").
pub fn wants_at(tokens: &[String], i: usize) -> bool {
    let w = tokens[i].as_str();
    if !WANT_WORDS.contains(&w) {
        return false;
    }
    match w {
        "how" => tokens
            .get(i + 1)
            .is_none_or(|n| !QUANTITY_WORDS.contains(&n.as_str())),
        "like" => i
            .checked_sub(1)
            .is_some_and(|p| tokens[p].ends_with("'d") || LIKING.contains(&tokens[p].as_str())),
        _ => true,
    }
}

/// The verb of a need that opens with the role it acts in ("as site admin list every
/// organization", "as superuser enumerate …"): the first word with an intent two to
/// [`WANT_REACH`] words after the opening `as`, one or two role words between. That verb is the
/// ask, as after a word of wanting, and the role is not its object.
pub fn verb_after_role(tokens: &[String]) -> Option<usize> {
    if tokens.first().map(String::as_str) != Some("as") {
        return None;
    }
    (2..=WANT_REACH.min(tokens.len().saturating_sub(1))).find(|&j| intent_of(&tokens[j]).is_some())
}

/// How many words after a word of wanting the `to` before its verb may stand when an object
/// comes between ("I want *my editor plugin* to start"): an object of up to five words.
const OBJECT_REACH: usize = 6;

/// The verb a word of wanting at `at` asks of an object: the word after `to` ("I want my
/// script to *leave* a heart", "I need its raw log text to *see* why"), when no verb comes
/// between and the `to` stands within [`OBJECT_REACH`].
pub fn verb_after_object(tokens: &[String], at: usize) -> Option<usize> {
    let end = (at + OBJECT_REACH).min(tokens.len().saturating_sub(2));
    (at + 2..=end)
        .take_while(|&j| intent_of(&tokens[j - 1]).is_none())
        .find(|&j| tokens[j] == "to" && intent_of(&tokens[j + 1]).is_some())
        .map(|j| j + 1)
}

/// Words before `like` that make it a wish ("we would like", "I also like to").
const LIKING: &[&str] = &["i", "we", "you", "they", "would", "also", "really", "just"];

/// Words a need calls an operation by, in a question about it ("which *call* removes it").
const OPERATION_WORDS: &[&str] = &[
    "call",
    "endpoint",
    "api",
    "operation",
    "route",
    "request",
    "method",
];

/// The intent of the verb at `at` when a question about the operation asks with it: "which
/// call *removes* it", "what endpoint *kicks off* the run", "which call just *attaches* a
/// file". There the third-person form is the ask, where elsewhere it describes a thing (see
/// [`intent_of`]). A verb no intent class holds (`saves`, `puts`) asks for nothing.
fn asked_intent(tokens: &[String], at: usize) -> Option<Intent> {
    let asks = |k: usize| {
        at > k
            && OPERATION_WORDS.contains(&tokens[at - k].as_str())
            && ["which", "what"].contains(&tokens[at - k - 1].as_str())
    };
    // One word may come between, unless it is the verb itself ("which call *returns*").
    if !(asks(1) || asks(2) && intent_of(&tokens[at - 1]).is_none()) {
        return None;
    }
    let base = tokens[at].strip_suffix('s')?;
    let bases = [Some(base), base.strip_suffix('e')];
    // The phrase first, as everywhere ("kicks off" is "kick off", not "kick").
    let next = tokens.get(at + 1);
    bases.iter().flatten().find_map(|b| {
        next.and_then(|n| intent_of(&format!("{b} {n}")))
            .or_else(|| intent_of(b))
    })
}

/// The raw query's whitespace-separated chunks, lower-cased and trimmed of punctuation but
/// for `#` (`#12`, `acme/web#19`): where numbers and the words before them are read.
pub(crate) fn numbered_chunks(query: &str) -> Vec<String> {
    query
        .split_whitespace()
        .map(|c| {
            c.trim_matches(|c: char| !c.is_alphanumeric() && c != '#')
                .to_lowercase()
        })
        .collect()
}

/// The words right before a number of the raw query (`comment 301`, `run #1042`), lower-cased.
fn words_before_numbers(query: &str) -> Vec<String> {
    numbered_chunks(query)
        .windows(2)
        .filter(|w| {
            let n = w[1].trim_start_matches('#');
            !n.is_empty() && n.chars().all(|d| d.is_ascii_digit())
        })
        .map(|w| w[0].trim_end_matches('#').to_string())
        .collect()
}

/// Possessive determiners: the word after one is owned, a noun.
const POSSESSIVES: &[&str] = &["my", "our", "your", "their", "his", "her", "its"];

/// Words that undo the verb one or two words after them ("stop watching", "undo adding").
const UNDOING_WORDS: &[&str] = &["stop", "undo", "reverse", "revert"];

/// Whether the need asks a yes/no question: it opens with an auxiliary verb (not a request
/// such as "can I…"), or says `whether`, or `check if` / `see if`.
fn asks_whether(tokens: &[String]) -> bool {
    opens_with_auxiliary(tokens)
        || tokens.iter().any(|t| t == "whether")
        || tokens.windows(2).any(|w| {
            w[1] == "if"
                && ["check", "see", "verify", "know", "tell", "test"].contains(&w[0].as_str())
        })
}

/// Whether the need asks about the verb it names rather than asking for it: it opens with an
/// auxiliary verb (`can` / `could` / `may` with `I` or `we` too: whether I may; not with `you`,
/// a request), or asks how many or how much.
fn asks_about_its_verb(tokens: &[String]) -> bool {
    let may_we = tokens
        .first()
        .is_some_and(|t| ["can", "could", "may"].contains(&t.as_str()))
        && tokens.get(1).is_some_and(|t| t == "i" || t == "we");
    opens_with_auxiliary(tokens)
        || may_we
        || tokens
            .windows(2)
            .any(|w| w[0] == "how" && (w[1] == "many" || w[1] == "much"))
}

/// Whether the need opens with an auxiliary verb that asks (not a request such as "can I…").
fn opens_with_auxiliary(tokens: &[String]) -> bool {
    const AUX: &[&str] = &[
        "is", "are", "am", "was", "were", "does", "do", "did", "has", "have", "can", "could", "may",
    ];
    const REQUEST: &[&str] = &["can", "could", "may"];
    tokens.first().is_some_and(|t| {
        AUX.contains(&t.as_str())
            && !(REQUEST.contains(&t.as_str())
                && tokens
                    .get(1)
                    .is_some_and(|n| ["i", "we", "you"].contains(&n.as_str())))
    })
}

/// Words that say the need undoes something (with `take back`), wherever they stand — unlike
/// [`UNDOING_WORDS`], which turn the verb right after them around (and include `stop`, which
/// ends something rather than undoing it).
const UNDO_CUES: &[&str] = &[
    "undo",
    "undoing",
    "revert",
    "reverting",
    "reverse",
    "reversing",
    "retract",
    "withdraw",
    "lift",
    "lifting",
];

/// Words that set the user apart ("not mine", "rather than my own", "instead of me").
const SELF_NEGATORS: &[&str] = &["not", "never", "no", "without", "except", "than", "instead"];

/// Whether `tokens[i]` is a word for the user that a word before it negates or sets apart
/// ("not *my* own list", "rather than *my* account", "instead of *me*").
fn self_negated(tokens: &[String], i: usize) -> bool {
    SELF_WORDS.contains(&tokens[i].as_str())
        && (1..=2).any(|k| i >= k && SELF_NEGATORS.contains(&tokens[i - k].as_str()))
}

/// Words that negate the next content word.
const NEGATIONS: &[&str] = &[
    "without",
    "not",
    "never",
    "don't",
    "dont",
    "except",
    "excluding",
    "no",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon(words: &[&str]) -> Lexicon {
        Lexicon::new(std::iter::once(words.iter().copied()))
    }

    #[test]
    fn values_and_punctuation_are_dropped() {
        assert_eq!(
            tokenize("Close issue #42 in acme/webshop!! (v1.4.0) \"quoted\" -delete AND *"),
            ["close", "issue", "in", "quoted", "delete", "and"]
        );
        assert_eq!(
            tokenize("GPG oauth2 +1 e-mail"),
            ["gpg", "oauth2", "+1", "e-mail"]
        );
        assert!(tokenize("").is_empty());
        assert!(tokenize("!!! ### 123 ~~~").is_empty());
    }

    #[test]
    fn a_name_after_named_or_called_is_a_value() {
        assert_eq!(
            tokenize("make an org called platform-team with private visibility"),
            [
                "make",
                "an",
                "org",
                "called",
                "with",
                "private",
                "visibility"
            ]
        );
        // Capitalised words and numbers go on the name; the first lower-case word ends it.
        assert_eq!(
            tokenize("new board called Q3 Roadmap in org acme"),
            ["new", "board", "called", "in", "org", "acme"]
        );
        assert_eq!(
            tokenize("start a sprint Called \"Sprint 14\" ending Friday"),
            ["start", "a", "sprint", "called", "ending", "friday"]
        );
        assert_eq!(tokenize("a token named"), ["a", "token", "named"]);
    }

    proptest::proptest! {
        /// The letter-count bound never exceeds the distance, so skipping the alignment when
        /// it is over `max` changes no answer.
        #[test]
        fn letter_bound_is_a_lower_bound(a in "[a-eé日]{0,9}", b in "[a-eé日]{0,9}") {
            proptest::prop_assert!(letter_bound(&a, &b) <= strsim::osa_distance(&a, &b));
        }
    }

    #[test]
    fn letter_bound_prunes_words_of_other_letters() {
        assert_eq!(
            letter_bound("lsit", "list"),
            0,
            "a transposition keeps the counts"
        );
        assert_eq!(letter_bound("abcdef", "uvwxyz"), 6);
        assert_eq!(
            letter_bound("", "abcd"),
            4,
            "the length difference bounds it too"
        );
        assert_eq!(letter_bound("créer", "creer"), 1);
    }

    #[test]
    fn osa_counts_transpositions_once_and_caps() {
        assert_eq!(osa_distance("lsit", "list", 2), 1);
        assert_eq!(osa_distance("abc", "abc", 2), 0);
        assert_eq!(osa_distance("brnaches", "branches", 3), 1);
        assert_eq!(osa_distance("abcdef", "uvwxyz", 2), 3, "capped at max + 1");
        assert_eq!(osa_distance("", "abcd", 2), 3, "lengths alone decide");
        assert_eq!(
            osa_distance("créer", "creer", 2),
            1,
            "characters, not bytes"
        );
    }

    #[test]
    fn english_words_are_not_corrected_to_catalog_words() {
        let lex = lexicon(&["link", "hook", "restart", "list", "comment"]);
        let a = analyse("book the line comments", &lex);
        let words: Vec<&str> = a.terms.iter().map(|t| t.word.as_str()).collect();
        assert_eq!(words, ["book", "line", "comments"], "{:?}", a.corrections);
        assert!(a.corrections.is_empty());
        let a = analyse("lsit comments", &lex);
        assert_eq!(a.corrections, [("lsit".to_string(), "list".to_string())]);
        assert!(is_english("restore") && !is_english("lsit") && !is_english("brnaches"));
    }

    #[test]
    fn typos_are_corrected_to_the_commonest_close_word() {
        let lex = lexicon(&["branches", "release", "webhook", "list", "milestones"]);
        let c = |w: &str| lex.correct(w).map(|(c, _)| c);
        assert_eq!(c("brnaches").as_deref(), Some("branches"));
        assert_eq!(c("relaese").as_deref(), Some("release"));
        assert_eq!(c("lsit").as_deref(), Some("list"));
        assert_eq!(c("milest").as_deref(), Some("milestones"));
        assert_ne!(
            c("mile").as_deref(),
            Some("milestones"),
            "four letters are too few to complete"
        );
        assert_ne!(
            c("docs").as_deref(),
            Some("does"),
            "function words are never targets"
        );
        assert_eq!(lex.correct("zzzzzz"), None);
        assert_eq!(lex.correct("ab"), None);
    }

    #[test]
    fn a_typo_keeps_its_first_letter_over_a_commoner_word() {
        // `signed` is commoner and as close (one letter dropped), but typos rarely hit the
        // first letter.
        let docs = [
            vec!["signed", "key"],
            vec!["signed", "commit"],
            vec!["assigned", "sided"],
        ];
        let lex = Lexicon::new(docs.iter().map(|d| d.iter().copied()));
        let c = |w: &str| lex.correct(w).map(|(c, _)| c);
        assert_eq!(c("asigned").as_deref(), Some("assigned"));
        // Both keep the first letter and `column` is commoner, but a typed plural stays one;
        // a swapped last letter is no plural (`usre` is `user`, commoner than `use`).
        let docs = [
            vec!["column", "board", "user"],
            vec!["column", "project", "user"],
            vec!["columns", "list", "use"],
        ];
        let plural = Lexicon::new(docs.iter().map(|d| d.iter().copied()));
        assert_eq!(
            plural.correct("colums").map(|(c, _)| c).as_deref(),
            Some("columns")
        );
        assert_eq!(
            plural.correct("colum").map(|(c, _)| c).as_deref(),
            Some("column")
        );
        assert_eq!(
            plural.correct("usre").map(|(c, _)| c).as_deref(),
            Some("user")
        );
        // Both keep it (`sided`, `signed`): the commoner wins.
        assert_eq!(
            c("sined").as_deref(),
            Some("signed"),
            "the commonest otherwise"
        );
    }

    #[test]
    fn phrases_expand_and_verbs_give_intent() {
        let lex = lexicon(&["pull", "request", "create", "delete", "branch"]);
        let a = analyse("open an MR", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Create));
        let words: Vec<&str> = a.terms.iter().map(|t| t.word.as_str()).collect();
        assert!(
            words.contains(&"pull") && words.contains(&"request"),
            "{words:?}"
        );
        let a = analyse("deeltte branch", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Delete));
        assert!(
            a.intent_from_typo,
            "a distance-2 correction is not confident"
        );
        let a = analyse("dleete branch", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Delete));
        assert!(
            !a.intent_from_typo,
            "one letter off a long word is confident"
        );
        let a = analyse("show my merge requests", &lex);
        assert!(a.about_self);
        assert_eq!(a.primary_intent(), Some(Intent::Get));
    }

    fn words_of(a: &Analysis) -> Vec<&str> {
        a.terms.iter().map(|t| t.word.as_str()).collect()
    }

    #[test]
    fn a_camel_case_word_nothing_knows_is_split() {
        let lex = lexicon(&["issue", "create", "comment", "wiki"]);
        let a = analyse("what does issueCreateComment need", &lex);
        for w in ["issue", "create", "comment"] {
            assert!(words_of(&a).contains(&w), "{:?}", words_of(&a));
        }
        // Known as one word (a word of the catalog, or `GitHub`, which opens with a capital):
        // as before.
        let known = lexicon(&["issue", "issuecomment"]);
        assert_eq!(
            words_of(&analyse("an issueComment", &known)),
            ["issuecomment"]
        );
        assert!(matches!(
            written_as_words("ask GitHub", &lex),
            Cow::Borrowed(_)
        ));
        // Nothing to rewrite: the query itself, not a copy.
        assert!(matches!(
            written_as_words("list my repos", &lex),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_negated_self_word_is_no_self_cue() {
        let lex = lexicon(&["follower", "list", "user", "login", "account"]);
        for q in [
            "the follower list of a maintainer, not my own",
            "looked up by their login rather than my own",
            "owned by the org instead of me",
            "the followers of one maintainer, not mine",
        ] {
            assert!(!analyse(q, &lex).about_self, "{q:?}");
        }
        for q in [
            "my follower list",
            "list the followers of me",
            "not the org's, mine",
        ] {
            assert!(analyse(q, &lex).about_self, "{q:?}");
        }
        // The negation was the user's: the word after it stays a word of the need.
        let a = analyse(
            "accounts that follow a maintainer, not my own follower list",
            &lex,
        );
        assert!(words_of(&a).contains(&"follower"), "{:?}", words_of(&a));
        assert!(!a.about_self);
    }

    #[test]
    fn undoing_and_yes_no_questions_are_noted() {
        let lex = lexicon(&["reaction", "review", "member", "organization"]);
        let undoing = |q: &str| analyse(q, &lex).undoing;
        for q in [
            "undo the dismissal of a review",
            "take back my reaction",
            "lift the block on bob",
        ] {
            assert!(undoing(q), "{q:?}");
        }
        for q in [
            "take my reaction",
            "dismiss a review",
            "close the review without undoing it",
        ] {
            assert!(!undoing(q), "{q:?}");
        }
        let asks = |q: &str| analyse(q, &lex).asks_whether;
        for q in [
            "is bob a member of acme",
            "does bob follow alice",
            "check whether bob is a member",
            "see if bob is a member",
        ] {
            assert!(asks(q), "{q:?}");
        }
        for q in ["can I remove bob from acme", "list the members of acme", ""] {
            assert!(!asks(q), "{q:?}");
        }
    }

    #[test]
    fn un_words_and_stopping_undo_their_verb() {
        let lex = lexicon(&[
            "label",
            "favorite",
            "register",
            "runner",
            "watch",
            "repository",
        ]);
        let a = analyse("unlabel everything", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Delete));
        let words: Vec<&str> = a.terms.iter().map(|t| t.word.as_str()).collect();
        assert_eq!(words, ["label"], "{:?}", a.dropped);
        let a = analyse("unregister the runner", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Delete));
        assert_eq!(intent_of("unresolve"), Some(Intent::Update));
        assert_eq!(intent_of("unread"), None, "undoing a read is no action");
        let a = analyse("stop watching this repository", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Delete));
        let a = analyse("watch this repository", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Create));
        // Ending a reading deletes what is read from: "stop showing" unpins.
        let a = analyse("stop showing this issue in the pinned list", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Delete));
        let a = analyse("showing this issue in the pinned list", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Get));
        // An update undone stays an update: "stop editing" is no deletion.
        let a = analyse("stop editing the issue", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Update));
    }

    /// A verb that names a thing is no verb of the need: the word a number follows (`comment
    /// 301`, `run 1042`), a word after a possessive (`my fork`).
    #[test]
    fn a_numbered_or_owned_word_is_a_noun() {
        let lex = lexicon(&["comment", "run", "fork", "repository", "issue", "show"]);
        let intents = |q: &str| analyse(q, &lex).intents;
        assert_eq!(intents("show comment 88213"), [Intent::Get]);
        assert_eq!(intents("reactions on comment #5120"), []);
        assert_eq!(intents("comment on issue 5"), [Intent::Create]);
        assert_eq!(intents("run 1042 jobs"), []);
        assert_eq!(intents("run the workflow"), [Intent::Create]);
        assert_eq!(intents("branches of my fork"), []);
        assert_eq!(intents("fork my repository"), [Intent::Create]);
        // `new` is an adjective, owned or not.
        assert_eq!(intents("our new repository"), [Intent::Create]);
    }

    /// A question about a verb asks to read, not to do: "can bob create…", "can I push…", "how
    /// many people upvoted…". A request stays a request: "can you create…".
    #[test]
    fn a_question_about_a_verb_reads() {
        let lex = lexicon(&["repository", "create", "push", "branch", "issue"]);
        let first = |q: &str| analyse(q, &lex).primary_intent();
        assert_eq!(first("can bob create repositories"), Some(Intent::Get));
        assert_eq!(first("can I push to the staging branch"), Some(Intent::Get));
        assert_eq!(first("has our org blocked this person"), Some(Intent::Get));
        assert_eq!(first("how many people upvoted an issue"), Some(Intent::Get));
        assert_eq!(first("can you create a repository"), Some(Intent::Create));
        assert_eq!(first("create a repository"), Some(Intent::Create));
        assert_eq!(first("how do I create a repository"), Some(Intent::Create));
    }

    /// The set the analysis asks holds the whole list; words of the catalog are not in it.
    #[test]
    fn every_listed_function_word_is_one_and_a_catalog_word_is_not() {
        for w in STOP_WORDS {
            assert!(is_stop_word(w), "{w}");
        }
        for w in ["repository", "issue", "delete", "the-", "an0", ""] {
            assert!(!is_stop_word(w), "{w}");
        }
    }

    /// A contraction is a function word, whichever apostrophe it is typed with: its parts are
    /// no words of the need.
    #[test]
    fn a_contraction_is_a_function_word() {
        assert_eq!(tokenize("can’t"), ["can't"]);
        assert!(is_stop_word("shouldn't") && is_stop_word("we'll") && !is_stop_word("label"));
        let lex = lexicon(&["label", "delete"]);
        for q in ["the label shouldn't", "the label shouldn’t"] {
            let words: Vec<String> = analyse(q, &lex)
                .terms
                .iter()
                .map(|t| t.word.clone())
                .collect();
            assert_eq!(words, ["label"], "{q}");
        }
    }

    /// A hyphenated word is its parts written together when the catalog knows that word, so
    /// that "un-resolve" keeps its un-verb; else it is read as its parts.
    #[test]
    fn a_hyphenated_word_is_the_known_word_its_parts_make() {
        let lex = lexicon(&["unresolve", "resolve", "comment"]);
        let words = |q: &str| -> Vec<String> {
            analyse(q, &lex)
                .terms
                .iter()
                .map(|t| t.word.clone())
                .collect()
        };
        assert_eq!(words("un-resolve the comment"), ["unresolve", "comment"]);
        let parts = words("resolve-comment");
        assert!(
            parts.contains(&"resolve".to_string()) && parts.contains(&"comment".to_string()),
            "{parts:?}"
        );
    }

    /// Everyday English verbs of each class, beyond the forge's own words (round 20): a need
    /// that says `tweak`, `nuke` or `retrieve` asks for an edit, a deletion or a read even
    /// when no labelled need used the word.
    #[test]
    fn everyday_verbs_carry_their_class() {
        for (w, i) in [
            ("tweak", Intent::Update),
            ("deactivate", Intent::Update),
            ("turn on", Intent::Update),
            ("nuke", Intent::Delete),
            ("trash", Intent::Delete),
            ("provision", Intent::Create),
            ("retrieve", Intent::Get),
            ("filter", Intent::List),
        ] {
            assert_eq!(intent_of(w), Some(i), "{w}");
        }
        let lex = lexicon(&["secret", "repository"]);
        let a = analyse("please nuke the stale secret", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Delete));
        let a = analyse("tweaking the repository secret", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Update));
    }

    /// `PRs`, `MRs`: a listed abbreviation's plural is a plural, though three letters long;
    /// other three-letter words ending in `s` are not.
    #[test]
    fn a_listed_abbreviation_takes_a_plural() {
        let lex = lexicon(&["pull", "request", "merge"]);
        for q in ["PRs by alice against main", "open MRs in acme/web"] {
            assert!(analyse(q, &lex).plural, "{q}");
        }
        for q in ["a pull request and its merge", "has the PR merged"] {
            assert!(!analyse(q, &lex).plural, "{q}");
        }
    }

    /// A gerund asks for its verb; a participle or an `-s` form names a thing (round 7).
    #[test]
    fn only_base_forms_and_gerunds_carry_an_intent() {
        assert_eq!(intent_of("merging"), Some(Intent::Create));
        assert_eq!(intent_of("deleting"), Some(Intent::Delete));
        assert_eq!(intent_of("created"), None);
        assert_eq!(intent_of("uploaded"), None);
        assert_eq!(intent_of("forks"), None);
        assert_eq!(intent_of("comments"), None);
        let lex = lexicon(&["fork", "uploaded", "artifact", "release"]);
        let a = analyse("forks of acme/web", &lex);
        assert_eq!(a.primary_intent(), None);
        assert!(a.plural, "forks is a plural noun here");
        let a = analyse("uploaded artifacts of a release", &lex);
        assert_eq!(a.primary_intent(), None);
        let a = analyse("fork acme/web", &lex);
        assert_eq!(a.primary_intent(), Some(Intent::Create));
    }

    /// Seeded random strings over words, values, punctuation and other scripts: the analysis
    /// never panics and only ever yields non-empty, lower-case terms.
    #[test]
    fn analysis_of_random_text_never_panics() {
        let lex = lexicon(&["pull", "request", "issue", "branch", "delete", "repository"]);
        let pieces = [
            "merge", "PR", "the", "#12", "acme/web", "v1.2", "é", "🚀", "-", "'", "\"", "don't",
            "brnach", "not", "without", "me", "show", "all", "\u{200b}", "\t", "((", "+1",
            "e-mail", "x", "deleete", "İ", "ﬁ", "my", "am", "i",
        ];
        let mut state = 42u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2_000 {
            let n = (next() % 12) as usize;
            let q: Vec<&str> = (0..n)
                .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                .collect();
            let q = q.join(if next() % 3 == 0 { "" } else { " " });
            let a = analyse(&q, &lex);
            for t in &a.terms {
                assert!(!t.word.is_empty(), "{q:?}: an empty term");
                assert_eq!(t.word, t.word.to_lowercase(), "{q:?}");
            }
            assert!(a.concepts.iter().all(|c| !c.is_empty()), "{q:?}");
            assert!(
                a.object.windows(2).all(|w| w[0] + 1 == w[1])
                    && a.object.iter().all(|&c| c < a.concepts.len()),
                "{q:?}: the object is a run of the query's concepts: {:?}",
                a.object
            );
        }
    }

    /// A word the catalog never uses is searched by what it means and kept as typed too: the
    /// labelled needs use it, and their examples and learned lifts must meet it.
    #[test]
    fn a_translated_word_is_kept_as_typed() {
        let a = analyse("comment on ticket 5", &lexicon(&["comment", "issue"]));
        let origin = |w: &str| a.terms.iter().find(|t| t.word == w).map(|t| t.origin);
        assert_eq!(origin("issue"), Some(Origin::Translated));
        assert_eq!(origin("ticket"), Some(Origin::Typed));
        assert_eq!(a.concepts.last().unwrap(), &["issue", "ticket"]);
    }

    /// A plural the vocabulary does not list means what its singular means, as a word and as
    /// the last word of a phrase; a verb's `-s` form does not (round 25).
    #[test]
    fn a_plural_reads_as_its_listed_singular() {
        for (plural, singular) in [
            ("squads", "squad"),
            ("cards", "card"),
            ("directories", "directory"),
            ("addresses", "address"),
            ("build agents", "build agent"),
        ] {
            assert!(synonyms_of(singular).is_some(), "{singular} is listed");
            assert_eq!(synonyms_of(plural), synonyms_of(singular), "{plural}");
        }
        // Listed under its own plural only: the singular is not guessed ("check" the verb is
        // not "checks", commit statuses).
        assert_eq!(synonyms_of("check"), None);
        // `give` is listed, and is a verb: `gives` describes a thing rather than asking.
        assert!(synonyms_of("give").is_some());
        assert_eq!(synonyms_of("gives"), None);
        assert_eq!(synonyms_of("status"), None);
        let a = analyse("what squads am I part of", &lexicon(&[]));
        assert!(a.terms.iter().any(|t| t.word == "team"), "{:?}", a.terms);
    }

    /// Other forges' and trackers' API names (GitLab's notes and boards, Jira's worklogs,
    /// Bitbucket's workspaces, Azure DevOps's work items) reach Gitea's words (round 21).
    #[test]
    fn other_forges_words_reach_giteas() {
        for (w, gitea) in [
            ("note", "comment"),
            ("board", "project"),
            ("worklog", "tracked times"),
            ("workspace", "organization"),
            ("work item", "issue"),
            ("branch rule", "branch protection"),
            ("todo", "notification"),
        ] {
            assert_eq!(synonyms_of(w), Some(gitea), "{w}");
        }
        let lex = lexicon(&["list", "comment", "issue", "tracked", "times"]);
        let a = analyse("list the notes on a work item", &lex);
        let words: Vec<&str> = a.terms.iter().map(|t| t.word.as_str()).collect();
        for w in ["comment", "notes", "issue"] {
            assert!(words.contains(&w), "{w} in {words:?}");
        }
        // A hyphenated entry is read whole, not as its parts.
        let lex = lexicon(&["notification"]);
        let a = analyse("my to-do list", &lex);
        assert!(
            a.terms.iter().any(|t| t.word == "notification"),
            "{:?}",
            a.terms
        );
    }

    /// Gitea calls an SSH key a *public key*; "key" alone would fit a GPG key as well.
    #[test]
    fn an_ssh_key_is_a_public_key() {
        let lex = lexicon(&["delete", "public", "key", "gpg"]);
        for q in ["delete an ssh key", "delete my ssh keys"] {
            let a = analyse(q, &lex);
            let words: Vec<&str> = a.terms.iter().map(|t| t.word.as_str()).collect();
            assert!(
                words.contains(&"public") && words.contains(&"key"),
                "{q}: {words:?}"
            );
        }
    }

    /// A phrase is translated as a unit, and its words are kept as typed beside the
    /// translation, the catalog's words too (`ssh key`: `ssh` tells it from a GPG key), as a
    /// translated word is; not a verb the catalog uses ("merge request" is not about merging).
    #[test]
    fn a_phrase_keeps_its_words_but_the_catalog_verbs() {
        // Catalog words are those of three actions or more.
        let used: HashSet<&str> = [
            "list", "runner", "merge", "request", "pull", "ssh", "public",
        ]
        .into_iter()
        .collect();
        let lex = Lexicon::new((0..CATALOG_WORD_MIN_ACTIONS).map(|_| used.clone()));
        let words = |q: &str| -> Vec<(String, Origin)> {
            analyse(q, &lex)
                .terms
                .into_iter()
                .map(|t| (t.word, t.origin))
                .collect()
        };
        let agent = words("list build agent");
        assert!(
            agent.contains(&("runner".into(), Origin::Translated)),
            "{agent:?}"
        );
        assert!(
            agent.contains(&("agent".into(), Origin::Typed)),
            "{agent:?}"
        );
        // A catalog word that is no verb is kept as typed.
        let ssh = words("delete an ssh key");
        assert!(ssh.contains(&("ssh".into(), Origin::Typed)), "{ssh:?}");
        assert!(
            ssh.contains(&("public".into(), Origin::Translated)),
            "{ssh:?}"
        );
        // Catalog verbs are not (`request` is one too: "request a review"); `request` stays
        // only as the translation's word.
        let mr = words("merge request");
        assert!(!mr.iter().any(|(w, _)| w == "merge"), "{mr:?}");
        for w in ["pull", "request"] {
            assert!(mr.contains(&(w.into(), Origin::Translated)), "{mr:?}");
        }
    }

    /// A typo its stem makes known (`delet`: the catalog's `delete` stems to it) is kept as
    /// typed; it takes its stem's verb class, as unsure as a correction. English words do not
    /// (a participle is not a command).
    #[test]
    fn a_typo_known_by_its_stem_reads_as_its_verb() {
        let lex = lexicon(&["delete", "issue", "create", "protected", "branches"]);
        let a = analyse("delet issue 99", &lex);
        assert!(a.corrections.is_empty(), "{:?}", a.corrections);
        assert_eq!(a.intents, [Intent::Delete]);
        assert!(a.intent_from_typo, "as unsure as a correction");
        assert_eq!(analyse("creat issue", &lex).intents, [Intent::Create]);
        let a = analyse("protected branches", &lex);
        assert!(a.intents.is_empty(), "{:?}", a.intents);
        assert!(!a.intent_from_typo);
        // A stem no verb has gives none.
        assert_eq!(intent_of_stem("delet"), Some(Intent::Delete));
        assert_eq!(intent_of_stem("qwzx"), None);
        // An inflection is not a cut-off verb: `deleted` stems as `delet` but is not one.
        assert_eq!(intent_of_stem("deleted"), None);
        assert_eq!(intent_of_stem("uploaded"), None);
    }

    /// The object is the phrase after the verb, up to the first word that adds no concept.
    #[test]
    fn the_object_is_the_noun_phrase_after_the_verb() {
        let lex = lexicon(&[
            "delete",
            "issue",
            "comment",
            "repository",
            "assignees",
            "team",
            "add",
            "private",
            "owned",
            "organization",
        ]);
        let object = |q: &str| -> Vec<String> {
            let a = analyse(q, &lex);
            a.object.iter().map(|&c| a.concepts[c].join("+")).collect()
        };
        assert_eq!(
            object("delete the issue comment from acme/web"),
            ["issue", "comment"]
        );
        assert_eq!(
            object("add a comment"),
            ["comment"],
            "a verb word as the noun"
        );
        assert_eq!(
            object("repo assignees"),
            ["repository+repo", "assignees"],
            "no verb"
        );
        assert_eq!(
            object("make a new private repository owned by our organization"),
            ["private", "repository", "owned"]
        );
        assert_eq!(
            object("The team keeps adding noise. I want to delete the comment for good"),
            ["comment"],
            "the wanted verb's phrase, not the story's"
        );
        assert!(object("the of and").is_empty());
    }

    /// The ask is wanted: the last verb after a word of wanting, or the verb a question about
    /// the operation asks with, even in its third-person form (round 30).
    #[test]
    fn the_ask_is_what_is_wanted() {
        let lex = lexicon(&["label", "comment", "team", "repository", "secret"]);
        let wanted = |q: &str| analyse(q, &lex).wanted;
        assert_eq!(
            wanted("which endpoint removes the label"),
            Some(Intent::Delete)
        );
        assert_eq!(wanted("what call changes it"), Some(Intent::Update));
        assert_eq!(
            wanted("which call attaches the team to the repository"),
            Some(Intent::Create),
            "an -es form"
        );
        assert_eq!(
            wanted("which call quietly removes the label"),
            Some(Intent::Delete),
            "one word between"
        );
        assert_eq!(
            wanted("which endpoint kicks off the run"),
            Some(Intent::Create),
            "the phrase first: kick off, not kick"
        );
        // Without the question, the -s form describes ("the call removes…" says what it does).
        assert_eq!(wanted("the call removes the label"), None);
        assert_eq!(
            analyse("the call removes the label", &lex).primary_intent(),
            None
        );
        // "How many" counts: the verb after it says what is counted, not what is wanted.
        assert_eq!(wanted("how many delete calls did the label get"), None);
        assert_eq!(wanted("how often delete labels"), None);
        assert_eq!(wanted("how do I delete the label"), Some(Intent::Delete));
        // "Like" compares unless someone would like something.
        assert_eq!(wanted("labels like remove or keep on the comment"), None);
        assert_eq!(wanted("I'd like to delete the label"), Some(Intent::Delete));
        assert_eq!(
            wanted("we would like to delete the label"),
            Some(Intent::Delete)
        );
        // The story's wanted verb gives way to the ask after it.
        assert_eq!(
            wanted("I want to see the comments, but how do I delete the label"),
            Some(Intent::Delete)
        );
        let a = analyse(
            "I want to read the label; which call removes the comment",
            &lex,
        );
        assert_eq!(a.wanted, Some(Intent::Delete));
        let object: Vec<String> = a.object.iter().map(|&c| a.concepts[c].join("+")).collect();
        assert_eq!(object, ["comment"], "the object follows the ask");
    }

    #[test]
    fn the_verb_asked_of_an_object_is_wanted() {
        let lex = lexicon(&["label", "comment", "timer", "plugin", "script"]);
        let a = analyse(
            "I want my editor plugin to start the timer, and then stop it later",
            &lex,
        );
        assert_eq!(
            a.wanted,
            Some(Intent::Create),
            "the verb after the object's `to`"
        );
        let object: Vec<String> = a.object.iter().map(|&c| a.concepts[c].join("+")).collect();
        assert!(
            object.len() == 1 && object[0].contains("timer"),
            "the object follows the wanted verb: {object:?}"
        );
        let wanted = |q: &str| analyse(q, &lex).wanted;
        assert_eq!(
            wanted("we need the old timer to delete the label"),
            Some(Intent::Delete)
        );
        // A verb before the `to` is the wanted one; it is not passed over for a later verb.
        assert_eq!(
            wanted("I want to remove the comment to see the label"),
            Some(Intent::Delete)
        );
        // Five words of object at most.
        assert_eq!(
            wanted("I want the timer of my plugin to delete"),
            Some(Intent::Delete)
        );
        assert_eq!(wanted("I want the timer of my old plugin to delete"), None);
        assert_eq!(wanted("I want the timer"), None, "no verb at all");
    }

    /// "as site admin, list …": the verb after a role lead-in is the ask, and the role is not
    /// its object.
    #[test]
    fn the_verb_after_a_role_lead_in_is_wanted() {
        let lex = lexicon(&["organization", "admin", "site", "label"]);
        let a = analyse("as site admin, list every organization", &lex);
        assert_eq!(a.wanted, Some(Intent::List));
        let object: Vec<String> = a.object.iter().map(|&c| a.concepts[c].join("+")).collect();
        assert_eq!(object, ["organization"], "{:?}", a.concepts);
        let wanted = |q: &str| analyse(q, &lex).wanted;
        assert_eq!(wanted("as admin delete the label"), Some(Intent::Delete));
        // The role takes one or two words; a verb later is not reached, nor is one in the role's
        // place, nor an `as` that does not open the need.
        assert_eq!(wanted("as the site admin of it delete the label"), None);
        assert_eq!(wanted("as delete the label"), None);
        assert_eq!(wanted("site as admin delete the label"), None);
    }
}

//! The search (`SearchIndex`) driven the way a user or an agent drives it: hostile input, exact
//! names, verb intent, vocabulary, typos, filters and limits.
//!
//! Most checks run on the fixture (`tests/fixtures/gitea-mini.swagger.json`, 46 operations,
//! always available). Ranking checks that need the real vocabulary of the API run on the full
//! Gitea document from `$GITEA_SPEC_DIR` (default `../shared/spec`); see `tests/common/mod.rs`
//! for when a missing file skips and when it fails.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use aegis_gitea_mcp::catalog::{Action, Catalog, Domain, HttpMethod};
use aegis_gitea_mcp::search::{
    EXACT_MATCH_SCORE, Error, Hit, Intent, MAX_QUERY_CHARS, SearchIndex, SearchOptions,
};
use aegis_gitea_mcp::spec::Spec;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/gitea-mini.swagger.json"
);
const FULL_SPEC: &str = "gitea-swagger.v1.json";

/// A catalog and its index.
struct Searchable {
    catalog: Catalog,
    index: SearchIndex,
}

fn build(bytes: &[u8], what: &str) -> Searchable {
    let spec = Spec::parse(bytes).unwrap_or_else(|e| panic!("{what} parses: {e}"));
    let catalog = Catalog::build(&spec).unwrap_or_else(|e| panic!("{what} builds: {e}"));
    let index = SearchIndex::build(&catalog).unwrap_or_else(|e| panic!("{what} indexes: {e}"));
    Searchable { catalog, index }
}

/// The fixture's catalog and index.
fn fixture() -> Searchable {
    let bytes = std::fs::read(FIXTURE).expect("the fixture is readable");
    let s = build(&bytes, "the fixture");
    assert_eq!(s.catalog.len(), 46, "the fixture has 46 operations");
    s
}

/// The full Gitea document's catalog and index, built once per test binary. Only tests marked
/// ignored without the documents (`cfg(shared_spec)`) call it (see `crate::common::spec_bytes`).
fn full() -> &'static Searchable {
    static FULL: OnceLock<Searchable> = OnceLock::new();
    FULL.get_or_init(|| build(&crate::common::spec_bytes(FULL_SPEC), FULL_SPEC))
}

fn opts(limit: usize) -> SearchOptions {
    filtered(limit, None, None)
}

/// At most `limit` hits, only in `domain` and only of actions whose `read_only` annotation is the
/// one given (`None`: no filter).
fn filtered(limit: usize, domain: Option<Domain>, read_only: Option<bool>) -> SearchOptions {
    SearchOptions {
        limit,
        domain,
        read_only,
    }
}

/// The operationIds of the first `n` hits for `q` (panics, naming the query, on an error).
fn top(index: &SearchIndex, catalog: &Catalog, q: &str, n: usize) -> Vec<String> {
    index
        .search(q, &opts(n))
        .unwrap_or_else(|e| panic!("search {q:?} failed: {e}"))
        .iter()
        .map(|h| catalog[h.action].operation_id.to_string())
        .collect()
}

/// The actions of the hits for `q` with `o`.
fn hit_actions<'a>(s: &'a Searchable, q: &str, o: &SearchOptions) -> Vec<&'a Action> {
    s.index
        .search(q, o)
        .unwrap_or_else(|e| panic!("search {q:?} ({o:?}) failed: {e}"))
        .iter()
        .map(|h| &s.catalog[h.action])
        .collect()
}

fn describe(actions: &[&Action]) -> Vec<String> {
    actions
        .iter()
        .map(|a| format!("{} {} {}", a.operation_id, a.method, a.path))
        .collect()
}

/// Runs a search, turning a panic into a test failure that names the query.
fn search_no_panic(index: &SearchIndex, q: &str, o: &SearchOptions) -> Result<Vec<Hit>, Error> {
    catch_unwind(AssertUnwindSafe(|| index.search(q, o)))
        .unwrap_or_else(|_| panic!("search panicked on {q:?}"))
}

/// The invariants every successful answer keeps: at most `limit` hits, valid positions, finite
/// scores sorted in descending order, no action twice.
fn assert_well_formed(s: &Searchable, q: &str, limit: usize, hits: &[Hit]) {
    assert!(
        hits.len() <= limit.max(1),
        "{q:?}: {} hits for limit {limit}",
        hits.len()
    );
    let mut seen = HashSet::new();
    for h in hits {
        assert!(
            h.action.index() < s.catalog.len(),
            "{q:?}: hit {:?} is outside the catalog",
            h.action
        );
        assert!(
            h.score.is_finite(),
            "{q:?}: score {} is not finite",
            h.score
        );
        assert!(seen.insert(h.action), "{q:?}: action {:?} twice", h.action);
    }
    for w in hits.windows(2) {
        assert!(
            w[0].score >= w[1].score,
            "{q:?}: scores not descending: {} then {}",
            w[0].score,
            w[1].score
        );
    }
}

fn op<'a>(s: &'a Searchable, operation_id: &str) -> &'a Action {
    s.catalog
        .get(operation_id)
        .unwrap_or_else(|| panic!("no action for operationId {operation_id}"))
}

// ------------------------------------------------------------------------------------------------
// Hostile input
// ------------------------------------------------------------------------------------------------

/// Query-parser syntax is text, not syntax: every query with a real word finds something.
#[test]
fn operators_and_field_syntax_are_plain_text() {
    let s = fixture();
    let queries = [
        "close AND issue",
        "issue OR pull",
        "NOT merge a pull request",
        "+issue -comment",
        "issue* comm?nt",
        "issue~2",
        "issue^3 title^10",
        "issue:title",
        "name:foo issue",
        "(issue) [pull] {repository}",
        "issue \\ pull / repository",
        "!merge !!pull request",
        "\"close issue",
        "close issue\"",
        "'close issue",
        "`close` issue",
        "-delete repository",
        "--delete repository",
        "merge pull request)))",
        "((((merge pull request",
        "{{ .Merge }} pull request",
        "issue; DROP TABLE actions; --",
        "<script>alert(1)</script> issue",
        "issue %s %n %x",
        "issue $(rm -rf /) `id`",
    ];
    for q in queries {
        for limit in [1, 5, 20] {
            let hits = search_no_panic(&s.index, q, &opts(limit))
                .unwrap_or_else(|e| panic!("{q:?} must be searchable, got {e}"));
            assert!(!hits.is_empty(), "{q:?} has words and must find something");
            assert_well_formed(&s, q, limit, &hits);
        }
    }
}

/// Operators are never parser syntax: symbols alone are empty queries; the boolean words alone
/// find nothing (they are words, but no action is about them). Never a match-all or a panic.
#[test]
fn operators_alone_are_empty_queries() {
    let s = fixture();
    let all_operators = "AND OR NOT + - * ~ ^ : ( ) [ ] { } \\ / !";
    for q in ["AND", "OR", "NOT", "AND OR NOT", all_operators] {
        match search_no_panic(&s.index, q, &opts(46)) {
            Ok(hits) => assert!(hits.is_empty(), "{q:?} found {} actions", hits.len()),
            Err(Error::EmptyQuery) => {}
            Err(e) => panic!("{q:?}: unexpected error {e}"),
        }
    }
    let mut queries: Vec<&str> = all_operators
        .split(' ')
        .filter(|o| !o.chars().any(char::is_alphabetic))
        .collect();
    queries.extend(["&& || !", "+-*~^:()[]{}\\/!", "-", "*", "*:*", ":"]);
    for q in queries {
        match search_no_panic(&s.index, q, &opts(5)) {
            Err(Error::EmptyQuery) => {}
            Ok(hits) => panic!("{q:?} has no words but found {} actions", hits.len()),
            Err(e) => panic!("{q:?}: expected EmptyQuery, got {e}"),
        }
    }
}

#[test]
fn unbalanced_quotes_alone_are_empty_queries() {
    let s = fixture();
    for q in ["'", "\"", "`", "''", "\"\"", "\"'`", " \" ", "'''''"] {
        assert!(
            matches!(
                search_no_panic(&s.index, q, &opts(5)),
                Err(Error::EmptyQuery)
            ),
            "{q:?} is empty"
        );
    }
    // With a word, the quote is ignored.
    assert_eq!(
        top(&s.index, &s.catalog, "\"merge a pull request", 1),
        top(&s.index, &s.catalog, "merge a pull request", 1)
    );
}

#[test]
fn long_queries_are_refused_with_their_length() {
    let s = fixture();
    let ten_kb = "list the open issues ".repeat(500);
    let ten_kb = &ten_kb[..10 * 1024];
    match s.index.search(ten_kb, &opts(5)) {
        Err(e @ Error::QueryTooLong { len }) => {
            assert_eq!(len, 10 * 1024);
            let msg = e.to_string();
            assert!(msg.contains("10240"), "the message names the length: {msg}");
            assert!(msg.contains("512"), "the message names the maximum: {msg}");
        }
        other => panic!("a 10 KB query must be refused as too long, got {other:?}"),
    }

    assert_eq!(MAX_QUERY_CHARS, 512);
    let mut at_max = String::from("merge a pull request ");
    while at_max.chars().count() < MAX_QUERY_CHARS {
        at_max.push('x');
    }
    assert_eq!(at_max.chars().count(), 512);
    let hits = s
        .index
        .search(&at_max, &opts(5))
        .expect("exactly 512 characters are accepted");
    assert!(!hits.is_empty());

    let words_at_max: String = "merge pull request "
        .repeat(40)
        .chars()
        .take(MAX_QUERY_CHARS)
        .collect();
    assert_eq!(words_at_max.chars().count(), 512);
    let hits = s
        .index
        .search(&words_at_max, &opts(5))
        .expect("512 characters of words are accepted");
    assert_eq!(
        top(&s.index, &s.catalog, &words_at_max, 1),
        ["repoMergePullRequest"]
    );
    assert!(!hits.is_empty());

    let over: String = words_at_max.clone() + "s";
    assert!(
        matches!(
            s.index.search(&over, &opts(5)),
            Err(Error::QueryTooLong { len: 513 })
        ),
        "513 characters are refused"
    );
}

/// The limit counts characters, not bytes.
#[test]
fn query_length_is_counted_in_characters() {
    let s = fixture();
    // "é" is two bytes: 512 characters are 1 000+ bytes and still accepted.
    let accented: String = "issue créée ".repeat(50).chars().take(512).collect();
    assert_eq!(accented.chars().count(), 512);
    assert!(accented.len() > 512);
    let hits = s
        .index
        .search(&accented, &opts(5))
        .expect("512 characters are accepted whatever their byte length");
    assert!(!hits.is_empty());
    let over = accented + "é";
    assert!(matches!(
        s.index.search(&over, &opts(5)),
        Err(Error::QueryTooLong { len: 513 })
    ));
    // Four-byte characters.
    let emoji = "🚀".repeat(513);
    assert!(matches!(
        s.index.search(&emoji, &opts(5)),
        Err(Error::QueryTooLong { len: 513 })
    ));
    let emoji = "🚀".repeat(512);
    assert!(matches!(
        s.index.search(&emoji, &opts(5)),
        Err(Error::EmptyQuery)
    ));
}

#[test]
fn empty_whitespace_and_punctuation_only_queries_are_empty() {
    let s = fixture();
    let queries = [
        "",
        " ",
        "   ",
        "\t",
        "\n\r\n",
        " \t \n ",
        "\u{3000}",                         // ideographic space
        "\u{a0}\u{2003}",                   // no-break space, em space
        "\u{200b}",                         // zero-width space
        "\u{200b}\u{200c}\u{200d}\u{feff}", // zero-width characters, BOM
        "!!!",
        "?",
        "...",
        "?!.,;:",
        "---",
        "###",
        "@@@ $$$ %%%",
        "…",
        "« »",
        "\u{0}",
        "\u{1}\u{2}\u{1b}\u{7f}",
    ];
    for q in queries {
        match search_no_panic(&s.index, q, &opts(5)) {
            Err(Error::EmptyQuery) => {}
            other => panic!("{q:?} must be an empty query, got {other:?}"),
        }
    }
    let msg = Error::EmptyQuery.to_string();
    assert!(msg.contains("empty"), "{msg}");
}

/// Other scripts, emoji, bidirectional and zero-width characters: never a panic; a query with a
/// catalog word still finds it.
#[test]
fn non_ascii_input_never_panics() {
    let s = fixture();
    // (query, must find something)
    let queries: [(&str, bool); 22] = [
        ("créer une issue", true),
        ("Créer une ISSUE", true),
        ("fusionner la pull request", true),
        ("問題を閉じる", false),
        ("拉取请求", false),
        ("풀 리퀘스트 병합", false),
        ("🚀", false),
        ("🚀 merge the pull request 🎉", true),
        ("👍🏽 issue", true),
        ("👨‍👩‍👧‍👦", false),
        ("מחק את המאגר", false),
        ("احذف المستودع", false),
        ("\u{202e}delete repository\u{202c}", true),
        ("\u{200f}issue\u{200e}", true),
        ("close\u{200b}issue", true),
        ("iss\u{200b}ue", false),
        ("\u{feff}merge pull request", true),
        ("İSSUE list", true),
        ("ﬁle contents", true),
        ("e\u{301}dit repository", true),
        ("Ω≈ç√∫ issue", true),
        ("ｍｅｒｇｅ ｐｕｌｌ", false),
    ];
    for (q, finds) in queries {
        for limit in [1, 5] {
            match search_no_panic(&s.index, q, &opts(limit)) {
                Ok(hits) => {
                    assert_well_formed(&s, q, limit, &hits);
                    if finds {
                        assert!(!hits.is_empty(), "{q:?} has a catalog word");
                    }
                }
                Err(Error::EmptyQuery) if !finds => {}
                Err(e) => panic!("{q:?}: unexpected error {e}"),
            }
        }
    }
}

#[test]
fn control_characters_never_panic() {
    let s = fixture();
    let queries = [
        "list\u{0}issues",
        "\u{0}merge pull request\u{0}",
        "merge\tpull\nrequest\r",
        "\u{1b}[31mdelete repository\u{1b}[0m",
        "issue\u{7}\u{8}\u{8}\u{8}",
        "\u{85}issue\u{2028}comment\u{2029}",
        "issue\u{7f}",
        "issue\u{9b}31m",
    ];
    for q in queries {
        let hits = search_no_panic(&s.index, q, &opts(5))
            .unwrap_or_else(|e| panic!("{q:?} has words, got {e}"));
        assert!(!hits.is_empty(), "{q:?} has words");
        assert_well_formed(&s, q, 5, &hits);
    }
}

/// Values (numbers, `owner/repo`, `#12`, versions, URLs) are not words: the query is empty or it
/// finds something, never a panic or another error.
#[test]
fn value_only_queries_are_empty_or_answered() {
    let s = fixture();
    let queries = [
        "42",
        "1 2 3",
        "0",
        "-1",
        "+1",
        "3.14",
        "1e9",
        "99999999999999999999999999999999",
        "owner/repo",
        "acme/webshop",
        "acme/webshop#12",
        "#12",
        "#",
        "v1.2.3",
        "v1",
        "https://gitea.example.com/acme/webshop/pulls/7",
        "../../etc/passwd",
        "C:\\Windows\\System32",
        "2026-11-29",
        "12:30",
        "deadbeefcafebabe",
        "0x1F",
    ];
    for q in queries {
        match search_no_panic(&s.index, q, &opts(5)) {
            Ok(hits) => assert_well_formed(&s, q, 5, &hits),
            Err(Error::EmptyQuery) => {}
            Err(e) => panic!("{q:?}: unexpected error {e}"),
        }
    }
    // Values next to words are ignored; the words still count.
    assert_eq!(
        top(
            &s.index,
            &s.catalog,
            "merge pull request #12 in acme/webshop",
            1
        ),
        ["repoMergePullRequest"]
    );
}

/// A word that matches nothing finds nothing: no term matched is not a match-all, and not an
/// "empty query" error either (the user did type words).
#[test]
fn unknown_words_find_nothing() {
    let s = fixture();
    for q in ["zzqqxx", "zzqqxx qqxxzz", "xqzjvw", "zzqqxx 42 owner/repo"] {
        match search_no_panic(&s.index, q, &opts(46)) {
            Ok(hits) => assert!(
                hits.is_empty(),
                "{q:?} matches nothing yet found {:?}",
                hits.iter()
                    .map(|h| s.catalog[h.action].operation_id.to_string())
                    .collect::<Vec<_>>()
            ),
            Err(e) => panic!("{q:?}: expected no hits, got the error {e}"),
        }
    }
    if cfg!(shared_spec) {
        let full = full();
        let hits = full
            .index
            .search("zzqqxx", &opts(20))
            .expect("an unknown word is not an error");
        assert!(hits.is_empty(), "zzqqxx found {} actions", hits.len());
    }
    // Next to a real word, the unknown word adds nothing and removes nothing.
    let with = top(&s.index, &s.catalog, "zzqqxx merge pull request", 3);
    assert_eq!(with, top(&s.index, &s.catalog, "merge pull request", 3));
}

#[test]
fn many_words_and_repeated_words_are_fine() {
    let s = fixture();
    let many: String = (0..100).map(|i| format!("w{i}x ")).collect();
    let many = &many[..MAX_QUERY_CHARS.min(many.len())];
    match search_no_panic(&s.index, many, &opts(5)) {
        Ok(hits) => assert_well_formed(&s, many, 5, &hits),
        Err(Error::EmptyQuery) => {}
        Err(e) => panic!("unexpected error {e}"),
    }
    let repeated = "issue ".repeat(80);
    let hits = s.index.search(&repeated, &opts(5)).expect("searchable");
    assert_well_formed(&s, &repeated, 5, &hits);
    assert!(!hits.is_empty());
    let one_long_word = "a".repeat(MAX_QUERY_CHARS);
    assert!(matches!(
        search_no_panic(&s.index, &one_long_word, &opts(5)),
        Ok(_) | Err(Error::EmptyQuery)
    ));
}

// ------------------------------------------------------------------------------------------------
// Exact names and operationIds
// ------------------------------------------------------------------------------------------------

fn assert_first(s: &Searchable, q: &str, o: &SearchOptions, expected: &Action) {
    let hits = s
        .index
        .search(q, o)
        .unwrap_or_else(|e| panic!("{q:?}: {e}"));
    let first = hits
        .first()
        .unwrap_or_else(|| panic!("{q:?} found nothing"));
    let got = &s.catalog[first.action];
    assert_eq!(
        got.operation_id, expected.operation_id,
        "{q:?} must rank {} first, got {} ({:?})",
        expected.name, got.name, o
    );
    assert_eq!(first.score, EXACT_MATCH_SCORE, "{q:?}");
    assert_eq!(
        hits.iter().filter(|h| h.action == first.action).count(),
        1,
        "{q:?}: the exact action is listed once"
    );
}

/// Checks that every action is found first by its name, its operationId and their upper-case
/// forms, skipping operationIds that differ from another only in case (see
/// `operation_ids_differing_only_in_case_are_told_apart`).
fn check_exact_lookups(s: &Searchable) {
    let mut lower_ids: std::collections::HashMap<String, usize> = Default::default();
    for a in s.catalog.actions() {
        *lower_ids
            .entry(a.operation_id.as_str().to_ascii_lowercase())
            .or_default() += 1;
    }
    for a in s.catalog.actions() {
        let id = a.operation_id.as_str();
        let unique_ignoring_case = lower_ids[&id.to_ascii_lowercase()] == 1;
        for limit in [1, 5] {
            let o = opts(limit);
            assert_first(s, a.name.as_str(), &o, a);
            assert_first(s, &a.name.as_str().to_ascii_uppercase(), &o, a);
            assert_first(s, &format!("  {}\t", a.name), &o, a);
            if unique_ignoring_case {
                assert_first(s, id, &o, a);
                assert_first(s, &id.to_ascii_uppercase(), &o, a);
                assert_first(s, &id.to_ascii_lowercase(), &o, a);
            }
        }
    }
}

#[test]
fn exact_name_or_operation_id_ranks_that_action_first_fixture() {
    let s = fixture();
    check_exact_lookups(&s);
    let merge = op(&s, "repoMergePullRequest");
    assert_eq!(merge.name.as_str(), "gitea_pull_merge");
    for q in [
        "gitea_pull_merge",
        "repoMergePullRequest",
        "REPOMERGEPULLREQUEST",
        "\"repoMergePullRequest\"",
        "`gitea_pull_merge`",
    ] {
        assert_eq!(
            top(&s.index, &s.catalog, q, 1),
            ["repoMergePullRequest"],
            "{q:?}"
        );
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn exact_name_or_operation_id_ranks_that_action_first_full_spec() {
    let s = full();
    check_exact_lookups(s);
    for q in [
        "gitea_pull_merge",
        "repoMergePullRequest",
        "REPOMERGEPULLREQUEST",
    ] {
        assert_eq!(
            top(&s.index, &s.catalog, q, 5)[0],
            "repoMergePullRequest",
            "{q:?}"
        );
    }
}

/// The domain and read-only filters apply to the exact match too: inside the filter it is first,
/// outside it it is absent.
#[test]
fn exact_match_respects_filters() {
    let s = fixture();
    let merge = op(&s, "repoMergePullRequest");
    assert_eq!(merge.domain, Domain::Pull);
    assert!(!merge.annotations.read_only);
    let find = |q: &str, domain: Option<Domain>, read_only: Option<bool>| {
        let o = filtered(20, domain, read_only);
        (hit_actions(&s, q, &o), o)
    };
    for q in [
        "gitea_pull_merge",
        "repoMergePullRequest",
        "REPOMERGEPULLREQUEST",
    ] {
        let (_, o) = find(q, Some(Domain::Pull), None);
        assert_first(&s, q, &o, merge);
        let (_, o) = find(q, None, Some(false));
        assert_first(&s, q, &o, merge);
        let (_, o) = find(q, Some(Domain::Pull), Some(false));
        assert_first(&s, q, &o, merge);

        for (domain, read_only) in [
            (Some(Domain::Issue), None),
            (Some(Domain::Repo), None),
            (None, Some(true)),
            (Some(Domain::Pull), Some(true)),
        ] {
            match s.index.search(q, &filtered(20, domain, read_only)) {
                Ok(hits) => {
                    for h in &hits {
                        let a = &s.catalog[h.action];
                        assert_ne!(
                            a.operation_id, merge.operation_id,
                            "{q:?} {domain:?} {read_only:?}"
                        );
                        assert!(h.score < EXACT_MATCH_SCORE);
                        if let Some(d) = domain {
                            assert_eq!(a.domain, d, "{q:?}");
                        }
                        if let Some(r) = read_only {
                            assert_eq!(a.annotations.read_only, r, "{q:?}");
                        }
                    }
                }
                // The bare operationId has no searchable words once its action is filtered out.
                Err(Error::EmptyQuery) => {}
                Err(e) => panic!("{q:?}: {e}"),
            }
        }
    }
}

/// An agent that has read a schema names an action as the document spells it, often inside a
/// sentence: the action is found first.
#[test]
fn names_spelled_as_the_document_spells_them_inside_a_sentence() {
    let s = fixture();
    let comment = op(&s, "issueCreateComment");
    let merge = op(&s, "repoMergePullRequest");
    for (q, expected) in [
        ("what does issueCreateComment need?", comment),
        ("the arguments of `gitea_pull_merge`", merge),
        ("gitea_pull_merge's arguments", merge),
        ("is repoMergePullRequest idempotent", merge),
    ] {
        assert_first(&s, q, &opts(5), expected);
    }
    // Inside a sentence only an identifier as typed counts: a lower-cased operationId is words.
    let q = "what does issuecreatecomment need to post a comment";
    let hits = s.index.search(q, &opts(5)).expect("the need has words");
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.score < EXACT_MATCH_SCORE), "{hits:?}");
}

/// `userGetOAuth2Application` (one application) and `userGetOauth2Application` (the list) differ
/// only in case; typed exactly, each must rank its own action first.
///
/// Known bug: the exact lookup lower-cases operationIds into one map, so the second entry
/// overwrites the first and the query `userGetOAuth2Application` answers with
/// `userGetOauth2Application` only (on the fixture and on the full Gitea document).
#[test]
fn operation_ids_differing_only_in_case_are_told_apart() {
    let s = fixture();
    for id in ["userGetOAuth2Application", "userGetOauth2Application"] {
        assert_eq!(top(&s.index, &s.catalog, id, 5)[0], id, "{id:?}");
    }
    if cfg!(shared_spec) {
        let s = full();
        for id in ["userGetOAuth2Application", "userGetOauth2Application"] {
            assert_eq!(
                top(&s.index, &s.catalog, id, 5)[0],
                id,
                "{id:?} (full spec)"
            );
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Verb intent (full Gitea document)
// ------------------------------------------------------------------------------------------------

fn first_action<'a>(s: &'a Searchable, q: &str) -> &'a Action {
    let hits = hit_actions(s, q, &opts(5));
    hits.first()
        .copied()
        .unwrap_or_else(|| panic!("{q:?} found nothing"))
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn delete_query_ranks_a_delete_first() {
    let s = full();
    for q in [
        "delete a branch",
        "remove the branch",
        "delete branch feature/login",
    ] {
        let a = first_action(s, q);
        assert_eq!(
            a.method,
            HttpMethod::Delete,
            "{q:?} ranked {} first",
            a.name
        );
        assert_eq!(a.operation_id.as_str(), "repoDeleteBranch", "{q:?}");
        // The top three: below them the branch's other verbs (rename, update, create) are
        // look-alikes ranked by text, a few hundredths apart.
        for b in hit_actions(s, q, &opts(3)) {
            assert_ne!(
                b.method,
                HttpMethod::Post,
                "{q:?}: a create ({}) in the top 3",
                b.name
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn create_query_ranks_a_post_first() {
    let s = full();
    for q in ["create a branch", "make a new branch"] {
        let a = first_action(s, q);
        assert_eq!(a.method, HttpMethod::Post, "{q:?} ranked {} first", a.name);
        assert_eq!(a.operation_id.as_str(), "repoCreateBranch", "{q:?}");
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn collection_queries_rank_a_list_first() {
    let s = full();
    for q in ["list branches", "all branches", "which branches exist"] {
        let a = first_action(s, q);
        assert_eq!(a.method, HttpMethod::Get, "{q:?} ranked {} first", a.name);
        assert!(
            a.returns_list,
            "{q:?} ranked {} first, which is not a list",
            a.name
        );
        assert_eq!(a.operation_id.as_str(), "repoListBranches", "{q:?}");
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn item_query_ranks_a_get_first() {
    let s = full();
    let a = first_action(s, "show the branch main");
    assert_eq!(a.method, HttpMethod::Get, "ranked {} first", a.name);
    // `main` is a value here, but a word to the learned ranking: the labelled needs use it
    // mostly to protect the main branch, so the protection rule may come first; the branch
    // itself must be right behind.
    assert_in_top(s, "show the branch main", 2, "repoGetBranch");
}

/// The features that counted (a non-zero linear part) for `operation_id` among the hits for `q`.
fn counted(s: &Searchable, q: &str, operation_id: &str) -> Vec<String> {
    parts(s, q, operation_id)
        .into_iter()
        .map(|(f, _)| f)
        .collect()
}

/// Each feature that counted for `operation_id` among the hits for `q`, with its part.
fn parts(s: &Searchable, q: &str, operation_id: &str) -> Vec<(String, f32)> {
    let hits = s
        .index
        .explain(q, &opts(20))
        .unwrap_or_else(|e| panic!("explain {q:?} failed: {e}"));
    let (_, parts) = hits
        .iter()
        .find(|(h, _)| s.catalog[h.action].operation_id.as_str() == operation_id)
        .unwrap_or_else(|| panic!("{q:?}: {operation_id} is not among the hits"));
    parts.iter().map(|c| (c.feature.clone(), c.part)).collect()
}

/// The need's object is read as a phrase: its head noun, not any plural word elsewhere, says one
/// or many, and the phrase names the action's resource (`docs/search.md`, round 10).
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn the_object_head_is_read_as_one_or_many() {
    let s = full();
    let counted = |q: &str, operation_id: &str| counted(s, q, operation_id);
    let list = "issueGetCommentReactions";
    let q = "show the reactions on comment 5";
    let parts = counted(q, list);
    assert!(
        parts.iter().any(|f| f == "head.plural.list"),
        "{q:?}: {parts:?}"
    );
    // "users" is plural, the head is not.
    let q = "show the reaction of the users on comment 5";
    let parts = counted(q, list);
    assert!(
        parts.iter().any(|f| f == "head.singular.list"),
        "{q:?}: {parts:?}"
    );
    assert!(
        !parts.iter().any(|f| f == "head.plural.list"),
        "{q:?}: {parts:?}"
    );
    let q = "delete the issue comment from acme/web";
    let parts = counted(q, "issueDeleteComment");
    assert!(
        parts.iter().any(|f| f == "object.resource"),
        "{q:?}: {parts:?}"
    );
}

/// `find --explain` ranks as the search does (same hits, same scores: the search builds no
/// features it does not show) and accounts for every hit's score: its contributions (features,
/// word weights, the trees' part) add up to it, for the hits the trees re-ranked and below.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn explain_ranks_as_search_and_its_parts_add_up() {
    let s = full();
    // How many candidates the committed model's trees re-rank: the hits below share one shift.
    let model: serde_json::Value = serde_json::from_slice(
        &std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/index/model.json"))
            .expect("the committed model is readable"),
    )
    .expect("the committed model is JSON");
    let top = model["boost_top"]
        .as_u64()
        .expect("the model says how many hits its trees re-rank") as usize;
    assert!(
        (1..29).contains(&top),
        "the trees re-rank {top}: the test needs hits below them"
    );
    for q in [
        "merge pull request 12 in acme/webshop",
        "list the notes on a work item",
        "who starred my repo",
        "kanban boards attached to a repo, like GitHub Projects classic",
    ] {
        let hits = s
            .index
            .explain(q, &opts(30))
            .unwrap_or_else(|e| panic!("explain {q:?} failed: {e}"));
        let searched = s
            .index
            .search(q, &opts(30))
            .unwrap_or_else(|e| panic!("search {q:?} failed: {e}"));
        let explained: Vec<_> = hits.iter().map(|(h, _)| *h).collect();
        assert_eq!(explained, searched, "{q:?}");
        assert_eq!(hits.len(), 30, "{q:?}");
        for (h, parts) in &hits {
            assert!(
                parts
                    .iter()
                    .any(|c| c.feature != "words" && c.feature != "trees"),
                "{q:?}: no feature counted for {}: {parts:?}",
                s.catalog[h.action].operation_id.as_str()
            );
            let sum: f32 = parts.iter().map(|c| c.part).sum();
            let tolerance = 1e-4 * (1.0 + h.score.abs());
            assert!(
                (sum - h.score).abs() <= tolerance,
                "{q:?}: {} scored {} but its parts add up to {sum}: {parts:?}",
                s.catalog[h.action].operation_id.as_str(),
                h.score
            );
        }
        // Below the trees' top every hit is shifted down by one amount: the same "trees" part
        // for each only if explain's linear part is the one the ranking summed.
        let shifts: Vec<f32> = hits[top..]
            .iter()
            .map(|(_, parts)| {
                parts
                    .iter()
                    .find(|c| c.feature == "trees")
                    .map_or(0.0, |c| c.part)
            })
            .collect();
        assert!(
            shifts.iter().all(|&t| (t - shifts[0]).abs() <= 1e-3),
            "{q:?}: the hits below the re-ranked top carry different shifts: {shifts:?}"
        );
    }
}

/// A query phrased as a read never has a writing action on top.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn read_phrased_queries_rank_a_read_first() {
    let s = full();
    for q in [
        "show pull requests",
        "list labels",
        "list pull requests",
        "view labels",
        "show me the releases",
        "display the milestones",
        "see the webhooks of a repository",
        "list branches",
    ] {
        let hits = hit_actions(s, q, &opts(5));
        let first = hits
            .first()
            .unwrap_or_else(|| panic!("{q:?} found nothing"));
        assert!(
            first.annotations.read_only,
            "{q:?} ranked the writing action {} first: {:?}",
            first.name,
            describe(&hits)
        );
        assert!(
            !hits.iter().take(3).any(|a| a.annotations.destructive),
            "{q:?}: a destructive action in the top 3: {:?}",
            describe(&hits)
        );
    }
}

/// A destructive action never surfaces from a typo alone.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn destructive_actions_never_come_from_a_typo_alone() {
    let s = full();
    // Words an unsure correction may turn into a delete verb.
    let typos = [
        "dleet", "dorp", "dlete", "delte", "rmove", "wpie", "prge", "dleete", "erse",
    ];
    let mut guarded = Vec::new();
    for q in typos {
        let analysis = s.index.analyse(q);
        let unsure_delete = analysis.intent_from_typo && analysis.intents.contains(&Intent::Delete);
        let hits = match s.index.search(q, &opts(5)) {
            Ok(h) => h,
            Err(Error::EmptyQuery) => Vec::new(),
            Err(e) => panic!("{q:?}: {e}"),
        };
        let actions: Vec<&Action> = hits.iter().map(|h| &s.catalog[h.action]).collect();
        if unsure_delete || q == "dleet" {
            assert!(
                !actions.iter().any(|a| a.annotations.destructive),
                "{q:?} (intent from a typo: {unsure_delete}) surfaced destructive actions: {:?}",
                describe(&actions)
            );
        }
        if unsure_delete {
            guarded.push(q);
        }
    }
    assert!(
        !guarded.is_empty(),
        "none of {typos:?} is an unsure correction to a delete verb any more; add one that is, \
         so the guard stays tested"
    );
    // A real delete verb does surface the destructive action.
    let top3 = top(&s.index, &s.catalog, "delete webhook of a repository", 3);
    assert!(top3.iter().any(|id| id == "repoDeleteHook"), "{top3:?}");
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn domain_filter_is_honoured() {
    let s = full();
    let cases = [
        ("delete webhook of a repository", Domain::Hook),
        ("delete webhook of a repository", Domain::Repo),
        ("list labels", Domain::Issue),
        ("list labels", Domain::Org),
        ("create a branch", Domain::Repo),
        ("merge a pull request", Domain::Pull),
        ("merge a pull request", Domain::Admin),
        ("list issues", Domain::Notification),
        ("retry the pipeline", Domain::Actions),
    ];
    for (q, d) in cases {
        let o = filtered(20, Some(d), None);
        let hits = hit_actions(s, q, &o);
        for a in &hits {
            assert_eq!(a.domain, d, "{q:?} in {d}: {} is in {}", a.name, a.domain);
        }
    }
    // Inside the right domain, the filter keeps the best answer.
    let o = filtered(3, Some(Domain::Hook), None);
    let hooks = hit_actions(s, "delete webhook of a repository", &o);
    assert!(
        hooks
            .iter()
            .any(|a| a.operation_id.as_str() == "repoDeleteHook"),
        "{:?}",
        describe(&hooks)
    );
    let o = filtered(20, Some(Domain::Org), None);
    assert!(
        hit_actions(s, "list labels", &o).len() > 1,
        "the org domain has label actions"
    );
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn read_only_filter_is_honoured() {
    let s = full();
    for q in [
        "delete webhook of a repository",
        "delete a branch",
        "create a branch",
        "merge a pull request",
        "list labels",
        "show pull requests",
    ] {
        for read_only in [true, false] {
            let o = filtered(20, None, Some(read_only));
            let hits = hit_actions(s, q, &o);
            for a in &hits {
                assert_eq!(
                    a.annotations.read_only, read_only,
                    "{q:?} read_only={read_only}: {}",
                    a.name
                );
            }
            if read_only {
                assert!(!hits.iter().any(|a| a.annotations.destructive), "{q:?}");
            }
        }
    }
    // Both filters together.
    let o = filtered(20, Some(Domain::Hook), Some(true));
    let hits = hit_actions(s, "delete webhook of a repository", &o);
    assert!(!hits.is_empty(), "read-only hook actions exist");
    for a in &hits {
        assert!(
            a.annotations.read_only && a.domain == Domain::Hook,
            "{}",
            a.name
        );
    }
}

// ------------------------------------------------------------------------------------------------
// Vocabulary and typos
// ------------------------------------------------------------------------------------------------

fn assert_in_top(s: &Searchable, q: &str, n: usize, expected: &str) {
    let got = top(&s.index, &s.catalog, q, n);
    assert!(
        got.iter().any(|id| id == expected),
        "{q:?}: {expected} not in the top {n}: {got:?}"
    );
}

#[test]
fn vocabulary_maps_user_words_fixture() {
    let s = fixture();
    assert_in_top(&s, "open an MR", 3, "repoCreatePullRequest");
    assert_in_top(&s, "raise a ticket", 3, "issueCreateIssue");
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn vocabulary_maps_user_words_full_spec() {
    let s = full();
    assert_in_top(s, "open an MR", 3, "repoCreatePullRequest");
    assert_in_top(s, "raise a ticket", 3, "issueCreateIssue");
    assert_in_top(s, "retry the pipeline", 3, "rerunWorkflowRun");
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn typos_are_corrected() {
    let s = full();
    assert_in_top(s, "lsit brnaches", 3, "repoListBranches");
}

// ------------------------------------------------------------------------------------------------
// Limits and ordering
// ------------------------------------------------------------------------------------------------

fn check_limits(s: &Searchable, queries: &[&str]) {
    for q in queries {
        let all = s.index.search(q, &opts(20)).expect("searchable");
        assert_well_formed(s, q, 20, &all);
        for limit in 1..=20 {
            let hits = s.index.search(q, &opts(limit)).expect("searchable");
            assert_well_formed(s, q, limit, &hits);
            assert_eq!(hits.len(), limit.min(all.len()), "{q:?} with limit {limit}");
            assert_eq!(
                hits[..],
                all[..hits.len()],
                "{q:?}: limit {limit} is a prefix"
            );
        }
    }
}

#[test]
fn limit_is_honoured_and_results_are_ordered_fixture() {
    let s = fixture();
    check_limits(
        &s,
        &[
            "repository",
            "pull request",
            "issue",
            "gitea_pull_merge",
            "list",
        ],
    );
    let many = s.index.search("repository", &opts(20)).expect("searchable");
    assert!(
        many.len() >= 10,
        "the fixture's repository actions fill a page"
    );
    // Zero is not "no limit".
    let zero = s.index.search("repository", &opts(0)).expect("searchable");
    assert!(zero.len() <= 1, "limit 0 returned {} hits", zero.len());
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn limit_is_honoured_and_results_are_ordered_full_spec() {
    let s = full();
    check_limits(
        s,
        &[
            "repository",
            "delete a branch",
            "list labels",
            "open an MR",
            "lsit brnaches",
            "repoMergePullRequest",
        ],
    );
    for q in ["repository", "issue", "list"] {
        assert_eq!(
            s.index.search(q, &opts(20)).expect("searchable").len(),
            20,
            "{q:?}"
        );
    }
}

/// The same query gives the same answer on two indexes of the same catalog.
#[test]
fn ranking_is_deterministic() {
    let a = fixture();
    let b = fixture();
    for q in ["pull request", "issue", "repository", "open an MR", "list"] {
        assert_eq!(
            a.index.search(q, &opts(20)).expect("searchable"),
            b.index.search(q, &opts(20)).expect("searchable"),
            "{q:?}"
        );
    }
}

/// Query analysis (normalisation, typo correction, cues, negation) on arbitrary text: it never
/// panics, answers well-formed hits, and fails only with the documented errors, each for its
/// reason (too many characters, or no word left to search for).
mod analysis_properties {
    use proptest::prelude::*;

    use super::*;

    fn cases() -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(128)
    }

    /// Words the analysis has rules for, mixed with noise, so the interesting paths are reached.
    fn query() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            Just("not".to_owned()),
            Just("don't".to_owned()),
            Just("delete".to_owned()),
            Just("PRs".to_owned()),
            Just("isue".to_owned()),
            Just("repos/{owner}/{repo}".to_owned()),
            Just("gitea_repo_get".to_owned()),
            Just("\"".to_owned()),
            Just("title:x".to_owned()),
            "[a-z]{1,12}",
            "\\PC{1,8}",
            any::<String>(),
        ];
        prop::collection::vec(word, 0..12).prop_map(|w| w.join(" "))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

        #[test]
        fn any_query_is_answered_or_refused_for_its_documented_reason(
            q in prop_oneof![query(), any::<String>()],
            limit in 0usize..30,
        ) {
            static FIXTURE: OnceLock<Searchable> = OnceLock::new();
            let s = FIXTURE.get_or_init(fixture);
            match search_no_panic(&s.index, &q, &opts(limit)) {
                Ok(hits) => assert_well_formed(s, &q, limit, &hits),
                Err(Error::QueryTooLong { len }) => {
                    prop_assert_eq!(len, q.chars().count());
                    prop_assert!(len > MAX_QUERY_CHARS);
                }
                // A query holding a word of the API is never empty, whatever surrounds it.
                Err(Error::EmptyQuery) => prop_assert!(
                    !q.split_whitespace().any(|t| t == "delete" || t == "gitea_repo_get"),
                    "{:?} called empty", q
                ),
                Err(e) => prop_assert!(false, "{:?}: unexpected error {}", q, e),
            }
        }
    }
}

/// A number names what it identifies: "comment 5512" is the comment's identifier, so an action
/// that also needs an attachment's has one left unfilled.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn a_number_fills_the_identifier_of_the_noun_before_it() {
    let s = full();
    let q = "delete comment 5512";
    let parts = |operation_id: &str| counted(s, q, operation_id);
    let comment = parts("issueDeleteComment");
    assert!(comment.iter().any(|f| f == "ids.named"), "{comment:?}");
    assert!(!comment.iter().any(|f| f == "ids.unfilled"), "{comment:?}");
    let attachment = parts("issueDeleteIssueCommentAttachment");
    assert!(
        attachment.iter().any(|f| f == "ids.unfilled"),
        "{attachment:?}"
    );
    assert_eq!(
        first_action(s, q).operation_id.as_str(),
        "issueDeleteComment",
        "{q:?}"
    );
}

/// `acme/web#19` is how the forges write issue (or pull request) 19 of acme/web: the number
/// fills the issue's identifier, so the issue's labels rank over the repository's.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn an_issue_reference_numbers_an_issue() {
    let s = full();
    let q = "labels on acme/web#19";
    let issue = counted(s, q, "issueGetLabels");
    assert!(issue.iter().any(|f| f == "ids.named"), "{issue:?}");
    assert_eq!(
        first_action(s, q).operation_id.as_str(),
        "issueGetLabels",
        "{q:?}"
    );
}

/// A name given after `called` is a value: its words do not pick the action ("platform-team"
/// names an organisation, it does not ask for teams).
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn a_name_after_called_does_not_pick_the_action() {
    let s = full();
    let q = "make an org called platform-team with private visibility";
    assert_eq!(
        first_action(s, q).operation_id.as_str(),
        "orgCreate",
        "{q:?}"
    );
    let analysis = s.index.analyse(q);
    assert!(
        !analysis.terms.iter().any(|t| t.word == "team"),
        "{q:?}: {:?}",
        analysis.terms
    );
}

/// What an action answers is searched: "blank issues" are a field of the issue config the
/// repository's issue config answer holds (`IssueConfig.blank_issues_enabled`), which no other
/// text of the operation says.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn a_field_of_the_answer_finds_the_action() {
    let s = full();
    let q = "does this repo allow blank issues";
    let config = counted(s, q, "repoGetIssueConfig");
    assert!(
        config.iter().any(|f| f.starts_with("bm25.returns.")),
        "{config:?}"
    );
    assert_eq!(
        first_action(s, q).operation_id.as_str(),
        "repoGetIssueConfig",
        "{q:?}"
    );
}

/// A need that undoes something finds the action that undoes it, not the look-alike that does
/// it: "revert the dismissal" is an undismissal, while "dismiss" alone stays a dismissal.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn undoing_finds_the_action_that_undoes() {
    let s = full();
    let q = "revert the dismissal of review 3 on pull request 7";
    let undismiss = counted(s, q, "repoUnDismissPullReview");
    assert!(
        undismiss.iter().any(|f| f == "undo.undoes"),
        "{undismiss:?}"
    );
    let dismiss = counted(s, q, "repoDismissPullReview");
    assert!(dismiss.iter().any(|f| f == "undo.does"), "{dismiss:?}");
    assert_eq!(
        first_action(s, q).operation_id.as_str(),
        "repoUnDismissPullReview",
        "{q:?}"
    );
    let q = "dismiss review 3 on pull request 7";
    assert_eq!(
        first_action(s, q).operation_id.as_str(),
        "repoDismissPullReview",
        "{q:?}"
    );
}

/// An `owner/repo` in the need names the repository of any action whose path takes
/// `{owner}/{repo}`, not only of the repository scope's: starring is the authenticated user's
/// (`/user/starred/{owner}/{repo}`).
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn an_owner_repo_value_names_the_repository_in_any_scope() {
    let s = full();
    let named = |operation_id: &str| {
        counted(s, "have I starred acme/web", operation_id)
            .iter()
            .any(|f| f == "value.slash.repo")
    };
    assert!(named("userCurrentCheckStarring"));
    assert!(named("userCurrentPutStar"));
    assert!(!named("userCurrentListStarred"), "takes no repository");
}

/// The part `feature` adds to `operation_id`'s score for `q` (zero when it is not counted).
fn part(s: &Searchable, q: &str, operation_id: &str, feature: &str) -> f32 {
    parts(s, q, operation_id)
        .into_iter()
        .find(|(f, _)| f == feature)
        .map_or(0.0, |(_, p)| p)
}

/// A yes/no question is answered by a check (a GET whose only success is `204`): `ask.check`
/// counts for it, in its favour, and it ranks first where only the check answers. Whether a pull
/// request was merged the read answers too (its `merged` field; the training set labels both
/// for "did MR 8 land?"), so there the two come first in either order: the fit is given no
/// reason to order them, and asking for one order made the test turn on a near tie. A request
/// for the thing ranks the read above the check.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn a_yes_no_question_is_answered_by_a_check() {
    let s = full();
    for (q, check) in [
        (
            "has pull request 12 in acme/web been merged",
            "repoPullRequestIsMerged",
        ),
        (
            "have I starred the repo acme/web",
            "userCurrentCheckStarring",
        ),
        (
            "is alice a collaborator on acme/web",
            "repoCheckCollaborator",
        ),
        (
            "has org acme blocked user eve",
            "organizationCheckUserBlock",
        ),
        ("have I blocked user eve", "userCheckUserBlock"),
    ] {
        let ask = part(s, q, check, "ask.check");
        assert!(ask > 0.0, "{q:?}: ask.check adds {ask}");
        assert_eq!(first_action(s, q).operation_id.as_str(), check, "{q:?}");
    }
    let q = "is pull request 12 in acme/web merged";
    assert!(part(s, q, "repoPullRequestIsMerged", "ask.check") > 0.0);
    let mut first_two = top(&s.index, &s.catalog, q, 2);
    first_two.sort();
    assert_eq!(
        first_two,
        ["repoGetPullRequest", "repoPullRequestIsMerged"],
        "{q:?}"
    );
    // Asked for, not asked about: the read ranks above the check.
    let q = "get pull request 12 in acme/web";
    let hits: Vec<&str> = hit_actions(s, q, &opts(20))
        .iter()
        .map(|a| a.operation_id.as_str())
        .collect();
    let at = |id: &str| hits.iter().position(|h| *h == id);
    let read = at("repoGetPullRequest").unwrap_or_else(|| panic!("{q:?}: {hits:?}"));
    assert!(
        at("repoPullRequestIsMerged").is_none_or(|check| read < check),
        "{q:?}: {hits:?}"
    );
}

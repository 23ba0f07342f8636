//! The search over every upstream document: the newest Gitea (whose operations the labelled
//! needs cover), the older Gitea and Forgejo (whose operations the needs cover in part, matched
//! by operationId). General needs must be found in each, with and without the committed
//! examples, and operations nobody wrote a need for must still be found by their own text.
//!
//! The documents live beside the clone (`$GITEA_SPEC_DIR`, default `../shared/spec`): without
//! them these tests count as ignored (see `common.rs`).

use aegis_gitea_mcp::catalog::Catalog;
use aegis_gitea_mcp::search::{EvalRow, Examples, Model, SearchIndex, SearchOptions, ui_labels};
use aegis_gitea_mcp::spec::Spec;

const DOCUMENTS: [&str; 3] = [
    "gitea-swagger.newest.v1.json",
    "gitea-swagger.v1.json",
    "forgejo-swagger.v1.json",
];

/// Needs worded the general way, and the operation (present in all three documents) that
/// answers each.
const GENERAL: [(&str, &str); 12] = [
    ("open a pull request", "repoCreatePullRequest"),
    ("merge a pull request", "repoMergePullRequest"),
    ("delete a branch", "repoDeleteBranch"),
    ("list the branches of a repository", "repoListBranches"),
    ("list issues of a repository", "issueListIssues"),
    ("comment on an issue", "issueCreateComment"),
    ("create a release", "repoCreateRelease"),
    ("list the members of an organization", "orgListMembers"),
    ("star a repository", "userCurrentPutStar"),
    ("my notifications", "notifyGetList"),
    ("list my repositories", "userCurrentListRepos"),
    ("create a user as site admin", "adminCreateUser"),
];

fn catalog(name: &str) -> Catalog {
    let bytes = crate::common::spec_bytes(name);
    let spec = Spec::parse(&bytes).unwrap_or_else(|e| panic!("{name} parses: {e}"));
    Catalog::build(&spec).unwrap_or_else(|e| panic!("{name} builds: {e}"))
}

fn top(index: &SearchIndex, catalog: &Catalog, q: &str, n: usize) -> Vec<String> {
    let o = SearchOptions {
        limit: n,
        ..SearchOptions::default()
    };
    index
        .search(q, &o)
        .unwrap_or_else(|e| panic!("{q:?}: {e}"))
        .iter()
        .map(|h| catalog[h.action].operation_id.to_string())
        .collect()
}

fn check_general(index: &SearchIndex, catalog: &Catalog, what: &str) {
    let mut first = 0;
    for (q, want) in GENERAL {
        let got = top(index, catalog, q, 5);
        assert!(
            got.iter().any(|g| g == want),
            "{what}: {q:?} must find {want} in the top 5, got {got:?}"
        );
        first += usize::from(got[0] == want);
    }
    assert!(
        first * 4 >= GENERAL.len() * 3,
        "{what}: only {first} of {} general needs ranked first",
        GENERAL.len()
    );
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn general_needs_are_found_in_every_document() {
    for name in DOCUMENTS {
        let c = catalog(name);
        let index = SearchIndex::build(&c).expect("the index builds");
        check_general(&index, &c, name);
    }
}

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn without_examples_actions_rank_by_their_text_and_shape() {
    for name in DOCUMENTS {
        let c = catalog(name);
        let index = SearchIndex::with(&c, &Examples::none(), Model::committed().unwrap());
        check_general(&index, &c, &format!("{name} without examples"));
    }
}

/// Forgejo's operations that no labelled need names are found by words of their own summary.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn operations_without_examples_are_found_by_their_text() {
    let c = catalog("forgejo-swagger.v1.json");
    let examples = Examples::committed().unwrap();
    let index = SearchIndex::build(&c).expect("the index builds");
    let (mut n, mut found) = (0, 0);
    for a in c.actions() {
        if !examples.of(a.operation_id.as_str()).is_empty() || a.summary.split(' ').count() < 3 {
            continue;
        }
        n += 1;
        let got = top(&index, &c, &a.summary, 5);
        found += usize::from(got.iter().any(|g| g == a.operation_id.as_str()));
    }
    assert!(n >= 50, "Forgejo has {n} operations without examples");
    assert!(
        found * 10 >= n * 8,
        "only {found} of {n} operations without examples are found by their summary"
    );
}

/// Gitea's web UI's labels name operations of the newest document (a renamed operationId
/// would leave a label pointing at nothing), and each is an example of those operations, in
/// the committed examples as in examples drawn from labelled rows.
#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn the_web_ui_labels_are_examples_of_operations_that_exist() {
    let c = catalog("gitea-swagger.newest.v1.json");
    let ids: std::collections::HashSet<&str> = c
        .actions()
        .iter()
        .map(|a| a.operation_id.as_str())
        .collect();
    let committed = Examples::committed().unwrap();
    let drawn = Examples::from_rows(std::iter::empty::<&EvalRow>());
    assert!(ui_labels().len() >= 50, "{} labels", ui_labels().len());
    for (label, operations) in ui_labels() {
        for op in *operations {
            assert!(
                ids.contains(op),
                "{label:?} names {op}, not in the document"
            );
            for (examples, which) in [(&committed, "committed"), (&drawn, "drawn")] {
                assert!(
                    examples.of(op).iter().any(|q| q == label),
                    "{label:?} is not among the {which} examples of {op}"
                );
            }
        }
    }
}

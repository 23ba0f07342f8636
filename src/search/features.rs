//! The features of one (query, action) pair, and their names.
//!
//! Stage one (cheap, computed for every action a query term matches): BM25 per field, split by
//! where the query term came from (typed or corrected by the user, added by the vocabulary, or
//! by learned associations), each divided by its maximum over the query's matches;
//! nearest-example similarity; verb intent × verb class; learned lifts of class, scope and item;
//! how well the action's words translate the query's words (`translation.rs`);
//! the rarity-weighted share of the query's concepts the action's text (and its examples) cover.
//! Stage two (for the best stage-one candidates) adds concept coverage per field, name and path coverage,
//! item × collection, scope × scope cue, resource and action lifts, identifiers needed, and
//! how the need's object (the noun phrase after its verb) names the action's resource.
//! Every weight is learned (`fit.rs`); nothing here says how much a feature counts.

use super::structure::Scope;
use super::text::{FIELDS, FieldKind};

/// Query-term groups: typed (or corrected) by the user, added by the vocabulary, or added by
/// the associations learned from the labelled needs.
pub const GROUPS: usize = 3;
/// BM25 features: one per field and group.
pub const BM25: usize = FIELDS * GROUPS;
/// Best example similarity of the action, divided by the query's best.
pub const KNN_BEST: usize = BM25;
/// The action owns the query's single most similar example.
pub const KNN_TOP: usize = BM25 + 1;
/// The action has examples at all.
pub const HAS_EXAMPLES: usize = BM25 + 2;
/// First of the intent × class one-hots: `INTENT + q * 5 + class`.
pub const INTENT: usize = BM25 + 3;
/// Query intents: none, delete, create, update, list, get.
pub const QUERY_INTENTS: usize = 6;
/// Action classes: delete, create, update, list, get.
pub const CLASSES: usize = 5;
/// Learned from the labelled needs: how much the query's words favour the action's verb class
/// (log-lift of the class given each word, summed by how much each tells ÷ √ of their sum).
pub const LEX_CLASS: usize = INTENT + QUERY_INTENTS * CLASSES;
/// … its scope.
pub const LEX_SCOPE: usize = LEX_CLASS + 1;
/// … item against collection.
pub const LEX_ITEM: usize = LEX_CLASS + 2;
/// The same three, learned for the query's function words ("my", "every", "one", "by").
pub const LEX_FN_CLASS: usize = LEX_CLASS + 3;
/// … scope.
pub const LEX_FN_SCOPE: usize = LEX_CLASS + 4;
/// … item against collection.
pub const LEX_FN_ITEM: usize = LEX_CLASS + 5;
/// Share of the query's concepts (weighted by their rarity) the action's own text covers.
pub const COVER_DOC: usize = LEX_CLASS + 6;
/// … its text or its examples cover.
pub const COVER_ALL: usize = LEX_CLASS + 7;
/// Learned log-lift of the resource the action's path ends in, given the query's words.
pub const LEX_RESOURCE: usize = LEX_CLASS + 8;
/// … of the action itself (only for actions with examples).
pub const LEX_ACTION: usize = LEX_CLASS + 9;
/// Learned log-lift of the action's verb class given the query's lead word: its first, or the
/// first after a word of wanting (`search::lead_word`).
pub const LEX_LEAD_CLASS: usize = LEX_CLASS + 10;
/// Translation likelihood of the query's words given the action's core and capability words
/// (IBM model 1, learned from the labelled needs by EM).
pub const LEX_TRANS: usize = LEX_CLASS + 11;
/// Number of stage-one features (computed for every matched action).
pub const STAGE1: usize = LEX_CLASS + 12;

/// Share of the action name's nouns the query names.
pub const NAME_COVER: usize = STAGE1;
/// Nouns of the name the query does not name (÷ 4, at most 1).
pub const NAME_MISSING: usize = STAGE1 + 1;
/// Share of the resource's words (last literal path segment) the query names.
pub const RESOURCE: usize = STAGE1 + 2;
/// The query names the parent resource (the literal segment before).
pub const PARENT: usize = STAGE1 + 3;
/// Share of the path's literal words the query names.
pub const PATH_COVER: usize = STAGE1 + 4;
/// A create-or-replace PUT for a create query.
pub const UPSERT_CREATE: usize = STAGE1 + 5;
/// A destructive action, the query has no delete verb.
pub const DESTRUCTIVE_NO_DELETE: usize = STAGE1 + 6;
/// A destructive action, the query has a delete verb.
pub const DESTRUCTIVE_DELETE: usize = STAGE1 + 7;
/// A collection endpoint, the query asks for all/every/list.
pub const COLLECTION_LIST: usize = STAGE1 + 8;
/// An item endpoint, the query asks for all/every/list.
pub const COLLECTION_ITEM: usize = STAGE1 + 9;
/// A list action, a noun of the query is plural.
pub const PLURAL_LIST: usize = STAGE1 + 10;
/// An item endpoint, a noun of the query is plural.
pub const PLURAL_ITEM: usize = STAGE1 + 11;
/// Required identifiers beyond the owner (÷ 4).
pub const EXTRA_IDS: usize = STAGE1 + 12;
/// Literal path segments after the scope's root (÷ 6).
pub const DEPTH: usize = STAGE1 + 13;
/// Deprecated.
pub const DEPRECATED: usize = STAGE1 + 14;
/// The query holds an `owner/name`-like value and the action names a repository by
/// `{owner}/{repo}` (in any scope).
pub const VALUE_SLASH_REPO: usize = STAGE1 + 15;
/// The query holds a number (an id, an index) and the action targets one item.
pub const VALUE_NUMBER_ITEM: usize = STAGE1 + 16;
/// First of the per-field coverages: share of the query's concepts (weighted by their rarity
/// in the catalog) that field `f` covers, `COVER_FIELD + f`.
pub const COVER_FIELD: usize = STAGE1 + 17;
/// First of the scope priors: `SCOPE + scope`.
pub const SCOPE: usize = COVER_FIELD + FIELDS;
/// Scope cues of a query: self, admin, organisation/team, repository, user.
pub const CUES: usize = 5;
/// First of the scope × cue crosses: `SCOPE_CUE + scope * CUES + cue`.
pub const SCOPE_CUE: usize = SCOPE + Scope::ALL.len();
/// The head of the need's object (see `Analysis::object`) names the action's resource.
pub const HEAD_RESOURCE: usize = SCOPE_CUE + Scope::ALL.len() * CUES;
/// … a noun of the action's name.
pub const HEAD_NAME: usize = HEAD_RESOURCE + 1;
/// Share of the resource's words the object phrase names.
pub const OBJECT_RESOURCE: usize = HEAD_RESOURCE + 2;
/// Learned log-lift of the action's resource given the head's words.
pub const LEX_HEAD_RESOURCE: usize = HEAD_RESOURCE + 3;
/// The object's head is plural and the action lists.
pub const HEAD_PLURAL_LIST: usize = HEAD_RESOURCE + 4;
/// … plural, and the action targets one item.
pub const HEAD_PLURAL_ITEM: usize = HEAD_RESOURCE + 5;
/// … singular, and the action lists.
pub const HEAD_SINGULAR_LIST: usize = HEAD_RESOURCE + 6;
/// Share of the query's numbered nouns (`comment 5512`, `run 1042`) that name one of the
/// action's path identifiers.
pub const IDS_NAMED: usize = HEAD_RESOURCE + 7;
/// … that name none of them (the number is for something the action takes no identifier of).
pub const IDS_STRAY: usize = HEAD_RESOURCE + 8;
/// The action's path identifiers that no numbered noun of the query names (÷ 4, at most 1),
/// when the query has numbered nouns.
pub const IDS_UNFILLED: usize = HEAD_RESOURCE + 9;
/// The need undoes something and the action undoes (a DELETE, or an un-verb in its name).
pub const UNDO_UNDOES: usize = HEAD_RESOURCE + 10;
/// The need undoes something and the action writes without undoing.
pub const UNDO_DOES: usize = HEAD_RESOURCE + 11;
/// The need asks a yes/no question and the action is a check (a GET answering with no body).
pub const ASK_CHECK: usize = HEAD_RESOURCE + 12;
/// The need asks no yes/no question and the action is a check.
pub const NOASK_CHECK: usize = HEAD_RESOURCE + 13;
/// The largest learned log-lift of the action's resource given any one of the query's words
/// (the one word that tells most, which a weighted sum over a long need dilutes).
pub const LEX_RESOURCE_MAX: usize = HEAD_RESOURCE + 14;
/// Number of features.
pub const COUNT: usize = HEAD_RESOURCE + 15;

const CUE_NAMES: [&str; CUES] = ["self", "admin", "org", "repo", "user"];
const INTENT_NAMES: [&str; QUERY_INTENTS] = ["none", "delete", "create", "update", "list", "get"];

/// Every feature's name, in index order (the model file is keyed by them).
pub fn names() -> Vec<String> {
    let mut out = Vec::with_capacity(COUNT);
    for f in FieldKind::ALL {
        for g in ["typed", "vocab", "learned"] {
            out.push(format!("bm25.{}.{g}", f.as_str()));
        }
    }
    for n in ["knn.best", "knn.top", "has_examples"] {
        out.push(n.to_string());
    }
    for q in INTENT_NAMES {
        for c in &INTENT_NAMES[1..] {
            out.push(format!("intent.{q}.{c}"));
        }
    }
    for n in [
        "lex.class",
        "lex.scope",
        "lex.item",
        "lex.fn.class",
        "lex.fn.scope",
        "lex.fn.item",
        "cover.doc",
        "cover.all",
        "lex.resource",
        "lex.action",
        "lex.lead.class",
        "lex.trans",
        "name.cover",
        "name.missing",
        "resource",
        "parent",
        "path.cover",
        "upsert.create",
        "destructive.no_delete",
        "destructive.delete",
        "collection.list",
        "collection.item",
        "plural.list",
        "plural.item",
        "ids.extra",
        "depth",
        "deprecated",
        "value.slash.repo",
        "value.number.item",
    ] {
        out.push(n.to_string());
    }
    for f in FieldKind::ALL {
        out.push(format!("cover.{}", f.as_str()));
    }
    for s in Scope::ALL {
        out.push(format!("scope.{}", s.as_str()));
    }
    for s in Scope::ALL {
        for c in CUE_NAMES {
            out.push(format!("scope.{}.{c}", s.as_str()));
        }
    }
    for n in [
        "head.resource",
        "head.name",
        "object.resource",
        "lex.head.resource",
        "head.plural.list",
        "head.plural.item",
        "head.singular.list",
        "ids.named",
        "ids.stray",
        "ids.unfilled",
        "undo.undoes",
        "undo.does",
        "ask.check",
        "noask.check",
        "lex.resource.max",
    ] {
        out.push(n.to_string());
    }
    debug_assert_eq!(out.len(), COUNT);
    out
}

/// Features that are evidence *for* an action — a text match, a coverage, a similarity to its
/// labelled needs, a learned lift. The fit keeps their weights at zero or above: more of such
/// evidence never counts against an action. (Without it, the fit learned that a need very like
/// an action's labelled needs belongs to a look-alike — true of how the training set was
/// written, four needs per operation in four styles, not of needs in general.)
pub fn is_evidence(name: &str) -> bool {
    ["bm25.", "knn.", "cover.", "lex."]
        .iter()
        .any(|p| name.starts_with(p))
        || matches!(
            name,
            "name.cover"
                | "resource"
                | "parent"
                | "path.cover"
                | "head.resource"
                | "head.name"
                | "object.resource"
                | "ids.named"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_match_the_layout() {
        let n = names();
        assert_eq!(n.len(), COUNT);
        let set: std::collections::HashSet<_> = n.iter().collect();
        assert_eq!(set.len(), COUNT);
        assert_eq!(n[KNN_BEST], "knn.best");
        assert_eq!(n[COVER_DOC], "cover.doc");
        assert_eq!(n[DEPRECATED], "deprecated");
        assert_eq!(n[INTENT], "intent.none.delete");
        assert_eq!(n[SCOPE], "scope.admin");
        assert_eq!(n[SCOPE_CUE], "scope.admin.self");
    }
}

//! Who wrote the user text in an answer (provenance), and lockdown (`LOCKDOWN=true`): on a
//! public repository, text written by users without write access is replaced by a short notice
//! naming the author and where to read it.
//!
//! On a public instance anybody can open an issue or comment; lockdown keeps such text from
//! reaching the model at all, while the repository's own people (owner, collaborators with write
//! access) and the caller still come through. Private repositories are not affected: everybody
//! who can write there was let in. The author's access comes from Gitea's permission endpoint,
//! cached per repository and user; an access that cannot be read counts as none.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::catalog::USER_TEXT_FIELDS;

/// Keys under which Gitea names the author of an object.
const AUTHOR_KEYS: [&str; 3] = ["user", "poster", "author"];

/// How deep [`authored`] looks (a list of comments is two levels).
const MAX_DEPTH: usize = 4;

/// Most (repository, user) accesses cached.
const MAX_CACHED: usize = 4096;

/// How long an access is believed.
const TTL: Duration = Duration::from_secs(300);

/// The JSON pointers of objects in `data` that carry user-written text, with their author's
/// login.
pub fn authored(data: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(data, String::new(), 0, &mut out);
    out
}

fn walk(v: &Value, at: String, depth: usize, out: &mut Vec<(String, String)>) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Object(map) => {
            let author = AUTHOR_KEYS.iter().find_map(|k| {
                map.get(*k)
                    .and_then(|a| a.get("login"))
                    .and_then(Value::as_str)
                    .filter(|l| !l.is_empty())
            });
            let has_text = USER_TEXT_FIELDS.iter().any(|k| {
                map.get(*k)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
            });
            if let (Some(author), true) = (author, has_text) {
                out.push((at.clone(), author.to_string()));
            }
            for (k, child) in map {
                if matches!(child, Value::Object(_) | Value::Array(_)) {
                    let key = k.replace('~', "~0").replace('/', "~1");
                    walk(child, format!("{at}/{key}"), depth + 1, out);
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                walk(child, format!("{at}/{i}"), depth + 1, out);
            }
        }
        _ => {}
    }
}

/// Replaces the user-written text of the object at `at` with a notice; true when there was
/// any.
pub fn withhold(data: &mut Value, at: &str, author: &str) -> bool {
    let Some(Value::Object(map)) = data.pointer_mut(at) else {
        return false;
    };
    let link = map
        .get("html_url")
        .and_then(Value::as_str)
        .map(|u| format!(" ({u})"))
        .unwrap_or_default();
    let mut any = false;
    for key in USER_TEXT_FIELDS {
        if let Some(Value::String(s)) = map.get_mut(key) {
            if !s.is_empty() {
                *s = format!(
                    "[withheld by lockdown: written by {author}, who has no write access to this public repository; read it in Gitea{link}, or ask the operator about LOCKDOWN]"
                );
                any = true;
            }
        }
    }
    any
}

/// An author's relation to the repository whose answer carries their text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// The repository's owner.
    Owner,
    /// The caller.
    Caller,
    /// A collaborator (or member) with write access.
    Collaborator,
    /// Nobody with write access: on a public repository, anybody.
    NoWriteAccess,
    /// Gitea did not say (the permission could not be read).
    Unknown,
}

impl Relation {
    /// The relation as the answer names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Owner => "owner",
            Relation::Caller => "you",
            Relation::Collaborator => "collaborator with write access",
            Relation::NoWriteAccess => "no write access",
            Relation::Unknown => "relation unknown",
        }
    }

    /// True for the repository's own people and the caller, whose text lockdown keeps.
    pub fn trusted(self) -> bool {
        matches!(
            self,
            Relation::Owner | Relation::Caller | Relation::Collaborator
        )
    }
}

/// One piece of user-written text in an answer: where (a JSON pointer into the data), who
/// wrote it, and their relation to the repository.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Authored {
    /// JSON pointer of the object holding the text (`""` for the answer itself).
    pub at: String,
    /// The author's login.
    pub author: String,
    /// The author's relation to the repository.
    pub relation: Relation,
}

/// Cached relations of users to repositories, and the Gitea login of each caller.
#[derive(Debug, Default)]
pub struct Access {
    cache: Mutex<HashMap<(String, String), (Instant, Relation)>>,
    logins: Mutex<HashMap<String, String>>,
}

impl Access {
    /// The Gitea login of the caller `principal`, if known.
    pub fn login_of(&self, principal: &str) -> Option<String> {
        self.logins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(principal)
            .cloned()
    }

    /// Remembers the Gitea login of the caller `principal`.
    pub fn remember_login(&self, principal: &str, login: &str) {
        let mut l = self.logins.lock().unwrap_or_else(|e| e.into_inner());
        if l.len() >= MAX_CACHED {
            l.clear();
        }
        l.insert(principal.to_string(), login.to_string());
    }

    /// A fresh cached relation.
    pub fn cached(&self, repo: &str, user: &str) -> Option<Relation> {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(repo.to_string(), user.to_ascii_lowercase()))
            .filter(|(at, _)| at.elapsed() < TTL)
            .map(|(_, w)| *w)
    }

    /// Remembers a relation.
    pub fn remember(&self, repo: &str, user: &str, relation: Relation) {
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if c.len() >= MAX_CACHED {
            c.retain(|_, (at, _)| at.elapsed() < TTL);
            if c.len() >= MAX_CACHED {
                c.clear();
            }
        }
        c.insert(
            (repo.to_string(), user.to_ascii_lowercase()),
            (Instant::now(), relation),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn authored_objects_are_found_in_entities_and_lists() {
        let issue = json!({"number": 1, "title": "t", "body": "b", "user": {"login": "mallory"}});
        assert_eq!(authored(&issue), [(String::new(), "mallory".to_string())]);
        let comments = json!([
            {"id": 1, "body": "hi", "user": {"login": "alice"}},
            {"id": 2, "body": "", "user": {"login": "bob"}},
            {"id": 3, "body": "x", "poster": {"login": "eve"}}
        ]);
        assert_eq!(
            authored(&comments),
            [
                ("/0".to_string(), "alice".to_string()),
                ("/2".to_string(), "eve".to_string())
            ]
        );
    }

    #[test]
    fn withholding_replaces_only_the_text() {
        let mut v = json!([{"id": 9, "body": "do evil", "title": "x", "user": {"login": "m"}, "html_url": "https://g/i/9"}]);
        assert!(withhold(&mut v, "/0", "m"));
        assert_eq!(v[0]["id"], 9);
        let body = v[0]["body"].as_str().unwrap();
        assert!(
            body.contains("written by m") && body.contains("https://g/i/9"),
            "{body}"
        );
        assert!(!v.to_string().contains("do evil"));
        assert!(!withhold(&mut v, "/7", "m"), "no such object");
    }
}

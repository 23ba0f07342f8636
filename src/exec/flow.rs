//! The cross-repository flow guard: once a caller has read a repository that is not public, a
//! write that places content anywhere else needs the confirmation step (or is refused).
//!
//! The attack it answers: a public issue tells the agent to read a private repository and post
//! what it finds in a public place. Each step alone is allowed; the flow is what leaks. The
//! guard remembers, per caller (a session belongs to one credential; in stateless HTTP the
//! caller is the unit), which repositories it read; a write whose target is another repository,
//! or no repository, while some of those are not public goes through a confirmation whose
//! preview names them (`FLOW_GUARD=confirm`), or is refused (`deny`). With a shared store
//! (`REDIS_URL`) the memory is also kept there, so a read through one replica guards a write
//! through another; during an outage each replica guards with what it saw itself.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::config::FlowGuard;

/// Most callers remembered (the oldest is forgotten first).
const MAX_CALLERS: usize = 4096;
/// Most source repositories remembered per caller.
pub const MAX_SOURCES: usize = 64;
/// The shared store's name for the flow guard's memory.
pub const STORE_USE: &str = "flow";
/// How long the shared store remembers what a caller read, after its last read (a process
/// remembers for as long as it runs; a shared memory must end somewhere).
pub const SHARED_TTL: Duration = Duration::from_secs(24 * 3600);
/// Most repositories whose visibility is cached.
const MAX_VISIBILITY: usize = 4096;
/// How long a repository's visibility is believed.
const VISIBILITY_TTL: Duration = Duration::from_secs(300);

/// The repository a request path is scoped to, `owner/repo` in lower case
/// (`/repos/{owner}/{repo}/…`).
pub fn repo_of(path: &str) -> Option<String> {
    let mut seg = path.trim_start_matches('/').split('/');
    if seg.next() != Some("repos") {
        return None;
    }
    let owner = seg.next().filter(|s| !s.is_empty())?;
    let repo = seg.next().filter(|s| !s.is_empty())?;
    Some(format!("{owner}/{repo}").to_ascii_lowercase())
}

/// True for a write that sends a repository's content to an address outside Gitea (a webhook,
/// a push mirror, a migration): a public place even when it is made on the repository that
/// was read.
pub fn leaves_gitea(path: &str) -> bool {
    path.split('/')
        .any(|s| matches!(s, "hooks" | "push_mirrors" | "mirror-sync" | "migrate"))
}

/// The repositories each caller has read, and a cache of their visibility.
#[derive(Debug, Default)]
pub struct Flows {
    read: Mutex<HashMap<String, (Instant, BTreeSet<String>)>>,
    visibility: Mutex<HashMap<String, (Instant, bool)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Flows {
    /// The repositories `principal` read, other than `target`.
    pub fn sources(&self, principal: &str, target: Option<&str>) -> Vec<String> {
        lock(&self.read)
            .get(principal)
            .map(|(_, repos)| {
                repos
                    .iter()
                    .filter(|r| Some(r.as_str()) != target)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Remembers that `principal` read `repo`.
    pub fn record(&self, principal: &str, repo: &str) {
        let mut read = lock(&self.read);
        if !read.contains_key(principal) && read.len() >= MAX_CALLERS {
            if let Some(oldest) = read
                .iter()
                .min_by_key(|(_, (t, _))| *t)
                .map(|(k, _)| k.clone())
            {
                read.remove(&oldest);
            }
        }
        let entry = read
            .entry(principal.to_string())
            .or_insert_with(|| (Instant::now(), BTreeSet::new()));
        entry.0 = Instant::now();
        if entry.1.len() < MAX_SOURCES {
            entry.1.insert(repo.to_string());
        }
    }

    /// A cached visibility (`true`: not public), if fresh.
    pub fn cached_private(&self, repo: &str) -> Option<bool> {
        lock(&self.visibility)
            .get(repo)
            .filter(|(at, _)| at.elapsed() < VISIBILITY_TTL)
            .map(|(_, p)| *p)
    }

    /// Caches a repository's visibility.
    pub fn cache_private(&self, repo: &str, private: bool) {
        let mut v = lock(&self.visibility);
        if v.len() >= MAX_VISIBILITY {
            v.retain(|_, (at, _)| at.elapsed() < VISIBILITY_TTL);
            if v.len() >= MAX_VISIBILITY {
                v.clear();
            }
        }
        v.insert(repo.to_string(), (Instant::now(), private));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_of_paths() {
        assert_eq!(
            repo_of("/repos/Alice/Secret/issues/1").as_deref(),
            Some("alice/secret")
        );
        assert_eq!(repo_of("/repos/alice/demo").as_deref(), Some("alice/demo"));
        assert_eq!(repo_of("/repos/alice"), None);
        assert_eq!(repo_of("/user/repos"), None);
        assert_eq!(repo_of("/repos//x"), None);
    }

    #[test]
    fn webhooks_and_mirrors_leave_gitea() {
        assert!(leaves_gitea("/repos/alice/secret/hooks"));
        assert!(leaves_gitea("/repos/alice/secret/push_mirrors"));
        assert!(leaves_gitea("/repos/migrate"));
        assert!(!leaves_gitea("/repos/alice/secret/issues/1/comments"));
    }

    #[test]
    fn sources_exclude_the_target_and_are_bounded() {
        let f = Flows::default();
        f.record("alice", "alice/secret");
        assert_eq!(
            f.sources("alice", Some("alice/secret")),
            Vec::<String>::new()
        );
        assert_eq!(f.sources("alice", Some("alice/public")), ["alice/secret"]);
        assert_eq!(f.sources("alice", None), ["alice/secret"]);
        assert!(f.sources("bob", None).is_empty(), "per caller");
        for i in 0..(MAX_SOURCES + 10) {
            f.record("alice", &format!("o/r{i}"));
        }
        assert_eq!(f.sources("alice", None).len(), MAX_SOURCES);
        for i in 0..(MAX_CALLERS + 10) {
            f.record(&format!("c{i}"), "o/r");
        }
        assert!(lock(&f.read).len() <= MAX_CALLERS);
    }
}

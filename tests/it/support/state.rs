//! The fake's data: users, organisations, tokens, repositories with branches and files, issues and
//! pull requests (one index counter per repository), comments, labels, reviews, releases and their
//! assets — and how Gitea renders each of them as JSON.
//!
//! Time is a logical clock: it starts at 2025-01-01T00:00:00Z and moves one second per event, so
//! answers are deterministic.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use super::util::{blob_sha, rfc3339, sha40};

/// 2025-01-01T00:00:00Z.
const EPOCH: i64 = 1_735_689_600;

#[derive(Debug, Clone)]
pub struct User {
    pub id: i64,
    pub login: String,
    pub full_name: String,
    pub email: String,
    pub is_admin: bool,
    pub is_org: bool,
    /// Lower-cased logins of an organisation's members (owners team).
    pub members: Vec<String>,
    pub description: String,
    pub website: String,
    pub location: String,
    pub visibility: String,
    pub created: i64,
}

#[derive(Debug, Clone)]
pub struct Token {
    pub id: i64,
    pub name: String,
    /// Lower-cased login of the owner.
    pub user: String,
    pub scopes: Vec<String>,
    pub created: i64,
}

#[derive(Debug, Clone)]
pub struct FileEntry {
    pub content: Vec<u8>,
    pub last_commit: String,
}

#[derive(Debug, Clone)]
pub struct Commit {
    pub sha: String,
    pub message: String,
    pub author: String,
    pub time: i64,
    pub parent: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Branch {
    pub name: String,
    pub files: BTreeMap<String, FileEntry>,
    pub head: Commit,
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: i64,
    pub body: String,
    pub poster: String,
    pub created: i64,
    pub updated: i64,
}

#[derive(Debug, Clone)]
pub struct Review {
    pub id: i64,
    pub poster: String,
    pub state: String,
    pub body: String,
    pub commit_id: String,
    pub comments_count: i64,
    pub official: bool,
    pub submitted: i64,
}

#[derive(Debug, Clone)]
pub struct Pull {
    pub id: i64,
    pub head: String,
    pub base: String,
    /// Frozen when the pull request is merged or closed; live otherwise.
    pub head_sha: String,
    pub base_sha: String,
    pub merged: bool,
    pub merged_at: Option<i64>,
    pub merged_by: Option<String>,
    pub merge_commit_sha: Option<String>,
    pub reviews: Vec<Review>,
    pub requested_reviewers: Vec<String>,
    pub allow_maintainer_edit: bool,
}

impl Pull {
    /// An open, unmerged pull request `id` from `head` into `base` at those branches' SHAs,
    /// with no reviews or reviewers.
    pub fn open(id: i64, head: String, base: String, head_sha: String, base_sha: String) -> Pull {
        Pull {
            id,
            head,
            base,
            head_sha,
            base_sha,
            merged: false,
            merged_at: None,
            merged_by: None,
            merge_commit_sha: None,
            reviews: Vec::new(),
            requested_reviewers: Vec::new(),
            allow_maintainer_edit: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Issue {
    pub id: i64,
    pub index: i64,
    pub title: String,
    pub body: String,
    pub open: bool,
    pub poster: String,
    pub label_ids: Vec<i64>,
    pub assignees: Vec<String>,
    pub comments: Vec<Comment>,
    pub created: i64,
    pub updated: i64,
    pub closed_at: Option<i64>,
    pub due_date: Option<String>,
    pub pull: Option<Pull>,
}

impl Issue {
    /// The segment of its web URL: `pulls` for a pull request, `issues` otherwise.
    pub fn web_kind(&self) -> &'static str {
        if self.pull.is_some() {
            "pulls"
        } else {
            "issues"
        }
    }

    /// An open issue `id` titled `title` by `poster`, created at `now`, with no body, labels,
    /// assignees, comments or due date; [`Repo::push_issue`] gives it its index.
    pub fn new(id: i64, title: String, poster: String, now: i64) -> Issue {
        Issue {
            id,
            index: 0,
            title,
            body: String::new(),
            open: true,
            poster,
            label_ids: Vec::new(),
            assignees: Vec::new(),
            comments: Vec::new(),
            created: now,
            updated: now,
            closed_at: None,
            due_date: None,
            pull: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Label {
    pub id: i64,
    pub name: String,
    pub color: String,
    pub description: String,
    pub exclusive: bool,
    pub archived: bool,
}

#[derive(Debug, Clone)]
pub struct Asset {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub data: Vec<u8>,
    pub created: i64,
}

#[derive(Debug, Clone)]
pub struct Release {
    pub id: i64,
    pub tag: String,
    pub name: String,
    pub body: String,
    pub draft: bool,
    pub prerelease: bool,
    pub target: String,
    pub author: String,
    pub created: i64,
    pub assets: Vec<Asset>,
}

#[derive(Debug, Clone)]
pub struct Repo {
    pub id: i64,
    /// The owner's login as written.
    pub owner: String,
    pub name: String,
    pub description: String,
    pub website: String,
    pub private: bool,
    pub archived: bool,
    pub default_branch: String,
    pub branches: BTreeMap<String, Branch>,
    pub issues: Vec<Issue>,
    pub labels: Vec<Label>,
    pub releases: Vec<Release>,
    pub next_index: i64,
    /// Lower-cased logins with write access.
    pub collaborators: Vec<String>,
    /// Settings from `EditRepoOption` the fake does not model, echoed in the JSON.
    pub extra: Map<String, Value>,
    pub created: i64,
    pub updated: i64,
}

impl Repo {
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    pub fn issue(&self, index: i64) -> Option<&Issue> {
        self.issues.iter().find(|i| i.index == index)
    }

    pub fn issue_mut(&mut self, index: i64) -> Option<&mut Issue> {
        self.issues.iter_mut().find(|i| i.index == index)
    }

    pub fn label_by_id(&self, id: i64) -> Option<&Label> {
        self.labels.iter().find(|l| l.id == id)
    }

    /// Files `issue` under the repository's next index (issues and pull requests share one
    /// counter); returns that index.
    pub fn push_issue(&mut self, issue: Issue) -> i64 {
        let index = self.next_index;
        self.next_index += 1;
        self.issues.push(Issue { index, ..issue });
        index
    }
}

/// Options for seeding a repository.
#[derive(Debug, Clone)]
pub struct RepoSeed {
    pub description: String,
    pub private: bool,
    /// Create the default branch with a `README.md` (like `auto_init`).
    pub auto_init: bool,
    pub default_branch: String,
}

impl Default for RepoSeed {
    fn default() -> RepoSeed {
        RepoSeed {
            description: String::new(),
            private: false,
            auto_init: true,
            default_branch: "main".into(),
        }
    }
}

/// Everything the fake knows.
#[derive(Debug)]
pub struct State {
    pub base_url: String,
    clock: i64,
    counters: HashMap<&'static str, i64>,
    /// Keyed by lower-cased login.
    pub users: BTreeMap<String, User>,
    pub tokens: HashMap<String, Token>,
    pub repos: Vec<Repo>,
}

impl State {
    pub fn new(base_url: String) -> State {
        State {
            base_url,
            clock: 0,
            counters: HashMap::new(),
            users: BTreeMap::new(),
            tokens: HashMap::new(),
            repos: Vec::new(),
        }
    }

    /// The next time stamp of the logical clock.
    pub fn tick(&mut self) -> i64 {
        self.clock += 1;
        EPOCH + self.clock
    }

    /// The next id of `kind` (1-based, one sequence per kind like Gitea's tables).
    pub fn next_id(&mut self, kind: &'static str) -> i64 {
        let n = self.counters.entry(kind).or_insert(0);
        *n += 1;
        *n
    }

    pub fn user(&self, login: &str) -> Option<&User> {
        self.users.get(&login.to_ascii_lowercase())
    }

    /// Creates the user or organisation when it does not exist; returns its lower-cased login.
    pub fn ensure_user(&mut self, login: &str, admin: bool, org: bool) -> String {
        let key = login.to_ascii_lowercase();
        if let Some(u) = self.users.get_mut(&key) {
            u.is_admin |= admin;
            return key;
        }
        let id = self.next_id("user");
        let created = self.tick();
        self.users.insert(
            key.clone(),
            User {
                id,
                login: login.to_string(),
                full_name: String::new(),
                email: if org {
                    String::new()
                } else {
                    format!("{key}@example.test")
                },
                is_admin: admin,
                is_org: org,
                members: Vec::new(),
                description: String::new(),
                website: String::new(),
                location: String::new(),
                visibility: "public".into(),
                created,
            },
        );
        key
    }

    pub fn repo_idx(&self, owner: &str, name: &str) -> Option<usize> {
        self.repos
            .iter()
            .position(|r| r.owner.eq_ignore_ascii_case(owner) && r.name.eq_ignore_ascii_case(name))
    }

    /// A new commit object (not attached to a branch).
    pub fn new_commit(&mut self, message: &str, author: &str, parent: Option<String>) -> Commit {
        let n = self.next_id("commit");
        let time = self.tick();
        Commit {
            sha: sha40(format!("commit {n}\n{message}").as_bytes()),
            message: message.to_string(),
            author: author.to_string(),
            time,
            parent,
        }
    }

    /// Creates a repository; `None` when it exists already.
    pub fn create_repo(&mut self, owner: &str, name: &str, seed: &RepoSeed) -> Option<usize> {
        if self.repo_idx(owner, name).is_some() {
            return None;
        }
        let owner_login = self
            .user(owner)
            .map(|u| u.login.clone())
            .unwrap_or_else(|| owner.to_string());
        let id = self.next_id("repo");
        let created = self.tick();
        let mut repo = Repo {
            id,
            owner: owner_login.clone(),
            name: name.to_string(),
            description: seed.description.clone(),
            website: String::new(),
            private: seed.private,
            archived: false,
            default_branch: seed.default_branch.clone(),
            branches: BTreeMap::new(),
            issues: Vec::new(),
            labels: Vec::new(),
            releases: Vec::new(),
            next_index: 1,
            collaborators: Vec::new(),
            extra: Map::new(),
            created,
            updated: created,
        };
        if seed.auto_init {
            let commit = self.new_commit("Initial commit", &owner_login, None);
            let readme = format!("# {name}\n\n{}\n", seed.description);
            let mut files = BTreeMap::new();
            files.insert(
                "README.md".to_string(),
                FileEntry {
                    content: readme.into_bytes(),
                    last_commit: commit.sha.clone(),
                },
            );
            repo.branches.insert(
                seed.default_branch.clone(),
                Branch {
                    name: seed.default_branch.clone(),
                    files,
                    head: commit,
                },
            );
        }
        self.repos.push(repo);
        Some(self.repos.len() - 1)
    }

    /// Writes files on a branch as one commit (creating the branch from nothing when the
    /// repository is empty); returns the commit.
    pub fn commit_files(
        &mut self,
        repo: usize,
        branch: &str,
        author: &str,
        message: &str,
        changes: &[(String, Option<Vec<u8>>)],
    ) -> Commit {
        let parent = self.repos[repo]
            .branches
            .get(branch)
            .map(|b| b.head.sha.clone());
        let commit = self.new_commit(message, author, parent);
        let r = &mut self.repos[repo];
        let b = r
            .branches
            .entry(branch.to_string())
            .or_insert_with(|| Branch {
                name: branch.to_string(),
                files: BTreeMap::new(),
                head: commit.clone(),
            });
        for (path, content) in changes {
            match content {
                Some(c) => {
                    b.files.insert(
                        path.clone(),
                        FileEntry {
                            content: c.clone(),
                            last_commit: commit.sha.clone(),
                        },
                    );
                }
                None => {
                    b.files.remove(path);
                }
            }
        }
        b.head = commit.clone();
        r.updated = commit.time;
        commit
    }

    // ---- permissions -------------------------------------------------------------------------

    pub fn is_admin(&self, login: &str) -> bool {
        self.user(login).is_some_and(|u| u.is_admin)
    }

    pub fn is_org_member(&self, org: &str, login: &str) -> bool {
        let login = login.to_ascii_lowercase();
        self.user(org)
            .is_some_and(|o| o.is_org && o.members.contains(&login))
    }

    /// Owner, organisation member of the owner, collaborator or site admin.
    pub fn can_write(&self, repo: &Repo, login: &str) -> bool {
        self.is_admin(login)
            || repo.owner.eq_ignore_ascii_case(login)
            || self.is_org_member(&repo.owner, login)
            || repo.collaborators.contains(&login.to_ascii_lowercase())
    }

    pub fn can_read(&self, repo: &Repo, login: &str) -> bool {
        !repo.private || self.can_write(repo, login)
    }

    pub fn is_repo_owner(&self, repo: &Repo, login: &str) -> bool {
        self.is_admin(login)
            || repo.owner.eq_ignore_ascii_case(login)
            || self.is_org_member(&repo.owner, login)
    }

    // ---- rendering ---------------------------------------------------------------------------

    pub fn user_json(&self, login: &str) -> Value {
        let Some(u) = self.user(login) else {
            return json!({ "id": -1, "login": login, "login_name": "", "full_name": "" });
        };
        json!({
            "id": u.id,
            "login": u.login,
            "login_name": "",
            "source_id": 0,
            "full_name": u.full_name,
            "email": u.email,
            "avatar_url": format!("{}/avatars/{}", self.base_url, sha40(u.login.as_bytes())),
            "html_url": format!("{}/{}", self.base_url, u.login),
            "language": "",
            "is_admin": u.is_admin,
            "last_login": rfc3339(u.created),
            "created": rfc3339(u.created),
            "restricted": false,
            "active": true,
            "prohibit_login": false,
            "location": u.location,
            "website": u.website,
            "description": u.description,
            "visibility": u.visibility,
            "followers_count": 0,
            "following_count": 0,
            "starred_repos_count": 0,
        })
    }

    pub fn org_json(&self, login: &str) -> Value {
        let Some(u) = self.user(login) else {
            return Value::Null;
        };
        json!({
            "id": u.id,
            "name": u.login,
            "username": u.login,
            "full_name": u.full_name,
            "email": u.email,
            "avatar_url": format!("{}/avatars/{}", self.base_url, sha40(u.login.as_bytes())),
            "description": u.description,
            "website": u.website,
            "location": u.location,
            "visibility": u.visibility,
            "repo_admin_change_team_access": false,
        })
    }

    pub fn repo_json(&self, repo: &Repo, viewer: Option<&str>) -> Value {
        let base = &self.base_url;
        let full = repo.full_name();
        let write = viewer.is_some_and(|v| self.can_write(repo, v));
        let admin = viewer.is_some_and(|v| self.is_repo_owner(repo, v));
        let open_issues = repo
            .issues
            .iter()
            .filter(|i| i.open && i.pull.is_none())
            .count();
        let open_pulls = repo
            .issues
            .iter()
            .filter(|i| i.open && i.pull.is_some())
            .count();
        let mut v = json!({
            "id": repo.id,
            "owner": self.user_json(&repo.owner),
            "name": repo.name,
            "full_name": full,
            "description": repo.description,
            "empty": repo.branches.is_empty(),
            "private": repo.private,
            "fork": false,
            "template": false,
            "parent": null,
            "mirror": false,
            "size": 0,
            "language": "",
            "languages_url": format!("{base}/api/v1/repos/{full}/languages"),
            "html_url": format!("{base}/{full}"),
            "url": format!("{base}/api/v1/repos/{full}"),
            "link": "",
            "ssh_url": format!("ssh://git@127.0.0.1/{full}.git"),
            "clone_url": format!("{base}/{full}.git"),
            "original_url": "",
            "website": repo.website,
            "stars_count": 0,
            "forks_count": 0,
            "watchers_count": 1,
            "open_issues_count": open_issues,
            "open_pr_counter": open_pulls,
            "release_counter": repo.releases.iter().filter(|r| !r.draft).count(),
            "default_branch": repo.default_branch,
            "archived": repo.archived,
            "created_at": rfc3339(repo.created),
            "updated_at": rfc3339(repo.updated),
            "archived_at": rfc3339(0),
            "permissions": { "admin": admin, "push": write, "pull": true },
        });
        let settings = json!({
            "has_code": true,
            "has_issues": true,
            "internal_tracker": {
                "enable_time_tracker": true,
                "allow_only_contributors_to_track_time": true,
                "enable_issue_dependencies": true,
            },
            "has_wiki": true,
            "has_pull_requests": true,
            "has_projects": true,
            "has_releases": true,
            "has_packages": true,
            "has_actions": true,
            "ignore_whitespace_conflicts": false,
            "allow_merge_commits": true,
            "allow_rebase": true,
            "allow_rebase_explicit": true,
            "allow_squash_merge": true,
            "allow_fast_forward_only_merge": true,
            "allow_rebase_update": true,
            "allow_manual_merge": false,
            "autodetect_manual_merge": false,
            "default_delete_branch_after_merge": false,
            "default_merge_style": "merge",
            "default_allow_maintainer_edit": false,
            "avatar_url": "",
            "internal": false,
            "mirror_interval": "",
            "object_format_name": "sha1",
            "mirror_updated": rfc3339(0),
            "repo_transfer": null,
            "topics": [],
            "licenses": [],
        });
        if let (Value::Object(map), Value::Object(more)) = (&mut v, settings) {
            map.extend(more);
            for (k, val) in &repo.extra {
                map.insert(k.clone(), val.clone());
            }
        }
        v
    }

    pub fn commit_user_json(&self, login: &str, time: i64) -> Value {
        let email = self
            .user(login)
            .map(|u| u.email.clone())
            .unwrap_or_default();
        json!({ "name": login, "email": email, "date": rfc3339(time) })
    }

    pub fn branch_json(&self, repo: &Repo, branch: &Branch, viewer: &str) -> Value {
        let base = &self.base_url;
        let full = repo.full_name();
        let email = self
            .user(&branch.head.author)
            .map(|u| u.email.clone())
            .unwrap_or_default();
        let who =
            json!({ "name": branch.head.author, "email": email, "username": branch.head.author });
        let write = self.can_write(repo, viewer);
        json!({
            "name": branch.name,
            "commit": {
                "id": branch.head.sha,
                "message": branch.head.message,
                "url": format!("{base}/{full}/commit/{}", branch.head.sha),
                "author": who,
                "committer": who,
                "verification": null,
                "timestamp": rfc3339(branch.head.time),
                "added": null,
                "removed": null,
                "modified": null,
            },
            "protected": false,
            "required_approvals": 0,
            "enable_status_check": false,
            "status_check_contexts": [],
            "user_can_push": write,
            "user_can_merge": write,
            "effective_branch_protection_name": "",
        })
    }

    /// `ContentsResponse` for a file (`with_content`: include base64 content).
    pub fn file_json(
        &self,
        repo: &Repo,
        branch: &str,
        path: &str,
        entry: &FileEntry,
        with_content: bool,
    ) -> Value {
        use base64::Engine as _;
        let base = &self.base_url;
        let full = repo.full_name();
        let sha = blob_sha(&entry.content);
        let mut v = self.contents_entry_json(repo, branch, path, &sha, "file");
        v["last_commit_sha"] = json!(entry.last_commit);
        v["size"] = json!(entry.content.len());
        if with_content {
            v["encoding"] = json!("base64");
            v["content"] = json!(base64::engine::general_purpose::STANDARD.encode(&entry.content));
        }
        v["download_url"] = json!(format!("{base}/{full}/raw/branch/{branch}/{path}"));
        v
    }

    pub fn dir_json(&self, repo: &Repo, branch: &str, path: &str) -> Value {
        let full = repo.full_name();
        let sha = sha40(format!("tree {full} {branch} {path}").as_bytes());
        let mut v = self.contents_entry_json(repo, branch, path, &sha, "dir");
        v["last_commit_sha"] = json!(repo.branches.get(branch).map(|b| b.head.sha.clone()));
        v
    }

    /// The `ContentsResponse` fields of `path` that files and directories (`kind`) share, in
    /// Gitea's order; the rest (`last_commit_sha`, `size`, `encoding`, `content`,
    /// `download_url`) are null or 0 for the caller to set in place.
    fn contents_entry_json(
        &self,
        repo: &Repo,
        branch: &str,
        path: &str,
        sha: &str,
        kind: &str,
    ) -> Value {
        let base = &self.base_url;
        let full = repo.full_name();
        let name = path.rsplit('/').next().unwrap_or(path);
        let git = if kind == "dir" { "trees" } else { "blobs" };
        let self_url = format!("{base}/api/v1/repos/{full}/contents/{path}?ref={branch}");
        let git_url = format!("{base}/api/v1/repos/{full}/git/{git}/{sha}");
        let html_url = format!("{base}/{full}/src/branch/{branch}/{path}");
        json!({
            "name": name,
            "path": path,
            "sha": sha,
            "last_commit_sha": null,
            "type": kind,
            "size": 0,
            "encoding": null,
            "content": null,
            "target": null,
            "url": self_url,
            "html_url": html_url,
            "git_url": git_url,
            "download_url": null,
            "submodule_git_url": null,
            "_links": { "self": self_url, "git": git_url, "html": html_url },
        })
    }

    pub fn file_commit_json(&self, repo: &Repo, commit: &Commit) -> Value {
        let base = &self.base_url;
        let full = repo.full_name();
        let who = self.commit_user_json(&commit.author, commit.time);
        let tree = sha40(format!("tree-of {}", commit.sha).as_bytes());
        json!({
            "url": format!("{base}/api/v1/repos/{full}/git/commits/{}", commit.sha),
            "sha": commit.sha,
            "created": rfc3339(commit.time),
            "html_url": format!("{base}/{full}/commit/{}", commit.sha),
            "author": who,
            "committer": who,
            "parents": commit.parent.iter().map(|p| json!({
                "url": format!("{base}/api/v1/repos/{full}/git/commits/{p}"),
                "sha": p,
                "created": rfc3339(commit.time),
            })).collect::<Vec<_>>(),
            "message": format!("{}\n", commit.message),
            "tree": {
                "url": format!("{base}/api/v1/repos/{full}/git/trees/{tree}"),
                "sha": tree,
                "created": rfc3339(commit.time),
            },
        })
    }

    pub fn label_json(&self, repo: &Repo, label: &Label) -> Value {
        json!({
            "id": label.id,
            "name": label.name,
            "exclusive": label.exclusive,
            "is_archived": label.archived,
            "color": label.color,
            "description": label.description,
            "url": format!("{}/api/v1/repos/{}/labels/{}", self.base_url, repo.full_name(), label.id),
        })
    }

    fn labels_of(&self, repo: &Repo, issue: &Issue) -> Vec<Value> {
        issue
            .label_ids
            .iter()
            .filter_map(|id| repo.label_by_id(*id))
            .map(|l| self.label_json(repo, l))
            .collect()
    }

    fn assignees_of(&self, issue: &Issue) -> (Value, Value) {
        if issue.assignees.is_empty() {
            return (Value::Null, Value::Null);
        }
        let all: Vec<Value> = issue.assignees.iter().map(|a| self.user_json(a)).collect();
        (all[0].clone(), Value::Array(all))
    }

    /// Head and base SHAs: frozen once merged or closed, live otherwise.
    pub fn pull_shas(&self, repo: &Repo, issue: &Issue, pull: &Pull) -> (String, String) {
        if !issue.open || pull.merged {
            return (pull.head_sha.clone(), pull.base_sha.clone());
        }
        let sha = |b: &str| {
            repo.branches
                .get(b)
                .map(|b| b.head.sha.clone())
                .unwrap_or_default()
        };
        (sha(&pull.head), sha(&pull.base))
    }

    pub fn issue_json(&self, repo: &Repo, issue: &Issue) -> Value {
        let base = &self.base_url;
        let full = repo.full_name();
        let kind = issue.web_kind();
        let (assignee, assignees) = self.assignees_of(issue);
        json!({
            "id": issue.id,
            "url": format!("{base}/api/v1/repos/{full}/issues/{}", issue.index),
            "html_url": format!("{base}/{full}/{kind}/{}", issue.index),
            "number": issue.index,
            "user": self.user_json(&issue.poster),
            "original_author": "",
            "original_author_id": 0,
            "title": issue.title,
            "body": issue.body,
            "ref": "",
            "assets": [],
            "labels": self.labels_of(repo, issue),
            "milestone": null,
            "assignee": assignee,
            "assignees": assignees,
            "state": if issue.open { "open" } else { "closed" },
            "is_locked": false,
            "comments": issue.comments.len(),
            "created_at": rfc3339(issue.created),
            "updated_at": rfc3339(issue.updated),
            "closed_at": issue.closed_at.map(rfc3339),
            "due_date": issue.due_date,
            "time_estimate": 0,
            "pull_request": issue.pull.as_ref().map(|p| json!({
                "merged": p.merged,
                "merged_at": p.merged_at.map(rfc3339),
                "draft": false,
                "html_url": format!("{base}/{full}/pulls/{}", issue.index),
            })),
            "repository": {
                "id": repo.id,
                "name": repo.name,
                "owner": repo.owner,
                "full_name": full,
            },
            "pin_order": 0,
        })
    }

    fn pr_branch_json(&self, repo: &Repo, branch: &str, sha: &str, viewer: &str) -> Value {
        json!({
            "label": branch,
            "ref": branch,
            "sha": sha,
            "repo_id": repo.id,
            "repo": self.repo_json(repo, Some(viewer)),
        })
    }

    pub fn pull_json(&self, repo: &Repo, issue: &Issue, viewer: &str) -> Value {
        let pull = issue.pull.as_ref().expect("a pull request");
        let base = &self.base_url;
        let full = repo.full_name();
        let (head_sha, base_sha) = self.pull_shas(repo, issue, pull);
        let (assignee, assignees) = self.assignees_of(issue);
        let html = format!("{base}/{full}/pulls/{}", issue.index);
        let (additions, deletions, changed) = diff_stats(&self.pull_diff(repo, pull));
        json!({
            "id": pull.id,
            "url": html,
            "number": issue.index,
            "user": self.user_json(&issue.poster),
            "title": issue.title,
            "body": issue.body,
            "labels": self.labels_of(repo, issue),
            "milestone": null,
            "assignee": assignee,
            "assignees": assignees,
            "requested_reviewers": pull.requested_reviewers.iter().map(|r| self.user_json(r)).collect::<Vec<_>>(),
            "requested_reviewers_teams": [],
            "state": if issue.open { "open" } else { "closed" },
            "draft": false,
            "is_locked": false,
            "comments": issue.comments.len(),
            "review_comments": pull.reviews.iter().map(|r| r.comments_count).sum::<i64>(),
            "additions": additions,
            "deletions": deletions,
            "changed_files": changed,
            "html_url": html,
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "mergeable": issue.open && !pull.merged,
            "merged": pull.merged,
            "merged_at": pull.merged_at.map(rfc3339),
            "merge_commit_sha": pull.merge_commit_sha,
            "merged_by": pull.merged_by.as_ref().map(|m| self.user_json(m)),
            "allow_maintainer_edit": pull.allow_maintainer_edit,
            "base": self.pr_branch_json(repo, &pull.base, &base_sha, viewer),
            "head": self.pr_branch_json(repo, &pull.head, &head_sha, viewer),
            "merge_base": base_sha,
            "due_date": issue.due_date,
            "created_at": rfc3339(issue.created),
            "updated_at": rfc3339(issue.updated),
            "closed_at": issue.closed_at.map(rfc3339),
            "pin_order": 0,
        })
    }

    pub fn comment_json(&self, repo: &Repo, issue: &Issue, c: &Comment) -> Value {
        let base = &self.base_url;
        let full = repo.full_name();
        let kind = issue.web_kind();
        json!({
            "id": c.id,
            "html_url": format!("{base}/{full}/{kind}/{}#issuecomment-{}", issue.index, c.id),
            "pull_request_url": if issue.pull.is_some() {
                format!("{base}/{full}/pulls/{}", issue.index)
            } else {
                String::new()
            },
            "issue_url": format!("{base}/{full}/issues/{}", issue.index),
            "user": self.user_json(&c.poster),
            "original_author": "",
            "original_author_id": 0,
            "body": c.body,
            "assets": [],
            "created_at": rfc3339(c.created),
            "updated_at": rfc3339(c.updated),
        })
    }

    pub fn review_json(&self, repo: &Repo, issue: &Issue, r: &Review) -> Value {
        let base = &self.base_url;
        let html = format!("{base}/{}/pulls/{}", repo.full_name(), issue.index);
        json!({
            "id": r.id,
            "user": self.user_json(&r.poster),
            "team": null,
            "state": r.state,
            "body": r.body,
            "commit_id": r.commit_id,
            "stale": false,
            "official": r.official,
            "dismissed": false,
            "comments_count": r.comments_count,
            "submitted_at": rfc3339(r.submitted),
            "updated_at": rfc3339(r.submitted),
            "html_url": format!("{html}#issuecomment-{}", r.id),
            "pull_request_url": html,
        })
    }

    pub fn asset_json(&self, a: &Asset) -> Value {
        json!({
            "id": a.id,
            "name": a.name,
            "size": a.data.len(),
            "download_count": 0,
            "created_at": rfc3339(a.created),
            "uuid": a.uuid,
            "browser_download_url": format!("{}/attachments/{}", self.base_url, a.uuid),
        })
    }

    pub fn release_json(&self, repo: &Repo, r: &Release) -> Value {
        let base = &self.base_url;
        let full = repo.full_name();
        json!({
            "id": r.id,
            "tag_name": r.tag,
            "target_commitish": r.target,
            "name": r.name,
            "body": r.body,
            "url": format!("{base}/api/v1/repos/{full}/releases/{}", r.id),
            "html_url": format!("{base}/{full}/releases/tag/{}", r.tag),
            "tarball_url": format!("{base}/{full}/archive/{}.tar.gz", r.tag),
            "zipball_url": format!("{base}/{full}/archive/{}.zip", r.tag),
            "upload_url": format!("{base}/api/v1/repos/{full}/releases/{}/assets", r.id),
            "draft": r.draft,
            "prerelease": r.prerelease,
            "created_at": rfc3339(r.created),
            "published_at": rfc3339(r.created),
            "author": self.user_json(&r.author),
            "assets": r.assets.iter().map(|a| self.asset_json(a)).collect::<Vec<_>>(),
        })
    }

    /// A unified diff of the files that differ on the head branch compared with the base
    /// branch (files only on the base are ignored: the fake has no merge base).
    pub fn pull_diff(&self, repo: &Repo, pull: &Pull) -> String {
        let empty = BTreeMap::new();
        let head = repo.branches.get(&pull.head).map_or(&empty, |b| &b.files);
        let base = repo.branches.get(&pull.base).map_or(&empty, |b| &b.files);
        let mut out = String::new();
        for (path, entry) in head {
            let old = base.get(path);
            if old.is_some_and(|o| o.content == entry.content) {
                continue;
            }
            let new_text = String::from_utf8_lossy(&entry.content);
            let new_lines: Vec<&str> = new_text.lines().collect();
            out.push_str(&format!("diff --git a/{path} b/{path}\n"));
            match old {
                None => {
                    out.push_str("new file mode 100644\n");
                    out.push_str(&format!(
                        "index 0000000..{}\n--- /dev/null\n+++ b/{path}\n",
                        &blob_sha(&entry.content)[..7]
                    ));
                    out.push_str(&format!("@@ -0,0 +1,{} @@\n", new_lines.len()));
                }
                Some(o) => {
                    let old_text = String::from_utf8_lossy(&o.content).into_owned();
                    let old_lines: Vec<&str> = old_text.lines().collect();
                    out.push_str(&format!(
                        "index {}..{} 100644\n--- a/{path}\n+++ b/{path}\n",
                        &blob_sha(&o.content)[..7],
                        &blob_sha(&entry.content)[..7]
                    ));
                    out.push_str(&format!(
                        "@@ -1,{} +1,{} @@\n",
                        old_lines.len(),
                        new_lines.len()
                    ));
                    for l in &old_lines {
                        out.push_str(&format!("-{l}\n"));
                    }
                }
            }
            for l in &new_lines {
                out.push_str(&format!("+{l}\n"));
            }
        }
        out
    }
}

/// (additions, deletions, changed files) of a diff made by [`State::pull_diff`].
fn diff_stats(diff: &str) -> (usize, usize, usize) {
    let mut add = 0;
    let mut del = 0;
    let mut files = 0;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            files += 1;
        } else if line.starts_with('+') && !line.starts_with("+++ ") {
            add += 1;
        } else if line.starts_with('-') && !line.starts_with("--- ") {
            del += 1;
        }
    }
    (add, del, files)
}

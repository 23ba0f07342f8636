//! Token scopes: which `read:<category>` / `write:<category>` scopes an operation needs.
//!
//! The swagger documents do not declare scopes; Gitea enforces them per route group in
//! `routers/api/v1/api.go`. [`RULES`] restates those groups as path patterns, first match wins.
//! Reads (`GET`, `HEAD`) need `read:<category>`, everything else `write:<category>`; when a rule
//! names several categories, all are required.

use std::fmt;

use crate::spec::HttpMethod;

/// A token scope category, as Gitea names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScopeCategory {
    /// `activitypub` (Forgejo's federation endpoints).
    ActivityPub,
    /// `admin`
    Admin,
    /// `issue` (issues, labels, milestones)
    Issue,
    /// `notification`
    Notification,
    /// `organization` (orgs and teams)
    Organization,
    /// `package`
    Package,
    /// `repository`
    Repository,
    /// `user`
    User,
}

impl ScopeCategory {
    /// Gitea's name of the category.
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeCategory::ActivityPub => "activitypub",
            ScopeCategory::Admin => "admin",
            ScopeCategory::Issue => "issue",
            ScopeCategory::Notification => "notification",
            ScopeCategory::Organization => "organization",
            ScopeCategory::Package => "package",
            ScopeCategory::Repository => "repository",
            ScopeCategory::User => "user",
        }
    }

    /// Parses Gitea's name of a category.
    pub fn parse(s: &str) -> Option<ScopeCategory> {
        Some(match s {
            "activitypub" => ScopeCategory::ActivityPub,
            "admin" => ScopeCategory::Admin,
            "issue" => ScopeCategory::Issue,
            "notification" => ScopeCategory::Notification,
            "organization" => ScopeCategory::Organization,
            "package" => ScopeCategory::Package,
            "repository" => ScopeCategory::Repository,
            "user" => ScopeCategory::User,
            _ => return None,
        })
    }
}

/// Read or write access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// `read:`
    Read,
    /// `write:` (implies read)
    Write,
}

/// One token scope, such as `write:issue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope {
    /// Read or write.
    pub access: Access,
    /// The category.
    pub category: ScopeCategory,
}

impl Scope {
    /// Parses `read:issue`, `write:repository`, …
    pub fn parse(s: &str) -> Option<Scope> {
        let (access, category) = s.split_once(':')?;
        let access = match access {
            "read" => Access::Read,
            "write" => Access::Write,
            _ => return None,
        };
        Some(Scope {
            access,
            category: ScopeCategory::parse(category)?,
        })
    }

    /// True when a token holding `self` may use an operation that needs `needed`.
    pub fn satisfies(self, needed: Scope) -> bool {
        self.category == needed.category && self.access >= needed.access
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let access = match self.access {
            Access::Read => "read",
            Access::Write => "write",
        };
        write!(f, "{access}:{}", self.category.as_str())
    }
}

/// The scopes an operation needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeRequirement {
    /// Every listed scope is required.
    Scopes(Vec<Scope>),
    /// The route group is not scope-checked (`/version`, `/markdown`, …).
    None,
    /// No rule covers the path: a newer Gitea added a route group this server does not know.
    /// Nothing is withheld for it; a 403 from Gitea is reported as is.
    Unmapped,
}

impl ScopeRequirement {
    /// The required scopes (empty for `None` and `Unmapped`).
    pub fn scopes(&self) -> &[Scope] {
        match self {
            ScopeRequirement::Scopes(s) => s,
            _ => &[],
        }
    }
}

use ScopeCategory::*;

/// One route group: a path pattern, an optional method, and the categories it needs.
///
/// Patterns are those of [`super::route`]: `*` matches one segment, `**` the rest (including
/// nothing), and a segment ending in `*` matches by prefix (`markdown*`).
struct Rule {
    method: Option<HttpMethod>,
    pattern: &'static str,
    categories: &'static [ScopeCategory],
}

const fn rule(pattern: &'static str, categories: &'static [ScopeCategory]) -> Rule {
    Rule {
        method: None,
        pattern,
        categories,
    }
}

/// Gitea's route groups, most specific first.
static RULES: &[Rule] = &[
    rule("/admin/**", &[Admin]),
    rule("/repos/issues/search", &[Issue]),
    rule("/repos/*/*/issues/**", &[Issue]),
    rule("/repos/*/*/labels/**", &[Issue]),
    rule("/repos/*/*/milestones/**", &[Issue]),
    rule("/repos/*/*/notifications", &[Notification]),
    rule("/repos/**", &[Repository]),
    rule("/repositories/**", &[Repository]),
    rule("/topics/search", &[Repository]),
    rule("/notifications/**", &[Notification]),
    Rule {
        method: Some(HttpMethod::Delete),
        pattern: "/orgs/*/repos",
        categories: &[Organization, Repository],
    },
    Rule {
        method: Some(HttpMethod::Post),
        pattern: "/org/*/repos",
        categories: &[Organization, Repository],
    },
    rule("/orgs/**", &[Organization]),
    rule("/org/**", &[Organization]),
    rule("/teams/**", &[Organization]),
    rule("/user/repos", &[User, Repository]),
    rule("/user/starred/**", &[User, Repository]),
    rule("/users/*/repos", &[User, Repository]),
    rule("/user/orgs", &[User, Organization]),
    rule("/users/*/orgs/**", &[User, Organization]),
    rule("/user/**", &[User]),
    rule("/users/**", &[User]),
    rule("/packages/**", &[Package]),
    rule("/activitypub/**", &[ActivityPub]),
    // Route groups Gitea does not scope-check.
    rule("/version", &[]),
    rule("/settings/*", &[]),
    rule("/markdown*/**", &[]),
    rule("/markup", &[]),
    rule("/gitignore/**", &[]),
    rule("/licenses*/**", &[]),
    rule("/label/templates*/**", &[]),
    rule("/signing-key.*", &[]),
    rule("/token", &[]),
    rule("/nodeinfo", &[]),
    // Forgejo: authenticated with the job's automatic token, not a scoped one.
    rule("/actions/run", &[]),
];

/// The scopes `method path` needs.
pub fn scopes_for(method: HttpMethod, path: &str) -> ScopeRequirement {
    let segments = super::route::segments(path);
    let Some(rule) = RULES.iter().find(|r| {
        r.method.is_none_or(|m| m == method)
            && super::route::Pattern::parse(r.pattern)
                .matches(&segments)
                .is_some()
    }) else {
        return ScopeRequirement::Unmapped;
    };
    if rule.categories.is_empty() {
        return ScopeRequirement::None;
    }
    let access = if method.is_read() {
        Access::Read
    } else {
        Access::Write
    };
    ScopeRequirement::Scopes(
        rule.categories
            .iter()
            .map(|&category| Scope { access, category })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(method: HttpMethod, path: &str, expect: &str) {
        let got = match scopes_for(method, path) {
            ScopeRequirement::Scopes(s) => {
                s.iter().map(Scope::to_string).collect::<Vec<_>>().join(" ")
            }
            ScopeRequirement::None => "none".to_string(),
            ScopeRequirement::Unmapped => "unmapped".to_string(),
        };
        assert_eq!(got, expect, "{method} {path}");
    }

    #[test]
    fn route_groups() {
        use HttpMethod::*;
        check(Get, "/admin/users", "read:admin");
        check(
            Post,
            "/repos/{owner}/{repo}/issues/{index}/comments",
            "write:issue",
        );
        check(
            Get,
            "/repos/{owner}/{repo}/issue_templates",
            "read:repository",
        );
        check(Get, "/repos/issues/search", "read:issue");
        check(
            Patch,
            "/repos/{owner}/{repo}/milestones/{id}",
            "write:issue",
        );
        check(
            Put,
            "/repos/{owner}/{repo}/notifications",
            "write:notification",
        );
        check(
            Post,
            "/repos/{owner}/{repo}/pulls/{index}/merge",
            "write:repository",
        );
        check(
            Delete,
            "/orgs/{org}/repos",
            "write:organization write:repository",
        );
        check(Get, "/orgs/{org}/repos", "read:organization");
        check(
            Post,
            "/org/{org}/repos",
            "write:organization write:repository",
        );
        check(
            Put,
            "/user/starred/{owner}/{repo}",
            "write:user write:repository",
        );
        check(
            Get,
            "/users/{username}/orgs/{org}/permissions",
            "read:user read:organization",
        );
        check(Get, "/users/{username}/repos", "read:user read:repository");
        check(Get, "/user", "read:user");
        check(Delete, "/teams/{id}", "write:organization");
        check(Get, "/topics/search", "read:repository");
        check(Post, "/markdown/raw", "none");
        check(Get, "/signing-key.gpg", "none");
        check(Get, "/licenses/{name}", "none");
        check(Get, "/label/templates/{name}", "none");
        check(Get, "/settings/api", "none");
        check(Get, "/somewhere/new", "unmapped");
    }

    #[test]
    fn write_satisfies_read_of_the_same_category_only() {
        let w = Scope::parse("write:issue").unwrap();
        assert!(w.satisfies(Scope::parse("read:issue").unwrap()));
        assert!(!Scope::parse("read:issue").unwrap().satisfies(w));
        assert!(!w.satisfies(Scope::parse("read:repository").unwrap()));
        assert_eq!(Scope::parse("admin"), None);
        assert_eq!(Scope::parse("read:everything"), None);
    }
}

//! Token scopes against Gitea's own route groups: a table written from Gitea's
//! `routers/api/v1/api.go` (each `tokenRequiresScopes(...)` group, nested groups adding up), not
//! from `src/catalog/scopes.rs`, so a mistake there fails here. The fake Gitea's rules are held
//! to the same table, so the fake cannot mirror a mistake either.

use aegis_gitea_mcp::catalog::{HttpMethod, ScopeRequirement, scopes_for};

use HttpMethod::{Delete, Get, Patch, Post, Put};

/// `(method, template, the scopes Gitea checks)`: reads need `read:`, other methods `write:`;
/// `none` for groups Gitea does not scope-check.
#[rustfmt::skip]
const GITEA: &[(HttpMethod, &str, &str)] = &[
    // m.Group("/user", …, tokenRequiresScopes(User))
    (Get, "/user", "read:user"),
    (Get, "/user/emails", "read:user"),
    (Put, "/user/actions/secrets/{secretname}", "write:user"),
    (Get, "/user/applications/oauth2", "read:user"),
    //   nested m.Combo("/repos", tokenRequiresScopes(Repository))
    (Get, "/user/repos", "read:user read:repository"),
    (Post, "/user/repos", "write:user write:repository"),
    //   nested m.Group("/starred", …, tokenRequiresScopes(Repository))
    (Put, "/user/starred/{owner}/{repo}", "write:user write:repository"),
    // m.Get("/user/orgs", tokenRequiresScopes(User, Organization))
    (Get, "/user/orgs", "read:user read:organization"),
    // m.Group("/users/{username}/orgs", tokenRequiresScopes(User, Organization))
    (Get, "/users/{username}/orgs/{org}/permissions", "read:user read:organization"),
    // m.Combo("/repositories/{id}", tokenRequiresScopes(Repository))
    (Get, "/repositories/{id}", "read:repository"),
    // m.Group("/repos", …, tokenRequiresScopes(Repository))
    (Get, "/repos/search", "read:repository"),
    (Post, "/repos/migrate", "write:repository"),
    (Delete, "/repos/{owner}/{repo}", "write:repository"),
    (Delete, "/repos/{owner}/{repo}/branches/{branch}", "write:repository"),
    (Post, "/repos/{owner}/{repo}/pulls/{index}/merge", "write:repository"),
    (Post, "/repos/{owner}/{repo}/pulls/{index}/reviews", "write:repository"),
    (Get, "/repos/{owner}/{repo}/raw/{filepath}", "read:repository"),
    (Post, "/repos/{owner}/{repo}/contents/{filepath}", "write:repository"),
    (Post, "/repos/{owner}/{repo}/releases/{id}/assets", "write:repository"),
    (Put, "/repos/{owner}/{repo}/topics", "write:repository"),
    (Get, "/repos/{owner}/{repo}/commits/{ref}/status", "read:repository"),
    (Put, "/repos/{owner}/{repo}/actions/secrets/{secretname}", "write:repository"),
    (Get, "/repos/{owner}/{repo}/issue_templates", "read:repository"),
    // m.Group("/repos", …, tokenRequiresScopes(Notification))
    (Put, "/repos/{owner}/{repo}/notifications", "write:notification"),
    // m.Group("/repos", …, tokenRequiresScopes(Issue))
    (Get, "/repos/issues/search", "read:issue"),
    (Post, "/repos/{owner}/{repo}/issues", "write:issue"),
    (Get, "/repos/{owner}/{repo}/issues/comments/{id}", "read:issue"),
    (Post, "/repos/{owner}/{repo}/issues/{index}/labels", "write:issue"),
    (Post, "/repos/{owner}/{repo}/labels", "write:issue"),
    (Patch, "/repos/{owner}/{repo}/milestones/{id}", "write:issue"),
    // m.Group("/packages/{username}", tokenRequiresScopes(Package))
    (Delete, "/packages/{owner}/{type}/{name}/{version}", "write:package"),
    // m.Group("/orgs/{org}", tokenRequiresScopes(Organization))
    (Get, "/orgs/{org}", "read:organization"),
    (Get, "/orgs/{org}/teams", "read:organization"),
    (Post, "/orgs/{org}/repos", "write:organization"),
    // m.Post("/org/{org}/repos", tokenRequiresScopes(Organization, Repository))
    (Post, "/org/{org}/repos", "write:organization write:repository"),
    // m.Group("/teams/{teamid}", tokenRequiresScopes(Organization))
    (Delete, "/teams/{id}", "write:organization"),
    // m.Group("/admin", tokenRequiresScopes(Admin))
    (Get, "/admin/users", "read:admin"),
    (Post, "/admin/users", "write:admin"),
    // m.Group("/topics", tokenRequiresScopes(Repository))
    (Get, "/topics/search", "read:repository"),
    // Not scope-checked: version, settings, markdown, signing key, templates.
    (Get, "/version", "none"),
    (Get, "/settings/api", "none"),
    (Post, "/markdown", "none"),
    (Get, "/signing-key.gpg", "none"),
    (Get, "/gitignore/templates", "none"),
];

fn show(r: ScopeRequirement) -> String {
    match r {
        ScopeRequirement::Scopes(s) => s
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        ScopeRequirement::None => "none".into(),
        ScopeRequirement::Unmapped => "unmapped".into(),
    }
}

/// Asserts that `checker` (`who` says or checks what it returns) agrees with every row of
/// [`GITEA`] it answers for (`None`: a route it does not model); the failure lists every row
/// where it does not.
#[track_caller]
fn assert_agrees_with_gitea(who: &str, checker: impl Fn(HttpMethod, &str) -> Option<String>) {
    let wrong: Vec<String> = GITEA
        .iter()
        .filter_map(|(m, path, want)| {
            let got = checker(*m, path)?;
            (got != *want).then(|| format!("{m} {path}: Gitea checks {want}, {who} {got}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_catalog_asks_for_the_scopes_gitea_checks() {
    assert_agrees_with_gitea("the catalog says", |m, path| {
        Some(show(scopes_for(m, path)))
    });
}

/// A concrete path for a template: every parameter becomes a plausible value.
fn concrete(template: &str) -> String {
    template
        .split('/')
        .map(|s| match s {
            "{owner}" | "{username}" => "alice",
            "{repo}" => "demo",
            "{org}" => "acme",
            "{index}" | "{id}" => "1",
            s if s.starts_with('{') => "x",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn the_fake_gitea_checks_the_same_scopes() {
    // The fake serves the routes the tests need; the groups it knows must agree.
    assert_agrees_with_gitea("the fake checks", |m, path| {
        crate::support::scopes_needed(m.as_str(), &concrete(path))
    });
}

//! Action names: `gitea_<domain>_<action>`, derived by rule from the path and the operationId.
//!
//! * The **domain** comes from the path (first matching rule of [`domain_for_path`]).
//! * The **action** is the operationId split into lower-case words, minus the words that only
//!   repeat the domain (`repoCreatePullRequest` in `pull` → `create`), and minus a leading
//!   owner word where the domain already implies it (`repo` for pull/issue/release/wiki, `org`
//!   for team).
//! * `spec/overrides.toml` (compiled into a `phf` map by `build.rs`) names the few operations
//!   the rules name badly or ambiguously. A collision without an override is an error.

use super::Domain;

include!(concat!(env!("OUT_DIR"), "/overrides.rs"));

/// Longest name MCP clients reliably accept for a tool.
pub const MAX_NAME_LEN: usize = 64;

/// The override for an operationId, if `spec/overrides.toml` has one.
pub fn name_override(operation_id: &str) -> Option<&'static str> {
    NAME_OVERRIDES.get(operation_id).copied()
}

/// Every operationId that has an override (for reporting unused entries).
pub fn overridden_operation_ids() -> impl Iterator<Item = &'static str> {
    NAME_OVERRIDES.keys().copied()
}

/// Mixed-case words that camelCase splitting would break apart (`OAuth2` → `o`, `auth2`).
const MIXED_CASE_WORDS: [(&str, &str); 1] = [("OAuth", "Oauth")];

/// Splits an identifier into lower-case words: `repoGetPullRequestByBaseHead` →
/// `repo get pull request by base head`; acronyms stay whole (`GPGKey` → `gpg key`,
/// `getByID` → `get by id`); digits stick to the word before them (`oauth2`).
pub fn split_words(ident: &str) -> Vec<String> {
    let mut s = ident.to_string();
    for (from, to) in MIXED_CASE_WORDS {
        s = s.replace(from, to);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && match prev {
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                // The last capital of an acronym starts the next word: "GPGKey" → "GPG", "Key".
                Some(p) if p.is_ascii_uppercase() => next.is_some_and(|n| n.is_ascii_lowercase()),
                _ => false,
            };
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The domain of an operation, from its path template.
pub fn domain_for_path(path: &str) -> Domain {
    let seg: Vec<&str> = path.trim_matches('/').split('/').collect();
    let at = |i: usize| seg.get(i).copied().unwrap_or("");
    let is_param = |s: &str| s.starts_with('{');
    match at(0) {
        "admin" => Domain::Admin,
        "repos" if is_param(at(1)) && is_param(at(2)) => match at(3) {
            s if s.starts_with("pulls") => Domain::Pull,
            "issues" | "labels" | "milestones" => Domain::Issue,
            "releases" => Domain::Release,
            "wiki" => Domain::Wiki,
            "actions" => Domain::Actions,
            "hooks" => Domain::Hook,
            "notifications" => Domain::Notification,
            _ => Domain::Repo,
        },
        "repos" if at(1) == "issues" => Domain::Issue,
        "repos" | "repositories" | "topics" => Domain::Repo,
        "orgs" | "org" => match at(2) {
            "actions" => Domain::Actions,
            "hooks" => Domain::Hook,
            "teams" => Domain::Team,
            _ => Domain::Org,
        },
        "teams" => Domain::Team,
        "user" | "users" => match at(1) {
            "actions" => Domain::Actions,
            "hooks" => Domain::Hook,
            _ => Domain::User,
        },
        "actions" => Domain::Actions,
        "packages" => Domain::Package,
        "notifications" => Domain::Notification,
        _ => Domain::Misc,
    }
}

/// Words that only repeat the domain and are dropped from the action part.
fn domain_words(domain: Domain) -> &'static [&'static str] {
    match domain {
        Domain::Admin => &["admin"],
        Domain::Repo => &["repo", "repos", "repository", "repositories"],
        Domain::Issue => &["issue", "issues"],
        Domain::Pull => &["pull", "pulls"],
        Domain::Release => &["release", "releases"],
        Domain::Wiki => &["wiki"],
        Domain::Org => &["org", "orgs", "organization", "organizations"],
        Domain::Team => &["team", "teams"],
        Domain::User => &["user", "users"],
        Domain::Actions => &["actions", "action"],
        Domain::Hook => &["hook", "hooks"],
        Domain::Package => &["package", "packages"],
        Domain::Notification => &["notify", "notification", "notifications"],
        Domain::Misc => &[],
    }
}

/// A leading operationId word that the domain implies (pull requests always live in a repo).
fn implied_owner(domain: Domain) -> &'static [&'static str] {
    match domain {
        Domain::Pull | Domain::Issue | Domain::Release | Domain::Wiki => &["repo"],
        Domain::Team => &["org"],
        _ => &[],
    }
}

/// The action part of the name, by rule (no overrides).
pub fn action_part(domain: Domain, operation_id: &str) -> String {
    let mut words = split_words(operation_id);
    if words
        .first()
        .is_some_and(|w| implied_owner(domain).contains(&w.as_str()))
    {
        words.remove(0);
    }
    let strip = domain_words(domain);
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        // "pull request(s)" is one noun in the pull domain.
        if domain == Domain::Pull
            && w == "pull"
            && words
                .get(i + 1)
                .is_some_and(|n| n == "request" || n == "requests")
        {
            i += 2;
            continue;
        }
        if !strip.contains(&w) {
            out.push(w);
        }
        i += 1;
    }
    if out.is_empty() {
        // An operationId made only of domain words ("issueIssue"): keep it whole rather than
        // produce an empty action.
        return split_words(operation_id).join("_");
    }
    out.join("_")
}

/// The full action name by rule: `gitea_<domain>_<action>`.
pub fn rule_name(domain: Domain, operation_id: &str) -> String {
    format!(
        "gitea_{}_{}",
        domain.as_str(),
        action_part(domain, operation_id)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_camel_case_acronyms_and_digits() {
        let cases = [
            (
                "repoGetPullRequestByBaseHead",
                "repo get pull request by base head",
            ),
            ("userCurrentPostGPGKey", "user current post gpg key"),
            ("repoGetByID", "repo get by id"),
            ("userGetOAuth2Application", "user get oauth2 application"),
            ("userGetOauth2Application", "user get oauth2 application"),
            (
                "ActionsListRepositoryWorkflows",
                "actions list repository workflows",
            ),
            ("getSSHSigningKey", "get ssh signing key"),
            ("repoGetRawFileOrLFS", "repo get raw file or lfs"),
            ("issue_get-x", "issue get x"),
        ];
        for (id, words) in cases {
            assert_eq!(split_words(id).join(" "), words, "{id}");
        }
    }

    #[test]
    fn domains_follow_the_path() {
        let cases = [
            ("/admin/actions/runners", Domain::Admin),
            (
                "/repos/{owner}/{repo}/pulls/{index}.{diffType}",
                Domain::Pull,
            ),
            ("/repos/{owner}/{repo}/labels/{id}", Domain::Issue),
            ("/repos/issues/search", Domain::Issue),
            ("/repos/search", Domain::Repo),
            ("/repos/{owner}/{repo}/releases/latest", Domain::Release),
            ("/repos/{owner}/{repo}/wiki/pages", Domain::Wiki),
            ("/repos/{owner}/{repo}/actions/runs", Domain::Actions),
            ("/orgs/{org}/actions/secrets", Domain::Actions),
            ("/user/hooks", Domain::Hook),
            ("/orgs/{org}/teams", Domain::Team),
            ("/teams/{id}", Domain::Team),
            ("/orgs/{org}/members", Domain::Org),
            ("/users/{username}/repos", Domain::User),
            ("/packages/{owner}", Domain::Package),
            ("/repos/{owner}/{repo}/notifications", Domain::Notification),
            ("/topics/search", Domain::Repo),
            ("/version", Domain::Misc),
        ];
        for (path, domain) in cases {
            assert_eq!(domain_for_path(path), domain, "{path}");
        }
    }

    #[test]
    fn redundant_words_are_stripped() {
        let cases = [
            (Domain::Pull, "repoCreatePullRequest", "gitea_pull_create"),
            (
                Domain::Issue,
                "issueCreateComment",
                "gitea_issue_create_comment",
            ),
            (Domain::Issue, "issueListIssues", "gitea_issue_list"),
            (
                Domain::Pull,
                "repoCreatePullReviewRequests",
                "gitea_pull_create_review_requests",
            ),
            (
                Domain::Team,
                "orgListTeamMembers",
                "gitea_team_list_members",
            ),
            (Domain::Repo, "repoGet", "gitea_repo_get"),
            (
                Domain::Actions,
                "repoListActionsSecrets",
                "gitea_actions_repo_list_secrets",
            ),
            (
                Domain::Notification,
                "notifyGetList",
                "gitea_notification_get_list",
            ),
            (Domain::Issue, "issueIssue", "gitea_issue_issue_issue"),
        ];
        for (domain, id, name) in cases {
            assert_eq!(rule_name(domain, id), name, "{id}");
        }
    }
}

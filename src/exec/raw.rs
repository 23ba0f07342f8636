//! `gitea_api_request`: a raw call, held to the same policy as the catalog's actions.
//!
//! Only relative paths under the configured instance's `/api/v1` are accepted; no scheme, host,
//! `..`, backslashes or encoded separators. The path is matched against the catalog's templates
//! so that a withheld action cannot be reached raw.

use crate::catalog::{Action, ActionId, Catalog, HttpMethod, domain_for_path, route};
use crate::gitea::API_PREFIX;
use crate::policy::{Allowed, Policy, WithheldReason};

/// Longest raw path accepted.
pub const MAX_PATH_LEN: usize = 2048;

/// Checks a raw path and returns it relative to `/api/v1`, starting with `/`.
pub fn check_path(path: &str) -> Result<String, String> {
    if path.len() > MAX_PATH_LEN {
        return Err(format!("`path` is longer than {MAX_PATH_LEN} characters"));
    }
    let bad = |why: &str| {
        Err(format!(
            "`path` {why}; give a path under /api/v1 such as /repos/alice/demo/issues"
        ))
    };
    if path.is_empty() {
        return bad("is empty");
    }
    let lower = path.to_ascii_lowercase();
    if lower.contains("://")
        || lower.starts_with("http:")
        || lower.starts_with("https:")
        || path.starts_with("//")
    {
        return bad("must be relative to the configured instance (no scheme or host)");
    }
    let rel = path
        .strip_prefix(API_PREFIX)
        .filter(|r| r.is_empty() || r.starts_with('/'))
        .unwrap_or(path);
    if !rel.starts_with('/') {
        return bad("must start with /");
    }
    if rel.contains('?') || rel.contains('#') {
        return bad("must not carry a query or fragment (put query parameters in `query`)");
    }
    for forbidden in ["%2e", "%2f", "%5c", "%00", "%25"] {
        if lower.contains(forbidden) {
            return bad(
                "must not contain encoded dots, slashes, backslashes, NUL or percent signs",
            );
        }
    }
    let bytes = rel.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let ok = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b) || b == b'%';
        if !ok {
            return bad("contains characters that must be percent-encoded or are not allowed");
        }
        if b == b'%'
            && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            return bad("has a malformed percent escape");
        }
    }
    let trimmed = rel.trim_end_matches('/');
    let segments: Vec<&str> = trimmed.split('/').skip(1).collect();
    if segments.is_empty() {
        return bad("names no endpoint");
    }
    if segments
        .iter()
        .any(|s| s.is_empty() || *s == "." || *s == "..")
    {
        return bad("must not contain empty, `.` or `..` segments");
    }
    Ok(trimmed.to_string())
}

/// The catalog action a raw request reaches: same method, template matching the path. When
/// several templates match, the one with more literal text wins (`/issues/comments` over
/// `/issues/{index}`).
pub fn match_action<'c>(
    catalog: &'c Catalog,
    method: HttpMethod,
    path: &str,
) -> Option<(ActionId, &'c Action)> {
    let segments = route::segments(path);
    catalog
        .ids()
        .filter(|(_, a)| a.method == method)
        .filter_map(|(id, a)| a.route.matches(&segments).map(|literal| (literal, id, a)))
        .max_by_key(|(literal, id, _)| (*literal, std::cmp::Reverse(*id)))
        .map(|(_, id, a)| (id, a))
}

/// The family of a path no action matches: the actions on the catalog's most specific
/// templates that match a prefix of it. A template's trailing parameter may stand for several
/// segments (Gitea routes `/branches/*` and file paths as catch-alls) and a path may go deeper
/// than any template; either way it belongs with that template's actions. Literals only match
/// literals, so an owner named `issues` or `search` is still an owner. Ties keep every tied
/// template (the strictest verdict wins).
pub fn family(catalog: &Catalog, path: &str) -> Vec<ActionId> {
    let segments = route::segments(path);
    let mut best = (0usize, 0usize);
    let mut out = Vec::new();
    for (i, a) in catalog.ids() {
        let Some(fit) = a.route.matches_prefix(&segments) else {
            continue;
        };
        if fit > best {
            best = fit;
            out.clear();
        }
        if fit == best {
            out.push(i);
        }
    }
    out
}

/// Judges a raw request to a path no action matches by its [`family`] (see
/// [`Policy::check_unknown`]).
pub fn judge_unknown(
    catalog: &Catalog,
    policy: &Policy,
    method: HttpMethod,
    path: &str,
) -> Result<Allowed, WithheldReason> {
    let family = family(catalog, path);
    policy.check_unknown(catalog, method, &family, domain_for_path(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_paths_are_refused() {
        for bad in [
            "",
            "repos/a/b",
            "https://evil.example/api/v1/x",
            "//evil.example/x",
            "/repos/../admin/users",
            "/repos/a/%2e%2e/b",
            "/repos/a%2Fb/c",
            "/repos/a\\b",
            "/x?token=1",
            "/x#y",
            "/repos/a//b",
            "/%zz",
            "/repos/ a/b",
            "/repos/a/b\n",
            "/api/v1",
            "/",
            "/repos/./a",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
        assert_eq!(check_path("/api/v1/repos/a/b/").unwrap(), "/repos/a/b");
        assert_eq!(
            check_path("/repos/a/b/raw/docs/x%20y.md").unwrap(),
            "/repos/a/b/raw/docs/x%20y.md"
        );
    }

    fn fixture() -> Catalog {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gitea-mini.swagger.json"
        ))
        .unwrap();
        Catalog::build(&crate::spec::Spec::parse(&bytes).unwrap()).unwrap()
    }

    #[test]
    fn unknown_paths_belong_to_their_most_specific_family() {
        let c = fixture();
        let paths = |f: Vec<ActionId>| {
            let mut p: Vec<String> = f.iter().map(|&i| c[i].path.clone()).collect();
            p.dedup();
            p
        };
        // A branch name with a slash, and an owner that spells a literal elsewhere.
        for path in [
            "/repos/acme/web/branches/feature/x",
            "/repos/issues/web/branches/feature/x",
            "/repos/search/web/branches/x/y/z",
        ] {
            let f = family(&c, path);
            assert_eq!(
                paths(f),
                ["/repos/{owner}/{repo}/branches/{branch}"],
                "{path}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::proptest_cases(256)))]

        /// Any path is refused with a message, or comes back as a clean relative path that
        /// cannot leave `/api/v1`; matching it against the catalog never panics.
        #[test]
        fn hostile_raw_paths_are_refused_or_clean(
            path in proptest::prop_oneof![
                "\\PC{0,80}",
                "(/api/v1)?(/[-a-z0-9.%~:@!$&'()*+,;=]{0,8}){1,8}/?",
            ],
        ) {
            match check_path(&path) {
                Ok(clean) => {
                    proptest::prop_assert!(clean.starts_with('/') && !clean.starts_with("//"));
                    for seg in clean.split('/').skip(1) {
                        proptest::prop_assert!(!seg.is_empty() && seg != "." && seg != "..", "{clean}");
                    }
                    let lower = clean.to_ascii_lowercase();
                    proptest::prop_assert!(!lower.contains("%2f") && !lower.contains("%2e") && !lower.contains("%5c"));
                    let c = fixture();
                    let _ = match_action(&c, HttpMethod::Delete, &clean);
                    let _ = family(&c, &clean);
                }
                Err(e) => proptest::prop_assert!(e.starts_with("`path`"), "{e}"),
            }
        }
    }
}

//! Path patterns, segment by segment: the one matcher behind raw requests (concrete paths
//! against the catalog's templates) and token scopes (templates against Gitea's route groups).
//!
//! A segment is literal text with `{param}` pieces (`repos`, `{owner}`, `{index}.{diffType}`),
//! `*` (any one segment), `prefix*` (a segment by prefix), or, last, `**` (the rest, possibly
//! nothing) or a file-path parameter such as `{filepath}` (the rest, at least one segment).

/// One piece of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Param,
}

/// One segment of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// Literal text and parameters.
    Pieces(Vec<Piece>),
    /// `*`: any one segment.
    Any,
    /// `prefix*`: a segment starting with the prefix.
    Prefix(String),
    /// `**`: the rest of the path, possibly nothing.
    Rest,
    /// A trailing file-path parameter: the rest of the path, at least one segment.
    RestParam,
}

/// A parsed path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    segments: Vec<Segment>,
}

/// True for path parameters that carry a file path and keep their `/` separators.
pub fn is_multi_segment(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with("path")
}

/// The segments of a path (without the leading `/`).
pub fn segments(path: &str) -> Vec<&str> {
    path.trim_start_matches('/').split('/').collect()
}

impl Pattern {
    /// Parses a pattern (`/repos/{owner}/{repo}/issues/**`).
    pub fn parse(pattern: &str) -> Pattern {
        let raw = segments(pattern);
        let last = raw.len().saturating_sub(1);
        let segments = raw
            .iter()
            .enumerate()
            .map(|(i, s)| match *s {
                "**" if i == last => Segment::Rest,
                "*" => Segment::Any,
                s if s.ends_with('*') && !s.contains('{') => {
                    Segment::Prefix(s.trim_end_matches('*').to_string())
                }
                s if i == last
                    && s.starts_with('{')
                    && s.ends_with('}')
                    && s.matches('{').count() == 1
                    && is_multi_segment(&s[1..s.len() - 1]) =>
                {
                    Segment::RestParam
                }
                s => Segment::Pieces(pieces(s)),
            })
            .collect();
        Pattern { segments }
    }

    /// If the pattern matches the whole of `path` (its segments), how many literal bytes it
    /// matched (more is more specific).
    pub fn matches(&self, path: &[&str]) -> Option<usize> {
        let mut literal = 0;
        for (i, seg) in self.segments.iter().enumerate() {
            match seg {
                Segment::Rest => return Some(literal),
                Segment::RestParam => return (path.len() > i).then_some(literal),
                _ => literal += segment_matches(seg, path.get(i)?)?,
            }
        }
        (path.len() == self.segments.len()).then_some(literal)
    }

    /// If the pattern matches the first segments of `path` (the whole pattern, a prefix of the
    /// path), how many segments and literal bytes it matched.
    pub fn matches_prefix(&self, path: &[&str]) -> Option<(usize, usize)> {
        if self.segments.len() > path.len() {
            return None;
        }
        let mut literal = 0;
        for (seg, s) in self.segments.iter().zip(path) {
            match seg {
                Segment::Rest | Segment::RestParam => return Some((path.len(), literal)),
                _ => literal += segment_matches(seg, s)?,
            }
        }
        Some((self.segments.len(), literal))
    }
}

fn pieces(segment: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = segment;
    while let Some(start) = rest.find('{') {
        if start > 0 {
            out.push(Piece::Literal(rest[..start].to_string()));
        }
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        out.push(Piece::Param);
        rest = &rest[start + end + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Literal(rest.to_string()));
    }
    out
}

/// Matches one segment; returns the literal bytes matched.
fn segment_matches(seg: &Segment, s: &str) -> Option<usize> {
    match seg {
        Segment::Any => Some(0),
        Segment::Prefix(p) => s.starts_with(p.as_str()).then_some(p.len()),
        Segment::Rest | Segment::RestParam => Some(0),
        Segment::Pieces(pieces) => {
            fn go(pieces: &[Piece], s: &str) -> bool {
                match pieces.split_first() {
                    None => s.is_empty(),
                    Some((Piece::Literal(lit), tail)) => {
                        s.strip_prefix(lit.as_str()).is_some_and(|r| go(tail, r))
                    }
                    Some((Piece::Param, tail)) => (1..=s.len())
                        .filter(|&n| s.is_char_boundary(n))
                        .any(|n| go(tail, &s[n..])),
                }
            }
            go(pieces, s).then(|| {
                pieces
                    .iter()
                    .map(|p| match p {
                        Piece::Literal(l) => l.len(),
                        Piece::Param => 0,
                    })
                    .sum()
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> Option<usize> {
        Pattern::parse(pattern).matches(&segments(path))
    }

    #[test]
    fn templates_match_concrete_paths() {
        assert_eq!(m("/repos/{owner}/{repo}", "/repos/a/b"), Some(5));
        assert_eq!(
            m(
                "/repos/{owner}/{repo}/pulls/{index}.{diffType}",
                "/repos/a/b/pulls/12.diff"
            ),
            Some(11)
        );
        assert_eq!(
            m(
                "/repos/{owner}/{repo}/pulls/{index}.{diffType}",
                "/repos/a/b/pulls/12"
            ),
            None
        );
        assert_eq!(m("/signing-key.gpg", "/signing-key.gpg"), Some(15));
        assert_eq!(
            m(
                "/repos/{owner}/{repo}/raw/{filepath}",
                "/repos/a/b/raw/docs/x.md"
            ),
            Some(8)
        );
        assert_eq!(
            m("/repos/{owner}/{repo}/raw/{filepath}", "/repos/a/b/raw"),
            None
        );
        assert_eq!(m("/repos/issues/search", "/repos/issues/web"), None);
    }

    #[test]
    fn globs_match_templates() {
        assert!(
            m(
                "/repos/*/*/issues/**",
                "/repos/{owner}/{repo}/issues/{index}/comments"
            )
            .is_some()
        );
        assert!(m("/repos/*/*/issues/**", "/repos/{owner}/{repo}/issues").is_some());
        assert!(m("/markdown*/**", "/markdown/raw").is_some());
        assert!(m("/repos/**", "/repositories/1").is_none());
        assert!(m("/settings/*", "/settings/api/x").is_none());
    }

    #[test]
    fn prefixes_of_deeper_paths() {
        let p = Pattern::parse("/repos/{owner}/{repo}/branches/{branch}");
        assert_eq!(
            p.matches_prefix(&segments("/repos/a/b/branches/feature/x")),
            Some((5, 13))
        );
        assert_eq!(p.matches_prefix(&segments("/repos/a/b")), None);
    }
}

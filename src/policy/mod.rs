//! Which actions may be offered and called, and why the others are withheld.
//!
//! The policy is computed once per configuration over the whole catalog and records, for every
//! action, a [`Decision`]. Every surface (find, execute, the raw request, resources, the CLI)
//! asks the same policy, so a rule enforced on one path is enforced on all of them. A withheld
//! action keeps its reason: callers are told *why* and *who can change it*, never "unknown".

use std::fmt;

use crate::catalog::{Action, ActionId, Catalog, Domain, Scope};

/// The operator's filters.
#[derive(Debug, Clone, Default)]
pub struct PolicyConfig {
    /// `TOOLSETS`: the domains offered (`None` = all).
    pub toolsets: Option<Vec<Domain>>,
    /// `READ_ONLY`: withhold every action that is not read-only.
    pub read_only: bool,
    /// `DISABLED_TOOLS`: action names, operationIds or domains to withhold.
    pub disabled: Vec<String>,
    /// Entries of `TOOLSETS` that name no domain (kept to report them).
    pub unknown_toolsets: Vec<String>,
    /// `DISABLED_TOOLS_ALLOW_UNKNOWN`: an entry that matches nothing is a warning, not an
    /// error (for one list shared by instances of different versions).
    pub allow_unknown_disabled: bool,
}

impl PolicyConfig {
    /// Parses the comma-separated `TOOLSETS` value. `all` (or an empty value) means every domain.
    pub fn parse_toolsets(value: &str) -> (Option<Vec<Domain>>, Vec<String>) {
        let entries: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if entries.is_empty() || entries.iter().any(|e| e.eq_ignore_ascii_case("all")) {
            return (None, Vec::new());
        }
        let mut domains = Vec::new();
        let mut unknown = Vec::new();
        for e in entries {
            match Domain::parse(e) {
                Some(d) if !domains.contains(&d) => domains.push(d),
                Some(_) => {}
                None => unknown.push(e.to_string()),
            }
        }
        (Some(domains), unknown)
    }

    /// Parses the comma-separated `DISABLED_TOOLS` value.
    pub fn parse_list(value: &str) -> Vec<String> {
        value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// Why an action is not available.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WithheldReason {
    /// Its domain is not in `TOOLSETS`.
    Toolsets {
        /// The action's domain.
        domain: Domain,
    },
    /// `DISABLED_TOOLS` names it (by name, operationId or domain).
    Disabled {
        /// The entry that matched.
        entry: String,
    },
    /// `READ_ONLY` is on and the action writes.
    ReadOnly,
    /// The Gitea token lacks scopes the route needs.
    MissingScopes {
        /// The scopes the token would need in addition.
        missing: Vec<Scope>,
    },
    /// The id names no action of the catalog this policy was made for (a programming error;
    /// refused rather than allowed).
    NotInCatalog,
    /// `FLOW_GUARD=deny`: the write follows reads of non-public repositories and would place
    /// content elsewhere.
    FlowGuard {
        /// The non-public repositories read before.
        sources: Vec<String>,
    },
}

impl WithheldReason {
    /// Who can lift the restriction.
    pub fn who_can_change(&self) -> &'static str {
        match self {
            WithheldReason::Toolsets { .. } => "the server operator (TOOLSETS)",
            WithheldReason::Disabled { .. } => "the server operator (DISABLED_TOOLS)",
            WithheldReason::ReadOnly => "the server operator (READ_ONLY)",
            WithheldReason::MissingScopes { .. } => {
                "whoever issues the Gitea token (create a token with the missing scopes)"
            }
            WithheldReason::NotInCatalog => "nobody: the action does not exist on this server",
            WithheldReason::FlowGuard { .. } => {
                "the server operator (FLOW_GUARD=confirm asks for a confirmation instead)"
            }
        }
    }

    /// A short machine-friendly code.
    pub fn code(&self) -> &'static str {
        match self {
            WithheldReason::Toolsets { .. } => "toolsets",
            WithheldReason::Disabled { .. } => "disabled",
            WithheldReason::ReadOnly => "read_only",
            WithheldReason::MissingScopes { .. } => "token_scope",
            WithheldReason::NotInCatalog => "not_in_catalog",
            WithheldReason::FlowGuard { .. } => "flow_guard",
        }
    }
}

impl fmt::Display for WithheldReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WithheldReason::Toolsets { domain } => {
                write!(f, "the {domain} toolset is not enabled on this server")
            }
            WithheldReason::Disabled { entry } => {
                write!(
                    f,
                    "disabled on this server (DISABLED_TOOLS entry {entry:?})"
                )
            }
            WithheldReason::ReadOnly => {
                f.write_str("this server is read-only and the action writes")
            }
            WithheldReason::MissingScopes { missing } => {
                let list: Vec<String> = missing.iter().map(Scope::to_string).collect();
                write!(f, "the Gitea token lacks the scope {}", list.join(", "))
            }
            WithheldReason::NotInCatalog => f.write_str("no such action in this catalog"),
            WithheldReason::FlowGuard { sources } => write!(
                f,
                "this write follows reads of the non-public {} in this session and could carry their content elsewhere; FLOW_GUARD=deny refuses such writes",
                sources.join(", ")
            ),
        }
    }
}

/// The verdict for an id or action the catalog does not hold.
static NOT_IN_CATALOG: Decision = Decision::Withheld {
    reason: WithheldReason::NotInCatalog,
};

/// The verdict for one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// May be offered and called.
    Allowed,
    /// Not available, and why.
    Withheld {
        /// The first rule that removed it.
        reason: WithheldReason,
    },
}

impl Decision {
    /// True for [`Decision::Allowed`].
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allowed)
    }
}

/// Proof that the policy allowed a call. Only this module can make one, so nothing can send a
/// request the policy has not seen.
#[derive(Debug)]
pub struct Allowed(());

/// The decisions for a whole catalog, indexed like [`Catalog::actions`].
#[derive(Debug, Clone)]
pub struct Policy {
    decisions: Vec<Decision>,
    warnings: Vec<String>,
    unmatched: Vec<String>,
    read_only: bool,
    toolsets: Option<Vec<Domain>>,
    disabled: Vec<String>,
}

impl Policy {
    /// Applies `config` to every action of `catalog`.
    pub fn new(catalog: &Catalog, config: &PolicyConfig) -> Policy {
        let mut warnings: Vec<String> = config
            .unknown_toolsets
            .iter()
            .map(|e| {
                let known: Vec<&str> = Domain::ALL.iter().map(|d| d.as_str()).collect();
                format!(
                    "TOOLSETS entry {e:?} names no domain (known: {})",
                    known.join(", ")
                )
            })
            .collect();
        let mut used = vec![false; config.disabled.len()];
        let decisions = catalog
            .actions()
            .iter()
            .map(|a| {
                if let Some(ts) = &config.toolsets {
                    if !ts.contains(&a.domain) {
                        return Decision::Withheld {
                            reason: WithheldReason::Toolsets { domain: a.domain },
                        };
                    }
                }
                if let Some(i) = config.disabled.iter().position(|e| disables(e, a)) {
                    used[i] = true;
                    return Decision::Withheld {
                        reason: WithheldReason::Disabled {
                            entry: config.disabled[i].clone(),
                        },
                    };
                }
                if config.read_only && !a.annotations.read_only {
                    return Decision::Withheld {
                        reason: WithheldReason::ReadOnly,
                    };
                }
                Decision::Allowed
            })
            .collect();
        let mut unmatched = Vec::new();
        for (entry, used) in config.disabled.iter().zip(&used) {
            // An entry may be shadowed by an earlier rule (toolsets) yet still be meaningful.
            let matches_any = catalog.actions().iter().any(|a| disables(entry, a));
            if !used && !matches_any {
                warnings.push(format!(
                    "DISABLED_TOOLS entry {entry:?} matches no action name, operationId or domain"
                ));
                unmatched.push(entry.clone());
            }
        }
        Policy {
            decisions,
            warnings,
            unmatched,
            read_only: config.read_only,
            toolsets: config.toolsets.clone(),
            disabled: config.disabled.clone(),
        }
    }

    /// A policy that allows everything (tests, `catalog` listings).
    pub fn allow_all(catalog: &Catalog) -> Policy {
        Policy::new(catalog, &PolicyConfig::default())
    }

    /// The decision for action `id`; an id this policy does not know is withheld, never
    /// allowed.
    pub fn decision(&self, id: ActionId) -> &Decision {
        self.decisions.get(id.index()).unwrap_or(&NOT_IN_CATALOG)
    }

    /// The decision for `action` (looked up by name in `catalog`).
    pub fn decide(&self, catalog: &Catalog, action: &Action) -> &Decision {
        catalog
            .id_of(&action.name)
            .map_or(&NOT_IN_CATALOG, |id| self.decision(id))
    }

    /// Withholds, additionally, every allowed action whose scopes the token lacks.
    /// `granted` is the token's scope list as Gitea reports it.
    pub fn restrict_to_scopes(&mut self, catalog: &Catalog, granted: &[Scope], all_access: bool) {
        if all_access {
            return;
        }
        for (d, a) in self.decisions.iter_mut().zip(catalog.actions()) {
            if !d.is_allowed() {
                continue;
            }
            let missing: Vec<Scope> = a
                .scopes
                .scopes()
                .iter()
                .copied()
                .filter(|need| !granted.iter().any(|g| g.satisfies(*need)))
                .collect();
            if !missing.is_empty() {
                *d = Decision::Withheld {
                    reason: WithheldReason::MissingScopes { missing },
                };
            }
        }
    }

    /// Checks action `id`: [`Allowed`], or why it is withheld.
    pub fn check(&self, id: ActionId) -> Result<Allowed, WithheldReason> {
        match self.decision(id) {
            Decision::Allowed => Ok(Allowed(())),
            Decision::Withheld { reason } => Err(reason.clone()),
        }
    }

    /// Checks a raw request to a path no catalog action matches, by the same rules as the
    /// actions of the `family` it would belong to (the catalog's most specific templates for
    /// the path; see `exec::raw::family`): each family domain against `TOOLSETS` and domain
    /// entries of `DISABLED_TOOLS`, the method against `READ_ONLY`, and the family's own
    /// decisions — a withheld action of the same method stays withheld under any spelling of
    /// its path, and a family whose every action is withheld is withheld as a whole. With no
    /// family, `fallback` is the domain.
    pub fn check_unknown(
        &self,
        catalog: &Catalog,
        method: crate::catalog::HttpMethod,
        family: &[ActionId],
        fallback: Domain,
    ) -> Result<Allowed, WithheldReason> {
        let mut domains: Vec<Domain> = family.iter().map(|&id| catalog[id].domain).collect();
        domains.dedup();
        if domains.is_empty() {
            domains.push(fallback);
        }
        for domain in domains {
            if let Some(ts) = &self.toolsets {
                if !ts.contains(&domain) {
                    return Err(WithheldReason::Toolsets { domain });
                }
            }
            if let Some(entry) = self
                .disabled
                .iter()
                .find(|e| Domain::parse(e) == Some(domain))
            {
                return Err(WithheldReason::Disabled {
                    entry: entry.clone(),
                });
            }
        }
        if self.read_only && !method.is_read() {
            return Err(WithheldReason::ReadOnly);
        }
        let withheld = |id: &ActionId| match self.decision(*id) {
            Decision::Withheld { reason } => Some(reason.clone()),
            Decision::Allowed => None,
        };
        let same_method = family.iter().filter(|&&id| catalog[id].method == method);
        if let Some(reason) = same_method.filter_map(withheld).next() {
            return Err(reason);
        }
        if !family.is_empty() && family.iter().all(|i| withheld(i).is_some()) {
            if let Some(reason) = family.iter().find_map(withheld) {
                return Err(reason);
            }
        }
        Ok(Allowed(()))
    }

    /// `DISABLED_TOOLS` entries that match no action, operationId or domain (a typo would
    /// otherwise leave the action it meant callable).
    pub fn unmatched_disabled(&self) -> &[String] {
        &self.unmatched
    }

    /// Warnings about configuration entries that match nothing.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// True when `READ_ONLY` is on.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// How many actions are allowed.
    pub fn allowed_count(&self) -> usize {
        self.decisions.iter().filter(|d| d.is_allowed()).count()
    }
}

/// True when a `DISABLED_TOOLS` entry names this action, its operationId or its domain.
fn disables(entry: &str, action: &Action) -> bool {
    entry.eq_ignore_ascii_case(action.name.as_str())
        || entry.eq_ignore_ascii_case(action.operation_id.as_str())
        || Domain::parse(entry) == Some(action.domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolsets_parse_with_unknown_entries_kept() {
        let (ts, unknown) = PolicyConfig::parse_toolsets("repo, Issue,nope,repo");
        assert_eq!(ts, Some(vec![Domain::Repo, Domain::Issue]));
        assert_eq!(unknown, ["nope"]);
        assert_eq!(PolicyConfig::parse_toolsets("all,repo").0, None);
        assert_eq!(PolicyConfig::parse_toolsets(" ").0, None);
    }
}

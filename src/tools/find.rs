//! `gitea_find_action`: search the catalog, answer compact cards.

use serde_json::{Value, json};

use super::{ToolOutput, bool_arg, check_known, int_arg};
use crate::catalog::Domain;
use crate::render::card::{MAX_SIBLINGS, card_json, card_text, schema_text, siblings_text};
use crate::search::{MAX_QUERY_CHARS, SearchOptions};
use crate::state::State;

/// The tool's name.
pub const NAME: &str = "gitea_find_action";

/// The tool's description (kept short: it is paid for in every `tools/list`).
pub const DESCRIPTION: &str = "Find the Gitea API action for a task described in plain words. \
Returns the best actions (name, method, path, required arguments); the first carries its input \
schema. Then call gitea_execute_action with the name.";

/// Most results one call may ask for.
pub const MAX_LIMIT: u64 = 20;
/// Most cards that may carry their full input schema.
pub const MAX_SCHEMAS: u64 = 3;

/// The tool's input schema.
pub fn input_schema() -> Value {
    let domains: Vec<&str> = Domain::ALL.iter().map(|d| d.as_str()).collect();
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": MAX_QUERY_CHARS, "description": "What you want to do, e.g. \"merge a pull request\""},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 5},
            "domain": {"type": "string", "enum": domains},
            "read_only": {"type": "boolean", "description": "Only read-only (true) or only writing (false) actions"},
            "include_schema": {"type": "integer", "minimum": 0, "maximum": MAX_SCHEMAS, "default": 1, "description": "How many top results carry their input schema"}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// Runs a find call.
pub fn run(state: &State, args: &Value) -> ToolOutput {
    match parse(args) {
        Ok(input) => answer(state, &input),
        Err(message) => ToolOutput::error(message, json!({})),
    }
}

/// Checked arguments of a find call.
#[derive(Debug, Clone)]
pub struct FindInput {
    /// The need, in the user's words.
    pub query: String,
    /// Search options.
    pub options: SearchOptions,
    /// How many top cards carry their schema.
    pub include_schema: usize,
}

/// Checks the arguments.
pub fn parse(args: &Value) -> Result<FindInput, String> {
    let empty = serde_json::Map::new();
    let args = match args {
        Value::Object(m) => m,
        Value::Null => &empty,
        other => return Err(format!("arguments must be an object, got {other}")),
    };
    check_known(
        args,
        &["query", "limit", "domain", "read_only", "include_schema"],
    )?;
    let query = match args.get("query") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "`query` must be a string, got {}",
                crate::outbound::clip(&other.to_string(), 100)
            ));
        }
        None => {
            return Err(
                "`query` is required: describe what you want to do, e.g. \"list open issues\""
                    .into(),
            );
        }
    };
    let limit = int_arg(args, "limit", 5, 1, MAX_LIMIT)? as usize;
    let include_schema = int_arg(args, "include_schema", 1, 0, MAX_SCHEMAS)? as usize;
    let domain = match args.get("domain") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(Domain::parse(d).ok_or_else(|| {
            let known: Vec<&str> = Domain::ALL.iter().map(|d| d.as_str()).collect();
            format!(
                "`domain` {:?} is not a domain; use one of {}",
                crate::outbound::clip(d, 100),
                known.join(", ")
            )
        })?),
        Some(other) => {
            return Err(format!(
                "`domain` must be a string, got {}",
                crate::outbound::clip(&other.to_string(), 100)
            ));
        }
    };
    let read_only = bool_arg(args, "read_only")?;
    Ok(FindInput {
        query,
        options: SearchOptions {
            limit,
            domain,
            read_only,
        },
        include_schema,
    })
}

fn answer(state: &State, input: &FindInput) -> ToolOutput {
    let index = match state.search_index() {
        Ok(i) => i,
        Err(e) => return ToolOutput::error(e.to_string(), json!({"query": input.query})),
    };
    let hits = match index.search(&input.query, &input.options) {
        Ok(h) => h,
        Err(e) => {
            return ToolOutput::error(
                e.to_string(),
                json!({"query": crate::outbound::clip(&input.query, 200)}),
            );
        }
    };
    if hits.is_empty() {
        return ToolOutput::ok(
            format!(
                "No action matches {:?}. Rephrase with the Gitea object and verb (e.g. \"create issue comment\").",
                input.query
            ),
            json!({"query": input.query, "results": []}),
        );
    }
    let mut text = String::new();
    let mut cards = Vec::with_capacity(hits.len());
    for (rank, hit) in hits.iter().enumerate() {
        let action = &state.catalog[hit.action];
        let decision = state.policy.decide(&state.catalog, action);
        card_text(&mut text, rank + 1, action, decision);
        cards.push(card_json(action, decision, rank < input.include_schema));
    }
    // The best card's siblings on the same resource: a near miss is one step away.
    let actions = state.catalog.actions();
    let shown: Vec<usize> = hits.iter().map(|h| h.action.index()).collect();
    let related = index.siblings(hits[0].action.index(), &shown, MAX_SIBLINGS);
    siblings_text(&mut text, actions, &related);
    let related_json: Vec<Value> = related
        .iter()
        .map(|&(i, r)| {
            let a = &actions[i];
            json!({"name": a.name.as_str(), "method": a.method.as_str(), "path": a.path, "relation": r.as_str()})
        })
        .collect();
    // The schema the JSON card carries, serialized once per action.
    for hit in hits.iter().take(input.include_schema) {
        schema_text(&mut text, &actions[hit.action.index()]);
    }
    text.push_str("Call gitea_execute_action with {\"action\": <name>, \"arguments\": {...}}.");
    ToolOutput::ok(
        text,
        json!({"query": input.query, "results": cards, "siblings": related_json}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, GlobalArgs};
    use crate::spec::Spec;

    fn state(args: GlobalArgs) -> State {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gitea-mini.swagger.json"
        );
        let spec = Spec::parse(&std::fs::read(path).unwrap()).unwrap();
        State::new(&spec, &Config::from_args(&args).unwrap().policy).unwrap()
    }

    #[test]
    fn cards_carry_what_a_call_needs_and_the_first_its_schema() {
        let st = state(GlobalArgs::default());
        let out = run(&st, &json!({"query": "merge a pull request", "limit": 3}));
        assert!(!out.is_error, "{}", out.text);
        let results = out.structured["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        assert_eq!(results[0]["name"], "gitea_pull_merge");
        assert_eq!(results[0]["method"], "POST");
        assert_eq!(
            results[0]["required"],
            json!({"owner": "string", "repo": "string", "index": "integer"})
        );
        assert!(results[0].get("input_schema").is_some());
        assert!(results[1].get("input_schema").is_none());
        assert!(results[0].get("withheld").is_none());
        assert!(
            out.text.starts_with(
                "1. gitea_pull_merge POST /repos/{owner}/{repo}/pulls/{index}/merge — "
            ),
            "{}",
            out.text
        );
        assert!(out.text.contains(&format!(
            "input schema of gitea_pull_merge: {}\n",
            results[0]["input_schema"]
        )));
        // The card's schema is compact: no sudo, no additionalProperties.
        let schema = results[0]["input_schema"].to_string();
        assert!(
            !schema.contains("sudo") && !schema.contains("additionalProperties"),
            "{schema}"
        );
        let none = run(
            &st,
            &json!({"query": "merge a pull request", "include_schema": 0}),
        );
        assert!(
            none.structured["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c.get("input_schema").is_none())
        );
    }

    #[test]
    fn withheld_actions_say_why_and_who_can_change_it() {
        let st = state(GlobalArgs {
            read_only: true,
            ..GlobalArgs::default()
        });
        let out = run(&st, &json!({"query": "delete a repository", "limit": 5}));
        let del = out.structured["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "gitea_repo_delete")
            .cloned()
            .unwrap();
        assert_eq!(del["withheld"]["code"], "read_only");
        assert!(
            del["withheld"]["who_can_change"]
                .as_str()
                .unwrap()
                .contains("READ_ONLY")
        );
        assert!(
            out.text.contains("WITHHELD: this server is read-only"),
            "{}",
            out.text
        );
    }

    #[test]
    fn bad_queries_are_error_results() {
        let st = state(GlobalArgs::default());
        let long = run(&st, &json!({"query": "x".repeat(600)}));
        assert!(
            long.is_error && long.text.contains("600 characters"),
            "{}",
            long.text
        );
        let empty = run(&st, &json!({"query": "  "}));
        assert!(empty.is_error && empty.text.contains("empty"));
        let nothing = run(&st, &json!({"query": "zzqqxx"}));
        assert!(!nothing.is_error);
        assert_eq!(nothing.structured["results"], json!([]));
    }

    #[test]
    fn arguments_are_checked_with_helpful_errors() {
        let ok = parse(
            &json!({"query": "list issues", "limit": "7", "domain": "Issue", "include_schema": 0}),
        )
        .unwrap();
        assert_eq!(
            (ok.options.limit, ok.options.domain, ok.include_schema),
            (7, Some(Domain::Issue), 0)
        );
        let cases = [
            (json!({}), "`query` is required"),
            (json!({"query": 3}), "`query` must be a string"),
            (
                json!({"query": "x", "limit": 0}),
                "`limit` must be an integer from 1 to 20",
            ),
            (json!({"query": "x", "limit": 21}), "from 1 to 20"),
            (json!({"query": "x", "include_schema": 4}), "from 0 to 3"),
            (json!({"query": "x", "domain": "pulls"}), "is not a domain"),
            (
                json!({"query": "x", "read_only": "yes"}),
                "`read_only` must be true or false",
            ),
            (json!({"query": "x", "limt": 3}), "did you mean `limit`"),
            (json!(["x"]), "arguments must be an object"),
        ];
        for (args, want) in cases {
            let err = parse(&args).unwrap_err();
            assert!(err.contains(want), "{args}: {err}");
        }
    }
}

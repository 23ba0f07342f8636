//! The catalog built from `tests/fixtures/gitea-mini.swagger.json`: 46 operations in Gitea's
//! template form, chosen to exercise every shape the catalog has to handle (JSON bodies,
//! multipart uploads, text and binary answers, a deprecated operation, a recursive definition,
//! and the `OAuth2` / `Oauth2` name collision settled by `spec/overrides.toml`).

use std::collections::{BTreeMap, BTreeSet};

use aegis_gitea_mcp::catalog::{
    self, Action, Catalog, Domain, HttpMethod, NAME_PATTERN, ParamLocation, ResponseKind, Scope,
    ScopeRequirement, overridden_operation_ids, split_words,
};
use aegis_gitea_mcp::policy::{Decision, Policy, PolicyConfig, WithheldReason};
use aegis_gitea_mcp::spec::{self, Spec};
use serde_json::{Value, json};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/gitea-mini.swagger.json"
);

/// The fixture's raw JSON and the catalog built from it.
fn fixture() -> (Value, Catalog) {
    let bytes = std::fs::read(FIXTURE).expect("the fixture is readable");
    let raw: Value = serde_json::from_slice(&bytes).expect("the fixture is JSON");
    let spec = Spec::parse(&bytes).expect("the fixture parses");
    let catalog = Catalog::build(&spec).expect("the fixture builds a catalog");
    (raw, catalog)
}

fn action<'a>(catalog: &'a Catalog, operation_id: &str) -> &'a Action {
    catalog
        .get(operation_id)
        .unwrap_or_else(|| panic!("no action for operationId {operation_id}"))
}

fn validator(a: &Action) -> jsonschema::Validator {
    jsonschema::validator_for(&a.input_schema)
        .unwrap_or_else(|e| panic!("the input schema of {} does not compile: {e}", a.name))
}

fn scope_strings(a: &Action) -> Vec<String> {
    a.scopes.scopes().iter().map(Scope::to_string).collect()
}

/// Every (METHOD, path) the raw document declares, with its operationId.
fn raw_operations(raw: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let paths = raw["paths"].as_object().expect("fixture has paths");
    for (path, item) in paths {
        for (key, op) in item.as_object().expect("path item is an object") {
            if HttpMethod::from_swagger_key(key).is_none() {
                continue;
            }
            let id = op["operationId"].as_str().expect("operationId is a string");
            out.push((key.to_ascii_uppercase(), path.clone(), id.to_string()));
        }
    }
    out
}

#[test]
fn every_operation_appears_exactly_once() {
    let (raw, catalog) = fixture();
    let raw_ops = raw_operations(&raw);
    assert_eq!(raw_ops.len(), 46, "the fixture has 46 operations");
    assert_eq!(catalog.len(), raw_ops.len());

    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for a in catalog.actions() {
        *seen
            .entry((a.method.to_string(), a.path.clone()))
            .or_default() += 1;
    }
    for (method, path, id) in &raw_ops {
        assert_eq!(
            seen.get(&(method.clone(), path.clone())),
            Some(&1),
            "{method} {path} ({id}) must appear exactly once"
        );
        let a = action(&catalog, id);
        assert_eq!(
            (a.method.as_str(), a.path.as_str()),
            (method.as_str(), path.as_str())
        );
    }
    let names: BTreeSet<&str> = catalog.actions().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names.len(), catalog.len(), "action names are unique");
}

#[test]
fn names_follow_the_rules_and_the_override() {
    let (_, catalog) = fixture();
    let got: BTreeMap<&str, &str> = catalog
        .actions()
        .iter()
        .map(|a| (a.operation_id.as_str(), a.name.as_str()))
        .collect();
    let expected: BTreeMap<&str, &str> = [
        ("adminCreateUser", "gitea_admin_create_user"),
        ("adminSearchUsers", "gitea_admin_search_users"),
        ("createCurrentUserRepo", "gitea_user_create_current_repo"),
        ("getVersion", "gitea_misc_get_version"),
        ("issueAddLabel", "gitea_issue_add_label"),
        ("issueCreateComment", "gitea_issue_create_comment"),
        ("issueCreateIssue", "gitea_issue_create"),
        ("issueCreateLabel", "gitea_issue_create_label"),
        (
            "issueDeleteCommentDeprecated",
            "gitea_issue_delete_comment_deprecated",
        ),
        ("issueGetComment", "gitea_issue_get_comment"),
        ("issueGetComments", "gitea_issue_get_comments"),
        ("issueGetIssue", "gitea_issue_get"),
        ("issueListIssues", "gitea_issue_list"),
        ("issueListLabels", "gitea_issue_list_labels"),
        ("issueSearchIssues", "gitea_issue_search"),
        ("notifyGetList", "gitea_notification_get_list"),
        ("orgListTeams", "gitea_team_list"),
        ("repoCreateBranch", "gitea_repo_create_branch"),
        ("repoCreateFile", "gitea_repo_create_file"),
        ("repoCreatePullRequest", "gitea_pull_create"),
        ("repoCreatePullReview", "gitea_pull_create_review"),
        (
            "repoCreateReleaseAttachment",
            "gitea_release_create_attachment",
        ),
        ("repoDelete", "gitea_repo_delete"),
        ("repoDeleteBranch", "gitea_repo_delete_branch"),
        (
            "repoDownloadPullDiffOrPatch",
            "gitea_pull_download_diff_or_patch",
        ),
        ("repoEdit", "gitea_repo_edit"),
        ("repoGet", "gitea_repo_get"),
        ("repoGetBranch", "gitea_repo_get_branch"),
        (
            "repoGetCombinedStatusByRef",
            "gitea_repo_get_combined_status_by_ref",
        ),
        ("repoGetContents", "gitea_repo_get_contents"),
        ("repoGetPullRequest", "gitea_pull_get"),
        ("repoGetRawFile", "gitea_repo_get_raw_file"),
        ("repoGetSingleCommit", "gitea_repo_get_single_commit"),
        ("repoListBranches", "gitea_repo_list_branches"),
        ("repoListPullRequests", "gitea_pull_list"),
        ("repoListPullReviews", "gitea_pull_list_reviews"),
        ("repoListStatusesByRef", "gitea_repo_list_statuses_by_ref"),
        ("repoMergePullRequest", "gitea_pull_merge"),
        ("repoPullRequestIsMerged", "gitea_pull_is_merged"),
        ("repoSearch", "gitea_repo_search"),
        ("repoUpdateTopics", "gitea_repo_update_topics"),
        ("updateRepoSecret", "gitea_actions_update_repo_secret"),
        ("userGet", "gitea_user_get"),
        ("userGetCurrent", "gitea_user_get_current"),
        (
            "userGetOAuth2Application",
            "gitea_user_get_oauth2_application",
        ),
        (
            "userGetOauth2Application",
            "gitea_user_list_oauth2_applications",
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, expected);
}

#[test]
fn the_oauth2_collision_is_settled_by_the_override() {
    let (_, catalog) = fixture();
    // Split into words, the two operationIds are the same: only the override tells them apart.
    assert_eq!(
        split_words("userGetOauth2Application"),
        split_words("userGetOAuth2Application")
    );
    assert!(overridden_operation_ids().any(|id| id == "userGetOauth2Application"));
    let list = action(&catalog, "userGetOauth2Application");
    let get = action(&catalog, "userGetOAuth2Application");
    assert_eq!(list.name.as_str(), "gitea_user_list_oauth2_applications");
    assert_eq!(list.path, "/user/applications/oauth2");
    assert_eq!(get.name.as_str(), "gitea_user_get_oauth2_application");
    assert_eq!(get.path, "/user/applications/oauth2/{id}");
    // Both are reachable by name as well.
    assert_eq!(
        catalog
            .get("GITEA_USER_LIST_OAUTH2_APPLICATIONS")
            .map(|a| a.path.as_str()),
        Some("/user/applications/oauth2")
    );
}

#[test]
fn json_body_action_carries_its_definitions() {
    let (_, catalog) = fixture();
    let a = action(&catalog, "issueCreateIssue");
    assert_eq!(a.name.as_str(), "gitea_issue_create");
    let body = a.body.as_ref().expect("issueCreateIssue has a body");
    assert_eq!(body.content_type, "application/json");
    assert!(
        body.properties.iter().any(|p| p == "title"),
        "{:?}",
        body.properties
    );
    assert!(!a.is_multipart());

    let schema = &*a.input_schema;
    assert_eq!(
        schema["properties"]["body"],
        json!({"$ref": "#/$defs/CreateIssueOption"})
    );
    let defs = schema["$defs"].as_object().expect("$defs is an object");
    assert_eq!(
        defs.keys().map(String::as_str).collect::<Vec<_>>(),
        ["CreateIssueOption", "TreeNode"],
        "exactly the definitions the body reaches are copied"
    );
    assert_eq!(defs["CreateIssueOption"]["required"], json!(["title"]));
    let text = schema.to_string();
    assert!(
        !text.contains("#/definitions/"),
        "refs are rewritten: {text}"
    );
    assert!(
        !text.contains("x-go-"),
        "extension keys are dropped: {text}"
    );

    let v = validator(a);
    let ok = json!({"owner": "o", "repo": "r", "body": {"title": "t", "labels": [1, 2]}});
    assert!(v.is_valid(&ok));
    for bad in [
        json!({"owner": "o", "repo": "r", "body": {"labels": [1]}}),
        json!({"owner": "o", "repo": "r", "body": {"title": "t", "titel": "typo"}}),
        json!({"owner": "o", "repo": "r", "body": {"title": 5}}),
        json!({"owner": "o", "repo": "r", "body": "not an object"}),
    ] {
        assert!(!v.is_valid(&bad), "must be refused: {bad}");
    }
}

#[test]
fn multipart_upload_has_a_file_argument() {
    let (_, catalog) = fixture();
    let a = action(&catalog, "repoCreateReleaseAttachment");
    assert_eq!(a.name.as_str(), "gitea_release_create_attachment");
    assert!(a.is_multipart());
    assert!(a.body.is_none(), "a multipart upload has no JSON body");
    let files: Vec<&str> = a.file_params().map(|p| p.name.as_str()).collect();
    assert_eq!(files, ["attachment"]);
    let file = a.file_params().next().expect("one file parameter");
    assert_eq!(file.location, ParamLocation::FormData);
    assert_eq!(file.ty, "object");

    let attachment = &a.input_schema["properties"]["attachment"];
    assert_eq!(attachment["type"], "object");
    assert_eq!(
        attachment["required"],
        json!(["filename", "content_base64"])
    );
    assert_eq!(attachment["additionalProperties"], json!(false));
    assert!(attachment["properties"]["filename"].is_object());
    assert!(attachment["properties"]["content_base64"].is_object());

    let v = validator(a);
    let base = json!({"owner": "o", "repo": "r", "id": 7, "name": "n.zip"});
    let with = |file: Value| {
        let mut args = base.clone();
        args["attachment"] = file;
        args
    };
    assert!(
        v.is_valid(&base),
        "the file field is optional in the fixture"
    );
    assert!(v.is_valid(&with(
        json!({"filename": "a.zip", "content_base64": "UEsDBA=="})
    )));
    assert!(!v.is_valid(&with(json!({"filename": "a.zip"}))));
    assert!(!v.is_valid(&with(json!({"filename": "", "content_base64": ""}))));
    assert!(!v.is_valid(&with(json!("raw bytes"))));
}

#[test]
fn response_kinds_are_classified() {
    let (_, catalog) = fixture();
    let kind = |id: &str| action(&catalog, id).response;
    assert_eq!(kind("repoDownloadPullDiffOrPatch"), ResponseKind::Text);
    assert_eq!(kind("repoGetRawFile"), ResponseKind::Binary);
    assert_eq!(kind("repoGet"), ResponseKind::Json);
    assert_eq!(kind("repoDelete"), ResponseKind::Empty);
}

#[test]
fn the_deprecated_operation_is_flagged() {
    let (raw, catalog) = fixture();
    let flagged: Vec<&str> = catalog
        .actions()
        .iter()
        .filter(|a| a.deprecated)
        .map(|a| a.operation_id.as_str())
        .collect();
    assert_eq!(flagged, ["issueDeleteCommentDeprecated"]);
    let declared = raw_operations(&raw)
        .iter()
        .filter(|(m, p, _)| raw["paths"][p][m.to_ascii_lowercase()]["deprecated"] == json!(true))
        .count();
    assert_eq!(declared, 1);
}

/// How often an object key named `key` occurs anywhere in `v`.
fn count_keys(v: &Value, key: &str) -> usize {
    match v {
        Value::Object(m) => m
            .iter()
            .map(|(k, x)| usize::from(k == key) + count_keys(x, key))
            .sum(),
        Value::Array(items) => items.iter().map(|x| count_keys(x, key)).sum(),
        _ => 0,
    }
}

#[test]
fn a_recursive_definition_is_copied_once_and_validates_nested_instances() {
    let (_, catalog) = fixture();
    let a = action(&catalog, "issueCreateIssue");
    let schema = &*a.input_schema;
    assert_eq!(count_keys(schema, "TreeNode"), 1, "TreeNode is copied once");
    assert_eq!(count_keys(schema, "$defs"), 1, "no nested $defs");
    assert_eq!(
        schema["$defs"]["CreateIssueOption"]["properties"]["outline"],
        json!({"$ref": "#/$defs/TreeNode"})
    );
    assert_eq!(
        schema["$defs"]["TreeNode"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/TreeNode"})
    );

    let v = validator(a);
    let outline = |leaf: Value| {
        json!({"owner": "o", "repo": "r", "body": {"title": "t", "outline":
            {"name": "root", "children": [{"name": "a", "children": [{"name": "b", "children": [leaf]}]}]}}})
    };
    assert!(v.is_valid(&outline(json!({"name": "leaf"}))));
    // A mistake three levels down is still found: the recursion is followed, not cut off.
    assert!(!v.is_valid(&outline(json!({"name": 5}))));
    assert!(!v.is_valid(&outline(json!({"name": "leaf", "colour": "red"}))));
}

#[test]
fn path_parameters_are_required() {
    let (_, catalog) = fixture();
    let mut path_params = 0;
    for a in catalog.actions() {
        let required: Vec<&str> = a.input_schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for name in spec::template_names(&a.path) {
            path_params += 1;
            assert!(
                required.contains(&name),
                "{}: {{{name}}} must be required",
                a.name
            );
            let p = a
                .params
                .iter()
                .find(|p| p.name == name && p.location == ParamLocation::Path)
                .unwrap_or_else(|| panic!("{}: no parameter for {{{name}}}", a.name));
            assert!(p.required, "{}: {name}", a.name);
        }
    }
    assert!(path_params > 40, "the fixture has many path parameters");

    let v = validator(action(&catalog, "repoGet"));
    assert!(v.is_valid(&json!({"owner": "o", "repo": "r"})));
    assert!(!v.is_valid(&json!({"owner": "o"})));
    assert!(!v.is_valid(&json!({"repo": "r"})));
}

#[test]
fn name_parameters_cannot_escape_their_segment() {
    let (_, catalog) = fixture();
    let a = action(&catalog, "repoGet");
    let v = validator(a);
    for good in ["gitea", ".github", "my.repo", "a..b", "x-y_z", "ünïcode"] {
        for key in ["owner", "repo"] {
            let mut args = json!({"owner": "o", "repo": "r"});
            args[key] = json!(good);
            assert!(v.is_valid(&args), "{key}={good:?} must be accepted");
        }
    }
    for bad in ["a/b", "..", ".", "x\u{0007}", "", "/", "x\n", "\u{7f}"] {
        for key in ["owner", "repo"] {
            let mut args = json!({"owner": "o", "repo": "r"});
            args[key] = json!(bad);
            assert!(!v.is_valid(&args), "{key}={bad:?} must be refused");
        }
    }
    // The same pattern guards every name-like path parameter of the fixture.
    let mut guarded = 0;
    for a in catalog.actions() {
        for p in a
            .params
            .iter()
            .filter(|p| p.location == ParamLocation::Path)
        {
            if catalog::NAME_PARAMS.contains(&p.name.as_str()) {
                guarded += 1;
                assert_eq!(
                    a.input_schema["properties"][&p.name]["pattern"],
                    json!(NAME_PATTERN),
                    "{} {}",
                    a.name,
                    p.name
                );
            }
        }
    }
    assert!(guarded > 30, "owner/repo/org occur throughout the fixture");
    let v = validator(action(&catalog, "orgListTeams"));
    assert!(v.is_valid(&json!({"org": "acme"})));
    assert!(!v.is_valid(&json!({"org": "../admin"})));
}

#[test]
fn sudo_is_optional_everywhere_and_unknown_arguments_are_refused() {
    let (_, catalog) = fixture();
    for a in catalog.actions() {
        let schema = &*a.input_schema;
        assert_eq!(schema["type"], "object", "{}", a.name);
        assert_eq!(schema["additionalProperties"], json!(false), "{}", a.name);
        assert_eq!(schema["properties"]["sudo"]["type"], "string", "{}", a.name);
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        assert!(
            !required.contains(&json!("sudo")),
            "{}: sudo is optional",
            a.name
        );
        let v = validator(a);
        // Required arguments: scalars, and an empty object for a required body.
        let mut args = serde_json::Map::new();
        for name in required.iter().filter_map(Value::as_str) {
            let value = match schema["properties"][name]["type"].as_str() {
                Some("integer") => json!(1),
                // A body with its required fields as strings.
                _ if name == "body" => Value::Object(
                    a.body_schema()
                        .and_then(|b| b["required"].as_array())
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(|f| (f.to_string(), json!("x")))
                        .collect(),
                ),
                _ => match schema["properties"][name]["enum"].get(0) {
                    Some(first) => first.clone(),
                    None => json!("x"),
                },
            };
            args.insert(name.to_string(), value);
        }
        let mut args = Value::Object(args);
        assert!(v.is_valid(&args), "{}: {args}", a.name);
        args["sudo"] = json!("someone");
        assert!(v.is_valid(&args), "{}: sudo is accepted", a.name);
        args["sudo"] = json!("some/one");
        assert!(!v.is_valid(&args), "{}: sudo is a name", a.name);
        args["sudo"] = json!("someone");
        args["unexpected"] = json!(1);
        assert!(
            !v.is_valid(&args),
            "{}: unknown arguments are refused",
            a.name
        );
    }
}

#[test]
fn annotations_follow_the_method() {
    let (_, catalog) = fixture();
    let flags = |id: &str| {
        let a = action(&catalog, id).annotations;
        (a.read_only, a.destructive, a.idempotent)
    };
    // (read_only, destructive, idempotent)
    assert_eq!(flags("repoGet"), (true, false, true));
    assert_eq!(flags("repoDelete"), (false, true, true));
    assert_eq!(
        flags("repoUpdateTopics"),
        (false, true, true),
        "PUT with a body replaces"
    );
    assert_eq!(flags("issueCreateIssue"), (false, false, false));
    assert_eq!(flags("repoMergePullRequest"), (false, false, false));
    assert_eq!(
        flags("repoEdit"),
        (false, false, false),
        "PATCH edits in place"
    );
    for a in catalog.actions() {
        let ann = a.annotations;
        match a.method {
            HttpMethod::Get => {
                assert!(
                    ann.read_only && ann.idempotent && !ann.destructive,
                    "{}",
                    a.name
                )
            }
            HttpMethod::Delete => {
                assert!(
                    !ann.read_only && ann.destructive && ann.idempotent,
                    "{}",
                    a.name
                )
            }
            HttpMethod::Put => {
                assert!(!ann.read_only && ann.idempotent, "{}", a.name);
                if a.body.is_some() {
                    assert!(ann.destructive, "{}", a.name);
                }
            }
            HttpMethod::Post | HttpMethod::Patch => {
                assert!(
                    !ann.read_only && !ann.idempotent && !ann.destructive,
                    "{}",
                    a.name
                )
            }
            other => panic!("the fixture has no {other} operation"),
        }
    }
}

#[test]
fn scopes_follow_the_route_groups() {
    let (_, catalog) = fixture();
    let scopes = |id: &str| scope_strings(action(&catalog, id));
    assert_eq!(scopes("issueCreateComment"), ["write:issue"]);
    assert_eq!(scopes("issueSearchIssues"), ["read:issue"]);
    assert_eq!(scopes("userGetCurrent"), ["read:user"]);
    assert_eq!(scopes("repoCreatePullRequest"), ["write:repository"]);
    assert_eq!(scopes("repoGetRawFile"), ["read:repository"]);
    assert_eq!(scopes("orgListTeams"), ["read:organization"]);
    assert_eq!(scopes("notifyGetList"), ["read:notification"]);
    assert_eq!(scopes("repoCreateReleaseAttachment"), ["write:repository"]);
    assert_eq!(
        action(&catalog, "getVersion").scopes,
        ScopeRequirement::None
    );
    for a in catalog.actions() {
        assert_ne!(a.scopes, ScopeRequirement::Unmapped, "{}", a.name);
    }
}

// ---------------------------------------------------------------------------------------------
// Documents the catalog must refuse.

fn doc(paths: Value, definitions: Value) -> Vec<u8> {
    json!({
        "swagger": "2.0",
        "info": {"title": "Gitea API", "version": "1.0"},
        "basePath": "/api/v1",
        "paths": paths,
        "definitions": definitions
    })
    .to_string()
    .into_bytes()
}

fn owner_repo() -> Value {
    json!([
        {"name": "owner", "in": "path", "type": "string", "required": true},
        {"name": "repo", "in": "path", "type": "string", "required": true}
    ])
}

#[test]
fn a_collision_without_an_override_is_an_error_naming_both_operations() {
    let pairs = [
        ("repoListThings", "listRepoThings", "gitea_repo_list_things"),
        (
            "userGetWidgetThing",
            "user_get_widget_thing",
            "gitea_user_get_widget_thing",
        ),
    ];
    for (first, second, name) in pairs {
        // The premise: neither has an override, and both derive the same name by rule.
        for id in [first, second] {
            assert!(
                !overridden_operation_ids().any(|o| o == id),
                "{id} has an override"
            );
        }
        let (path_a, path_b) = if name.starts_with("gitea_repo") {
            (
                "/repos/{owner}/{repo}/things",
                "/repos/{owner}/{repo}/things/all",
            )
        } else {
            ("/user/widgets/a", "/user/widgets/b")
        };
        let params = if name.starts_with("gitea_repo") {
            owner_repo()
        } else {
            json!([])
        };
        let bytes = doc(
            json!({
                path_a: {"get": {"operationId": first, "parameters": params}},
                path_b: {"get": {"operationId": second, "parameters": params}}
            }),
            json!({}),
        );
        let spec = Spec::parse(&bytes).expect("the document itself is valid");
        let err = match Catalog::build(&spec) {
            Err(err) => err,
            Ok(c) => panic!(
                "expected a name collision, got {:?}",
                c.actions()
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
            ),
        };
        let message = err.to_string();
        match err {
            catalog::Error::NameCollision {
                name: got,
                first: a,
                second: b,
            } => {
                assert_eq!(got, name);
                let both = format!("{a} | {b}");
                assert!(both.contains(first) && both.contains(second), "{both}");
                assert!(both.contains(path_a) && both.contains(path_b), "{both}");
            }
            other => panic!("expected a name collision, got {other}"),
        }
        assert!(
            message.contains(first)
                && message.contains(second)
                && message.contains("overrides.toml"),
            "{message}"
        );
    }
}

#[test]
fn malformed_documents_name_the_json_pointer() {
    let get = |parameters: Value| json!({"/repos/{owner}/{repo}/things": {"get": {"operationId": "repoListThings", "parameters": parameters}}});
    let with = |extra: Value| {
        let mut p = owner_repo();
        p.as_array_mut().expect("array").push(extra);
        get(p)
    };
    let base = "/paths/~1repos~1{owner}~1{repo}~1things/get";
    let cases: Vec<(Vec<u8>, String)> = vec![
        (
            doc(
                with(json!({"name": "c", "in": "cookie", "type": "string"})),
                json!({}),
            ),
            format!("{base}/parameters/2/in"),
        ),
        (
            doc(
                with(json!({"name": "ids", "in": "query", "type": "array"})),
                json!({}),
            ),
            format!("{base}/parameters/2/items"),
        ),
        (
            doc(with(json!({"name": "q", "in": "query"})), json!({})),
            format!("{base}/parameters/2/type"),
        ),
        (
            doc(
                with(
                    json!({"name": "ids", "in": "query", "type": "array", "items": {"type": "integer"}, "collectionFormat": "brackets"}),
                ),
                json!({}),
            ),
            format!("{base}/parameters/2/collectionFormat"),
        ),
        (
            doc(
                json!({"/repos/{owner}/{repo}/things": {"post": {"operationId": "repoAddThing",
                    "parameters": [owner_repo()[0].clone(), owner_repo()[1].clone(),
                        {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/Thing"}}]}}}),
                json!({"Thing": {"type": "object", "properties": {"part": {"$ref": "other.json#/Part"}}}}),
            ),
            // The body's own ref resolves; the external one inside the definition is refused
            // where it is written.
            "/definitions/Thing/properties/part/$ref".to_string(),
        ),
        (
            doc(
                json!({}),
                json!({"Thing": {"type": "array", "items": {"$ref": "#/definitions/Gone"}}}),
            ),
            "/definitions/Thing/items/$ref".to_string(),
        ),
        (
            doc(get(json!([owner_repo()[0].clone()])), json!({})),
            format!("{base}/parameters"),
        ),
        (
            doc(json!({}), json!(["not", "an", "object"])),
            "/definitions".to_string(),
        ),
        (doc(json!([]), json!({})), "/paths".to_string()),
    ];
    for (bytes, pointer) in cases {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let err = match Spec::parse(&bytes) {
            Err(err) => err,
            Ok(_) => panic!("expected a malformed error at {pointer} for {text}"),
        };
        let message = err.to_string();
        match err {
            spec::Error::Malformed { pointer: got, .. } => assert_eq!(got, pointer, "{text}"),
            other => panic!("expected a malformed error at {pointer}, got {other}"),
        }
        assert!(message.contains(&pointer), "{message}");
    }
}

// ---------------------------------------------------------------------------------------------
// Policy over the fixture.

fn decision_of<'a>(policy: &'a Policy, catalog: &Catalog, id: &str) -> &'a Decision {
    policy.decide(catalog, action(catalog, id))
}

fn withheld(reason: WithheldReason) -> Decision {
    Decision::Withheld { reason }
}

#[test]
fn toolsets_withhold_other_domains() {
    let (_, catalog) = fixture();
    let (toolsets, unknown) = PolicyConfig::parse_toolsets("pull, Issue, bogus");
    assert_eq!(unknown, ["bogus"]);
    let config = PolicyConfig {
        toolsets,
        unknown_toolsets: unknown,
        ..PolicyConfig::default()
    };
    let policy = Policy::new(&catalog, &config);
    for a in catalog.actions() {
        let expected = if matches!(a.domain, Domain::Pull | Domain::Issue) {
            Decision::Allowed
        } else {
            withheld(WithheldReason::Toolsets { domain: a.domain })
        };
        assert_eq!(policy.decide(&catalog, a), &expected, "{}", a.name);
    }
    assert_eq!(policy.allowed_count(), 19, "8 pull + 11 issue actions");
    assert!(
        policy
            .warnings()
            .iter()
            .any(|w| w.contains("\"bogus\"") && w.contains("TOOLSETS")),
        "{:?}",
        policy.warnings()
    );
}

#[test]
fn read_only_withholds_every_write() {
    let (_, catalog) = fixture();
    let config = PolicyConfig {
        read_only: true,
        ..PolicyConfig::default()
    };
    let policy = Policy::new(&catalog, &config);
    assert!(policy.is_read_only());
    for a in catalog.actions() {
        let expected = if a.annotations.read_only {
            Decision::Allowed
        } else {
            withheld(WithheldReason::ReadOnly)
        };
        assert_eq!(policy.decide(&catalog, a), &expected, "{}", a.name);
    }
    assert_eq!(
        decision_of(&policy, &catalog, "issueCreateComment"),
        &withheld(WithheldReason::ReadOnly)
    );
    assert!(decision_of(&policy, &catalog, "repoGet").is_allowed());
    assert!(policy.warnings().is_empty(), "{:?}", policy.warnings());
}

#[test]
fn disabled_tools_match_names_operation_ids_and_domains() {
    let (_, catalog) = fixture();
    let config = PolicyConfig {
        disabled: PolicyConfig::parse_list(
            " GITEA_REPO_DELETE ,repoGet, notification,no_such_tool,,gitea_nope",
        ),
        read_only: true,
        ..PolicyConfig::default()
    };
    assert_eq!(config.disabled.len(), 5);
    let policy = Policy::new(&catalog, &config);
    let disabled = |entry: &str| {
        withheld(WithheldReason::Disabled {
            entry: entry.to_string(),
        })
    };
    // By action name (case-insensitively), by operationId, by domain.
    assert_eq!(
        decision_of(&policy, &catalog, "repoDelete"),
        &disabled("GITEA_REPO_DELETE")
    );
    assert_eq!(
        decision_of(&policy, &catalog, "repoGet"),
        &disabled("repoGet")
    );
    assert_eq!(
        decision_of(&policy, &catalog, "notifyGetList"),
        &disabled("notification")
    );
    // DISABLED_TOOLS is checked before READ_ONLY; untouched reads stay allowed.
    assert_eq!(
        decision_of(&policy, &catalog, "repoEdit"),
        &withheld(WithheldReason::ReadOnly)
    );
    assert!(decision_of(&policy, &catalog, "repoGetContents").is_allowed());
    assert_eq!(
        WithheldReason::Disabled {
            entry: "repoGet".into()
        }
        .code(),
        "disabled"
    );

    let warnings = policy.warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    for entry in ["no_such_tool", "gitea_nope"] {
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&format!("{entry:?}")) && w.contains("DISABLED_TOOLS")),
            "no warning names {entry}: {warnings:?}"
        );
    }
}

#[test]
fn toolsets_take_precedence_over_disabled_tools() {
    let (_, catalog) = fixture();
    let config = PolicyConfig {
        toolsets: Some(vec![Domain::Repo]),
        disabled: vec!["gitea_pull_merge".into()],
        ..PolicyConfig::default()
    };
    let policy = Policy::new(&catalog, &config);
    assert_eq!(
        decision_of(&policy, &catalog, "repoMergePullRequest"),
        &withheld(WithheldReason::Toolsets {
            domain: Domain::Pull
        })
    );
    // Shadowed by TOOLSETS, the entry still names an action: no warning.
    assert!(policy.warnings().is_empty(), "{:?}", policy.warnings());
}

#[test]
fn a_policy_withholds_what_its_catalog_does_not_hold() {
    let (mut raw, catalog) = fixture();
    // A smaller catalog: only the /repos/{owner}/{repo} paths survive.
    raw["paths"]
        .as_object_mut()
        .expect("paths")
        .retain(|path, _| path == "/repos/{owner}/{repo}");
    let small_spec = Spec::parse(&serde_json::to_vec(&raw).expect("json")).expect("parses");
    let small = Catalog::build(&small_spec).expect("builds");
    assert!(small.actions().len() < catalog.actions().len());
    let policy = Policy::new(&small, &PolicyConfig::default());
    let not_here = withheld(WithheldReason::NotInCatalog);
    // An id from the larger catalog past the small one's end…
    let (last, _) = catalog.ids().last().expect("actions");
    assert_eq!(policy.decision(last), &not_here);
    assert_eq!(
        policy.check(last).unwrap_err(),
        WithheldReason::NotInCatalog
    );
    // …and an action the small catalog lacks, looked up by name.
    let issue = action(&catalog, "issueCreateComment");
    assert_eq!(policy.decide(&small, issue), &not_here);
    assert!(
        policy
            .decide(&small, action(&small, "repoGet"))
            .is_allowed()
    );
    assert_eq!(catalog.id_at(catalog.actions().len()), None);
}

#[test]
fn an_action_returns_its_answers_definition_and_field_names() {
    let (raw, catalog) = fixture();
    let fields_of = |def: &str| -> Vec<String> {
        let props = raw["definitions"][def]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("the fixture defines {def} with properties"));
        assert!(!props.is_empty());
        std::iter::once(def.to_string())
            .chain(props.keys().cloned())
            .collect()
    };
    // A single object, and a list of objects: the definition is named either way.
    assert_eq!(action(&catalog, "repoGet").returns, fields_of("Repository"));
    assert_eq!(
        action(&catalog, "repoListBranches").returns,
        fields_of("Branch")
    );
    // No answer body, a file, a bare description: nothing is returned to search.
    for id in ["repoDelete", "repoGetRawFile", "updateRepoSecret"] {
        assert!(
            action(&catalog, id).returns.is_empty(),
            "{id} returns no definition"
        );
    }
}

//! Checks the fake Gitea in `tests/support` with a real HTTP client: auth and scopes, sudo, a
//! whole repository → issue → pull request → merge flow, paging headers, every injected fault as
//! reqwest sees it, restart on the same port and multipart uploads.

use std::time::Duration;

use crate::common::{b64, http_client, http_client_builder};
use crate::support::{FakeGitea, Fault, RedirectTarget};
use base64::Engine as _;
use reqwest::header::HeaderMap;
use reqwest::{Client, Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

/// A client without a timeout of its own (the fault tests set theirs).
fn client() -> Client {
    http_client_builder().build().expect("reqwest client")
}

/// A client that hands every 3xx back to the test.
fn no_redirect_client() -> Client {
    http_client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("reqwest client")
}

/// Seeds alice's repository `alice/demo` and her token `tok` with `scopes`.
fn seed_demo(fake: &FakeGitea, scopes: &[&str]) {
    fake.seed_repo("alice", "demo");
    fake.add_token("tok", "alice", scopes);
}

struct Resp {
    status: StatusCode,
    headers: HeaderMap,
    bytes: Vec<u8>,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.bytes)))
    }

    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("ASCII header").to_string())
    }

    /// Asserts the status and the exact error message.
    #[track_caller]
    fn assert_error(&self, status: u16, message: &str) {
        assert_eq!(
            self.status,
            status,
            "{}",
            String::from_utf8_lossy(&self.bytes)
        );
        assert_eq!(self.message(), message);
    }

    fn message(&self) -> String {
        self.json()["message"]
            .as_str()
            .unwrap_or_else(|| panic!("no message in {}", self.json()))
            .to_string()
    }
}

/// A client talking to one fake.
struct Api<'a> {
    c: Client,
    fake: &'a FakeGitea,
}

impl<'a> Api<'a> {
    /// With [`client`].
    fn new(fake: &'a FakeGitea) -> Api<'a> {
        Api { c: client(), fake }
    }

    /// With [`no_redirect_client`].
    fn no_redirect(fake: &'a FakeGitea) -> Api<'a> {
        Api {
            c: no_redirect_client(),
            fake,
        }
    }

    /// A request for `method path` (path relative to the base URL), with `Authorization:
    /// token <t>` when `token` is given.
    fn request(&self, method: Method, path: &str, token: Option<&str>) -> RequestBuilder {
        let req = self.c.request(method, format!("{}{path}", self.fake.url()));
        match token {
            Some(t) => req.header("Authorization", format!("token {t}")),
            None => req,
        }
    }

    /// Sends `method path` with an optional token and JSON body; reads the whole answer.
    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Resp {
        let mut req = self.request(method, path, token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request sent");
        Resp {
            status: resp.status(),
            headers: resp.headers().clone(),
            bytes: resp.bytes().await.expect("body").to_vec(),
        }
    }

    async fn get(&self, path: &str, token: Option<&str>) -> Resp {
        self.call(Method::GET, path, token, None).await
    }

    async fn post(&self, path: &str, token: &str, body: Value) -> Resp {
        self.call(Method::POST, path, Some(token), Some(body)).await
    }
}

/// The `Content-Type` of an answer whose body is still to be read.
fn content_type(resp: &reqwest::Response) -> &str {
    resp.headers()["content-type"].to_str().unwrap()
}

fn is_sha(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.len() == 40 && s.chars().all(|c| c.is_ascii_hexdigit()))
}

// ---- unauthenticated routes, unknown routes ---------------------------------------------------

#[tokio::test]
async fn version_settings_and_swagger_need_no_token() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    assert!(fake.url().starts_with("http://127.0.0.1:"));

    let r = api.get("/api/v1/version", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({ "version": "1.28.0+fake" }));
    let r = api.get("/api/v1/settings/api", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["max_response_items"], 50);
    assert_eq!(r.json()["default_paging_num"], 30);

    // No document given: 404.
    let r = api.get("/swagger.v1.json", None).await;
    assert_eq!(r.status, 404);

    let r = api.get("/api/v1/no/such/route", None).await;
    r.assert_error(404, "The target couldn't be found.");
    assert!(
        r.json()["url"]
            .as_str()
            .unwrap()
            .starts_with("https://docs.gitea.com/api/")
    );

    let r = api
        .call(Method::DELETE, "/api/v1/version", None, None)
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow").as_deref(), Some("GET"));

    assert_eq!(fake.count("GET", "/api/v1/version"), 1);
    assert_eq!(fake.count("GET", "/version"), 1);
    assert_eq!(fake.count("DELETE", "/version"), 1);

    let doc = br#"{"swagger":"2.0","info":{"title":"Gitea API","version":"1.28.0"}}"#.to_vec();
    let with_spec = FakeGitea::start_with_spec(doc.clone()).await;
    let r = Api::new(&with_spec).get("/swagger.v1.json", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.bytes, doc);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
}

// ---- auth, scopes, sudo -----------------------------------------------------------------------

#[tokio::test]
async fn missing_or_unknown_tokens_are_401() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    fake.add_token("tok-alice", "alice", &["read:user"]);

    let r = api.get("/api/v1/user", None).await;
    r.assert_error(401, "token is required");
    assert!(r.json()["url"].is_string());

    let r = api.get("/api/v1/user", Some("nope")).await;
    r.assert_error(401, "invalid username, password or token");
    // Gitea authenticates before routing: a bad token fails even where none is needed.
    let r = api.get("/api/v1/version", Some("nope")).await;
    assert_eq!(r.status, 401);

    for scheme in ["token", "Bearer", "bearer", "TOKEN"] {
        let resp = api
            .c
            .get(format!("{}/api/v1/user", fake.url()))
            .header("Authorization", format!("{scheme} tok-alice"))
            .send()
            .await
            .expect("sent");
        assert_eq!(resp.status(), 200, "scheme {scheme}");
        let user: Value = resp.json().await.expect("JSON");
        assert_eq!(user["login"], "alice");
    }

    let log = fake.requests();
    assert_eq!(log[0].token_user, None);
    assert_eq!(log[1].token_user, None);
    assert_eq!(log[3].token_user.as_deref(), Some("alice"));
    assert_eq!(log[3].header("authorization"), Some("token tok-alice"));
    assert_eq!(log[4].header("Authorization"), Some("Bearer tok-alice"));
}

#[tokio::test]
async fn a_token_without_the_scope_is_403_naming_it() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    fake.seed_repo("alice", "demo");
    fake.add_token("tok-read", "alice", &["read:repository", "read:issue"]);
    fake.add_token("tok-wi", "alice", &["write:issue"]);
    fake.add_token("tok-wr", "alice", &["write:repository"]);
    fake.add_token("tok-all", "alice", &["all"]);

    let r = api
        .post(
            "/api/v1/repos/alice/demo/issues",
            "tok-read",
            json!({ "title": "x" }),
        )
        .await;
    r.assert_error(
        403,
        "token does not have at least one of required scope(s): [write:issue]",
    );

    // write implies read, per category.
    let r = api
        .get("/api/v1/repos/alice/demo/issues", Some("tok-wi"))
        .await;
    assert_eq!(r.status, 200);
    let r = api.get("/api/v1/repos/alice/demo", Some("tok-wi")).await;
    assert_eq!(r.status, 403);
    assert!(r.message().ends_with("[read:repository]"));
    let r = api
        .get("/api/v1/repos/alice/demo/labels", Some("tok-wr"))
        .await;
    assert_eq!(r.status, 403);
    assert!(r.message().ends_with("[read:issue]"));

    // /user/repos sits in the user group, then the repository group.
    let r = api
        .post("/api/v1/user/repos", "tok-wr", json!({ "name": "x" }))
        .await;
    assert_eq!(r.status, 403);
    assert!(r.message().ends_with("[write:user]"), "{}", r.message());
    let r = api.get("/api/v1/user", Some("tok-wr")).await;
    assert_eq!(r.status, 403);
    assert!(r.message().ends_with("[read:user]"));
    let r = api.get("/api/v1/orgs/acme", Some("tok-wr")).await;
    assert_eq!(r.status, 403);
    assert!(r.message().ends_with("[read:organization]"));

    // /token needs a token but no scope.
    let r = api.get("/api/v1/token", Some("tok-wr")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["scopes"], json!(["write:repository"]));
    assert!(r.json()["name"].is_string());
    assert_eq!(r.json()["user"]["login"], "alice");

    let r = api
        .post("/api/v1/user/repos", "tok-all", json!({ "name": "x" }))
        .await;
    assert_eq!(r.status, 201);
}

#[tokio::test]
async fn sudo_is_honoured_for_admins_only() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    fake.seed_user("root", true);
    fake.seed_user("bob", false);
    fake.seed_repo("bob", "notes");
    fake.add_token("tok-root", "root", &["all"]);
    fake.add_token("tok-alice", "alice", &["all"]);

    let sudo_get = |token: &'static str, who: &'static str| {
        api.request(Method::GET, "/api/v1/user", Some(token))
            .header("Sudo", who)
            .send()
    };
    let r = sudo_get("tok-root", "bob").await.expect("sent");
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["login"], "bob");
    let rec = fake.requests().pop().unwrap();
    assert_eq!(rec.token_user.as_deref(), Some("root"));
    assert_eq!(rec.sudo.as_deref(), Some("bob"));
    assert_eq!(rec.acting_user.as_deref(), Some("bob"));

    let r = api.get("/api/v1/user?sudo=bob", Some("tok-root")).await;
    assert_eq!(r.json()["login"], "bob");
    // Acting as bob: the issue is his.
    let r = api
        .post(
            "/api/v1/repos/bob/notes/issues?sudo=bob",
            "tok-root",
            json!({ "title": "as bob" }),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["user"]["login"], "bob");

    let r = sudo_get("tok-alice", "bob").await.expect("sent");
    assert_eq!(r.status(), 403);
    assert_eq!(
        r.json::<Value>().await.unwrap()["message"],
        "Only administrators allowed to sudo."
    );
    let rec = fake.requests().pop().unwrap();
    assert_eq!(rec.sudo.as_deref(), Some("bob"));
    assert_eq!(rec.acting_user, None);

    let r = sudo_get("tok-root", "nobody").await.expect("sent");
    assert_eq!(r.status(), 404);
}

// ---- the whole flow ---------------------------------------------------------------------------

#[tokio::test]
async fn repo_file_issue_comment_label_pull_review_merge() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    let alice = Some("tok-alice");
    fake.add_token(
        "tok-alice",
        "alice",
        &["write:repository", "write:issue", "write:user"],
    );
    fake.add_token(
        "tok-bob",
        "bob",
        &["write:repository", "write:issue", "read:user"],
    );

    // Repository.
    let r = api
        .post(
            "/api/v1/user/repos",
            "tok-alice",
            json!({ "name": "demo", "description": "Demo", "auto_init": true, "private": false }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json());
    let repo = r.json();
    assert_eq!(repo["full_name"], "alice/demo");
    assert_eq!(repo["owner"]["login"], "alice");
    assert_eq!(repo["default_branch"], "main");
    assert_eq!(repo["empty"], false);
    assert_eq!(repo["html_url"], format!("{}/alice/demo", fake.url()));
    assert!(repo["id"].is_i64());
    let r = api
        .post("/api/v1/user/repos", "tok-alice", json!({ "name": "demo" }))
        .await;
    assert_eq!(r.status, 409);

    // A file on a new branch.
    let r = api
        .post(
            "/api/v1/repos/alice/demo/contents/src/lib.rs",
            "tok-alice",
            json!({
                "content": b64(b"pub fn answer() -> u32 {\n    42\n}\n"),
                "message": "Add lib",
                "branch": "main",
                "new_branch": "feature",
            }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json());
    assert_eq!(r.json()["content"]["path"], "src/lib.rs");
    assert!(is_sha(&r.json()["commit"]["sha"]));
    assert!(
        fake.file("alice", "demo", "feature", "src/lib.rs")
            .is_some()
    );
    assert!(fake.file("alice", "demo", "main", "src/lib.rs").is_none());

    // Issue, comment, label.
    let r = api
        .post(
            "/api/v1/repos/alice/demo/issues",
            "tok-alice",
            json!({ "title": "No answer", "body": "We need one." }),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["number"], 1);
    assert_eq!(r.json()["state"], "open");
    assert_eq!(r.json()["pull_request"], Value::Null);
    let r = api
        .post(
            "/api/v1/repos/alice/demo/issues/1/comments",
            "tok-bob",
            json!({ "body": "Confirmed." }),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["user"]["login"], "bob");
    let r = api
        .post(
            "/api/v1/repos/alice/demo/labels",
            "tok-alice",
            json!({ "name": "bug", "color": "#ee0701" }),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["color"], "ee0701");
    let label_id = r.json()["id"].as_i64().unwrap();
    let r = api
        .post(
            "/api/v1/repos/alice/demo/issues/1/labels",
            "tok-alice",
            json!({ "labels": [label_id] }),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()[0]["name"], "bug");
    assert_eq!(fake.issue_labels("alice", "demo", 1), ["bug"]);
    let r = api.get("/api/v1/repos/alice/demo/issues/1", alice).await;
    assert_eq!(r.json()["comments"], 1);
    assert_eq!(r.json()["labels"][0]["id"], label_id);

    // Pull request: shares the index counter with issues.
    let r = api.post("/api/v1/repos/alice/demo/pulls",
        "tok-alice",
        json!({ "head": "feature", "base": "main", "title": "Add the answer", "body": "Fixes #1" }),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json());
    let pr = r.json();
    assert_eq!(pr["number"], 2);
    assert_eq!(pr["state"], "open");
    assert_eq!(pr["merged"], false);
    assert_eq!(pr["mergeable"], true);
    assert_eq!(pr["head"]["ref"], "feature");
    assert_eq!(pr["base"]["ref"], "main");
    assert!(is_sha(&pr["head"]["sha"]));
    assert_eq!(pr["head"]["repo"]["full_name"], "alice/demo");
    assert_eq!(pr["user"]["login"], "alice");
    assert_eq!(pr["html_url"], format!("{}/alice/demo/pulls/2", fake.url()));
    assert_eq!(pr["requested_reviewers"], json!([]));
    let r = api
        .post(
            "/api/v1/repos/alice/demo/pulls",
            "tok-alice",
            json!({ "head": "feature", "base": "main", "title": "Again" }),
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(
        r.message()
            .starts_with("pull request already exists for these targets")
    );
    let r = api
        .get("/api/v1/repos/alice/demo/pulls/2.diff", alice)
        .await;
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    let diff = String::from_utf8(r.bytes).unwrap();
    assert!(
        diff.contains("diff --git a/src/lib.rs b/src/lib.rs"),
        "{diff}"
    );
    assert!(diff.contains("+    42"), "{diff}");

    // Reviews.
    let reviews = "/api/v1/repos/alice/demo/pulls/2/reviews";
    let r = api
        .post(reviews, "tok-alice", json!({ "event": "APPROVED" }))
        .await;
    r.assert_error(422, "approve your own pull is not allowed");
    let r = api
        .post(
            reviews,
            "tok-bob",
            json!({ "event": "APPROVED", "body": "LGTM" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json());
    assert_eq!(r.json()["state"], "APPROVED");
    assert_eq!(r.json()["user"]["login"], "bob");
    assert_eq!(r.json()["commit_id"], pr["head"]["sha"]);
    let r = api.get(reviews, alice).await;
    assert_eq!(r.json().as_array().unwrap().len(), 1);

    // Merge.
    let merge = "/api/v1/repos/alice/demo/pulls/2/merge";
    assert_eq!(api.get(merge, alice).await.status, 404);
    let r = api.post(merge, "tok-bob", json!({ "Do": "merge" })).await;
    assert_eq!(r.status, 405, "bob may not write to alice/demo");
    let r = api.post(merge, "tok-alice", json!({})).await;
    r.assert_error(422, "[Do]: Required");
    let r = api.post(merge, "tok-alice", json!({ "Do": "merge" })).await;
    assert_eq!(r.status, 200);
    assert_eq!(api.get(merge, alice).await.status, 204);
    let r = api
        .post(merge, "tok-alice", json!({ "do": "squash" }))
        .await;
    assert_eq!(r.status, 405);
    assert!(!r.message().is_empty());

    let r = api.get("/api/v1/repos/alice/demo/pulls/2", alice).await;
    let pr = r.json();
    assert_eq!(pr["merged"], true);
    assert_eq!(pr["state"], "closed");
    assert_eq!(pr["mergeable"], false);
    assert!(is_sha(&pr["merge_commit_sha"]));
    assert!(pr["merged_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(pr["merged_by"]["login"], "alice");
    assert_eq!(fake.pull_merged("alice", "demo", 2), Some(true));
    assert_eq!(fake.reviews("alice", "demo", 2), ["APPROVED"]);

    // The merged file is on main.
    let r = api
        .get("/api/v1/repos/alice/demo/raw/src/lib.rs", alice)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.bytes, b"pub fn answer() -> u32 {\n    42\n}\n");
    let r = api
        .get(
            "/api/v1/repos/alice/demo/issues?state=all&type=pulls",
            alice,
        )
        .await;
    assert_eq!(r.json().as_array().unwrap().len(), 1);
    assert_eq!(r.json()[0]["pull_request"]["merged"], true);
    let r = api
        .get("/api/v1/repos/alice/demo/pulls?state=closed", alice)
        .await;
    assert_eq!(r.json()[0]["number"], 2);
}

#[tokio::test]
async fn files_and_branches() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    seed_demo(&fake, &["write:repository"]);
    let t = Some("tok");
    let contents = "/api/v1/repos/alice/demo/contents/docs/guide.md";

    let r = api
        .post(contents, "tok", json!({ "content": b64(b"# Guide\n") }))
        .await;
    assert_eq!(r.status, 201);
    let sha = r.json()["content"]["sha"].clone();
    let r = api
        .post(contents, "tok", json!({ "content": b64(b"again") }))
        .await;
    r.assert_error(422, "repository file already exists [path: docs/guide.md]");
    let r = api
        .post(contents, "tok", json!({ "message": "no content" }))
        .await;
    r.assert_error(422, "[ContentBase64]: Required");

    let r = api.get(contents, t).await;
    assert_eq!(r.status, 200);
    let file = r.json();
    assert_eq!(file["type"], "file");
    assert_eq!(file["encoding"], "base64");
    assert_eq!(file["sha"], sha);
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(file["content"].as_str().unwrap())
        .unwrap();
    assert_eq!(decoded, b"# Guide\n");

    let r = api.get("/api/v1/repos/alice/demo/contents", t).await;
    let listing: Vec<Value> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| json!([e["name"], e["type"]]))
        .collect();
    assert_eq!(
        listing,
        [json!(["README.md", "file"]), json!(["docs", "dir"])]
    );

    let put = |body: Value| api.call(Method::PUT, contents, t, Some(body));
    let r = put(json!({ "content": b64(b"v2") })).await;
    assert_eq!(r.status, 422);
    let r =
        put(json!({ "content": b64(b"v2"), "sha": "0000000000000000000000000000000000000000" }))
            .await;
    assert_eq!(r.status, 422);
    assert!(r.message().starts_with("sha does not match"));
    let r = put(json!({ "content": b64(b"v2"), "sha": sha })).await;
    assert_eq!(r.status, 200);
    let r = api
        .get("/api/v1/repos/alice/demo/raw/docs/guide.md", t)
        .await;
    assert_eq!(r.bytes, b"v2");
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("text/plain; charset=utf-8")
    );
    fake.seed_file("alice", "demo", "main", "bin/blob", &[0, 1, 2]);
    let r = api.get("/api/v1/repos/alice/demo/raw/bin/blob", t).await;
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/octet-stream")
    );
    let r = api.get("/api/v1/repos/alice/demo/raw/missing.txt", t).await;
    assert_eq!(r.status, 404);

    let branches = "/api/v1/repos/alice/demo/branches";
    let r = api
        .post(branches, "tok", json!({ "new_branch_name": "dev" }))
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["name"], "dev");
    assert!(is_sha(&r.json()["commit"]["id"]));
    let r = api
        .post(branches, "tok", json!({ "new_branch_name": "dev" }))
        .await;
    assert_eq!(r.status, 409);
    let r = api
        .post(
            branches,
            "tok",
            json!({ "new_branch_name": "x", "old_branch_name": "nope" }),
        )
        .await;
    assert_eq!(r.status, 404);
    let r = api.get(branches, t).await;
    let names: Vec<Value> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].clone())
        .collect();
    assert_eq!(names, [json!("main"), json!("dev")]);
    assert_eq!(api.get(&format!("{branches}/dev"), t).await.status, 200);
    assert_eq!(api.get(&format!("{branches}/nope"), t).await.status, 404);
}

#[tokio::test]
async fn users_orgs_and_repository_settings() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    fake.add_token(
        "tok-alice",
        "alice",
        &["write:organization", "write:repository", "write:user"],
    );
    fake.add_token(
        "tok-bob",
        "bob",
        &["write:organization", "write:repository"],
    );

    let r = api
        .post("/api/v1/orgs", "tok-alice", json!({ "full_name": "x" }))
        .await;
    r.assert_error(422, "[UserName]: Required");
    let r = api
        .post("/api/v1/orgs", "tok-alice", json!({ "username": "acme" }))
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["username"], "acme");
    assert_eq!(
        api.get("/api/v1/orgs/acme", Some("tok-bob")).await.status,
        200
    );
    assert_eq!(
        api.get("/api/v1/orgs/nope", Some("tok-bob")).await.status,
        404
    );

    let r = api
        .post(
            "/api/v1/orgs/acme/repos",
            "tok-bob",
            json!({ "name": "tool" }),
        )
        .await;
    r.assert_error(403, "Given user is not owner of organization.");
    let r = api
        .post(
            "/api/v1/orgs/acme/repos",
            "tok-alice",
            json!({ "name": "tool", "private": true }),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["owner"]["login"], "acme");
    assert_eq!(r.json()["empty"], true);
    // Private: invisible to bob.
    let r = api.get("/api/v1/repos/acme/tool", Some("tok-bob")).await;
    assert_eq!(r.status, 404);

    let r = api.get("/api/v1/users/alice", Some("tok-alice")).await;
    assert_eq!(r.json()["login"], "alice");
    let r = api.get("/api/v1/users/nobody", Some("tok-alice")).await;
    assert_eq!(r.status, 404);

    let r = api
        .call(
            Method::PATCH,
            "/api/v1/repos/acme/tool",
            Some("tok-alice"),
            Some(json!({ "description": "A tool", "has_wiki": false })),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["description"], "A tool");
    assert_eq!(r.json()["has_wiki"], false);
    let r = api
        .call(
            Method::DELETE,
            "/api/v1/repos/acme/tool",
            Some("tok-alice"),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    assert!(!fake.repo_exists("acme", "tool"));
}

#[tokio::test]
async fn validation_and_not_found_errors_look_like_gitea() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    seed_demo(&fake, &["write:issue", "write:repository"]);
    let issues = "/api/v1/repos/alice/demo/issues";

    let r = api.post(issues, "tok", json!({ "body": "no title" })).await;
    r.assert_error(422, "[Title]: Required");
    assert!(r.json()["url"].is_string());
    let r = api.post(issues, "tok", json!({ "title": 5 })).await;
    assert_eq!(r.status, 422);

    let r = api.get(&format!("{issues}/99"), Some("tok")).await;
    r.assert_error(404, "issue does not exist [id: 0, repo_id: 1, index: 99]");
    let r = api.get("/api/v1/repos/alice/nope", Some("tok")).await;
    assert_eq!(r.status, 404);
    let r = api
        .post(
            "/api/v1/repos/alice/demo/pulls",
            "tok",
            json!({ "head": "nope", "base": "main", "title": "x" }),
        )
        .await;
    assert_eq!(r.status, 404);
    let r = api
        .post(
            "/api/v1/repos/alice/demo/pulls",
            "tok",
            json!({ "head": "main", "base": "main" }),
        )
        .await;
    r.assert_error(422, "[Title]: Required");

    let index = fake.seed_issue("alice", "demo", "Seeded");
    let r = api
        .call(
            Method::PATCH,
            &format!("{issues}/{index}"),
            Some("tok"),
            Some(json!({ "state": "closed", "due_date": "2025-02-01T00:00:00Z" })),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["state"], "closed");
    assert!(r.json()["closed_at"].is_string());
    assert_eq!(
        fake.issue_state("alice", "demo", index).as_deref(),
        Some("closed")
    );
    // Not a pull request.
    let r = api
        .get(
            &format!("/api/v1/repos/alice/demo/pulls/{index}"),
            Some("tok"),
        )
        .await;
    assert_eq!(r.status, 404);
}

// ---- paging -----------------------------------------------------------------------------------

fn links(r: &Resp) -> Vec<(String, String)> {
    r.header("link")
        .unwrap_or_default()
        .split(',')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (url, rel) = l.split_once(">; rel=\"").expect("link shape");
            (
                rel.trim_end_matches('"').to_string(),
                url.trim_start_matches('<').to_string(),
            )
        })
        .collect()
}

/// The `(rel, URL)` pairs [`links`] returns for `(rel, query)` pairs on `base`.
fn at(base: &str, rels: &[(&str, &str)]) -> Vec<(String, String)> {
    rels.iter()
        .map(|(rel, query)| (rel.to_string(), format!("{base}{query}")))
        .collect()
}

#[tokio::test]
async fn lists_are_paged_like_gitea() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    seed_demo(&fake, &["read:issue", "read:repository"]);
    fake.seed_issues("alice", "demo", 75);
    let t = Some("tok");
    let base = format!("{}/api/v1/repos/alice/demo/issues", fake.url());

    let r = api.get("/api/v1/repos/alice/demo/issues", t).await;
    assert_eq!(r.json().as_array().unwrap().len(), 30);
    assert_eq!(r.json()[0]["number"], 75, "newest first");
    assert_eq!(r.header("x-total-count").as_deref(), Some("75"));
    assert_eq!(
        links(&r),
        at(&base, &[("next", "?page=2"), ("last", "?page=3")])
    );

    // limit is capped at 50 silently; the rest of the query is kept (sorted like Go).
    let r = api
        .get("/api/v1/repos/alice/demo/issues?state=open&limit=100", t)
        .await;
    assert_eq!(r.json().as_array().unwrap().len(), 50);
    let query = "?limit=100&page=2&state=open";
    assert_eq!(links(&r), at(&base, &[("next", query), ("last", query)]));

    let r = api
        .get("/api/v1/repos/alice/demo/issues?limit=50&page=2", t)
        .await;
    assert_eq!(r.json().as_array().unwrap().len(), 25);
    assert_eq!(r.json()[0]["number"], 25);
    let query = "?limit=50&page=1";
    assert_eq!(links(&r), at(&base, &[("first", query), ("prev", query)]));

    let r = api
        .get("/api/v1/repos/alice/demo/issues?limit=10&page=4", t)
        .await;
    let rels: Vec<String> = links(&r).into_iter().map(|(rel, _)| rel).collect();
    assert_eq!(rels, ["next", "last", "first", "prev"]);

    let r = api.get("/api/v1/repos/alice/demo/issues?page=9", t).await;
    assert_eq!(r.json(), json!([]));
    assert_eq!(r.header("x-total-count").as_deref(), Some("75"));

    // Comments are not paged by Gitea: all of them, with the total.
    fake.seed_comments("alice", "demo", 1, 60);
    let r = api
        .get("/api/v1/repos/alice/demo/issues/1/comments?limit=10", t)
        .await;
    assert_eq!(r.json().as_array().unwrap().len(), 60);
    assert_eq!(r.header("x-total-count").as_deref(), Some("60"));
    assert_eq!(r.header("link"), None);

    // Search wraps the page in {"ok", "data"}.
    fake.seed_repo("alice", "demo-two");
    fake.seed_repo("bob", "demo-three");
    let r = api.get("/api/v1/repos/search?q=demo&limit=2", t).await;
    assert_eq!(r.json()["ok"], true);
    assert_eq!(r.json()["data"].as_array().unwrap().len(), 2);
    assert_eq!(r.header("x-total-count").as_deref(), Some("3"));
    assert_eq!(links(&r)[0].0, "next");
}

// ---- faults -----------------------------------------------------------------------------------

#[tokio::test]
async fn delay_makes_a_short_timeout_fire_and_a_patient_client_succeed() {
    let c = client();
    let fake = FakeGitea::start().await;
    let url = format!("{}/api/v1/version", fake.url());

    // A tokio timeout fires while the fake sits on the request.
    fake.inject(Fault::Delay(Duration::from_secs(3600)));
    let waited = tokio::time::timeout(Duration::from_millis(200), c.get(&url).send()).await;
    assert!(waited.is_err(), "the tokio timeout should have fired");

    // So does reqwest's own timeout.
    fake.inject(Fault::Delay(Duration::from_secs(3600)));
    let impatient = http_client(Duration::from_millis(100));
    let err = impatient.get(&url).send().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");

    // A client without a timeout gets the normal answer once the delay is over.
    fake.inject(Fault::Delay(Duration::from_millis(50)));
    let r = c.get(&url).send().await.expect("answered after the delay");
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["version"], "1.28.0+fake");
    let log = fake.requests();
    assert_eq!(log.len(), 3);
    assert!(log.iter().all(|r| matches!(r.fault, Some(Fault::Delay(_)))));
    assert_eq!(log[2].status, Some(200));
    assert_eq!(fake.pending_faults(), 0);

    // Stopping cuts the hour-long delays short instead of hanging.
    fake.stop().await;
}

#[tokio::test]
async fn status_faults_answer_gitea_style_errors_then_recover() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    for code in [500u16, 502, 503] {
        fake.inject(Fault::Status(code));
        let r = api.get("/api/v1/version", None).await;
        assert_eq!(r.status.as_u16(), code);
        assert!(r.message().contains(&code.to_string()), "{}", r.message());
        assert!(r.json()["url"].is_string());
    }
    fake.inject(Fault::Status(503).times(2));
    assert_eq!(api.get("/api/v1/version", None).await.status, 503);
    assert_eq!(api.get("/api/v1/version", None).await.status, 503);
    assert_eq!(api.get("/api/v1/version", None).await.status, 200);
    assert_eq!(fake.requests().last().unwrap().fault, None);
}

#[tokio::test]
async fn too_many_requests_carries_retry_after() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    fake.inject(Fault::TooManyRequests {
        retry_after_secs: 7,
    });
    let r = api.get("/api/v1/version", None).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after").as_deref(), Some("7"));
    assert!(r.json()["message"].is_string());
    assert_eq!(api.get("/api/v1/version", None).await.status, 200);
}

#[tokio::test]
async fn malformed_json_is_a_decode_error() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    fake.add_token("tok", "alice", &["read:user"]);
    fake.inject(Fault::MalformedJson);
    let resp = api
        .request(Method::GET, "/api/v1/user", Some("tok"))
        .send()
        .await
        .expect("headers arrive");
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("application/json"));
    let err = resp.json::<Value>().await.unwrap_err();
    assert!(err.is_decode(), "{err:?}");
    assert!(!is_incomplete_body(&err), "{err:?}");
    assert_eq!(
        api.get("/api/v1/user", Some("tok")).await.json()["login"],
        "alice"
    );
}

#[tokio::test]
async fn connection_reset_is_a_transport_error() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    seed_demo(&fake, &["write:issue"]);
    let url = format!("{}/api/v1/version", fake.url());

    // Warm a keep-alive connection first, then reset on it.
    assert_eq!(api.c.get(&url).send().await.unwrap().status(), 200);
    fake.inject(Fault::ConnectionReset);
    let err = api
        .c
        .get(&url)
        .send()
        .await
        .expect_err("no response at all");
    assert!(!err.is_timeout() && !err.is_status(), "{err:?}");
    assert!(err.is_request() || err.is_connect(), "{err:?}");

    // A write, on a fresh connection.
    fake.inject(Fault::ConnectionReset.on("POST", "/repos/alice/demo/issues"));
    let err = api
        .request(Method::POST, "/api/v1/repos/alice/demo/issues", Some("tok"))
        .json(&json!({ "title": "lost" }))
        .send()
        .await
        .expect_err("reset");
    assert!(!err.is_timeout(), "{err:?}");
    // The request reached the fake but created nothing.
    let rec = fake.requests().pop().unwrap();
    assert_eq!(rec.fault, Some(Fault::ConnectionReset));
    assert_eq!(rec.status, None);
    assert_eq!(rec.json().unwrap()["title"], "lost");
    assert_eq!(fake.issue_state("alice", "demo", 1), None);

    assert_eq!(api.c.get(&url).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn faults_can_target_a_method_and_path_prefix() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    seed_demo(&fake, &["write:issue", "read:repository"]);
    fake.inject(
        Fault::Status(502)
            .times(2)
            .on("POST", "/repos/alice/demo/issues"),
    );
    assert_eq!(fake.pending_faults(), 2);

    assert_eq!(api.get("/api/v1/version", None).await.status, 200);
    assert_eq!(
        api.get("/api/v1/repos/alice/demo/issues", Some("tok"))
            .await
            .status,
        200
    );
    let issues = "/api/v1/repos/alice/demo/issues";
    assert_eq!(
        api.post(issues, "tok", json!({ "title": "a" }))
            .await
            .status,
        502
    );
    assert_eq!(
        api.post(issues, "tok", json!({ "title": "a" }))
            .await
            .status,
        502
    );
    let r = api.post(issues, "tok", json!({ "title": "a" })).await;
    assert_eq!(r.status, 201);
    assert_eq!(
        r.json()["number"],
        1,
        "the faulted requests created nothing"
    );
    assert_eq!(fake.pending_faults(), 0);
    assert_eq!(fake.count("POST", issues), 3);
}

// ---- hostile upstream -------------------------------------------------------------------------

const REDIRECT_STATUSES: [u16; 5] = [301, 302, 303, 307, 308];

#[tokio::test]
async fn redirects_answer_each_status_with_the_location_of_each_target() {
    let fake = FakeGitea::start().await;
    let api = Api::no_redirect(&fake);
    let other = FakeGitea::start().await;
    let path = "/api/v1/repos/alice/demo/issues?state=open&page=2";
    let targets = [
        (RedirectTarget::SamePath, path.to_string()),
        (
            RedirectTarget::Url(format!("{}/", other.url())),
            format!("{}{path}", other.url()),
        ),
        (
            RedirectTarget::Location("https://elsewhere.example/ünï?x=1".into()),
            "https://elsewhere.example/ünï?x=1".into(),
        ),
    ];
    for status in REDIRECT_STATUSES {
        for (to, location) in &targets {
            fake.inject(Fault::Redirect {
                status,
                to: to.clone(),
            });
            let r = api.get(path, Some("tok")).await;
            assert_eq!(r.status.as_u16(), status, "{to:?}");
            assert_eq!(
                r.headers["location"].as_bytes(),
                location.as_bytes(),
                "{status} {to:?}"
            );
            assert!(r.header("content-type").unwrap().starts_with("text/html"));
        }
    }
    let log = fake.requests();
    assert_eq!(log.len(), REDIRECT_STATUSES.len() * targets.len());
    assert!(log.iter().all(|r| {
        matches!(r.fault, Some(Fault::Redirect { status, .. }) if r.status == Some(status))
    }));
    assert!(other.requests().is_empty(), "nothing was followed");
    assert_eq!(api.get("/api/v1/version", None).await.status, 200);
}

#[tokio::test]
async fn a_redirect_to_another_fake_reaches_it_with_what_the_client_resends() {
    let a = FakeGitea::start().await;
    let b = FakeGitea::start().await;
    b.add_token("tok", "alice", &["all"]);
    b.seed_repo("alice", "demo");
    a.inject(
        Fault::Redirect {
            status: 307,
            to: RedirectTarget::Url(b.url()),
        }
        .on("POST", "/repos/alice/demo/issues"),
    );
    let path = "/api/v1/repos/alice/demo/issues?x=1";
    let api = Api::no_redirect(&a);
    let first = api.post(path, "tok", json!({ "title": "moved" })).await;
    assert_eq!(first.status, 307);
    let location = first.header("location").unwrap();
    assert_eq!(location, format!("{}{path}", b.url()));

    // Follow by hand, resending everything, as a careless client would.
    let second = api
        .c
        .post(&location)
        .header("Authorization", "token tok")
        .header("Sudo", "bob")
        .json(&json!({ "title": "moved" }))
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 403, "alice may not sudo");

    assert_eq!(a.count("POST", "/repos/alice/demo/issues"), 1);
    let got = b.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, "/api/v1/repos/alice/demo/issues");
    assert_eq!(got[0].query, "x=1");
    assert_eq!(got[0].header("authorization"), Some("token tok"));
    assert_eq!(got[0].sudo.as_deref(), Some("bob"));
    assert_eq!(got[0].json().unwrap()["title"], "moved");
    assert_eq!(got[0].fault, None);
}

#[tokio::test]
async fn redirect_loops_point_at_the_same_path() {
    let fake = FakeGitea::start().await;
    let api = Api::no_redirect(&fake);
    let path = "/api/v1/user?x=1";

    // A loop of three hops, then the real answer.
    fake.inject(
        Fault::Redirect {
            status: 302,
            to: RedirectTarget::SamePath,
        }
        .times(3),
    );
    for _ in 0..3 {
        let r = api.get(path, None).await;
        assert_eq!(r.status, 302);
        assert_eq!(r.header("location").as_deref(), Some(path));
    }
    assert_eq!(api.get(path, None).await.status, 401);

    // An endless loop, until removed.
    let lp = Fault::RedirectLoop { status: 301 };
    fake.inject(lp.clone().on("GET", "/user"));
    for _ in 0..20 {
        let r = api.get(path, None).await;
        assert_eq!(r.status, 301);
        assert_eq!(r.header("location").as_deref(), Some(path));
    }
    assert_eq!(fake.pending_faults(), 1);
    assert_eq!(api.get("/api/v1/version", None).await.status, 200);
    // A following client gives up (reqwest's default policy: ten hops).
    fake.clear_requests();
    let err = client()
        .get(format!("{}{path}", fake.url()))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_redirect(), "{err:?}");
    assert_eq!(fake.count("GET", "/user"), 11);
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.fault == Some(lp.clone()) && r.status == Some(301))
    );

    assert_eq!(fake.remove_faults(&lp), 1);
    assert_eq!(fake.pending_faults(), 0);
    assert_eq!(api.get(path, None).await.status, 401);

    // `clear_faults` ends a loop as well.
    fake.inject(lp.clone());
    assert_eq!(api.get(path, None).await.status, 301);
    fake.clear_faults();
    assert_eq!(api.get(path, None).await.status, 401);
}

#[tokio::test]
async fn echo_quotes_the_headers_and_body_back() {
    let fake = FakeGitea::start().await;
    let api = Api::no_redirect(&fake);
    fake.inject(Fault::Echo { status: 422 });
    let resp = api
        .request(
            Method::POST,
            "/api/v1/repos/alice/demo/issues?q=1",
            Some("xyz"),
        )
        .header("Sudo", "root")
        .header("X-Custom-Thing", "a")
        .header("X-Custom-Thing", "b")
        .body(r#"{"title":"secret body"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 422);
    let v: Value = resp.json().await.unwrap();
    let message = v["message"].as_str().unwrap();
    assert!(
        message.starts_with("POST /api/v1/repos/alice/demo/issues?q=1 HTTP/1.1\n"),
        "{message}"
    );
    for line in [
        "\nAuthorization: token xyz\n",
        "\nSudo: root\n",
        "\nX-Custom-Thing: a\n",
        "\nX-Custom-Thing: b\n",
    ] {
        assert!(message.contains(line), "{line:?} not in {message}");
    }
    assert!(
        message.ends_with("\n\n{\"title\":\"secret body\"}"),
        "{message}"
    );
    assert_eq!(v["headers"]["Authorization"], "token xyz");
    assert_eq!(v["headers"]["Sudo"], "root");
    assert_eq!(v["headers"]["X-Custom-Thing"], "a, b");
    assert_eq!(v["body"], r#"{"title":"secret body"}"#);
    assert_eq!(
        v["url"],
        format!("{}/api/v1/repos/alice/demo/issues?q=1", fake.url())
    );
    let rec = &fake.requests()[0];
    assert_eq!(rec.fault, Some(Fault::Echo { status: 422 }));
    assert_eq!(rec.status, Some(422));
}

fn within_one_percent(got: usize, want: usize) -> bool {
    got.abs_diff(want) * 100 <= want
}

#[tokio::test]
async fn huge_bodies_have_the_size_asked_for_and_stay_valid() {
    let fake = FakeGitea::start().await;
    let api = Api::no_redirect(&fake);

    for bytes in [1_000_000usize, 3_000, 1] {
        fake.inject(Fault::HugeBody { bytes });
        let r = api.get("/api/v1/repos/alice/demo/issues", None).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-length"), Some(r.bytes.len().to_string()));
        let items = r.json();
        let items = items.as_array().unwrap();
        assert!(items.iter().all(Value::is_object));
        if bytes >= 100 {
            assert!(
                within_one_percent(r.bytes.len(), bytes),
                "{}",
                r.bytes.len()
            );
            assert!(!items.is_empty());
        }
    }

    fake.inject(Fault::HugeErrorMessage {
        status: 500,
        bytes: 200_000,
    });
    let r = api.get("/api/v1/version", None).await;
    assert_eq!(r.status, 500);
    assert!(
        within_one_percent(r.bytes.len(), 200_000),
        "{}",
        r.bytes.len()
    );
    assert!(r.message().len() > 190_000);
    assert!(r.json()["url"].is_string());

    fake.inject(Fault::HugeText { bytes: 500_000 });
    let r = api.get("/api/v1/version", None).await;
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    assert!(within_one_percent(r.bytes.len(), 500_000));
    assert!(std::str::from_utf8(&r.bytes).is_ok());

    let log = fake.requests();
    assert_eq!(log.len(), 5);
    assert!(log.iter().all(|r| r.fault.is_some()));
}

#[tokio::test]
async fn a_slow_body_arrives_in_pieces() {
    let fake = FakeGitea::start().await;
    let api = Api::no_redirect(&fake);
    let fault = Fault::SlowBody {
        chunks: 5,
        interval: Duration::from_millis(10),
    };
    fake.inject(fault.clone());
    let mut resp = api
        .request(Method::GET, "/api/v1/repos/alice/demo/issues", None)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("application/json"));
    assert_eq!(resp.content_length(), None, "chunked");
    let mut pieces = 0;
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.unwrap() {
        pieces += 1;
        body.extend_from_slice(&chunk);
    }
    assert!(pieces >= 5, "{pieces} pieces");
    let items: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(items.as_array().unwrap().len(), 5);
    assert_eq!(items[4]["id"], 5);

    let rec = &fake.requests()[0];
    assert_eq!(rec.fault, Some(fault));
    assert_eq!(rec.status, Some(200));
    // The connection was closed, the next request gets a normal answer.
    assert_eq!(api.get("/api/v1/version", None).await.status, 200);
}

#[tokio::test]
async fn stopping_the_fake_cuts_a_slow_body_short() {
    let fake = FakeGitea::start().await;
    let api = Api::no_redirect(&fake);
    fake.inject(Fault::SlowBody {
        chunks: 3,
        interval: Duration::from_secs(3600),
    });
    let mut resp = api
        .request(Method::GET, "/api/v1/version", None)
        .send()
        .await
        .expect("the headers come at once");
    assert_eq!(resp.status(), 200);
    let ((), read) = tokio::join!(fake.stop(), resp.chunk());
    let err = read.expect_err("the body was cut off");
    assert!(err.is_decode() && is_incomplete_body(&err), "{err:?}");
}

/// Whether `err` comes from a body that ended before its announced end (not from parsing).
fn is_incomplete_body(err: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(err);
    let mut eof = false;
    while let Some(e) = source {
        if e.is::<serde_json::Error>() {
            return false;
        }
        eof |= e
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof);
        source = e.source();
    }
    eof
}

#[tokio::test]
async fn a_truncated_body_is_a_transport_error_not_a_parse_error() {
    let fake = FakeGitea::start().await;
    let api = Api::no_redirect(&fake);
    fake.add_token("tok", "alice", &["read:user"]);
    fake.inject(Fault::TruncatedBody);
    let resp = api
        .request(Method::GET, "/api/v1/user", Some("tok"))
        .send()
        .await
        .expect("the headers arrive");
    assert_eq!(resp.status(), 200);
    let announced = resp.content_length().expect("a content length");
    assert!(announced > 0);
    let err = resp.bytes().await.expect_err("the body is incomplete");
    // reqwest files this under "decode" like a JSON syntax error; only the source chain tells
    // them apart: an `UnexpectedEof` I/O error from hyper, no `serde_json::Error`.
    assert!(err.is_decode() && !err.is_timeout(), "{err:?}");
    assert!(is_incomplete_body(&err), "{err:?}");

    let rec = &fake.requests()[0];
    assert_eq!(rec.fault, Some(Fault::TruncatedBody));
    assert_eq!(rec.status, Some(200));
    assert_eq!(
        api.get("/api/v1/user", Some("tok")).await.json()["login"],
        "alice"
    );
}

// ---- restart ----------------------------------------------------------------------------------

#[tokio::test]
async fn restart_serves_the_same_state_on_the_same_port() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    fake.add_token("tok", "alice", &["read:user"]);
    let url = fake.url();
    assert_eq!(api.get("/api/v1/user", Some("tok")).await.status, 200);

    fake.stop().await;
    assert!(!fake.is_running());
    let err = api
        .c
        .get(format!("{url}/api/v1/version"))
        .send()
        .await
        .expect_err("nobody listens");
    assert!(err.is_connect() || err.is_request(), "{err:?}");
    fake.stop().await; // idempotent

    fake.restart().await;
    assert!(fake.is_running());
    assert_eq!(fake.url(), url);
    let r = api.get("/api/v1/user", Some("tok")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["login"], "alice");
    assert_eq!(fake.count("GET", "/user"), 2);

    // A restart of a running server works too.
    fake.restart().await;
    assert_eq!(api.get("/api/v1/version", None).await.status, 200);
}

// ---- releases and multipart -------------------------------------------------------------------

/// Uploads `form` as token `tok` to the assets path `path`; asserts 201 and returns the asset.
async fn upload(api: &Api<'_>, path: &str, form: reqwest::multipart::Form) -> Value {
    let resp = api
        .request(Method::POST, path, Some("tok"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    resp.json().await.unwrap()
}

#[tokio::test]
async fn release_assets_record_the_part_content_type() {
    let fake = FakeGitea::start().await;
    let api = Api::new(&fake);
    seed_demo(&fake, &["write:repository"]);

    let releases = "/api/v1/repos/alice/demo/releases";
    let r = api
        .post(
            releases,
            "tok",
            json!({ "tag_name": "v1.0", "name": "One" }),
        )
        .await;
    assert_eq!(r.status, 201);
    let id = r.json()["id"].as_i64().unwrap();
    assert_eq!(
        r.json()["upload_url"],
        format!("{}{releases}/{id}/assets", fake.url())
    );
    let r = api
        .post(releases, "tok", json!({ "tag_name": "v1.0" }))
        .await;
    assert_eq!(r.status, 409);
    let r = api.get(&format!("{releases}/tags/v1.0"), Some("tok")).await;
    assert_eq!(r.json()["id"], id);

    let gz = vec![0x1f, 0x8b, 8, 0, 1, 2, 3];
    let form = reqwest::multipart::Form::new().part(
        "attachment",
        reqwest::multipart::Part::bytes(gz.clone())
            .file_name("tool-1.0.tar.gz")
            .mime_str("application/gzip")
            .unwrap(),
    );
    let asset = upload(
        &api,
        &format!("{releases}/{id}/assets?name=tool.tar.gz"),
        form,
    )
    .await;
    assert_eq!(asset["name"], "tool.tar.gz");
    assert_eq!(asset["size"], gz.len());
    assert!(asset["browser_download_url"].is_string());

    // A part without a content type is accepted; the name comes from the file name.
    let form = reqwest::multipart::Form::new().part(
        "attachment",
        reqwest::multipart::Part::bytes(b"plain".to_vec()).file_name("notes.txt"),
    );
    upload(&api, &format!("{releases}/{id}/assets"), form).await;

    let assets = fake.release_assets("alice", "demo", id);
    assert_eq!(assets.len(), 2);
    assert_eq!(assets[0].name, "tool.tar.gz");
    assert_eq!(assets[0].filename.as_deref(), Some("tool-1.0.tar.gz"));
    assert_eq!(assets[0].content_type.as_deref(), Some("application/gzip"));
    assert_eq!(assets[0].data, gz);
    assert_eq!(assets[1].name, "notes.txt");
    assert_eq!(assets[1].content_type, None);

    let rec = &fake.requests()[3];
    assert!(
        rec.header("content-type")
            .unwrap()
            .starts_with("multipart/form-data; boundary=")
    );
    assert_eq!(rec.query_param("name").as_deref(), Some("tool.tar.gz"));
    assert!(String::from_utf8_lossy(&rec.body).contains("application/gzip"));

    let r = api.get(&format!("{releases}/{id}"), Some("tok")).await;
    assert_eq!(r.json()["assets"].as_array().unwrap().len(), 2);
    let r = api.get(releases, Some("tok")).await;
    assert_eq!(r.header("x-total-count").as_deref(), Some("1"));
}

//! A stateful fake Gitea for integration tests: `mod support;` then
//! `let fake = support::FakeGitea::start().await;`.
//!
//! The fake runs axum on `127.0.0.1:<ephemeral>` on the current tokio runtime and answers a
//! subset of Gitea's `/api/v1` the way Gitea 1.28 does (paths, methods, field names and status
//! codes checked against Gitea's swagger):
//!
//! * **Auth** — `Authorization: token <t>` or `Bearer <t>` (scheme case-insensitive). An unknown
//!   token is a 401 everywhere (`invalid username, password or token`); no token on a route that
//!   needs one is a 401 `token is required`; a token without the route group's scope is a 403
//!   `token does not have at least one of required scope(s): [write:issue]`. Reads (`GET`) need
//!   `read:<category>`, other methods `write:<category>`; `write` implies `read`; `all` covers
//!   everything. Categories follow Gitea's route groups in `routers/api/v1/api.go` (written
//!   from Gitea, not from `src/`, and held to the table in `tests/it/scopes.rs`):
//!   `/repos/{o}/{r}/issues|labels|milestones/**` → issue, `…/notifications` → notification,
//!   other `/repos/**` → repository, `/user/repos`, `/user/starred/**`, `/users/{u}/repos` →
//!   user *then* repository, `/user/orgs`, `/users/{u}/orgs/**` → user then organization (nested
//!   groups; the first missing one is named), `/user/**`, `/users/**` → user, `/orgs/**`,
//!   `/teams/**` → organization, `/admin/**` → admin, `/token` → signed in but no scope,
//!   `/version`, `/settings/*`, `/markdown…` → nothing.
//! * **Sudo** — `Sudo:` header or `?sudo=`: honoured for admins (the request acts as that user),
//!   403 `Only administrators allowed to sudo.` otherwise, 404 for an unknown user.
//! * **Paging** on lists: `page` (default 1), `limit` (default 30, capped at 50), `X-Total-Count`
//!   and a `Link` header (`next`, `last`, `first`, `prev`, absolute URLs keeping the rest of the
//!   query, sorted like Go's `url.Values.Encode`). As in Gitea, issue comments are not paged
//!   (all of them, with `X-Total-Count`).
//! * **Errors** — `{"message", "url"}`; not-found errors use Gitea's `APIErrorNotFound` shape
//!   (`"The target couldn't be found."` plus `errors`), except issues and pull requests whose
//!   message names the missing index; unknown routes 404; wrong method 405; validation 422
//!   (`[Title]: Required`).
//! * **State** — users, organisations, repositories (branches, files, commits), issues and pull
//!   requests sharing one index counter per repository, comments, labels, reviews, merges,
//!   releases and assets. Time is a logical clock from 2025-01-01T00:00:00Z (one second per
//!   event), file SHAs are SHA-256-derived 40-hex strings, so answers are deterministic.
//!
//! Faults ([`Fault`], queued with [`FakeGitea::inject`]) hit the next matching requests before
//! any other processing, and are recorded with the request (`RecordedRequest::fault`). Besides
//! delays, error statuses, 429, bad JSON and resets they play a hostile upstream: redirects
//! (to the same path, another fake, any `Location`; endless with `RedirectLoop`), an `Echo` of
//! the request's headers and body, huge bodies and error messages, a slow chunked body and a
//! body cut off before its `Content-Length`. See `server.rs` for how `ConnectionReset`,
//! `SlowBody` and `TruncatedBody` reach the socket.

#![allow(dead_code, unused_imports)]

mod api;
mod server;
mod state;
mod util;

pub use api::scopes_needed;
pub use server::{FakeGitea, Fault, FaultRule, RecordedRequest, RedirectTarget, UploadedAsset};
pub use state::RepoSeed;

//! The HTTP side of the fake: an axum server on 127.0.0.1 (ephemeral port, reusable on restart),
//! request recording and fault injection.
//!
//! `ConnectionReset` needs the socket itself: the server accepts connections through
//! [`FaultListener`], whose [`FaultIo`] carries a shared "reset" flag. Each request can reach the
//! flag of its connection through axum's `ConnectInfo` ([`ConnCtl`]). To reset, the handler sets
//! the flag and returns; when hyper then tries to write the response, `FaultIo` sets `SO_LINGER`
//! to zero and fails the write, so hyper drops the connection and the kernel sends a TCP RST
//! without a single response byte. The client sees "connection reset" / "connection closed
//! before message completed" — a transport error, never a status.
//!
//! `SlowBody` and `TruncatedBody` need byte-level control a handler does not get: axum's
//! `Body::from_stream` needs a `futures` `Stream` (no such crate among our dependencies), and
//! hyper (in debug builds) asserts that a `Content-Length` header matches a body of known size.
//! So the handler stores a [`Script`] — the raw response in pieces — in its connection's
//! [`ConnCtl`] and returns a dummy `Connection: close` response. `FaultIo` swallows hyper's
//! bytes of that response and, when hyper flushes them, writes the script instead, waiting
//! between pieces and giving up when the fake stops. hyper then shuts the socket down (FIN), as
//! after any `Connection: close` response.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::{Request, State as AxumState};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use axum::serve::{IncomingStream, Listener};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::api::{Incoming, dispatch};
use super::state::{RepoSeed, State};
use super::util::{DOCS_URL, Reply};

// ---- faults -----------------------------------------------------------------------------------

/// A misbehaviour to inject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Wait this long, then answer normally. (Cut short when the server stops.)
    Delay(Duration),
    /// Answer with this status and a Gitea-style JSON error body.
    Status(u16),
    /// Answer 429 with `Retry-After: <secs>` and a JSON error body.
    TooManyRequests { retry_after_secs: u64 },
    /// Answer 200, `Content-Type: application/json`, with a truncated JSON body (the
    /// `Content-Length` matches the truncated body, so only parsing fails).
    MalformedJson,
    /// Close the connection with a TCP RST without sending any response byte.
    ConnectionReset,
    /// Answer `status` (301, 302, 303, 307, 308 or any other) with a `Location` built from
    /// `to`, and a small HTML body like Go's `http.Redirect`. Queued `.times(n)` with
    /// [`RedirectTarget::SamePath`] it is a loop of `n` hops; see also [`Fault::RedirectLoop`].
    Redirect { status: u16, to: RedirectTarget },
    /// Like `Redirect` to [`RedirectTarget::SamePath`], but never used up: every matching
    /// request is redirected until the rule is removed ([`FakeGitea::remove_faults`],
    /// [`FakeGitea::clear_faults`]). `times` is ignored; it counts once in `pending_faults`.
    RedirectLoop { status: u16 },
    /// Answer `status` with a Gitea-style error that quotes the request back, as error pages
    /// and validation messages that repeat their input do: `{"message", "url", "headers",
    /// "body"}`. `message` is a dump of the request — request line, every header as
    /// `Name: value` (Go's canonical names, `Authorization` and `Sudo` included), a blank line,
    /// the raw body; `url` the full request URL with its query; `headers` the same headers as
    /// an object (repeated ones joined with `, `); `body` the body as text.
    Echo { status: u16 },
    /// Answer 200 `application/json` with a valid JSON array of objects of exactly `bytes`
    /// bytes (at least `[]`), `Content-Length` set: for response size limits.
    HugeBody { bytes: usize },
    /// Answer `status` with a Gitea-style error `{"message", "url"}` of exactly `bytes` bytes
    /// (at least the envelope): for limits on what an error message may bring along.
    HugeErrorMessage { status: u16, bytes: usize },
    /// Answer 200 `text/plain` with exactly `bytes` bytes of text lines.
    HugeText { bytes: usize },
    /// Answer 200 `application/json` with the headers at once, then a JSON array of `chunks`
    /// objects (at least one), one object per chunk of a `Transfer-Encoding: chunked` body,
    /// each chunk after `interval`. Chunked framing makes the client see at least `chunks`
    /// pieces however the reads fall (hyper never merges two chunks into one frame). The
    /// response has `Connection: close`. Cut short (the connection closed mid-body) when the
    /// fake stops. Written on the socket by [`FaultIo`], see the module documentation.
    SlowBody { chunks: usize, interval: Duration },
    /// Answer 200 `application/json` whose `Content-Length` announces a whole JSON object but
    /// only the first half of it is sent before the connection is closed (FIN): the client
    /// gets the headers, then an incomplete-body error, not a parse error. Written on the
    /// socket by [`FaultIo`].
    TruncatedBody,
}

/// Where a [`Fault::Redirect`] points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectTarget {
    /// `Location` = the request's own path and query, as sent (a relative reference).
    SamePath,
    /// `Location` = this base (trailing `/` dropped) + the request's path + `?query`: with
    /// another fake's [`FakeGitea::url`] the client is sent to the same API path on that fake.
    Url(String),
    /// `Location` = this string verbatim (absolute, relative, odd schemes, non-ASCII bytes).
    Location(String),
}

impl RedirectTarget {
    fn location(&self, path: &str, query: &str) -> String {
        let path_query = if query.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{query}")
        };
        match self {
            RedirectTarget::SamePath => path_query,
            RedirectTarget::Url(base) => format!("{}{path_query}", base.trim_end_matches('/')),
            RedirectTarget::Location(l) => l.clone(),
        }
    }
}

impl Fault {
    /// Applies to the next `n` matching requests.
    pub fn times(self, n: usize) -> FaultRule {
        FaultRule::from(self).times(n)
    }

    /// Applies only to requests with this method (`"*"` for any) whose path starts with
    /// `path_prefix` (with or without the `/api/v1` prefix).
    pub fn on(self, method: &str, path_prefix: &str) -> FaultRule {
        FaultRule::from(self).on(method, path_prefix)
    }

    /// Applies only to requests whose path starts with `path_prefix`, any method.
    pub fn on_path(self, path_prefix: &str) -> FaultRule {
        FaultRule::from(self).on("*", path_prefix)
    }
}

/// A queued fault: what, how many more times, and which requests it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    pub fault: Fault,
    pub remaining: usize,
    /// `None` matches any method.
    pub method: Option<String>,
    /// `None` matches any path.
    pub path_prefix: Option<String>,
}

impl From<Fault> for FaultRule {
    fn from(fault: Fault) -> FaultRule {
        FaultRule {
            fault,
            remaining: 1,
            method: None,
            path_prefix: None,
        }
    }
}

impl FaultRule {
    pub fn times(mut self, n: usize) -> FaultRule {
        self.remaining = n;
        self
    }

    pub fn on(mut self, method: &str, path_prefix: &str) -> FaultRule {
        self.method = (method != "*").then(|| method.to_ascii_uppercase());
        self.path_prefix = Some(path_prefix.to_string());
        self
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
            && self.path_prefix.as_deref().is_none_or(|p| {
                path.starts_with(p)
                    || path
                        .strip_prefix("/api/v1")
                        .is_some_and(|rest| rest.starts_with(p))
            })
    }
}

// ---- recording --------------------------------------------------------------------------------

/// One request as the fake received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// The path without the query, as sent (not percent-decoded).
    pub path: String,
    /// The raw query string without `?` (empty when none).
    pub query: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The owner of a valid token, whatever `Sudo` says.
    pub token_user: Option<String>,
    /// The `Sudo` header or `?sudo=` value, honoured or not.
    pub sudo: Option<String>,
    /// Who the request acted as (the sudo target when honoured).
    pub acting_user: Option<String>,
    /// The status sent; `None` for a reset connection (or while in flight).
    pub status: Option<u16>,
    /// The injected fault that hit this request.
    pub fault: Option<Fault>,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON, when it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The decoded value of query parameter `name`.
    pub fn query_param(&self, name: &str) -> Option<String> {
        super::util::parse_query(&self.query)
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
}

/// An uploaded release asset as the fake stored it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadedAsset {
    pub id: i64,
    /// The asset name (`?name=` or the part's file name).
    pub name: String,
    /// The file name of the multipart part, if any.
    pub filename: Option<String>,
    /// The part's `Content-Type` (or the request's, for a raw upload), if any.
    pub content_type: Option<String>,
    pub data: Vec<u8>,
}

// ---- the connection wrapper -------------------------------------------------------------------

/// Per-connection control shared between the socket wrapper and the requests on it.
#[derive(Debug, Default)]
pub struct ConnCtl {
    reset: AtomicBool,
    /// Raw bytes to send instead of the handler's response (taken by [`FaultIo`]).
    script: Mutex<Option<Script>>,
}

/// axum connect-info giving a handler its connection's [`ConnCtl`].
#[derive(Debug, Clone)]
pub struct ConnHandle(Arc<ConnCtl>);

/// A response written on the socket piece by piece, bypassing hyper (see the module docs).
pub struct Script {
    /// Sent in order, `interval` before each piece but the first.
    pieces: VecDeque<Vec<u8>>,
    interval: Duration,
    /// Ready once the fake stops: the rest is dropped and the connection closed.
    stop: Pin<Box<dyn Future<Output = ()> + Send>>,
    current: Vec<u8>,
    written: usize,
    started: bool,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Script")
            .field("pieces_left", &self.pieces.len())
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl Script {
    fn new(pieces: Vec<Vec<u8>>, interval: Duration, mut stop: watch::Receiver<bool>) -> Script {
        Script {
            pieces: pieces.into(),
            interval,
            stop: Box::pin(async move {
                let _ = stop.wait_for(|s| *s).await;
            }),
            current: Vec::new(),
            written: 0,
            started: false,
            sleep: None,
        }
    }

    /// Writes the pieces to `io`; `Ready(Ok)` once all are out, `Ready(Err)` when cut short.
    fn poll_drive(&mut self, io: &mut TcpStream, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            if self.stop.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "fault injected: the fake stopped in the middle of a response",
                )));
            }
            if let Some(sleep) = self.sleep.as_mut() {
                ready!(sleep.as_mut().poll(cx));
                self.sleep = None;
            }
            if self.written < self.current.len() {
                let n = ready!(Pin::new(&mut *io).poll_write(cx, &self.current[self.written..]))?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                self.written += n;
                continue;
            }
            ready!(Pin::new(&mut *io).poll_flush(cx))?;
            let Some(next) = self.pieces.pop_front() else {
                return Poll::Ready(Ok(()));
            };
            if self.started {
                self.sleep = Some(Box::pin(tokio::time::sleep(self.interval)));
            }
            self.started = true;
            self.current = next;
            self.written = 0;
        }
    }
}

/// A TCP stream that can be made to fail (and reset) on demand, or to send a [`Script`].
pub struct FaultIo {
    inner: TcpStream,
    ctl: Arc<ConnCtl>,
    /// Once a script was taken, hyper's own output on this connection is swallowed.
    scripted: bool,
    /// The script still being written.
    script: Option<Script>,
}

impl FaultIo {
    fn check(&self) -> io::Result<()> {
        if self.ctl.reset.load(Ordering::SeqCst) {
            // Zero linger: closing the socket sends RST instead of FIN.
            let _ = self.inner.set_zero_linger();
            return Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "fault injected: connection reset",
            ));
        }
        Ok(())
    }

    /// Whether hyper's writes are to be swallowed (taking a newly set script).
    fn scripted(&mut self) -> bool {
        if !self.scripted {
            if let Some(script) = lock(&self.ctl.script).take() {
                self.script = Some(script);
                self.scripted = true;
            }
        }
        self.scripted
    }
}

impl AsyncRead for FaultIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check()?;
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for FaultIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check()?;
        if this.scripted() {
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check()?;
        if this.scripted() {
            return Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum()));
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check()?;
        if this.scripted() {
            if let Some(script) = this.script.as_mut() {
                // hyper flushes after writing its (swallowed) response: send the script instead.
                let done = ready!(script.poll_drive(&mut this.inner, cx));
                this.script = None;
                return Poll::Ready(done);
            }
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check()?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// Accepts TCP connections as [`FaultIo`].
pub struct FaultListener(TcpListener);

impl Listener for FaultListener {
    type Io = FaultIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (FaultIo, SocketAddr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    return (
                        FaultIo {
                            inner: stream,
                            ctl: Arc::default(),
                            scripted: false,
                            script: None,
                        },
                        addr,
                    );
                }
                // Out of file descriptors and the like: back off and retry.
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl Connected<IncomingStream<'_, FaultListener>> for ConnHandle {
    fn connect_info(stream: IncomingStream<'_, FaultListener>) -> ConnHandle {
        ConnHandle(stream.io().ctl.clone())
    }
}

// ---- the server -------------------------------------------------------------------------------

/// What the running server and the test share.
pub struct Shared {
    state: Mutex<State>,
    log: Mutex<Vec<RecordedRequest>>,
    faults: Mutex<VecDeque<FaultRule>>,
    spec: Option<Vec<u8>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not hide the state from the others.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Clone)]
struct AppState {
    shared: Arc<Shared>,
    shutdown: watch::Receiver<bool>,
}

struct Running {
    shutdown: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// A stateful fake Gitea on 127.0.0.1. See the module documentation of `support`.
pub struct FakeGitea {
    shared: Arc<Shared>,
    addr: SocketAddr,
    running: Mutex<Option<Running>>,
}

/// What [`FakeGitea::seed_each`] hands each new item: its id, the logical time, its 1-based
/// number and the repository owner's login (the poster).
struct Seeded<'a> {
    id: i64,
    now: i64,
    nth: usize,
    poster: &'a str,
}

fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

impl FakeGitea {
    /// Starts an empty fake on an ephemeral port (on the current tokio runtime).
    pub async fn start() -> FakeGitea {
        FakeGitea::launch(None).await
    }

    /// Like [`FakeGitea::start`]; `GET /swagger.v1.json` answers `spec`.
    pub async fn start_with_spec(spec: impl Into<Vec<u8>>) -> FakeGitea {
        FakeGitea::launch(Some(spec.into())).await
    }

    async fn launch(spec: Option<Vec<u8>>) -> FakeGitea {
        let listener = bind(SocketAddr::from(([127, 0, 0, 1], 0))).expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(format!("http://{addr}"))),
            log: Mutex::new(Vec::new()),
            faults: Mutex::new(VecDeque::new()),
            spec,
        });
        let fake = FakeGitea {
            shared,
            addr,
            running: Mutex::new(None),
        };
        fake.serve(listener);
        fake
    }

    fn serve(&self, listener: TcpListener) {
        let (tx, rx) = watch::channel(false);
        let app = Router::new().fallback(handle).with_state(AppState {
            shared: self.shared.clone(),
            shutdown: rx.clone(),
        });
        let mut signal = rx;
        let server = axum::serve(
            FaultListener(listener),
            app.into_make_service_with_connect_info::<ConnHandle>(),
        )
        .with_graceful_shutdown(async move {
            let _ = signal.wait_for(|stop| *stop).await;
        });
        let task = tokio::spawn(async move {
            let _ = server.await;
        });
        *lock(&self.running) = Some(Running { shutdown: tx, task });
    }

    /// `http://127.0.0.1:PORT` — the Gitea base URL (the API is under `/api/v1`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/api/v1`.
    pub fn api_url(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn is_running(&self) -> bool {
        lock(&self.running).is_some()
    }

    /// Stops accepting, closes idle keep-alive connections, cuts pending `Delay`s short and
    /// waits until every connection is closed. The state is kept. Idempotent.
    pub async fn stop(&self) {
        let running = lock(&self.running).take();
        if let Some(r) = running {
            let _ = r.shutdown.send(true);
            let _ = r.task.await;
        }
    }

    /// Stops (if running) and starts again on the same address, keeping all state, tokens,
    /// recorded requests and queued faults.
    pub async fn restart(&self) {
        self.stop().await;
        let mut attempt = 0;
        let listener = loop {
            match bind(self.addr) {
                Ok(l) => break l,
                Err(e) if attempt < 200 => {
                    attempt += 1;
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(e) => panic!("cannot bind {} again: {e}", self.addr),
            }
        };
        self.serve(listener);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared.state)
    }

    // ---- tokens, users, organisations ------------------------------------------------------

    /// Registers `token` for `user` (created as a non-admin user when unknown) with `scopes`
    /// such as `write:repository`, `read:user` or `all`.
    pub fn add_token(&self, token: &str, user: &str, scopes: &[&str]) {
        let mut st = self.state();
        let login = st.ensure_user(user, false, false);
        let id = st.next_id("token");
        let created = st.tick();
        st.tokens.insert(
            token.to_string(),
            super::state::Token {
                id,
                name: format!("token-{id}"),
                user: login,
                scopes: scopes.iter().map(|s| s.to_string()).collect(),
                created,
            },
        );
    }

    /// Creates a user (or makes an existing one admin when `admin`); returns its id.
    pub fn seed_user(&self, login: &str, admin: bool) -> i64 {
        let mut st = self.state();
        let key = st.ensure_user(login, admin, false);
        st.users[&key].id
    }

    /// Creates an organisation whose owners team holds `members` (created when unknown).
    pub fn seed_org(&self, org: &str, members: &[&str]) -> i64 {
        let mut st = self.state();
        let keys: Vec<String> = members
            .iter()
            .map(|m| st.ensure_user(m, false, false))
            .collect();
        let key = st.ensure_user(org, false, true);
        let o = st.users.get_mut(&key).expect("just created");
        for k in keys {
            if !o.members.contains(&k) {
                o.members.push(k);
            }
        }
        o.id
    }

    // ---- repositories ----------------------------------------------------------------------

    /// A public repository with `main` holding a `README.md` (owner created when unknown).
    pub fn seed_repo(&self, owner: &str, name: &str) -> i64 {
        self.seed_repo_with(owner, name, RepoSeed::default())
    }

    /// A repository with explicit options; panics if it exists.
    pub fn seed_repo_with(&self, owner: &str, name: &str, seed: RepoSeed) -> i64 {
        let mut st = self.state();
        if st.user(owner).is_none() {
            st.ensure_user(owner, false, false);
        }
        let ri = st
            .create_repo(owner, name, &seed)
            .unwrap_or_else(|| panic!("repository {owner}/{name} exists already"));
        st.repos[ri].id
    }

    fn repo_index(st: &State, owner: &str, repo: &str) -> usize {
        st.repo_idx(owner, repo)
            .unwrap_or_else(|| panic!("no repository {owner}/{repo}"))
    }

    /// Gives `user` write access to the repository.
    pub fn add_collaborator(&self, owner: &str, repo: &str, user: &str) {
        let mut st = self.state();
        let login = st.ensure_user(user, false, false);
        let ri = Self::repo_index(&st, owner, repo);
        if !st.repos[ri].collaborators.contains(&login) {
            st.repos[ri].collaborators.push(login);
        }
    }

    /// Creates `branch` from `from` (the default branch when `None`).
    pub fn seed_branch(&self, owner: &str, repo: &str, branch: &str, from: Option<&str>) {
        let mut st = self.state();
        let ri = Self::repo_index(&st, owner, repo);
        let r = &mut st.repos[ri];
        let from = from.map(str::to_string).unwrap_or(r.default_branch.clone());
        let mut b = r
            .branches
            .get(&from)
            .unwrap_or_else(|| panic!("no branch {from} in {owner}/{repo}"))
            .clone();
        b.name = branch.to_string();
        r.branches.insert(branch.to_string(), b);
    }

    /// Commits `content` at `path` on `branch` (created from nothing in an empty repository).
    /// Returns the commit SHA.
    pub fn seed_file(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        path: &str,
        content: &[u8],
    ) -> String {
        let mut st = self.state();
        let ri = Self::repo_index(&st, owner, repo);
        let author = st.repos[ri].owner.clone();
        st.commit_files(
            ri,
            branch,
            &author,
            &format!("Add {path}"),
            &[(path.to_string(), Some(content.to_vec()))],
        )
        .sha
    }

    /// The content of a file on a branch.
    pub fn file(&self, owner: &str, repo: &str, branch: &str, path: &str) -> Option<Vec<u8>> {
        let st = self.state();
        let ri = st.repo_idx(owner, repo)?;
        Some(
            st.repos[ri]
                .branches
                .get(branch)?
                .files
                .get(path)?
                .content
                .clone(),
        )
    }

    pub fn branch_exists(&self, owner: &str, repo: &str, branch: &str) -> bool {
        let st = self.state();
        st.repo_idx(owner, repo)
            .is_some_and(|ri| st.repos[ri].branches.contains_key(branch))
    }

    pub fn repo_exists(&self, owner: &str, repo: &str) -> bool {
        self.state().repo_idx(owner, repo).is_some()
    }

    // ---- issues, comments, labels, pulls, releases -----------------------------------------

    /// Opens an issue by the repository owner; returns its index.
    pub fn seed_issue(&self, owner: &str, repo: &str, title: &str) -> i64 {
        let mut st = self.state();
        let ri = Self::repo_index(&st, owner, repo);
        let id = st.next_id("issue");
        let now = st.tick();
        let r = &mut st.repos[ri];
        let poster = r.owner.to_ascii_lowercase();
        r.push_issue(super::state::Issue::new(id, title.to_string(), poster, now))
    }

    /// Opens `n` issues titled `Issue 1` … `Issue n`; returns their indexes.
    pub fn seed_issues(&self, owner: &str, repo: &str, n: usize) -> Vec<i64> {
        (1..=n)
            .map(|i| self.seed_issue(owner, repo, &format!("Issue {i}")))
            .collect()
    }

    /// Adds `n` comments `Comment 1` … `Comment n` by the owner to issue `index`.
    pub fn seed_comments(&self, owner: &str, repo: &str, index: i64, n: usize) {
        self.seed_each(
            owner,
            repo,
            index,
            n,
            ("comment", "issue"),
            |issue, seed| {
                issue.comments.push(super::state::Comment {
                    id: seed.id,
                    body: format!("Comment {}", seed.nth),
                    poster: seed.poster.to_string(),
                    created: seed.now,
                    updated: seed.now,
                });
                issue.updated = seed.now;
            },
        );
    }

    /// Replaces the body of issue (or pull request) `index`.
    pub fn set_issue_body(&self, owner: &str, repo: &str, index: i64, body: &str) {
        let mut st = self.state();
        let ri = Self::repo_index(&st, owner, repo);
        let issue = st.repos[ri]
            .issue_mut(index)
            .unwrap_or_else(|| panic!("no issue #{index} in {owner}/{repo}"));
        issue.body = body.to_string();
    }

    /// Adds `n` reviews `Review 1` … `Review n` (state `COMMENT`, by the owner) to pull request
    /// `index`.
    pub fn seed_reviews(&self, owner: &str, repo: &str, index: i64, n: usize) {
        self.seed_each(
            owner,
            repo,
            index,
            n,
            ("review", "pull request"),
            |issue, seed| {
                let pull = issue
                    .pull
                    .as_mut()
                    .unwrap_or_else(|| panic!("#{index} in {owner}/{repo} is not a pull request"));
                let commit_id = pull.head_sha.clone();
                pull.reviews.push(super::state::Review {
                    id: seed.id,
                    poster: seed.poster.to_string(),
                    state: "COMMENT".into(),
                    body: format!("Review {}", seed.nth),
                    commit_id,
                    comments_count: 0,
                    official: false,
                    submitted: seed.now,
                });
            },
        );
    }

    /// Calls `add` `n` times on issue (or pull request) `index`, each time with a fresh id of
    /// `kind.0` and the next logical time; panics naming `kind.1` when there is no such issue.
    fn seed_each(
        &self,
        owner: &str,
        repo: &str,
        index: i64,
        n: usize,
        kind: (&'static str, &str),
        mut add: impl FnMut(&mut super::state::Issue, Seeded),
    ) {
        let mut st = self.state();
        let ri = Self::repo_index(&st, owner, repo);
        let poster = st.repos[ri].owner.to_ascii_lowercase();
        for nth in 1..=n {
            let id = st.next_id(kind.0);
            let now = st.tick();
            let issue = st.repos[ri]
                .issue_mut(index)
                .unwrap_or_else(|| panic!("no {} #{index} in {owner}/{repo}", kind.1));
            let poster = poster.as_str();
            add(
                issue,
                Seeded {
                    id,
                    now,
                    nth,
                    poster,
                },
            );
        }
    }

    /// Creates a repository label; returns its id.
    pub fn seed_label(&self, owner: &str, repo: &str, name: &str, color: &str) -> i64 {
        let mut st = self.state();
        let ri = Self::repo_index(&st, owner, repo);
        let id = st.next_id("label");
        st.repos[ri].labels.push(super::state::Label {
            id,
            name: name.to_string(),
            color: color.trim_start_matches('#').to_string(),
            description: String::new(),
            exclusive: false,
            archived: false,
        });
        id
    }

    /// Opens a pull request from `head` into `base` by the owner; returns its index.
    pub fn seed_pull(&self, owner: &str, repo: &str, head: &str, base: &str, title: &str) -> i64 {
        let mut st = self.state();
        let ri = Self::repo_index(&st, owner, repo);
        let issue_id = st.next_id("issue");
        let pull_id = st.next_id("pull");
        let now = st.tick();
        let r = &mut st.repos[ri];
        let sha = |b: &str| {
            r.branches
                .get(b)
                .map(|b| b.head.sha.clone())
                .unwrap_or_else(|| panic!("no branch {b} in {owner}/{repo}"))
        };
        let (head_sha, base_sha) = (sha(head), sha(base));
        let poster = r.owner.to_ascii_lowercase();
        let pull = super::state::Pull::open(pull_id, head.into(), base.into(), head_sha, base_sha);
        r.push_issue(super::state::Issue {
            pull: Some(pull),
            ..super::state::Issue::new(issue_id, title.to_string(), poster, now)
        })
    }

    /// Publishes a release of `tag` on the default branch; returns its id.
    pub fn seed_release(&self, owner: &str, repo: &str, tag: &str) -> i64 {
        let mut st = self.state();
        let ri = Self::repo_index(&st, owner, repo);
        let id = st.next_id("release");
        let now = st.tick();
        let r = &mut st.repos[ri];
        let author = r.owner.to_ascii_lowercase();
        let target = r.default_branch.clone();
        r.releases.push(super::state::Release {
            id,
            tag: tag.to_string(),
            name: tag.to_string(),
            body: String::new(),
            draft: false,
            prerelease: false,
            target,
            author,
            created: now,
            assets: Vec::new(),
        });
        id
    }

    /// `"open"` or `"closed"` for an issue or pull request.
    pub fn issue_state(&self, owner: &str, repo: &str, index: i64) -> Option<String> {
        self.with_issue(owner, repo, index, |_, issue| {
            if issue.open { "open" } else { "closed" }.to_string()
        })
    }

    /// `look` applied to issue (or pull request) `index` and its repository; `None` when either
    /// does not exist.
    fn with_issue<T>(
        &self,
        owner: &str,
        repo: &str,
        index: i64,
        look: impl FnOnce(&super::state::Repo, &super::state::Issue) -> T,
    ) -> Option<T> {
        let st = self.state();
        let r = &st.repos[st.repo_idx(owner, repo)?];
        Some(look(r, r.issue(index)?))
    }

    /// The label names of an issue or pull request.
    pub fn issue_labels(&self, owner: &str, repo: &str, index: i64) -> Vec<String> {
        self.with_issue(owner, repo, index, |r, i| {
            i.label_ids
                .iter()
                .filter_map(|id| r.label_by_id(*id))
                .map(|l| l.name.clone())
                .collect()
        })
        .unwrap_or_default()
    }

    /// The comment bodies of an issue or pull request, oldest first.
    pub fn comments(&self, owner: &str, repo: &str, index: i64) -> Vec<String> {
        self.with_issue(owner, repo, index, |_, i| {
            i.comments.iter().map(|c| c.body.clone()).collect()
        })
        .unwrap_or_default()
    }

    /// Whether pull request `index` is merged (`None` when it does not exist).
    pub fn pull_merged(&self, owner: &str, repo: &str, index: i64) -> Option<bool> {
        self.with_issue(owner, repo, index, |_, i| i.pull.as_ref().map(|p| p.merged))?
    }

    /// The review states (`APPROVED`, …) of pull request `index`, oldest first.
    pub fn reviews(&self, owner: &str, repo: &str, index: i64) -> Vec<String> {
        self.with_issue(owner, repo, index, |_, i| {
            let reviews = i.pull.as_ref().map(|p| p.reviews.as_slice());
            reviews
                .unwrap_or_default()
                .iter()
                .map(|r| r.state.clone())
                .collect()
        })
        .unwrap_or_default()
    }

    /// The assets uploaded to a release.
    pub fn release_assets(&self, owner: &str, repo: &str, release_id: i64) -> Vec<UploadedAsset> {
        let st = self.state();
        let Some(ri) = st.repo_idx(owner, repo) else {
            return Vec::new();
        };
        st.repos[ri]
            .releases
            .iter()
            .find(|r| r.id == release_id)
            .map(|r| {
                r.assets
                    .iter()
                    .map(|a| UploadedAsset {
                        id: a.id,
                        name: a.name.clone(),
                        filename: a.filename.clone(),
                        content_type: a.content_type.clone(),
                        data: a.data.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    // ---- recording and faults --------------------------------------------------------------

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.log).clone()
    }

    pub fn clear_requests(&self) {
        lock(&self.shared.log).clear();
    }

    /// How many requests had this method and path (`/api/v1/version` or just `/version`).
    pub fn count(&self, method: &str, path: &str) -> usize {
        lock(&self.shared.log)
            .iter()
            .filter(|r| {
                r.method.eq_ignore_ascii_case(method)
                    && (r.path == path || r.path.strip_prefix("/api/v1") == Some(path))
            })
            .count()
    }

    /// Queues a fault (a bare [`Fault`] hits the next request, whatever it is). Rules are
    /// consulted in the order they were queued; the first matching one is used.
    pub fn inject(&self, rule: impl Into<FaultRule>) {
        let rule = rule.into();
        if rule.remaining > 0 {
            lock(&self.shared.faults).push_back(rule);
        }
    }

    /// How many faults are still queued (sum of the remaining counts).
    pub fn pending_faults(&self) -> usize {
        lock(&self.shared.faults).iter().map(|r| r.remaining).sum()
    }

    /// Drops every queued fault (a [`Fault::RedirectLoop`] included).
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }

    /// Drops the queued rules whose fault equals `fault` (to end a [`Fault::RedirectLoop`] and
    /// keep the rest); returns how many rules were dropped.
    pub fn remove_faults(&self, fault: &Fault) -> usize {
        let mut faults = lock(&self.shared.faults);
        let before = faults.len();
        faults.retain(|r| r.fault != *fault);
        before - faults.len()
    }
}

impl Drop for FakeGitea {
    fn drop(&mut self) {
        if let Some(r) = lock(&self.running).take() {
            let _ = r.shutdown.send(true);
        }
    }
}

impl std::fmt::Debug for FakeGitea {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGitea")
            .field("addr", &self.addr)
            .field("running", &self.is_running())
            .finish()
    }
}

// ---- the handler ------------------------------------------------------------------------------

fn into_response(reply: Reply) -> Response {
    let mut resp = Response::new(Body::from(reply.body));
    *resp.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    for (k, v) in reply.headers {
        // `from_bytes`, not `from_str`: a hostile `Location` may hold non-ASCII bytes.
        if let (Ok(k), Ok(v)) = (
            HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_bytes(v.as_bytes()),
        ) {
            resp.headers_mut().append(k, v);
        }
    }
    resp
}

fn take_fault(shared: &Shared, method: &str, path: &str) -> Option<Fault> {
    let mut faults = lock(&shared.faults);
    let pos = faults.iter().position(|r| r.matches(method, path))?;
    let rule = &mut faults[pos];
    let fault = rule.fault.clone();
    if matches!(fault, Fault::RedirectLoop { .. }) {
        // Never used up: a loop lasts until the test removes it.
        return Some(fault);
    }
    rule.remaining -= 1;
    if rule.remaining == 0 {
        faults.remove(pos);
    }
    Some(fault)
}

fn reason(status: u16) -> &'static str {
    StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error")
}

async fn handle(AxumState(app): AxumState<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 256 * 1024 * 1024)
        .await
        .map(|b| b.to_vec())
        .unwrap_or_default();
    let method = parts.method.as_str().to_string();
    let path = parts.uri.path().to_string();
    let raw_query = parts.uri.query().unwrap_or("").to_string();
    let conn = parts
        .extensions
        .get::<ConnectInfo<ConnHandle>>()
        .map(|c| c.0.0.clone());
    let fault = take_fault(&app.shared, &method, &path);
    let slot = {
        let mut log = lock(&app.shared.log);
        log.push(RecordedRequest {
            method: method.clone(),
            path: path.clone(),
            query: raw_query.clone(),
            headers: parts
                .headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_ascii_lowercase(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: body.clone(),
            token_user: None,
            sudo: None,
            acting_user: None,
            status: None,
            fault: fault.clone(),
        });
        log.len() - 1
    };
    let set_status = |status: Option<u16>, info: Option<super::api::AuthInfo>| {
        let mut log = lock(&app.shared.log);
        if let Some(r) = log.get_mut(slot) {
            r.status = status;
            if let Some(i) = info {
                r.token_user = i.token_user;
                r.sudo = i.sudo;
                r.acting_user = i.acting_user;
            }
        }
    };

    let canned = match fault {
        None => None,
        Some(Fault::Delay(d)) => {
            let mut stop = app.shutdown.clone();
            tokio::select! {
                _ = tokio::time::sleep(d) => None,
                _ = stop.wait_for(|s| *s) => {
                    Some(Reply::error(503, "fake gitea: shutting down"))
                }
            }
        }
        Some(Fault::Status(code)) => Some(Reply::error(
            code,
            format!("fake gitea: injected {code} {}", reason(code)),
        )),
        Some(Fault::TooManyRequests { retry_after_secs }) => Some(
            Reply::json(
                429,
                &json!({ "message": "rate limit exceeded", "url": DOCS_URL }),
            )
            .with_header("retry-after", retry_after_secs.to_string()),
        ),
        Some(Fault::MalformedJson) => {
            let full = br#"{"id":1,"login":"truncated","full_name":"This JSON ends in the middle of a str"#;
            Some(Reply::bytes(
                200,
                "application/json;charset=utf-8",
                full.to_vec(),
            ))
        }
        Some(Fault::Redirect { status, to }) => {
            Some(redirect_reply(status, &to.location(&path, &raw_query)))
        }
        Some(Fault::RedirectLoop { status }) => Some(redirect_reply(
            status,
            &RedirectTarget::SamePath.location(&path, &raw_query),
        )),
        Some(Fault::Echo { status }) => {
            let base = lock(&app.shared.state).base_url.clone();
            Some(echo_reply(status, &base, &parts, &body))
        }
        Some(Fault::HugeBody { bytes }) => Some(Reply::bytes(
            200,
            "application/json;charset=utf-8",
            huge_json_array(bytes),
        )),
        Some(Fault::HugeErrorMessage { status, bytes }) => Some(huge_error_reply(status, bytes)),
        Some(Fault::HugeText { bytes }) => Some(Reply::bytes(
            200,
            "text/plain;charset=utf-8",
            huge_text(bytes),
        )),
        Some(Fault::SlowBody { chunks, interval }) => {
            return scripted(
                conn.as_deref(),
                slow_body_pieces(chunks),
                interval,
                &app,
                set_status,
            );
        }
        Some(Fault::TruncatedBody) => {
            return scripted(
                conn.as_deref(),
                truncated_body_pieces(),
                Duration::ZERO,
                &app,
                set_status,
            );
        }
        Some(Fault::ConnectionReset) => {
            if let Some(ctl) = &conn {
                ctl.reset.store(true, Ordering::SeqCst);
            }
            set_status(None, None);
            // Never written: the flagged socket fails the first write and is reset.
            return into_response(Reply::empty(500));
        }
    };
    if let Some(reply) = canned {
        set_status(Some(reply.status), None);
        return into_response(reply);
    }

    let (reply, info) = {
        let mut st = lock(&app.shared.state);
        dispatch(
            &mut st,
            app.shared.spec.as_deref(),
            &Incoming {
                method: &method,
                path: &path,
                raw_query: &raw_query,
                headers: &parts.headers,
                body: &body,
            },
        )
    };
    set_status(Some(reply.status), Some(info));
    into_response(reply)
}

// ---- canned fault answers ---------------------------------------------------------------------

/// Hands `pieces` to the connection's [`FaultIo`] and returns the dummy response it swallows.
fn scripted(
    conn: Option<&ConnCtl>,
    pieces: Vec<Vec<u8>>,
    interval: Duration,
    app: &AppState,
    set_status: impl Fn(Option<u16>, Option<super::api::AuthInfo>),
) -> Response {
    if let Some(ctl) = conn {
        *lock(&ctl.script) = Some(Script::new(pieces, interval, app.shutdown.clone()));
    }
    set_status(Some(200), None);
    // `Connection: close` so hyper neither waits for another request nor reuses the socket.
    into_response(Reply::empty(200).with_header("connection", "close"))
}

/// Like Go's `http.Redirect`: the status, `Location` and a one-line HTML body.
fn redirect_reply(status: u16, location: &str) -> Reply {
    let href = location
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&#34;");
    Reply::bytes(
        status,
        "text/html; charset=utf-8",
        format!("<a href=\"{href}\">{}</a>.\n\n", reason(status)).into_bytes(),
    )
    .with_header("location", location)
}

/// Go's `textproto.CanonicalMIMEHeaderKey`: `x-gitea-otp` → `X-Gitea-Otp`.
fn canonical_header(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + &chars.as_str().to_ascii_lowercase()
            })
        })
        .collect::<Vec<_>>()
        .join("-")
}

fn echo_reply(status: u16, base: &str, parts: &axum::http::request::Parts, body: &[u8]) -> Reply {
    let target = parts.uri.path_and_query().map_or_else(
        || parts.uri.path().to_string(),
        |pq| pq.as_str().to_string(),
    );
    let text = String::from_utf8_lossy(body).into_owned();
    let mut message = format!("{} {target} {:?}\n", parts.method, parts.version);
    let mut headers = serde_json::Map::new();
    for (k, v) in &parts.headers {
        let name = canonical_header(k.as_str());
        let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
        message.push_str(&format!("{name}: {value}\n"));
        match headers.get_mut(&name) {
            Some(Value::String(prev)) => {
                prev.push_str(", ");
                prev.push_str(&value);
            }
            _ => {
                headers.insert(name, Value::String(value));
            }
        }
    }
    message.push('\n');
    message.push_str(&text);
    Reply::json(
        status,
        &json!({
            "message": message,
            "url": format!("{base}{target}"),
            "headers": headers,
            "body": text,
        }),
    )
}

/// A JSON array of issue-like objects of exactly `bytes` bytes (`[]` when that is too few).
fn huge_json_array(bytes: usize) -> Vec<u8> {
    const ITEM: usize = 1024;
    let mut out = Vec::with_capacity(bytes.max(2));
    out.push(b'[');
    for id in 1.. {
        let head = format!(
            "{}{{\"id\":{id},\"title\":\"Item {id}\",\"body\":\"",
            if id == 1 { "" } else { "," }
        );
        let tail = "\"}";
        // Room for this item, leaving one byte for the closing `]`.
        let room = bytes.saturating_sub(out.len() + 1);
        if room < head.len() + tail.len() {
            break;
        }
        // A regular item, or one that takes up all the rest when a further one would not fit.
        let pad = if room >= 2 * ITEM {
            ITEM - head.len() - tail.len()
        } else {
            room - head.len() - tail.len()
        };
        out.extend_from_slice(head.as_bytes());
        out.resize(out.len() + pad, b'x');
        out.extend_from_slice(tail.as_bytes());
    }
    out.push(b']');
    out
}

/// `bytes` bytes of numbered text lines (the last one cut off).
fn huge_text(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 64);
    let mut n = 1;
    while out.len() < bytes {
        out.extend_from_slice(format!("fake gitea: line {n} of a huge text body\n").as_bytes());
        n += 1;
    }
    out.truncate(bytes);
    out
}

/// A Gitea error `{"message", "url"}` of exactly `bytes` bytes (at least the envelope).
fn huge_error_reply(status: u16, bytes: usize) -> Reply {
    let envelope = serde_json::to_vec(&json!({ "message": "", "url": DOCS_URL }))
        .expect("serialise JSON")
        .len();
    // Newlines would be escaped to two bytes each; spaces keep the size exact.
    let message = String::from_utf8(huge_text(bytes.saturating_sub(envelope)))
        .expect("ASCII text")
        .replace('\n', " ");
    Reply::error(status, message)
}

/// The raw response of [`Fault::SlowBody`]: the head, then one chunk per object.
fn slow_body_pieces(chunks: usize) -> Vec<Vec<u8>> {
    let chunks = chunks.max(1);
    let mut pieces = vec![
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json;charset=utf-8\r\n\
          transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            .to_vec(),
    ];
    for i in 1..=chunks {
        let data = format!(
            "{}{{\"id\":{i},\"title\":\"Chunk {i} of {chunks}\"}}{}",
            if i == 1 { "[" } else { "," },
            if i == chunks { "]" } else { "" }
        );
        let mut piece = format!("{:x}\r\n{data}\r\n", data.len()).into_bytes();
        if i == chunks {
            piece.extend_from_slice(b"0\r\n\r\n");
        }
        pieces.push(piece);
    }
    pieces
}

/// The raw response of [`Fault::TruncatedBody`]: a head announcing a whole object, half of it.
fn truncated_body_pieces() -> Vec<Vec<u8>> {
    let body = serde_json::to_vec(&json!({
        "id": 1,
        "login": "truncated",
        "full_name": "This body is cut off in the middle by the fake",
        "email": "truncated@example.com",
    }))
    .expect("serialise JSON");
    let mut piece = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json;charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    piece.extend_from_slice(&body[..body.len() / 2]);
    vec![piece]
}

//! The one HTTP client towards the Gitea instance.
//!
//! Owns the `reqwest::Client` (rustls on the `ring` provider), the base URL, the concurrency
//! limit, the retry rule and the redirect rule. It sends [`Request`]s with the token it is
//! handed (it keeps none of its own: the caller decides whose credential applies) and reads
//! bounded [`Response`]s; it knows nothing about actions or policy.
//!
//! Retry rule: only idempotent methods (GET, HEAD, PUT, DELETE) are retried, on connection
//! errors and on 429/502/503/504, with jittered exponential backoff (honouring `Retry-After`).
//! POST and PATCH are sent exactly once: a write must never be sent twice.
//!
//! Redirect rule: a write never follows a redirect (the 3xx and its `Location` are the answer,
//! so a body is never re-sent, nor turned into a GET elsewhere). A read follows at most
//! [`MAX_REDIRECTS`] hops; credentials (`Authorization`, `Sudo`) travel only while every hop
//! stays on the instance's own origin (LFS media on object storage is fetched without them).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use tokio::sync::Semaphore;

use crate::config::{Config, Secret};
use crate::metrics::Metrics;
use crate::spec::HttpMethod;

/// The API prefix every request path is relative to.
pub const API_PREFIX: &str = "/api/v1";

/// Longest `Retry-After` honoured before giving up on a retry.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);
/// First backoff step; doubled per attempt, with jitter.
const BACKOFF_BASE: Duration = Duration::from_millis(200);
/// Most redirects a read follows.
pub const MAX_REDIRECTS: usize = 5;

/// Errors talking to the instance.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The client could not be built (TLS set-up, CA bundle) or the request could not be
    /// formed; nothing was sent.
    #[error("cannot set up the HTTP client: {0}")]
    Setup(String),
    /// The request did not complete.
    #[error("request to {url} failed: {reason}")]
    Transport {
        /// The URL (without credentials).
        url: String,
        /// What happened.
        reason: String,
        /// No connection was made, so nothing was sent.
        connect: bool,
    },
    /// The instance answered with an error status.
    #[error("{url} answered {status}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// A read was redirected more than [`MAX_REDIRECTS`] times (or to something that is not
    /// an http(s) URL).
    #[error("{url}: {reason}")]
    Redirect {
        /// The URL that redirected.
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// The answer was larger than the caller accepts.
    #[error("{url} answered with more than {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit.
        limit: usize,
    },
}

impl Error {
    /// True when the request certainly never left this process (so a write was not applied).
    pub fn never_sent(&self) -> bool {
        matches!(
            self,
            Error::Setup(_) | Error::Transport { connect: true, .. }
        )
    }
}

/// The client's own settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The instance's base URL.
    pub base: reqwest::Url,
    /// Total time a request may take.
    pub timeout: Duration,
    /// Time to wait for a connection.
    pub connect_timeout: Duration,
    /// Extra CA certificates (PEM).
    pub ca_file: Option<std::path::PathBuf>,
    /// Accept any certificate (labs only).
    pub insecure: bool,
    /// Requests in flight at once.
    pub max_concurrency: usize,
    /// Retries of a failed idempotent request.
    pub retries: u32,
}

impl ClientConfig {
    /// The client's settings out of the whole configuration.
    pub fn from_config(config: &Config) -> ClientConfig {
        ClientConfig {
            base: config.gitea_url.clone(),
            timeout: config.timeout,
            connect_timeout: config.connect_timeout,
            ca_file: config.ca_file.clone(),
            insecure: config.insecure,
            max_concurrency: config.max_concurrency,
            retries: config.retries,
        }
    }
}

/// A request body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// No body.
    None,
    /// `application/json`.
    Json(serde_json::Value),
    /// Text with its content type (`text/plain`).
    Text(String, String),
    /// `multipart/form-data`.
    Multipart(Vec<Part>),
}

/// One multipart part.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The form field name.
    pub name: String,
    /// The file name, for file parts.
    pub filename: Option<String>,
    /// The part's content type (always explicit: some servers refuse parts without one).
    pub content_type: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// A request to the instance's API.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// HTTP method.
    pub method: HttpMethod,
    /// Path relative to `/api/v1`, already percent-encoded (`/repos/alice/demo`).
    pub path: String,
    /// Query pairs, in order (arrays repeat their name).
    pub query: Vec<(String, String)>,
    /// Act as this user (sent as the `Sudo` header).
    pub sudo: Option<String>,
    /// The body.
    pub body: Body,
}

/// An answer from the instance, read up to a limit.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`, if any.
    pub content_type: Option<String>,
    /// `X-Total-Count`, if any.
    pub total_count: Option<u64>,
    /// `Link`, if any.
    pub link: Option<String>,
    /// The body, at most the limit given to [`GiteaClient::send`].
    pub body: Vec<u8>,
    /// True when the body was longer than the limit (and was cut).
    pub truncated: bool,
    /// The body's length when the server declared it.
    pub declared_len: Option<u64>,
    /// `Retry-After`, if any (seconds).
    pub retry_after: Option<Duration>,
    /// How many attempts were made (1 without retries).
    pub attempts: u32,
    /// `Location` of a redirect that was not followed (writes), if any.
    pub location: Option<String>,
}

/// Installs the `ring` crypto provider for rustls once per process.
fn install_crypto_provider() {
    // Fails only when a provider is already installed, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A client bound to one Gitea instance.
#[derive(Debug, Clone)]
pub struct GiteaClient {
    http: reqwest::Client,
    base: reqwest::Url,
    permits: Arc<Semaphore>,
    retries: u32,
    metrics: Arc<Metrics>,
}

/// One HTTP exchange, before redirects are resolved.
struct Exchange<'a> {
    method: reqwest::Method,
    url: reqwest::Url,
    token: Option<&'a Secret>,
    sudo: Option<&'a str>,
    body: &'a Body,
}

impl GiteaClient {
    /// Builds the client; it records the latency of every request in `metrics`.
    pub fn new(config: &ClientConfig, metrics: Arc<Metrics>) -> Result<GiteaClient, Error> {
        install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .user_agent(concat!("aegis-gitea-mcp/", env!("CARGO_PKG_VERSION")))
            // Redirects are resolved here, by the rule in the module documentation.
            .redirect(reqwest::redirect::Policy::none());
        if let Some(path) = &config.ca_file {
            let pem = std::fs::read(path).map_err(|e| {
                Error::Setup(format!("cannot read GITEA_CA_FILE {}: {e}", path.display()))
            })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                Error::Setup(format!(
                    "GITEA_CA_FILE {} is not a PEM bundle: {e}",
                    path.display()
                ))
            })?;
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        if config.insecure {
            tracing::warn!(
                "GITEA_INSECURE is on: TLS certificates of {} are not verified",
                config.base
            );
            builder = builder.danger_accept_invalid_certs(true);
        }
        let http = builder.build().map_err(|e| Error::Setup(describe(&e)))?;
        Ok(GiteaClient {
            http,
            base: config.base.clone(),
            permits: Arc::new(Semaphore::new(config.max_concurrency)),
            retries: config.retries,
            metrics,
        })
    }

    /// The instance's base URL.
    pub fn base_url(&self) -> &reqwest::Url {
        &self.base
    }

    /// `{base}{path}` where `path` starts with `/`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base.as_str().trim_end_matches('/'), path)
    }

    /// The full URL of an API request, with its query (for previews and logs; never secret).
    pub fn request_url(&self, req: &Request) -> String {
        let mut url = self.url(&format!("{API_PREFIX}{}", req.path));
        if !req.query.is_empty() {
            let q: Vec<String> = req
                .query
                .iter()
                .map(|(k, v)| format!("{}={}", encode_query(k), encode_query(v)))
                .collect();
            url.push('?');
            url.push_str(&q.join("&"));
        }
        url
    }

    fn parse_url(&self, url: &str) -> Result<reqwest::Url, Error> {
        reqwest::Url::parse(url).map_err(|e| Error::Setup(format!("bad URL {url}: {e}")))
    }

    /// GETs `path` (relative to the base URL) with `token` and returns the body of a 2xx
    /// answer of at most `limit` bytes.
    pub async fn get_bytes(
        &self,
        path: &str,
        token: Option<&Secret>,
        limit: usize,
    ) -> Result<Vec<u8>, Error> {
        let url = self.url(path);
        let exchange = Exchange {
            method: reqwest::Method::GET,
            url: self.parse_url(&url)?,
            token,
            sudo: None,
            body: &Body::None,
        };
        let resp = {
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|_| Error::Setup("client closed".into()))?;
            self.exchange(exchange, true, limit).await?
        };
        if !(200..300).contains(&resp.status) {
            return Err(Error::Status {
                url,
                status: resp.status,
            });
        }
        if resp.truncated {
            return Err(Error::TooLarge { url, limit });
        }
        Ok(resp.body)
    }

    /// Downloads the instance's API description (`/swagger.v1.json`), at most `limit` bytes.
    pub async fn fetch_spec(&self, token: Option<&Secret>, limit: usize) -> Result<Vec<u8>, Error> {
        self.get_bytes("/swagger.v1.json", token, limit).await
    }

    /// Sends an API request with `token` and reads at most `limit` bytes of the answer,
    /// retrying idempotent methods on transient failures.
    pub async fn send(
        &self,
        req: &Request,
        token: Option<&Secret>,
        limit: usize,
    ) -> Result<Response, Error> {
        let retryable = matches!(
            req.method,
            HttpMethod::Get | HttpMethod::Head | HttpMethod::Put | HttpMethod::Delete
        );
        let max_attempts = if retryable { self.retries + 1 } else { 1 };
        let url = self.request_url(req);
        let parsed = self.parse_url(&url)?;
        let method = reqwest::Method::from_bytes(req.method.as_str().as_bytes())
            .map_err(|e| Error::Setup(e.to_string()))?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = std::time::Instant::now();
            let outcome = {
                // The permit is held for one attempt, not across backoff sleeps.
                let _permit = self
                    .permits
                    .acquire()
                    .await
                    .map_err(|_| Error::Setup("client closed".into()))?;
                let exchange = Exchange {
                    method: method.clone(),
                    url: parsed.clone(),
                    token,
                    sudo: req.sudo.as_deref(),
                    body: &req.body,
                };
                self.exchange(exchange, req.method.is_read(), limit).await
            };
            self.metrics.upstream(started.elapsed());
            let wait = match &outcome {
                Ok(resp) if matches!(resp.status, 429 | 502 | 503 | 504) => {
                    retry_after(resp).unwrap_or_else(|| backoff(attempt))
                }
                Ok(_) => Duration::ZERO,
                Err(Error::Transport { .. }) => backoff(attempt),
                Err(_) => Duration::ZERO,
            };
            let transient = match &outcome {
                Ok(resp) => matches!(resp.status, 429 | 502 | 503 | 504),
                Err(Error::Transport { .. }) => true,
                Err(_) => false,
            };
            if !transient || attempt >= max_attempts || wait > MAX_RETRY_AFTER {
                return outcome.map(|mut r| {
                    r.attempts = attempt;
                    r
                });
            }
            tracing::debug!(%url, attempt, wait_ms = wait.as_millis() as u64, "retrying an idempotent request");
            tokio::time::sleep(wait).await;
        }
    }

    /// One request and, for reads, the redirects it leads to (see the module documentation).
    async fn exchange(
        &self,
        first: Exchange<'_>,
        follow: bool,
        limit: usize,
    ) -> Result<Response, Error> {
        let mut url = first.url.clone();
        // Credentials travel only while every hop stays on the instance's origin.
        let mut trusted = same_origin(&url, &self.base);
        let mut hops = 0;
        loop {
            let resp = self.once(&first, &url, trusted, limit).await?;
            let Some(location) = resp
                .location
                .as_deref()
                .filter(|_| is_redirect(resp.status))
            else {
                return Ok(resp);
            };
            if !follow {
                return Ok(resp);
            }
            hops += 1;
            let next = url.join(location).map_err(|e| Error::Redirect {
                url: url.to_string(),
                reason: format!("redirected to an unusable Location ({e})"),
            })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(Error::Redirect {
                    url: url.to_string(),
                    reason: format!(
                        "redirected to a {} URL, which is not followed",
                        next.scheme()
                    ),
                });
            }
            if hops > MAX_REDIRECTS {
                return Err(Error::Redirect {
                    url: url.to_string(),
                    reason: format!("more than {MAX_REDIRECTS} redirects"),
                });
            }
            trusted = trusted && same_origin(&next, &self.base);
            url = next;
        }
    }

    /// One HTTP request to `url`, with credentials only when `trusted`.
    async fn once(
        &self,
        ex: &Exchange<'_>,
        url: &reqwest::Url,
        trusted: bool,
        limit: usize,
    ) -> Result<Response, Error> {
        let mut headers = HeaderMap::new();
        if trusted {
            if let Some(t) = ex.token {
                headers.insert(AUTHORIZATION, auth_value(t)?);
            }
            if let Some(sudo) = ex.sudo {
                let v = HeaderValue::from_str(sudo).map_err(|_| {
                    Error::Setup("the sudo user name is not a valid header value".into())
                })?;
                headers.insert("Sudo", v);
            }
        }
        let mut builder = self
            .http
            .request(ex.method.clone(), url.clone())
            .headers(headers);
        builder = match ex.body {
            Body::None => builder,
            Body::Json(v) => builder.json(v),
            Body::Text(text, content_type) => builder
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(text.clone()),
            Body::Multipart(parts) => {
                let mut form = reqwest::multipart::Form::new();
                for p in parts {
                    let mut part = reqwest::multipart::Part::bytes(p.bytes.clone())
                        .mime_str(&p.content_type)
                        .map_err(|e| {
                            Error::Setup(format!("bad content type {:?}: {e}", p.content_type))
                        })?;
                    if let Some(f) = &p.filename {
                        part = part.file_name(f.clone());
                    }
                    form = form.part(p.name.clone(), part);
                }
                builder.multipart(form)
            }
        };
        let transport = |e: reqwest::Error| Error::Transport {
            url: url.to_string(),
            reason: describe(&e),
            connect: e.is_connect(),
        };
        let mut resp = builder.send().await.map_err(transport)?;
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header("content-type");
        let total_count = header("x-total-count").and_then(|v| v.trim().parse().ok());
        let link = header("link");
        let location = header("location");
        let retry_after_header = header("retry-after");
        let declared_len = resp.content_length();
        let mut body = Vec::new();
        let mut truncated = false;
        if !(is_redirect(status) && location.is_some()) {
            while let Some(chunk) = resp.chunk().await.map_err(transport)? {
                let room = limit.saturating_sub(body.len());
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    truncated = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
        }
        Ok(Response {
            status,
            content_type,
            total_count,
            link,
            retry_after: retry_after_header.as_deref().and_then(parse_retry_after),
            body,
            truncated,
            declared_len,
            attempts: 1,
            location,
        })
    }
}

/// The statuses that redirect.
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// Same scheme, host and port.
fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `Retry-After` in seconds (HTTP dates are not used by Gitea and are ignored).
fn parse_retry_after(v: &str) -> Option<Duration> {
    v.trim().parse::<u64>().ok().map(Duration::from_secs)
}

fn retry_after(resp: &Response) -> Option<Duration> {
    resp.retry_after
}

/// Exponential backoff with jitter: base × 2^(attempt-1) × [0.5, 1.5).
fn backoff(attempt: u32) -> Duration {
    let exp = BACKOFF_BASE.saturating_mul(1 << (attempt.saturating_sub(1)).min(6));
    let jitter = 0.5 + (next_random() % 1000) as f64 / 1000.0;
    exp.mul_f64(jitter)
}

/// A cheap, non-cryptographic random number for jitter.
fn next_random() -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let mut x = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) ^ seed;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

fn auth_value(token: &Secret) -> Result<HeaderValue, Error> {
    let mut v = HeaderValue::from_str(&format!("token {}", token.expose()))
        .map_err(|_| Error::Setup("the token is not a valid header value".into()))?;
    v.set_sensitive(true);
    Ok(v)
}

/// Percent-encodes a query component.
pub fn encode_query(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, QUERY).to_string()
}

/// Characters escaped in a query component (everything but unreserved characters).
const QUERY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A reqwest error with its cause chain. URLs built here never carry credentials (the token
/// travels in a header), so the message is safe to show.
fn describe(e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}

//! The one HTTP client towards the Gitea instance.
//!
//! Owns the `reqwest::Client` (rustls on the `ring` provider), the base URL, the token, the
//! concurrency limit and the retry rule. It sends [`Request`]s and reads bounded [`Response`]s;
//! it knows nothing about actions or policy.
//!
//! Retry rule: only idempotent methods (GET, HEAD, PUT, DELETE) are retried, on connection
//! errors and on 429/502/503/504, with jittered exponential backoff (honouring `Retry-After`).
//! POST and PATCH are sent exactly once: a write must never be sent twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use tokio::sync::Semaphore;

use crate::config::{Config, Secret};
use crate::spec::HttpMethod;

/// The API prefix every request path is relative to.
pub const API_PREFIX: &str = "/api/v1";

/// Longest `Retry-After` honoured before giving up on a retry.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);
/// First backoff step; doubled per attempt, with jitter.
const BACKOFF_BASE: Duration = Duration::from_millis(200);

/// Errors talking to the instance.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The client could not be built (TLS set-up, CA bundle).
    #[error("cannot set up the HTTP client: {0}")]
    Setup(String),
    /// The request did not complete.
    #[error("request to {url} failed: {reason}")]
    Transport {
        /// The URL (without credentials).
        url: String,
        /// What happened.
        reason: String,
    },
    /// The instance answered with an error status.
    #[error("{url} answered {status}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
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
    token: Option<Secret>,
    permits: Arc<Semaphore>,
    retries: u32,
}

impl GiteaClient {
    /// Builds the client from the configuration.
    pub fn new(config: &Config) -> Result<GiteaClient, Error> {
        install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .user_agent(concat!("aegis-gitea-mcp/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::limited(5));
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
                config.gitea_url
            );
            builder = builder.danger_accept_invalid_certs(true);
        }
        let http = builder.build().map_err(|e| Error::Setup(describe(&e)))?;
        Ok(GiteaClient {
            http,
            base: config.gitea_url.clone(),
            token: config.token.clone(),
            permits: Arc::new(Semaphore::new(config.max_concurrency)),
            retries: config.retries,
        })
    }

    /// The same client acting with another token (per-user pass-through).
    pub fn with_token(&self, token: Option<Secret>) -> GiteaClient {
        GiteaClient {
            token,
            ..self.clone()
        }
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

    /// GETs `path` (relative to the base URL) and returns the body of a 2xx answer.
    pub async fn get_bytes(&self, path: &str) -> Result<Vec<u8>, Error> {
        let url = self.url(path);
        let mut req = self.http.get(&url);
        if let Some(t) = &self.token {
            req = req.header(AUTHORIZATION, auth_value(t)?);
        }
        let resp = req.send().await.map_err(|e| Error::Transport {
            url: url.clone(),
            reason: describe(&e),
        })?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(Error::Status { url, status });
        }
        let body = resp.bytes().await.map_err(|e| Error::Transport {
            url: url.clone(),
            reason: describe(&e),
        })?;
        Ok(body.to_vec())
    }

    /// Downloads the instance's API description (`/swagger.v1.json`).
    pub async fn fetch_spec(&self) -> Result<Vec<u8>, Error> {
        self.get_bytes("/swagger.v1.json").await
    }

    /// Sends an API request and reads at most `limit` bytes of the answer, retrying idempotent
    /// methods on transient failures.
    pub async fn send(&self, req: &Request, limit: usize) -> Result<Response, Error> {
        let retryable = matches!(
            req.method,
            HttpMethod::Get | HttpMethod::Head | HttpMethod::Put | HttpMethod::Delete
        );
        let max_attempts = if retryable { self.retries + 1 } else { 1 };
        let url = self.request_url(req);
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
                self.send_once(req, &url, limit).await
            };
            crate::metrics::global().upstream(started.elapsed());
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

    async fn send_once(&self, req: &Request, url: &str, limit: usize) -> Result<Response, Error> {
        let method = reqwest::Method::from_bytes(req.method.as_str().as_bytes())
            .map_err(|e| Error::Setup(e.to_string()))?;
        let mut headers = HeaderMap::new();
        if let Some(t) = &self.token {
            headers.insert(AUTHORIZATION, auth_value(t)?);
        }
        if let Some(sudo) = &req.sudo {
            let v = HeaderValue::from_str(sudo).map_err(|_| {
                Error::Setup("the sudo user name is not a valid header value".into())
            })?;
            headers.insert("Sudo", v);
        }
        let mut builder = self.http.request(method, url).headers(headers);
        builder = match &req.body {
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
        let mut resp = builder.send().await.map_err(|e| Error::Transport {
            url: url.to_string(),
            reason: describe(&e),
        })?;
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
        let retry_after_header = header("retry-after");
        let declared_len = resp.content_length();
        let mut body = Vec::new();
        let mut truncated = false;
        loop {
            let chunk = resp.chunk().await.map_err(|e| Error::Transport {
                url: url.to_string(),
                reason: describe(&e),
            })?;
            let Some(chunk) = chunk else { break };
            let room = limit.saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
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
        })
    }
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

//! The one HTTP client towards the Gitea instance.
//!
//! Owns the `reqwest::Client` (rustls on the `ring` provider), the base URL and the token. It
//! knows how to send a request and read the answer; it knows nothing about actions or policy.

use std::time::Duration;

use crate::config::{Config, Secret};

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
}

impl GiteaClient {
    /// Builds the client from the configuration.
    pub fn new(config: &Config) -> Result<GiteaClient, Error> {
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .user_agent(concat!("aegis-gitea-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Setup(e.to_string()))?;
        Ok(GiteaClient {
            http,
            base: config.gitea_url.clone(),
            token: config.token.clone(),
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

    /// GETs `path` (relative to the base URL) and returns the body of a 2xx answer.
    pub async fn get_bytes(&self, path: &str) -> Result<Vec<u8>, Error> {
        let url = self.url(path);
        let mut req = self.http.get(&url);
        if let Some(t) = &self.token {
            req = req.header(
                reqwest::header::AUTHORIZATION,
                format!("token {}", t.expose()),
            );
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
}

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

//! Shared state: what replicas behind one load balancer must agree on, kept in this process or,
//! with `REDIS_URL`, in Redis (or Valkey).
//!
//! Four uses, each with its behaviour when Redis cannot be reached:
//! - **one-use claims** (confirmation nonces: `SET NX PX`): fail closed, the caller is told the
//!   store is unavailable and nothing is sent;
//! - **rate limits** (GCRA in one Lua script, one round trip) and the auth-failure block: fall
//!   back to this process's own limits, with one warning per outage;
//! - **caches** (verified token hashes → login, short TTL): a miss;
//! - **per-caller sets** (the flow guard's memory): this process's memory alone.
//!
//! Every key is `<prefix>:<use>:<part>` where a part that comes from outside (an address, a
//! principal, a token) is a sha256 prefix, so keys are bounded whatever callers send; every key
//! has a TTL. The URL (which may hold a password) is never logged or shown: only its host.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::Secret;
use crate::digest::sha256_hex;

/// The longest one store operation may take before it counts as an outage.
const OP_TIMEOUT: Duration = Duration::from_millis(750);
/// After a failed operation, how long the store is not asked again (operations fail at once
/// meanwhile), so an outage costs each request nothing rather than a timeout per operation.
const BACKOFF: Duration = Duration::from_secs(1);
/// Most one-use claims remembered in memory (only valid tokens are ever claimed).
const MAX_LOCAL_CLAIMS: usize = 100_000;
/// Most addresses blocked in memory at once.
const MAX_LOCAL_BLOCKS: usize = 100_000;

/// GCRA over one key behind a block: `KEYS[1]` the bucket, `ARGV[1]` the emission interval and
/// `ARGV[2]` the burst tolerance (milliseconds). Returns 0 when the request is allowed, else how
/// many milliseconds to wait; when `ARGV[3]` is 1 and the block key `KEYS[2]` exists, minus its
/// remaining milliseconds, without counting the request. Redis's clock is the only clock, so
/// replicas' clocks do not matter.
const ADMIT: &str = r"
if ARGV[3] == '1' then
  local blocked = redis.call('PTTL', KEYS[2])
  if blocked > 0 then return -blocked end
end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
if tat - now > tolerance then
  return tat - tolerance - now
end
local new_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', new_tat - now)
return 0
";

/// Adds `ARGV[1]` to the set `KEYS[1]` unless it holds `ARGV[3]` members already, and sets its
/// TTL to `ARGV[2]` milliseconds.
const BOUNDED_SADD: &str = r"
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 and redis.call('SCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('SADD', KEYS[1], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
";

/// Errors of the shared store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `REDIS_URL` is not a Redis URL (the message never repeats the URL: it may hold a
    /// password).
    #[error("REDIS_URL (--redis-url): {0}")]
    BadUrl(String),
    /// `REDIS_CA_FILE` cannot be read.
    #[error("REDIS_CA_FILE (--redis-ca-file) {path}: {why}")]
    CaFile {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// Redis did not answer, or answered with an error.
    #[error("the shared store (Redis at {at}) is unavailable: {why}")]
    Unavailable {
        /// Host and port (no credentials).
        at: String,
        /// What went wrong.
        why: String,
    },
}

/// Where the shared state lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// In this process (no `REDIS_URL`).
    Memory,
    /// In Redis.
    Redis,
}

impl Kind {
    /// `memory` or `redis`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Memory => "memory",
            Kind::Redis => "redis",
        }
    }
}

/// The store's state, as `/health` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// Memory or Redis.
    pub kind: Kind,
    /// Whether it answers (always for memory).
    pub ok: bool,
    /// Where (Redis host and port), without credentials.
    pub at: Option<String>,
    /// Why it does not answer.
    pub error: Option<String>,
}

/// Why [`Store::admit`] refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Over the limit; retry after this long.
    Limited(Duration),
    /// The address is blocked (too many failed authentications) for this long.
    Blocked(Duration),
}

struct Redis {
    client: redis::Client,
    manager: tokio::sync::OnceCell<redis::aio::ConnectionManager>,
    at: String,
    admit: redis::Script,
    sadd: redis::Script,
}

/// A rate limit: a class (`ip`, `credential`, `auth_failures`) and a rate per minute, with its
/// local limiter for a store in memory or a Redis outage.
pub struct Limit {
    class: &'static str,
    per_minute: u32,
    local: DefaultKeyedRateLimiter<String>,
    checks: AtomicU64,
}

impl std::fmt::Debug for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limit")
            .field("class", &self.class)
            .field("per_minute", &self.per_minute)
            .finish_non_exhaustive()
    }
}

impl Limit {
    /// `per_minute` requests per minute per key, all of them at once at most (burst = rate).
    pub fn per_minute(class: &'static str, per_minute: u32) -> Limit {
        let n = NonZeroU32::new(per_minute.max(1)).unwrap_or(NonZeroU32::MIN);
        Limit {
            class,
            per_minute: n.get(),
            local: RateLimiter::keyed(Quota::per_minute(n).allow_burst(n)),
            checks: AtomicU64::new(0),
        }
    }

    /// The emission interval and burst tolerance (milliseconds) of the shared GCRA.
    fn gcra(&self) -> (u64, u64) {
        let interval = (60_000 / u64::from(self.per_minute)).max(1);
        (interval, interval * u64::from(self.per_minute - 1))
    }

    fn check_local(&self, key: &str) -> Result<(), Duration> {
        // The local limiter keeps a cell per key: forget the idle ones now and then.
        if self.checks.fetch_add(1, Ordering::Relaxed) % 1024 == 1023 {
            self.local.retain_recent();
        }
        self.local
            .check_key(&key.to_string())
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

/// The shared state (see the module documentation).
pub struct Store {
    redis: Option<Redis>,
    prefix: String,
    claims: Mutex<HashMap<String, Instant>>,
    blocks: Mutex<HashMap<String, Instant>>,
    outage: AtomicBool,
    /// Until when operations fail at once after a failure, and why it failed.
    backoff: Mutex<Option<(Instant, String)>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("kind", &self.kind())
            .field("at", &self.redis.as_ref().map(|r| &r.at))
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The host and port of a Redis URL, for messages (no user, password or database).
fn describe(info: &redis::ConnectionInfo) -> String {
    match info.addr() {
        redis::ConnectionAddr::Tcp(host, port) => format!("{host}:{port}"),
        redis::ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port} (TLS)"),
        redis::ConnectionAddr::Unix(path) => path.display().to_string(),
        _ => "redis".to_string(),
    }
}

/// A bounded key part for a value from outside.
fn hashed(part: &str) -> String {
    sha256_hex(part.as_bytes())[..32].to_string()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// Reads `REDIS_CA_FILE`.
pub fn read_ca_file(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    let pem = std::fs::read(path).map_err(|e| Error::CaFile {
        path: path.display().to_string(),
        why: e.to_string(),
    })?;
    if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
        return Err(Error::CaFile {
            path: path.display().to_string(),
            why: "no PEM certificate in it".into(),
        });
    }
    Ok(pem)
}

impl Store {
    /// The store `config` asks for: Redis with `REDIS_URL`, else memory.
    pub fn from_config(config: &crate::config::Config) -> Result<Store, Error> {
        match &config.redis_url {
            None => Ok(Store::memory()),
            Some(url) => {
                let ca = config
                    .redis_ca_file
                    .as_deref()
                    .map(read_ca_file)
                    .transpose()?;
                Store::redis(url, &config.redis_prefix, ca)
            }
        }
    }

    /// State in this process only.
    pub fn memory() -> Store {
        Store {
            redis: None,
            prefix: String::new(),
            claims: Mutex::new(HashMap::new()),
            blocks: Mutex::new(HashMap::new()),
            outage: AtomicBool::new(false),
            backoff: Mutex::new(None),
        }
    }

    /// State in the Redis at `url` (`redis://`, `rediss://` for TLS, `valkey://`, `valkeys://`,
    /// with user and password in the URL), keys under `prefix`; TLS trusts the system's roots,
    /// or only the PEM certificates `ca` when given. Nothing is connected until the first use,
    /// so a replica starts while Redis is down and works once it is back.
    pub fn redis(url: &Secret, prefix: &str, ca: Option<Vec<u8>>) -> Result<Store, Error> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = match ca {
            None => redis::Client::open(url.expose()),
            Some(pem) => redis::Client::build_with_tls(
                url.expose(),
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(pem),
                },
            ),
        };
        let client = client.map_err(|e| {
            // redis's parse errors do not repeat the URL, but say only what kind of error it is
            // to be sure.
            Error::BadUrl(format!(
                "not a Redis URL ({:?}); expected redis://[user:password@]host:port[/db] or rediss:// for TLS",
                e.kind()
            ))
        })?;
        let at = describe(client.get_connection_info());
        Ok(Store {
            redis: Some(Redis {
                client,
                manager: tokio::sync::OnceCell::new(),
                at,
                admit: redis::Script::new(ADMIT),
                sadd: redis::Script::new(BOUNDED_SADD),
            }),
            prefix: if prefix.is_empty() {
                "aegis".to_string()
            } else {
                prefix.to_string()
            },
            ..Store::memory()
        })
    }

    /// Memory or Redis.
    pub fn kind(&self) -> Kind {
        match self.redis {
            Some(_) => Kind::Redis,
            None => Kind::Memory,
        }
    }

    fn key(&self, use_: &str, part: &str) -> String {
        format!("{}:{use_}:{part}", self.prefix)
    }

    fn unavailable(&self, why: impl std::fmt::Display) -> Error {
        Error::Unavailable {
            at: self
                .redis
                .as_ref()
                .map_or_else(String::new, |r| r.at.clone()),
            why: why.to_string(),
        }
    }

    /// Runs one Redis operation within [`OP_TIMEOUT`], noting outages and recoveries.
    async fn run<T, F, Fut>(&self, redis: &Redis, op: F) -> Result<T, Error>
    where
        F: FnOnce(redis::aio::ConnectionManager) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        if let Some((until, why)) = lock(&self.backoff).as_ref() {
            if Instant::now() < *until {
                return Err(self.unavailable(why));
            }
        }
        let attempt = async {
            let manager = redis
                .manager
                .get_or_try_init(|| async {
                    let config = redis::aio::ConnectionManagerConfig::new()
                        .set_connection_timeout(Some(OP_TIMEOUT))
                        .set_response_timeout(Some(OP_TIMEOUT))
                        .set_number_of_retries(1)
                        .set_max_delay(Duration::from_millis(500));
                    redis.client.get_connection_manager_lazy(config)
                })
                .await
                .map_err(|e| self.unavailable(e))?
                .clone();
            op(manager).await.map_err(|e| self.unavailable(e))
        };
        let result = match tokio::time::timeout(OP_TIMEOUT, attempt).await {
            Ok(r) => r,
            Err(_) => {
                Err(self.unavailable(format!("no answer within {} ms", OP_TIMEOUT.as_millis())))
            }
        };
        match &result {
            Ok(_) => {
                *lock(&self.backoff) = None;
                if self.outage.swap(false, Ordering::Relaxed) {
                    tracing::warn!(store = %redis.at, "the shared store is back");
                }
            }
            Err(e) => {
                let why = match e {
                    Error::Unavailable { why, .. } => why.clone(),
                    other => other.to_string(),
                };
                *lock(&self.backoff) = Some((Instant::now() + BACKOFF, why));
                if !self.outage.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "{e}: destructive confirmations are refused, rate limits are this process's own, until it is back"
                    );
                }
            }
        }
        result
    }

    /// Claims `id` once for `ttl`: `Ok(true)` the first time, `Ok(false)` when it was claimed
    /// before (by any replica). An outage is an error: the caller must refuse (fail closed).
    pub async fn claim_once(&self, use_: &str, id: &str, ttl: Duration) -> Result<bool, Error> {
        let Some(redis) = &self.redis else {
            let mut claims = lock(&self.claims);
            let now = Instant::now();
            if claims.len() >= MAX_LOCAL_CLAIMS {
                claims.retain(|_, until| *until > now);
            }
            let key = format!("{use_}:{id}");
            if claims.get(&key).is_some_and(|until| *until > now) {
                return Ok(false);
            }
            if claims.len() >= MAX_LOCAL_CLAIMS {
                // Full of live claims: refusing is safe, forgetting one is not.
                return Err(self.unavailable("too many claims in memory"));
            }
            claims.insert(key, now + ttl);
            return Ok(true);
        };
        let key = self.key(use_, &hashed(id));
        let ms = millis(ttl);
        self.run(redis, |mut c| async move {
            let set: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(1)
                .arg("NX")
                .arg("PX")
                .arg(ms)
                .query_async(&mut c)
                .await?;
            Ok(set.is_some())
        })
        .await
    }

    /// How many one-use claims this process remembers (for tests of the memory bound).
    pub fn claims_in_memory(&self) -> usize {
        lock(&self.claims).len()
    }

    /// Counts one request under `limit` for `key`: `Err(wait)` when over the limit. With Redis
    /// the count is shared by every replica; during an outage each replica counts alone.
    pub async fn check(&self, limit: &Limit, key: &str) -> Result<(), Duration> {
        match self.admit(limit, key, false).await {
            Ok(()) => Ok(()),
            Err(Refused::Limited(wait) | Refused::Blocked(wait)) => Err(wait),
        }
    }

    /// Refuses `key` (an address) outright for `wait`.
    pub async fn block(&self, key: &str, wait: Duration) {
        {
            let mut blocks = lock(&self.blocks);
            let now = Instant::now();
            blocks.retain(|_, until| *until > now);
            if blocks.len() < MAX_LOCAL_BLOCKS {
                blocks.insert(key.to_string(), now + wait);
            }
        }
        if let Some(redis) = &self.redis {
            self.set_px(redis, self.key("block", &hashed(key)), "1", wait)
                .await;
        }
    }

    /// Counts a request under `limit` for `key` (an address), and — with `check_block` — first
    /// refuses it while the address is blocked ([`Store::block`], by any replica): one round trip.
    pub async fn admit(&self, limit: &Limit, key: &str, check_block: bool) -> Result<(), Refused> {
        if check_block {
            let local = lock(&self.blocks)
                .get(key)
                .and_then(|until| until.checked_duration_since(Instant::now()));
            if let Some(wait) = local {
                return Err(Refused::Blocked(wait));
            }
        }
        let Some(redis) = &self.redis else {
            return limit.check_local(key).map_err(Refused::Limited);
        };
        let (interval, tolerance) = limit.gcra();
        let bucket = self.key(&format!("rate:{}", limit.class), &hashed(key));
        let block = self.key("block", &hashed(key));
        let flag = if check_block { "1" } else { "0" };
        let shared = self
            .run(redis, |mut c| async move {
                redis
                    .admit
                    .key(&bucket)
                    .key(&block)
                    .arg(interval)
                    .arg(tolerance)
                    .arg(flag)
                    .invoke_async::<i64>(&mut c)
                    .await
            })
            .await;
        match shared {
            Ok(0) => Ok(()),
            Ok(n) if n < 0 => Err(Refused::Blocked(Duration::from_millis(n.unsigned_abs()))),
            Ok(wait) => Err(Refused::Limited(Duration::from_millis(wait as u64))),
            Err(_) => limit.check_local(key).map_err(Refused::Limited),
        }
    }

    /// A cached value (`None` without Redis, on a miss or during an outage).
    pub async fn cached(&self, use_: &str, id: &str) -> Option<String> {
        let redis = self.redis.as_ref()?;
        let k = self.key(use_, &hashed(id));
        self.run(redis, |mut c| async move {
            redis::cmd("GET").arg(&k).query_async(&mut c).await
        })
        .await
        .ok()
        .flatten()
    }

    /// Caches `value` for `ttl` (nothing without Redis; an outage is only noted).
    pub async fn cache(&self, use_: &str, id: &str, value: &str, ttl: Duration) {
        let Some(redis) = &self.redis else {
            return;
        };
        self.set_px(redis, self.key(use_, &hashed(id)), value, ttl)
            .await;
    }

    /// `SET key value PX ttl`; a failure is only noted (see [`Store::run`]).
    async fn set_px(&self, redis: &Redis, key: String, value: &str, ttl: Duration) {
        let ms = millis(ttl);
        let _ = self
            .run(redis, |mut c| async move {
                redis::cmd("SET")
                    .arg(&key)
                    .arg(value)
                    .arg("PX")
                    .arg(ms)
                    .query_async::<()>(&mut c)
                    .await
            })
            .await;
    }

    /// Adds `member` to the set `id` (at most `max` members, kept for `ttl` after the last
    /// addition); nothing without Redis.
    pub async fn add_to_set(&self, use_: &str, id: &str, member: &str, ttl: Duration, max: usize) {
        let Some(redis) = &self.redis else {
            return;
        };
        let k = self.key(use_, &hashed(id));
        let ms = millis(ttl);
        let _ = self
            .run(redis, |mut c| async move {
                redis
                    .sadd
                    .key(&k)
                    .arg(member)
                    .arg(ms)
                    .arg(max)
                    .invoke_async::<i64>(&mut c)
                    .await
            })
            .await;
    }

    /// The members of the set `id` (empty without Redis or during an outage).
    pub async fn set_members(&self, use_: &str, id: &str) -> Vec<String> {
        let Some(redis) = &self.redis else {
            return Vec::new();
        };
        let k = self.key(use_, &hashed(id));
        self.run(redis, |mut c| async move {
            redis::cmd("SMEMBERS").arg(&k).query_async(&mut c).await
        })
        .await
        .unwrap_or_default()
    }

    /// Whether the store's last operation succeeded (no round trip; memory always does).
    pub fn answering(&self) -> bool {
        !self.outage.load(Ordering::Relaxed)
    }

    /// Whether the store answers now (a `PING` for Redis).
    pub async fn health(&self) -> Health {
        let Some(redis) = &self.redis else {
            return Health {
                kind: Kind::Memory,
                ok: true,
                at: None,
                error: None,
            };
        };
        let ping = self
            .run(redis, |mut c| async move {
                redis::cmd("PING").query_async::<String>(&mut c).await
            })
            .await;
        Health {
            kind: Kind::Redis,
            ok: ping.is_ok(),
            at: Some(redis.at.clone()),
            error: ping.err().map(|e| match e {
                Error::Unavailable { why, .. } => why,
                other => other.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_claims_are_one_use_and_expire() {
        let s = Store::memory();
        assert_eq!(
            s.claim_once("n", "a", Duration::from_secs(60)).await,
            Ok(true)
        );
        assert_eq!(
            s.claim_once("n", "a", Duration::from_secs(60)).await,
            Ok(false)
        );
        assert_eq!(
            s.claim_once("m", "a", Duration::from_secs(60)).await,
            Ok(true)
        );
        assert_eq!(s.claim_once("n", "b", Duration::ZERO).await, Ok(true));
        assert_eq!(
            s.claim_once("n", "b", Duration::from_secs(60)).await,
            Ok(true),
            "an expired claim may be claimed again"
        );
    }

    #[tokio::test]
    async fn memory_limits_count_per_key() {
        let s = Store::memory();
        let limit = Limit::per_minute("test", 3);
        for _ in 0..3 {
            assert_eq!(s.check(&limit, "a").await, Ok(()));
        }
        assert!(s.check(&limit, "a").await.is_err());
        assert_eq!(s.check(&limit, "b").await, Ok(()));
    }

    #[tokio::test]
    async fn memory_blocks_expire_and_are_checked_only_when_asked() {
        let s = Store::memory();
        let limit = Limit::per_minute("ip", 100);
        assert_eq!(s.admit(&limit, "1.2.3.4", true).await, Ok(()));
        s.block("1.2.3.4", Duration::from_secs(30)).await;
        assert!(matches!(
            s.admit(&limit, "1.2.3.4", true).await,
            Err(Refused::Blocked(_))
        ));
        assert_eq!(s.admit(&limit, "1.2.3.4", false).await, Ok(()));
        s.block("5.6.7.8", Duration::ZERO).await;
        assert_eq!(s.admit(&limit, "5.6.7.8", true).await, Ok(()));
    }

    #[test]
    fn bad_urls_are_refused_without_repeating_them() {
        for url in [
            "http://user:hunter2-secret@example.com",
            "not a url hunter2-secret",
        ] {
            let e = Store::redis(&Secret::new(url), "aegis", None).unwrap_err();
            assert!(matches!(e, Error::BadUrl(_)), "{e}");
            assert!(!e.to_string().contains("hunter2"), "{e}");
        }
        let s = Store::redis(
            &Secret::new("redis://:hunter2-secret@127.0.0.1:6390/2"),
            "aegis",
            None,
        )
        .unwrap();
        assert_eq!(s.kind(), Kind::Redis);
        let shown = format!("{s:?}");
        assert!(
            shown.contains("127.0.0.1:6390") && !shown.contains("hunter2"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn an_unreachable_redis_fails_closed_for_claims_and_open_for_limits() {
        // A port nothing listens on: the connection is refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let s = Store::redis(
            &Secret::new(format!("redis://:pw-secret@127.0.0.1:{port}")),
            "t",
            None,
        )
        .unwrap();
        let e = s
            .claim_once("nonce", "x", Duration::from_secs(60))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::Unavailable { .. }), "{e}");
        assert!(!e.to_string().contains("pw-secret"), "{e}");
        let limit = Limit::per_minute("test", 2);
        assert_eq!(s.check(&limit, "a").await, Ok(()), "falls back to local");
        assert_eq!(s.check(&limit, "a").await, Ok(()));
        assert!(s.check(&limit, "a").await.is_err(), "the local limit holds");
        let h = s.health().await;
        assert!(!h.ok && h.kind == Kind::Redis && h.error.is_some(), "{h:?}");
        assert_eq!(s.cached("token", "t").await, None);
        assert!(s.set_members("flow", "alice").await.is_empty());
    }
}

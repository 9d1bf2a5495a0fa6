//! Session leases: a worker claims a session for a bounded time before driving a turn.
//!
//! A lease is a claim on one session id by one *holder* (a worker's unique name) until an
//! expiry time. While it holds, every other holder is refused with
//! [`StoreError::Leased`] (who holds it, until when). A worker that crashes simply stops
//! renewing: once the expiry passes, the next claim by anyone takes the session over.
//!
//! Leases live in the [`StorageBackend`] trait itself, with a default implementation built
//! only on the trait's compare-and-set (`get` + `put`/`delete` with [`Expect`]) in the
//! [`Namespace::LEASES`] namespace. So every backend that keeps compare-and-set gets correct
//! leases for free: the in-memory backend between tasks, the file-system backend between
//! processes on one host (a lease file written under the same `flock`). A backend with a
//! better primitive overrides the three methods: PostgreSQL keeps leases in their own table
//! and measures expiry on the server's clock.
//!
//! Leases are advisory: they keep two well-behaved workers from driving the same session at
//! once, they do not make stale writes impossible. That is the job of compare-and-set on the
//! session snapshot: a worker whose lease expired while it was paused still cannot overwrite
//! a turn committed by the worker that took over (its save gets a
//! [`StoreError::Conflict`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{Entry, Expect, Namespace, Result, StorageBackend, StoreError, StoreKey};

/// Longest holder name, in bytes.
pub const MAX_HOLDER_BYTES: usize = 200;

/// How many times the default claim re-reads after losing a compare-and-set race before it
/// reports the lease as taken.
const CLAIM_ATTEMPTS: usize = 8;

/// A claim on one session by one holder, valid until [`expires_at`](Self::expires_at).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    session: StoreKey,
    holder: String,
    token: u64,
    expires_at: SystemTime,
}

impl Lease {
    /// A lease record. Backends build leases; callers receive them.
    pub fn new(
        session: StoreKey,
        holder: impl Into<String>,
        token: u64,
        expires_at: SystemTime,
    ) -> Self {
        Self {
            session,
            holder: holder.into(),
            token,
            expires_at,
        }
    }

    /// The session claimed.
    pub fn session(&self) -> &StoreKey {
        &self.session
    }

    /// Who holds it.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// An opaque value that identifies this grant of the lease: renew and release succeed
    /// only while the stored lease still carries it (nobody took the session over).
    pub fn token(&self) -> u64 {
        self.token
    }

    /// When the lease ends unless renewed (on the clock the backend uses: the local clock
    /// for the default implementation, the server's for PostgreSQL).
    pub fn expires_at(&self) -> SystemTime {
        self.expires_at
    }
}

/// Check a holder name: 1 to [`MAX_HOLDER_BYTES`] bytes, no control characters.
pub(crate) fn check_holder(holder: &str) -> Result<()> {
    if holder.is_empty() || holder.len() > MAX_HOLDER_BYTES || holder.chars().any(char::is_control)
    {
        return Err(StoreError::InvalidHolder {
            holder: holder.to_owned(),
        });
    }
    Ok(())
}

/// The stored form of a lease in [`Namespace::LEASES`]; the entry's version is the token.
#[derive(Serialize, Deserialize)]
struct Record {
    holder: String,
    /// Expiry in milliseconds since the Unix epoch.
    expires_at_ms: u64,
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn from_millis(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn encode(holder: &str, expires_at: SystemTime) -> Result<Entry> {
    let record = Record {
        holder: holder.to_owned(),
        expires_at_ms: millis(expires_at),
    };
    serde_json::to_string(&record)
        .map(Entry::new)
        .map_err(|e| StoreError::Backend {
            message: "lease record could not be serialized".to_owned(),
            source: Some(Box::new(e)),
        })
}

/// A stored record; `None` when it cannot be decoded (treated as expired, so a damaged
/// lease never blocks a session forever).
fn decode(entry: &Entry) -> Option<Record> {
    serde_json::from_str(entry.content()).ok()
}

/// `now + ttl`, at the millisecond precision the record keeps (so a lease and the
/// `Leased` error about it report the same instant).
fn expiry(now: SystemTime, ttl: Duration) -> SystemTime {
    let end = now
        .checked_add(ttl)
        .unwrap_or(now + Duration::from_secs(u64::from(u32::MAX)));
    from_millis(millis(end))
}

/// The default [`StorageBackend::claim_lease`]: compare-and-set on the lease entry.
pub(crate) async fn claim<B: StorageBackend + ?Sized>(
    backend: &B,
    session: &StoreKey,
    holder: &str,
    ttl: Duration,
) -> Result<Lease> {
    check_holder(holder)?;
    let ns = Namespace::LEASES;
    let mut last = None;
    for _ in 0..CLAIM_ATTEMPTS {
        let now = SystemTime::now();
        let read = backend.get(&ns, session).await?;
        if let Some(current) = read.as_ref().and_then(|r| decode(&r.value)) {
            let until = from_millis(current.expires_at_ms);
            if current.holder != holder && until > now {
                return Err(StoreError::Leased {
                    session: session.clone(),
                    holder: current.holder,
                    until,
                });
            }
        }
        let expires_at = expiry(now, ttl);
        let entry = encode(holder, expires_at)?;
        match backend
            .put(&ns, session, entry, Expect::from_read(read.as_ref()))
            .await
        {
            Ok(token) => return Ok(Lease::new(session.clone(), holder, token, expires_at)),
            // Another claimer wrote in between: read again, and be refused if it now holds.
            Err(e) if e.is_conflict() => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(StoreError::Backend {
        message: "lease claim made no attempt".to_owned(),
        source: None,
    }))
}

/// The default [`StorageBackend::renew_lease`].
pub(crate) async fn renew<B: StorageBackend + ?Sized>(
    backend: &B,
    lease: &Lease,
    ttl: Duration,
) -> Result<Lease> {
    let ns = Namespace::LEASES;
    let lost = || StoreError::LeaseLost {
        session: lease.session.clone(),
        holder: lease.holder.clone(),
    };
    let expires_at = expiry(SystemTime::now(), ttl);
    let entry = encode(&lease.holder, expires_at)?;
    match backend
        .put(&ns, &lease.session, entry, Expect::Version(lease.token))
        .await
    {
        Ok(token) => Ok(Lease::new(
            lease.session.clone(),
            lease.holder.clone(),
            token,
            expires_at,
        )),
        Err(e) if e.is_conflict() => Err(lost()),
        Err(e) => Err(e),
    }
}

/// The default [`StorageBackend::release_lease`].
pub(crate) async fn release<B: StorageBackend + ?Sized>(
    backend: &B,
    lease: &Lease,
) -> Result<bool> {
    match backend
        .delete(
            &Namespace::LEASES,
            &lease.session,
            Expect::Version(lease.token),
        )
        .await
    {
        Ok(removed) => Ok(removed),
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_names_are_checked() {
        assert!(check_holder("worker-1@host").is_ok());
        assert!(check_holder("").is_err());
        assert!(check_holder("a\nb").is_err());
        assert!(check_holder(&"x".repeat(MAX_HOLDER_BYTES + 1)).is_err());
    }

    #[test]
    fn an_undecodable_record_counts_as_expired() {
        assert!(decode(&Entry::new("not json")).is_none());
        let e = encode("w", from_millis(5)).unwrap();
        let r = decode(&e).unwrap();
        assert_eq!((r.holder.as_str(), r.expires_at_ms), ("w", 5));
    }
}

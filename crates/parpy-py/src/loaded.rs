//! The bound on specializations loaded in memory, across every jit
//! function of the process: each function's cache registers here; past
//! the bound ([`limit`]: `$PARPY_MAX_LOADED`, `parpy.set_max_loaded`,
//! default 256) the least recently used specialization is dropped (its
//! shared library is unloaded once no call runs it; a later call loads it
//! again from the disk cache). `clear_cache()` drops them all at once.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The default bound on loaded specializations.
pub const DEFAULT_MAX_LOADED: usize = 256;

/// A jit function's in-memory cache, as the bound sees it.
pub trait SpecCache: Send + Sync {
    /// How many specializations it holds.
    fn len(&self) -> usize;
    /// The use stamp of its least recently used specialization.
    fn oldest(&self) -> Option<u64>;
    /// Drops its least recently used specialization.
    fn evict_oldest(&self);
    /// Drops every specialization.
    fn clear(&self);
}

static REGISTRY: Mutex<Vec<Weak<dyn SpecCache>>> = Mutex::new(Vec::new());
static LIMIT: AtomicUsize = AtomicUsize::new(0);
static TICK: AtomicU64 = AtomicU64::new(1);

/// A new stamp, for a specialization just built: newer than every stamp
/// given so far, so the build just made is never the one dropped.
pub fn tick() -> u64 {
    TICK.fetch_add(1, Ordering::Relaxed) + 1
}

/// The stamp of a call that hit the cache: "used since the last build".
/// A plain load (no read-modify-write on a line every calling thread
/// shares), which is all the eviction order needs: it runs after a build.
pub fn now() -> u64 {
    TICK.load(Ordering::Relaxed)
}

/// The bound in force.
pub fn limit() -> usize {
    match LIMIT.load(Ordering::Relaxed) {
        0 => {
            let n = parpy_runtime::env::max_loaded().unwrap_or(DEFAULT_MAX_LOADED);
            LIMIT.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// Sets the bound (at least 1); returns the previous one. Specializations
/// past it are dropped now.
pub fn set_limit(n: usize) -> usize {
    let old = limit();
    LIMIT.store(n.max(1), Ordering::Relaxed);
    enforce();
    old
}

/// Registers a function's cache (dead registrations are pruned here, so
/// the registry does not grow with functions that are gone).
pub fn register(c: Weak<dyn SpecCache>) {
    let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    r.retain(|w| w.strong_count() > 0);
    r.push(c);
}

fn live() -> Vec<Arc<dyn SpecCache>> {
    let r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    r.iter().filter_map(Weak::upgrade).collect()
}

/// Drops least recently used specializations until at most [`limit`]
/// stay. Called after a build was added (never with a cache locked).
pub fn enforce() {
    let caches = live();
    let limit = limit();
    let mut total: usize = caches.iter().map(|c| c.len()).sum();
    while total > limit {
        let Some(c) = caches
            .iter()
            .filter_map(|c| c.oldest().map(|t| (t, c)))
            .min_by_key(|(t, _)| *t)
            .map(|(_, c)| c)
        else {
            break;
        };
        c.evict_oldest();
        total -= 1;
    }
}

/// Drops every loaded specialization of every function (`clear_cache`).
pub fn clear_all() {
    for c in live() {
        c.clear();
    }
}

/// How many specializations are loaded, over all functions.
pub fn count() -> usize {
    live().iter().map(|c| c.len()).sum()
}

//! The link cache (`--wpd-cache-dir`, lld's `--thinlto-cache-dir`, gold's
//! `-plugin-opt=cache-dir=`): one directory of entries, each a file written
//! atomically (a temporary file renamed into place), so links sharing the
//! directory concurrently never see half an entry.
//!
//! Three kinds of entry, each keyed by everything its value depends on:
//! - **summaries** ([`Cache::summary`]): the module's bytes and wpd's build;
//! - **rewritten modules** ([`Cache::rewrite`]): the module's bytes, the
//!   whole plan (which names every module's content hash, so any change to
//!   the link's bitcode is a new plan), the module's place in it, and wpd's
//!   build;
//! - **native objects** ([`Cache::object`]): LLVM's ThinLTO cache key (the
//!   module's hash, its imports and exports, resolutions, the LTO
//!   configuration; as lld's cache), extended with wpd's build, the
//!   `-mllvm` options and the target machine flags wpd sets itself
//!   (`-emulated-tls`, `-stack-size-section`, ...), which LLVM's key leaves
//!   out.
//!
//! "wpd's build" is a fingerprint of the running executable (its size and
//! modification time), so a rebuilt wpd never reads a previous build's
//! entries. Every entry carries a checksum of its contents: an entry that
//! does not verify is removed, rebuilt and counted as a miss, never used;
//! the checksum covers the entry's name too, and a summary names the
//! bytes it describes, so an entry moved under another's name does not
//! verify either.
//! Entries are named `llvmcache-…` so LLVM's own pruning (lld's
//! `--thinlto-cache-policy` syntax) manages all of them.

use crate::backends::{BackendStats, Rewritten};
use crate::error::{Error, Result};
use crate::input::BitcodeInput;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use wpd_summary::{Kind, ModuleIdx, ModuleSummary, Plan};
use xxhash_rust::xxh3::{Xxh3, xxh3_128};

/// Magic of a rewritten-module or native-object entry (summaries are wpd
/// summary files, with their own header and checksum).
const MAGIC: &[u8; 8] = b"WPDCACH2";
/// Magic, payload length (u64), checksum (xxh3-128 of the entry's file
/// name and the payload: an entry moved under another entry's name does
/// not verify).
const HEADER: usize = 8 + 8 + 16;

/// Hits and misses of one kind of entry.
#[derive(Debug, Default, Serialize)]
pub struct Counts {
    pub hits: u32,
    pub misses: u32,
}

/// What the cache did during one link (the report's `cache`).
#[derive(Debug, Default, Serialize)]
pub struct CacheReport {
    pub hits: u32,
    pub misses: u32,
    /// Entries found corrupt (removed, rebuilt; counted as misses).
    pub corrupt: u32,
    pub summaries: Counts,
    pub rewrites: Counts,
    pub objects: Counts,
}

#[derive(Default)]
struct Counter {
    hits: AtomicU32,
    misses: AtomicU32,
}

impl Counter {
    fn get(&self) -> Counts {
        Counts { hits: self.hits.load(Ordering::Relaxed), misses: self.misses.load(Ordering::Relaxed) }
    }
}

/// A cache directory and this link's counts.
pub struct Cache {
    dir: PathBuf,
    /// wpd's build and the options outside LLVM's key, hashed.
    build: String,
    summaries: Counter,
    rewrites: Counter,
    objects: Counter,
    corrupt: AtomicU32,
}

/// A rewritten module as the cache stores it.
#[derive(Serialize, Deserialize)]
struct RewriteEntry {
    stats: BackendStats,
    introduced: BTreeSet<String>,
}

impl Cache {
    /// Opens (creating it if needed) the cache in `dir`. `extra` is
    /// anything else the entries depend on that no key names (the link's
    /// `-mllvm` options and machine flags).
    pub fn open(dir: &Path, extra: &[String]) -> Result<Cache> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::at(dir.display().to_string(), format!("cannot create the cache directory: {e}")))?;
        let mut h = Xxh3::new();
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(&[0]);
        h.update(build_fingerprint().as_bytes());
        for e in extra {
            h.update(&[0]);
            h.update(e.as_bytes());
        }
        Ok(Cache {
            dir: dir.to_path_buf(),
            build: format!("{:032x}", h.digest128()),
            summaries: Counter::default(),
            rewrites: Counter::default(),
            objects: Counter::default(),
            corrupt: AtomicU32::new(0),
        })
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// This link's counts.
    pub fn report(&self) -> CacheReport {
        let (summaries, rewrites, objects) = (self.summaries.get(), self.rewrites.get(), self.objects.get());
        CacheReport {
            hits: summaries.hits + rewrites.hits + objects.hits,
            misses: summaries.misses + rewrites.misses + objects.misses,
            corrupt: self.corrupt.load(Ordering::Relaxed),
            summaries,
            rewrites,
            objects,
        }
    }

    fn path(&self, kind: &str, key: &[u8]) -> PathBuf {
        let mut h = Xxh3::new();
        h.update(self.build.as_bytes());
        h.update(&[0]);
        h.update(key);
        self.dir.join(format!("llvmcache-wpd-{kind}-{:032x}", h.digest128()))
    }

    /// The summary of `input`, from the cache or made by `make` (and then
    /// stored). The cached summary is of the same bytes; it takes this
    /// input's name and place.
    pub fn summary(&self, input: &BitcodeInput, make: impl FnOnce() -> Result<ModuleSummary>) -> Result<ModuleSummary> {
        // The input's content hash, hashed once: the entry's key, and what
        // the summary must say it describes.
        let hash = xxh3_128(&input.bytes);
        let path = self.path("summary", &hash.to_le_bytes());
        if let Ok(bytes) = std::fs::read(&path) {
            // Of these bytes: a summary file moved under this entry's name
            // describes other ones.
            match wpd_summary::container::decode::<ModuleSummary>(Kind::Summary, &bytes, &path) {
                Ok(s) if s.module.hash == crate::input::hash_text(hash) => {
                    self.summaries.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(input.rename(s));
                }
                _ => self.discard(&path),
            }
        }
        self.summaries.misses.fetch_add(1, Ordering::Relaxed);
        let s = make()?;
        let bytes = wpd_summary::container::encode(Kind::Summary, &s).map_err(|e| e.context(&input.name))?;
        self.store(&path, &bytes);
        Ok(s)
    }

    /// The rewrite of module `index` of `plan` (`plan_hash`: the plan's
    /// content hash, [`plan_hash`]) from `input` (`summary`: its summary,
    /// whose content hash keys the entry), from the cache or made by
    /// `make`: its ThinLTO bitcode, stats and introduced names.
    pub fn rewrite(
        &self,
        input: &BitcodeInput,
        summary: &ModuleSummary,
        plan_hash: u128,
        index: ModuleIdx,
        verify: bool,
        split_flag: bool,
        make: impl FnOnce() -> Result<Rewritten>,
    ) -> Result<Rewritten> {
        let mut key = Vec::with_capacity(64);
        key.extend_from_slice(summary.module.hash.as_bytes());
        key.extend_from_slice(&plan_hash.to_le_bytes());
        key.extend_from_slice(&u64::from(index.as_u32()).to_le_bytes());
        key.push(verify as u8);
        key.push(split_flag as u8);
        let path = self.path("rewrite", &key);
        if let Some(payload) = self.load(&path) {
            if let Some(found) = split_rewrite(payload) {
                self.rewrites.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(found);
            }
            self.discard(&path);
        }
        self.rewrites.misses.fetch_add(1, Ordering::Relaxed);
        let made = make()?;
        let Some(bitcode) = &made.bitcode else { return Ok(made) };
        let entry = RewriteEntry { stats: made.stats.clone(), introduced: made.introduced.clone() };
        let meta = serde_json::to_vec(&entry).map_err(|e| Error::at(&input.name, e.to_string()))?;
        let mut payload = Vec::with_capacity(8 + bitcode.len() + meta.len());
        payload.extend_from_slice(&(bitcode.len() as u64).to_le_bytes());
        payload.extend_from_slice(bitcode);
        payload.extend_from_slice(&meta);
        self.store(&path, &seal(&path, &payload));
        Ok(made)
    }

    /// The native object LLVM's ThinLTO cache key `key` names, if cached.
    pub fn object(&self, key: &str) -> Option<Vec<u8>> {
        let path = self.path("object", key.as_bytes());
        let found = self.load(&path);
        match &found {
            Some(_) => self.objects.hits.fetch_add(1, Ordering::Relaxed),
            None => self.objects.misses.fetch_add(1, Ordering::Relaxed),
        };
        found
    }

    /// Stores the native object of LLVM's cache key `key`.
    pub fn store_object(&self, key: &str, object: &[u8]) {
        let path = self.path("object", key.as_bytes());
        self.store(&path, &seal(&path, object));
    }

    /// Prunes the directory by `policy` (lld's `--thinlto-cache-policy`
    /// syntax; empty: LLVM's defaults).
    pub fn prune(&self, policy: &str) -> Result<()> {
        wpd_llvm::prune_cache(&self.dir, policy)
            .map_err(|e| Error::at(self.dir.display().to_string(), format!("cannot prune the cache: {}", e.message)))
    }

    /// A verified entry's payload (the file's bytes, header removed in
    /// place); a corrupt entry is removed (`None`).
    fn load(&self, path: &Path) -> Option<Vec<u8>> {
        let mut bytes = std::fs::read(path).ok()?;
        if unseal(path, &bytes).is_none() {
            self.discard(path);
            return None;
        }
        bytes.drain(..HEADER);
        Some(bytes)
    }

    fn discard(&self, path: &Path) {
        self.corrupt.fetch_add(1, Ordering::Relaxed);
        // Another link may have replaced it meanwhile: not an error.
        let _ = std::fs::remove_file(path);
    }

    /// Writes an entry atomically. A cache that cannot be written (full
    /// disk, read-only directory) only costs the next link its hits.
    fn store(&self, path: &Path, bytes: &[u8]) {
        if let Err(e) = wpd_summary::container::write_bytes_atomic(bytes, path) {
            eprintln!("wpd: warning: cache entry not written: {e}");
        }
    }
}

/// The content hash of a plan (the key rewrites share).
pub fn plan_hash(plan: &Plan) -> Result<u128> {
    let bytes = wpd_summary::container::encode(Kind::Plan, plan)?;
    Ok(xxh3_128(&bytes))
}

/// Checks a cache policy string (lld's `--thinlto-cache-policy` syntax).
pub fn check_policy(policy: &str) -> Result<()> {
    wpd_llvm::parse_cache_policy(policy)
}

/// The checksum of `payload` stored as the entry at `path`: bound to the
/// entry's name, which its key gives.
fn checksum(path: &Path, payload: &[u8]) -> u128 {
    let mut h = Xxh3::new();
    h.update(path.file_name().map(|n| n.as_encoded_bytes()).unwrap_or_default());
    h.update(&[0]);
    h.update(payload);
    h.digest128()
}

/// The entry file of `payload` at `path`.
fn seal(path: &Path, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(path, payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of the entry file `bytes` read at `path`, if it verifies.
fn unseal<'b>(path: &Path, bytes: &'b [u8]) -> Option<&'b [u8]> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().ok()?) as usize;
    let sum = u128::from_le_bytes(bytes[16..32].try_into().ok()?);
    let payload = &bytes[HEADER..];
    (payload.len() == len && checksum(path, payload) == sum).then_some(payload)
}

/// A rewrite entry's payload (bitcode length, bitcode, JSON of the rest)
/// back into a [`Rewritten`], the bitcode taken over without a copy.
fn split_rewrite(mut payload: Vec<u8>) -> Option<Rewritten> {
    let len = u64::from_le_bytes(payload.get(..8)?.try_into().ok()?) as usize;
    let end = 8usize.checked_add(len).filter(|&e| e <= payload.len())?;
    let entry: RewriteEntry = serde_json::from_slice(&payload[end..]).ok()?;
    payload.truncate(end);
    payload.drain(..8);
    Some(Rewritten { bitcode: Some(payload), vtables: None, stats: entry.stats, introduced: entry.introduced })
}

impl wpd_llvm::ObjectCache for Cache {
    fn lookup(&self, key: &str) -> Option<Vec<u8>> {
        self.object(key)
    }

    fn store(&self, key: &str, object: &[u8]) {
        self.store_object(key, object);
    }
}

/// The running executable's size and modification time: changes with every
/// build of wpd.
fn build_fingerprint() -> String {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    match meta {
        Ok(m) => {
            let mtime = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            format!("{}:{}", m.len(), mtime.map(|d| d.as_nanos()).unwrap_or(0))
        }
        // Unknown build: a key no other run shares, so nothing stale is read.
        Err(_) => format!("unknown:{}", std::process::id()),
    }
}

#[cfg(test)]
mod tests {
    use super::{seal, unseal};

    #[test]
    fn sealed_entries_verify_and_corruption_is_caught() {
        let at = std::path::Path::new("/cache/llvmcache-wpd-object-1");
        let sealed = seal(at, b"an object");
        assert_eq!(unseal(at, &sealed), Some(&b"an object"[..]));
        let mut flipped = sealed.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(unseal(at, &flipped), None);
        assert_eq!(unseal(at, &sealed[..sealed.len() - 1]), None);
        assert_eq!(unseal(at, b"WPDCACH2"), None);
        // A valid entry under another entry's name does not verify.
        assert_eq!(unseal(std::path::Path::new("/cache/llvmcache-wpd-object-2"), &sealed), None);
    }
}

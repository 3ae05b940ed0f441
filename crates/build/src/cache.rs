//! The on-disk cache: where it lives, per-key file locks, and the "build in a temp dir, rename
//! into place" protocol that keeps half-written entries out of the cache.
//!
//! Layout under the root:
//!
//! ```text
//! sources/<kind>/<name>/{tree/, source.json}   fetched sources (debian, tarball, git, bundled)
//! patched/<hash>/{tree/, patch.log}            a source copy with patches applied
//! builds/<key>/{build/, build.log, build.json} a finished build
//! builds/<key>.failed/                         the last failed attempt of a key (log kept)
//! locks/<name>.lock                            flock files, one per entry
//! dist/<spec>-<sha>/{tree/, dist.json}         a distribution's binaries, unpacked (dist/)
//! ```
//!
//! An entry is complete iff its directory exists: it is only ever created by renaming a
//! finished `<entry>.tmp-<pid>` sibling into place while holding the entry's lock.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{BuildError, Result};
use crate::util::remove_tree;

/// The folders directly under a cache root (see the module doc; `profiles` and `bolted`
/// hold PGO profiles and BOLT-ed binaries, `logs` build logs).
const LAYOUT: &[&str] = &[
    "sources", "patched", "builds", "locks", "logs", "profiles", "bolted", "dist",
];

/// A build and source cache rooted at one directory.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    /// A cache at `root` (created lazily on first use). A relative root is made absolute
    /// against the current directory, because builds run `configure` from other directories.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let root = std::path::absolute(&root).unwrap_or(root);
        Cache { root }
    }

    /// `$BAKEOFF_CACHE`, else `$XDG_CACHE_HOME/bakeoff`, else `~/.cache/bakeoff`
    /// (else `./.bakeoff-cache` when not even `$HOME` is set).
    pub fn default_root() -> PathBuf {
        pick_root(|name| std::env::var_os(name))
    }

    /// Claims the root before anything is written there: creates and marks it, or takes
    /// a folder that is empty or holds only the cache's own layout (a cache an earlier
    /// bakeoff made); refuses a folder of anything else (`--cache ~` would otherwise
    /// write bakeoff's folders among a user's files). Err is the reason, said of the path.
    pub fn claim(&self) -> std::result::Result<(), String> {
        bakeoff_os::own::claim(&self.root, "cache", &|e| {
            LAYOUT.contains(&e.file_name().to_string_lossy().as_ref())
        })
        .map_err(|e| format!("cannot use {} as the build cache: {e}", self.root.display()))
    }

    /// The cache's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Take the exclusive lock named `name`, waiting for another holder (thread or process)
    /// to finish. The lock is released when the returned guard is dropped.
    pub(crate) fn lock(&self, name: &str) -> Result<CacheLock> {
        let dir = self.root.join("locks");
        create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.lock"));
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| BuildError::io(format!("cannot open lock {}", path.display()), e))?;
        file.lock()
            .map_err(|e| BuildError::io(format!("cannot lock {}", path.display()), e))?;
        Ok(CacheLock { _file: file })
    }

    /// `<root>/<parts...>`.
    pub(crate) fn dir(&self, parts: &[&str]) -> PathBuf {
        parts.iter().fold(self.root.clone(), |p, part| p.join(part))
    }
}

/// The default-root rule, with the environment passed in (so it can be tested).
fn pick_root(get: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let var = |name: &str| get(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("BAKEOFF_CACHE") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("bakeoff");
    }
    match var("HOME") {
        Some(home) => PathBuf::from(home).join(".cache").join("bakeoff"),
        None => PathBuf::from(".bakeoff-cache"),
    }
}

/// Holds a cache lock until dropped.
#[derive(Debug)]
pub(crate) struct CacheLock {
    _file: File,
}

/// A fresh, empty staging directory beside `entry` (`<entry>.tmp-<pid>`). Any stale staging
/// dirs of the same entry are removed first; call this only while holding the entry's lock.
pub(crate) fn staging_dir(entry: &Path) -> Result<PathBuf> {
    let parent = entry.parent().unwrap_or(Path::new("."));
    create_dir_all(parent)?;
    let prefix = format!("{}.tmp-", crate::util::name_of(entry));
    if let Ok(read) = std::fs::read_dir(parent) {
        for item in read.flatten() {
            if item.file_name().to_string_lossy().starts_with(&prefix) {
                remove_tree(&item.path())?;
            }
        }
    }
    let tmp = parent.join(format!("{prefix}{}", std::process::id()));
    create_dir_all(&tmp)?;
    Ok(tmp)
}

/// Move a finished staging dir into place as `entry` (atomic rename on one filesystem),
/// then sync the parent so the rename is on disk.
pub(crate) fn commit_dir(staging: &Path, entry: &Path) -> Result<()> {
    remove_tree(entry)?;
    let moved = std::fs::rename(staging, entry)
        .and_then(|()| bakeoff_os::file::sync_dir(entry.parent().unwrap_or(Path::new("."))));
    moved.map_err(|e| {
        BuildError::io(
            format!("cannot move {} to {}", staging.display(), entry.display()),
            e,
        )
    })
}

/// `mkdir -p` with a typed error.
pub(crate) fn create_dir_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BuildError::io(format!("cannot create directory {}", dir.display()), e))
}

/// Write `value` as pretty JSON to `path`, atomically and synced (an entry's metadata is
/// what marks it complete).
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| {
        BuildError::io(
            format!("cannot encode {}", path.display()),
            std::io::Error::other(e),
        )
    })?;
    bakeoff_os::file::write_atomic(path, (text + "\n").as_bytes())
        .map_err(|e| BuildError::io(format!("cannot write {}", path.display()), e))
}

/// Read JSON from `path`; `None` when the file is missing or unreadable (a broken entry is
/// treated as absent and rebuilt).
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Option<T> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_then_commit_replaces_stale() {
        let tmp = tempfile::tempdir().unwrap();
        let entry = tmp.path().join("builds").join("k");
        std::fs::create_dir_all(entry.with_file_name("k.tmp-1")).unwrap();
        let stage = staging_dir(&entry).unwrap();
        assert!(!entry.with_file_name("k.tmp-1").exists());
        std::fs::write(stage.join("x"), "1").unwrap();
        commit_dir(&stage, &entry).unwrap();
        assert!(entry.join("x").is_file());
        assert!(!stage.exists());
    }

    #[test]
    fn locks_serialize_threads() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path());
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let cache = cache.clone();
                let counter = counter.clone();
                std::thread::spawn(move || {
                    let _g = cache.lock("k").unwrap();
                    let inside = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    assert_eq!(inside, 0, "two holders at once");
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    counter.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }

    #[test]
    fn relative_root_is_made_absolute() {
        assert!(Cache::new("rel/cache").root().is_absolute());
    }

    #[test]
    fn default_root_order() {
        fn env<'a>(pairs: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> + 'a {
            move |name| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.into())
            }
        }
        let all = [
            ("BAKEOFF_CACHE", "/b"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(pick_root(env(&all)), PathBuf::from("/b"));
        let no_b = [
            ("BAKEOFF_CACHE", ""),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(pick_root(env(&no_b)), PathBuf::from("/x/bakeoff"));
        assert_eq!(
            pick_root(env(&[("HOME", "/h")])),
            PathBuf::from("/h/.cache/bakeoff")
        );
        assert_eq!(pick_root(env(&[])), PathBuf::from(".bakeoff-cache"));
    }
}

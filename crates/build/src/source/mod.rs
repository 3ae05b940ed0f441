//! Sources: where a server's code comes from (a Debian source package, a tarball, a git repo,
//! a local path, or the SQLite amalgamation bakeoff carries) and how it is fetched once into
//! the cache. Every fetched tree has a stable identity hash that feeds the build cache key.
//!
//! Identities: debian = sha256 of the `.dsc` (which pins the upstream and Debian tarballs by
//! sha256); tarball = its verified sha256; git = the resolved commit; path = a hash of the file
//! list with each entry's type, mode, size and mtime (see [`path`]); bundled = sha256 of the
//! embedded files (see [`bundled`]).

mod bundled;
mod debian;
mod git;
pub(crate) mod path;
mod tarball;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cache::{commit_dir, read_json, staging_dir, write_json, Cache};
use crate::error::Result;
use crate::util::remove_tree;

pub use bundled::bundled_sqlite_version;
pub use debian::is_package_name as is_debian_package_name;

/// Where a server's source comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourceSpec {
    /// `apt-get source PACKAGE` (needs deb-src and dpkg-dev).
    Debian { package: String },
    /// A local path or an http(s) URL of a tar archive, with its expected sha256.
    Tarball { location: String, sha256: String },
    /// A git repository (URL or local path) at a rev (commit, tag or branch).
    Git { url: String, rev: String },
    /// A local tree, used in place and never modified.
    Path { path: PathBuf },
    /// The SQLite amalgamation embedded in bakeoff (`sqlite3.c`, `sqlite3.h`, `sqlite3ext.h`
    /// of the bundled libsqlite3-sys; version [`bundled_sqlite_version`]), written once into
    /// the cache: no download. Built with [`crate::Recipe::Sqlite`].
    Bundled,
}

/// A fetched source tree, ready to build from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceTree {
    /// The unpacked tree (inside the cache, except for path sources).
    pub dir: PathBuf,
    /// Stable identity hash (hex sha256) of the tree's content.
    pub id: String,
    /// Human-readable, e.g. `debian memcached 1.6.18-1+deb12u1`.
    pub description: String,
}

/// What a cached source entry records beside its `tree/`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SourceMeta {
    id: String,
    description: String,
}

/// Fetch (or find in the cache) the tree for `spec`. Debian, tarball, git and bundled sources
/// are fetched once per cache and then returned instantly; a path source is hashed in place.
pub fn fetch(spec: &SourceSpec, cache: &Cache) -> Result<SourceTree> {
    match spec {
        SourceSpec::Debian { package } => debian::fetch(package, cache),
        SourceSpec::Tarball { location, sha256 } => tarball::fetch(location, sha256, cache),
        SourceSpec::Git { url, rev } => git::fetch(url, rev, cache),
        SourceSpec::Path { path } => path::fetch(path),
        SourceSpec::Bundled => bundled::fetch(cache),
    }
}

/// Return the cached entry `sources/<kind>/<name>`, or create it with `fill`, which must
/// populate `<staging>/tree` and return the entry's metadata. Fetches of one entry are
/// serialized by a lock; a failed fill leaves nothing behind.
fn cached_or_fill(
    cache: &Cache,
    kind: &str,
    name: &str,
    fill: impl FnOnce(&Path) -> Result<SourceMeta>,
) -> Result<SourceTree> {
    let entry = cache.dir(&["sources", kind, name]);
    if let Some(tree) = load(&entry) {
        return Ok(tree);
    }
    let _lock = cache.lock(&format!("source-{kind}-{name}"))?;
    if let Some(tree) = load(&entry) {
        return Ok(tree);
    }
    let staging = staging_dir(&entry)?;
    let meta = match fill(&staging) {
        Ok(meta) => meta,
        Err(e) => {
            let _ = remove_tree(&staging);
            return Err(e);
        }
    };
    write_json(&staging.join("source.json"), &meta)?;
    commit_dir(&staging, &entry)?;
    Ok(tree_of(&entry, meta))
}

fn load(entry: &Path) -> Option<SourceTree> {
    let meta: SourceMeta = read_json(&entry.join("source.json"))?;
    entry.join("tree").is_dir().then(|| tree_of(entry, meta))
}

fn tree_of(entry: &Path, meta: SourceMeta) -> SourceTree {
    SourceTree {
        dir: entry.join("tree"),
        id: meta.id,
        description: meta.description,
    }
}

/// Move `from` to `to` with a rename (both inside one cache), keeping timestamps.
fn rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to).map_err(|e| {
        crate::error::BuildError::io(
            format!("cannot move {} to {}", from.display(), to.display()),
            e,
        )
    })
}

/// The subdirectories of `dir` (files and symlinks are ignored).
fn subdirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = std::fs::read_dir(dir)
        .map_err(|e| crate::error::BuildError::io(format!("cannot list {}", dir.display()), e))?;
    let mut dirs: Vec<PathBuf> = read
        .flatten()
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    Ok(dirs)
}

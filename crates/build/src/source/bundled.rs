//! Bundled source: the SQLite amalgamation that bakeoff itself carries, so a `sqlite` target
//! needs no download, no apt and no registry at run time.
//!
//! bakeoff already links SQLite through `rusqlite`'s `bundled` feature, i.e. `libsqlite3-sys`,
//! which ships the amalgamation (`sqlite3.c`, `sqlite3.h`, `sqlite3ext.h`). This crate's build
//! script finds that directory (`DEP_SQLITE3_INCLUDE`, see `build.rs`) and the three files are
//! embedded here with `include_bytes!` (about 10 MB). `fetch` writes them, once per cache, into
//! `sources/bundled/sqlite-<version>/tree/`, the version being the `#define SQLITE_VERSION` of
//! the embedded `sqlite3.h` (see [`bundled_sqlite_version`]).
//!
//! Identity: sha256 over the three files (each as `name NUL length NUL contents`, in the order
//! above), so a different amalgamation gives different builds. The entry is named by the
//! version only: a cache filled by another bakeoff binary carrying a different amalgamation of
//! the same version keeps that tree and its (matching) identity.

use sha2::{Digest, Sha256};

use super::{cached_or_fill, SourceMeta, SourceTree};
use crate::cache::{create_dir_all, Cache};
use crate::error::{BuildError, Result};
use crate::util::hex;

/// The embedded amalgamation, as it is written into the tree.
const FILES: [(&str, &[u8]); 3] = [
    (
        "sqlite3.c",
        include_bytes!(concat!(env!("BAKEOFF_SQLITE_AMALGAMATION"), "/sqlite3.c")),
    ),
    (
        "sqlite3.h",
        include_bytes!(concat!(env!("BAKEOFF_SQLITE_AMALGAMATION"), "/sqlite3.h")),
    ),
    (
        "sqlite3ext.h",
        include_bytes!(concat!(
            env!("BAKEOFF_SQLITE_AMALGAMATION"),
            "/sqlite3ext.h"
        )),
    ),
];

/// The SQLite version bakeoff carries (e.g. `3.54.1`): `SQLITE_VERSION` of the embedded
/// `sqlite3.h`, which is what [`crate::SourceSpec::Bundled`] builds.
pub fn bundled_sqlite_version() -> &'static str {
    env!("BAKEOFF_SQLITE_VERSION")
}

/// E.g. `bundled SQLite 3.54.1 (amalgamation from libsqlite3-sys 0.40.0)`.
fn description() -> String {
    let sys = env!("BAKEOFF_LIBSQLITE3_SYS_VERSION");
    let from = if sys.is_empty() {
        "libsqlite3-sys".to_string()
    } else {
        format!("libsqlite3-sys {sys}")
    };
    format!(
        "bundled SQLite {} (amalgamation from {from})",
        bundled_sqlite_version()
    )
}

/// The identity described in the module doc.
fn identity() -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"bundled:");
    for (name, bytes) in FILES {
        hasher.update(name.as_bytes());
        hasher.update(b"\0");
        hasher.update(bytes.len().to_string().as_bytes());
        hasher.update(b"\0");
        hasher.update(bytes);
    }
    hex(&hasher.finalize())
}

pub(super) fn fetch(cache: &Cache) -> Result<SourceTree> {
    let name = format!("sqlite-{}", bundled_sqlite_version());
    cached_or_fill(cache, "bundled", &name, |staging| {
        let tree = staging.join("tree");
        create_dir_all(&tree)?;
        for (file, bytes) in FILES {
            let path = tree.join(file);
            std::fs::write(&path, bytes)
                .map_err(|e| BuildError::io(format!("cannot write {}", path.display()), e))?;
        }
        Ok(SourceMeta {
            id: identity(),
            description: description(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_comes_from_the_embedded_header() {
        let version = bundled_sqlite_version();
        assert!(version.starts_with("3."), "{version}");
        let header = String::from_utf8_lossy(FILES[1].1);
        let define = header
            .lines()
            .find(|l| {
                l.starts_with("#define SQLITE_VERSION ")
                    || l.starts_with("#define SQLITE_VERSION\t")
            })
            .expect("SQLITE_VERSION define");
        assert!(define.ends_with(&format!("\"{version}\"")), "{define}");
        assert!(description().starts_with(&format!(
            "bundled SQLite {version} (amalgamation from libsqlite3-sys"
        )));
    }

    #[test]
    fn the_amalgamation_is_complete() {
        let source = FILES[0].1;
        assert!(
            source.len() > 1_000_000,
            "sqlite3.c is {} bytes",
            source.len()
        );
        let text = String::from_utf8_lossy(&source[..4096]);
        assert!(text.contains("amalgamation"), "{text}");
        assert_eq!(identity(), identity());
        assert_eq!(identity().len(), 64);
    }
}

//! Path sources: a local tree used in place (bakeoff never writes into it; builds are out of
//! tree, and a tree that needs patching or `autogen.sh` is copied into the cache first).
//!
//! Identity: sha256 over the sorted file list with each entry's type, permission bits, size and
//! mtime (nanoseconds); symlinks contribute their target. `.git` directories are skipped, so a
//! commit that changes no file keeps the id, while any edit (even `touch`) changes it. Metadata
//! rather than contents keeps this fast on big trees; the cost is a spurious rebuild after a
//! touch, never a stale build.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::SourceTree;
use crate::error::{BuildError, Result};
use crate::util::hex;

pub(super) fn fetch(path: &Path) -> Result<SourceTree> {
    let dir = std::fs::canonicalize(path).map_err(|_| BuildError::SourceNotFound {
        path: path.to_path_buf(),
    })?;
    if !dir.is_dir() {
        return Err(BuildError::SourceNotFound {
            path: path.to_path_buf(),
        });
    }
    let id = tree_identity(&dir)?;
    Ok(SourceTree {
        description: format!("path {}", dir.display()),
        dir,
        id,
    })
}

/// The metadata hash described in the module doc.
pub(crate) fn tree_identity(dir: &Path) -> Result<String> {
    let mut hasher = Sha256::new();
    hasher.update(b"path:");
    walk(dir, Path::new(""), &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

fn walk(root: &Path, rel: &Path, hasher: &mut Sha256) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let dir = root.join(rel);
    let read = std::fs::read_dir(&dir)
        .map_err(|e| BuildError::io(format!("cannot list {}", dir.display()), e))?;
    let mut names: Vec<_> = read.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        if name == ".git" {
            continue;
        }
        let rel_path = rel.join(&name);
        let full = root.join(&rel_path);
        let meta = std::fs::symlink_metadata(&full)
            .map_err(|e| BuildError::io(format!("cannot stat {}", full.display()), e))?;
        let kind = if meta.is_dir() {
            'd'
        } else if meta.file_type().is_symlink() {
            'l'
        } else {
            'f'
        };
        // Directories contribute only their name and mode: their mtime moves whenever an
        // editor creates and deletes a temp file, and the file list already covers content.
        let (size, secs, nanos) = match kind {
            'd' => (0, 0, 0),
            _ => (meta.size(), meta.mtime(), meta.mtime_nsec()),
        };
        let line = format!(
            "{}\0{kind}\0{:o}\0{size}\0{secs}.{nanos}\n",
            rel_path.display(),
            meta.mode() & 0o7777,
        );
        hasher.update(line.as_bytes());
        match kind {
            'd' => walk(root, &rel_path, hasher)?,
            'l' => {
                let target = std::fs::read_link(&full).unwrap_or_default();
                hasher.update(target.to_string_lossy().as_bytes());
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{fetch as fetch_source, SourceSpec};
    use std::time::{Duration, SystemTime};

    fn set_mtime(p: &Path, t: SystemTime) {
        let f = std::fs::File::options().write(true).open(p).unwrap();
        f.set_modified(t).unwrap();
    }

    #[test]
    fn identity_is_stable_and_tracks_edits() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.c"), "int a;").unwrap();
        std::fs::write(dir.join("sub/b.c"), "int b;").unwrap();
        let spec = SourceSpec::Path {
            path: dir.to_path_buf(),
        };
        let cache = crate::Cache::new(tmp.path().join("unused"));
        let first = fetch_source(&spec, &cache).unwrap();
        assert_eq!(first.dir, std::fs::canonicalize(dir).unwrap());
        let id1 = first.id.clone();
        let id2 = tree_identity(dir).unwrap();
        assert_eq!(id1, id2, "same tree, same id");

        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
        set_mtime(&dir.join("sub/b.c"), t0);
        let touched = tree_identity(dir).unwrap();
        assert_ne!(touched, id1, "an mtime change changes the id");

        std::fs::write(dir.join("sub/b.c"), "int b2;").unwrap();
        set_mtime(&dir.join("sub/b.c"), t0);
        assert_ne!(
            tree_identity(dir).unwrap(),
            touched,
            "a size change changes the id"
        );

        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".git/index"), "x").unwrap();
        let with_git = tree_identity(dir).unwrap();
        std::fs::write(dir.join(".git/index"), "xyz").unwrap();
        assert_eq!(tree_identity(dir).unwrap(), with_git, ".git is ignored");
    }

    #[test]
    fn missing_path_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = crate::Cache::new(tmp.path());
        let spec = SourceSpec::Path {
            path: tmp.path().join("nope"),
        };
        let err = fetch_source(&spec, &cache).unwrap_err();
        assert!(matches!(err, BuildError::SourceNotFound { .. }), "{err}");
    }
}

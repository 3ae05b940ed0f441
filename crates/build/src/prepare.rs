//! Getting a fetched tree ready to configure: applying patches and bootstrapping autotools.
//!
//! Fetched trees are never modified. When a build has patches, or the tree lacks `./configure`
//! but can generate one (`autogen.sh`, `configure.ac`), the tree is copied with `cp -a` into
//! `patched/<hash>` (keyed by the source id and the patches' sha256s), patched with
//! `patch -p1 --forward --batch`, and bootstrapped there, once, under a lock. A patch that
//! touches `configure.ac`, `configure.in`, `Makefile.am` or an `.m4` file triggers a bootstrap
//! too, so automake never tries to regenerate files halfway through `make`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache::{commit_dir, create_dir_all, staging_dir, Cache};
use crate::error::{BuildError, Result};
use crate::source::SourceTree;
use crate::util::{copy_tree, remove_tree, run_captured, sha256_hex};

/// A patch file and the sha256 of its contents (what the cache key uses).
#[derive(Debug, Clone)]
pub(crate) struct PatchFile {
    pub path: PathBuf,
    pub sha256: String,
}

/// Read and hash every patch; paths are made absolute so `patch` can run in any directory.
pub(crate) fn read_patches(paths: &[PathBuf]) -> Result<Vec<PatchFile>> {
    paths
        .iter()
        .map(|p| {
            let err = |source| BuildError::PatchNotFound {
                patch: p.clone(),
                source,
            };
            let bytes = std::fs::read(p).map_err(err)?;
            let path = std::fs::canonicalize(p).map_err(err)?;
            Ok(PatchFile {
                path,
                sha256: sha256_hex(&bytes),
            })
        })
        .collect()
}

/// How a prepared tree is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `SRC/configure` run from a separate build dir, then `make`.
    Autotools,
    /// No configure: the tree is copied into the build dir and `make` runs there.
    Make,
    /// `cmake SRC` run from a separate build dir (the mariadb recipe).
    Cmake,
    /// One amalgamated C file (`SRC/sqlite3.c`) compiled from a separate build dir (the
    /// sqlite recipe).
    Amalgamation,
}

/// The layout of a (prepared) tree for the autotools recipe (the others check their own).
pub(crate) fn layout(dir: &Path) -> Result<Layout> {
    if dir.join("configure").is_file() {
        return Ok(Layout::Autotools);
    }
    let has = |n: &str| dir.join(n).is_file();
    if has("Makefile") || has("makefile") || has("GNUmakefile") {
        return Ok(Layout::Make);
    }
    Err(BuildError::UnsupportedSource {
        dir: dir.display().to_string(),
        detail: "it has no configure, autogen.sh, configure.ac or Makefile (autotools and plain-make trees are built this way)".into(),
    })
}

fn can_bootstrap(dir: &Path) -> bool {
    ["autogen.sh", "configure.ac", "configure.in"]
        .iter()
        .any(|f| dir.join(f).is_file())
}

fn needs_bootstrap(dir: &Path) -> bool {
    !dir.join("configure").is_file() && can_bootstrap(dir)
}

/// The directory to configure from: the fetched tree itself, or a cached patched/bootstrapped
/// copy of it.
pub(crate) fn prepare(tree: &SourceTree, patches: &[PatchFile], cache: &Cache) -> Result<PathBuf> {
    if patches.is_empty() && !needs_bootstrap(&tree.dir) {
        return Ok(tree.dir.clone());
    }
    let mut keyed = format!("prepared:{}", tree.id);
    for p in patches {
        keyed.push(':');
        keyed.push_str(&p.sha256);
    }
    let name = sha256_hex(keyed.as_bytes())[..32].to_string();
    let entry = cache.dir(&["patched", &name]);
    if entry.join("tree").is_dir() {
        return Ok(entry.join("tree"));
    }
    let _lock = cache.lock(&format!("patched-{name}"))?;
    if entry.join("tree").is_dir() {
        return Ok(entry.join("tree"));
    }
    let staging = staging_dir(&entry)?;
    let res = fill(tree, patches, cache, &name, &staging);
    if res.is_err() {
        let _ = remove_tree(&staging);
    }
    res?;
    commit_dir(&staging, &entry)?;
    Ok(entry.join("tree"))
}

fn fill(
    tree: &SourceTree,
    patches: &[PatchFile],
    cache: &Cache,
    name: &str,
    staging: &Path,
) -> Result<()> {
    let dir = staging.join("tree");
    copy_tree(&tree.dir, &dir)?;
    let mut log = String::new();
    let mut touched_autotools = false;
    for patch in patches {
        let output = apply(patch, &dir, &tree.description)?;
        touched_autotools |= touches_autotools_inputs(&output);
        log.push_str(&format!(
            "==> patch -p1 < {}\n{output}\n",
            patch.path.display()
        ));
    }
    std::fs::write(staging.join("patch.log"), log)
        .map_err(|e| BuildError::io("cannot write patch.log", e))?;
    if needs_bootstrap(&dir) || (touched_autotools && can_bootstrap(&dir)) {
        let logs = cache.dir(&["logs"]);
        create_dir_all(&logs)?;
        bootstrap(&dir, &logs.join(format!("bootstrap-{name}.log")))?;
    }
    Ok(())
}

/// Apply one patch in `dir`; returns `patch`'s output.
fn apply(patch: &PatchFile, dir: &Path, source_desc: &str) -> Result<String> {
    crate::util::require_tool("patch", "patch")?;
    let res = run_captured(
        Command::new("patch")
            .args([
                "-p1",
                "--forward",
                "--batch",
                "--no-backup-if-mismatch",
                "-i",
            ])
            .arg(&patch.path)
            .current_dir(dir),
    )
    .map_err(|e| BuildError::io("cannot run patch", e))?;
    if res.ok {
        Ok(res.output)
    } else {
        Err(BuildError::PatchFailed {
            patch: patch.path.clone(),
            source_desc: source_desc.to_string(),
            output: without_patch_text(&res.output),
        })
    }
}

/// `patch`'s output without the lines it quotes from the patch file (`|...` after "The
/// text leading up to this was:"): the file is whatever the experiment named, and no
/// message may carry what is in a file.
fn without_patch_text(output: &str) -> String {
    output
        .lines()
        .filter(|l| !l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `patch` output names an autotools input among the files it patched.
fn touches_autotools_inputs(output: &str) -> bool {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("patching file "))
        .map(|f| f.trim().trim_matches(|c| c == '\'' || c == '`'))
        .any(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            matches!(name, "configure.ac" | "configure.in" | "Makefile.am") || name.ends_with(".m4")
        })
}

/// Generate `./configure`: `./autogen.sh` when the tree has one, else `autoreconf -fi`.
fn bootstrap(dir: &Path, log: &Path) -> Result<()> {
    let (program, arg, label) = if dir.join("autogen.sh").is_file() {
        ("sh", "./autogen.sh", "./autogen.sh")
    } else {
        ("autoreconf", "-fi", "autoreconf -fi")
    };
    let mut cmd = Command::new(program);
    cmd.arg(arg);
    let res = run_captured(cmd.current_dir(dir));
    let (ok, text) = match res {
        Ok(c) => (c.ok, c.output),
        Err(e) => (false, format!("cannot run {label}: {e}")),
    };
    std::fs::write(log, &text)
        .map_err(|e| BuildError::io(format!("cannot write {}", log.display()), e))?;
    if ok && dir.join("configure").is_file() {
        Ok(())
    } else {
        Err(BuildError::Bootstrap {
            dir: dir.display().to_string(),
            command: label.to_string(),
            log: log.to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autotools_inputs_are_detected() {
        assert!(touches_autotools_inputs("patching file configure.ac\n"));
        assert!(touches_autotools_inputs("patching file 'm4/foo.m4'\n"));
        assert!(touches_autotools_inputs("patching file sub/Makefile.am\n"));
        assert!(!touches_autotools_inputs("patching file memcached.c\n"));
        assert!(!touches_autotools_inputs("checking configure.ac\n"));
    }

    fn tree_at(dir: &Path) -> SourceTree {
        SourceTree {
            dir: dir.to_path_buf(),
            id: crate::source::path::tree_identity(dir).unwrap(),
            description: "test tree".into(),
        }
    }

    #[test]
    fn autogen_runs_once_on_a_copy() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        let count = tmp.path().join("count");
        let script = format!(
            "echo run >> '{}'; printf '#!/bin/sh\\necho ok\\n' > configure; chmod +x configure\n",
            count.display()
        );
        std::fs::write(src.join("autogen.sh"), script).unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let tree = tree_at(&src);
        let prepared = prepare(&tree, &[], &cache).unwrap();
        assert_ne!(prepared, src, "the fetched tree is not modified");
        assert!(!src.join("configure").exists());
        assert!(prepared.join("configure").is_file());
        assert_eq!(layout(&prepared).unwrap(), Layout::Autotools);
        assert_eq!(prepare(&tree, &[], &cache).unwrap(), prepared);
        assert_eq!(
            std::fs::read_to_string(&count).unwrap(),
            "run\n",
            "bootstrap ran once"
        );
    }

    #[test]
    fn plain_tree_is_used_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("Makefile"), "all:\n").unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let tree = tree_at(tmp.path());
        assert_eq!(prepare(&tree, &[], &cache).unwrap(), tmp.path());
        assert_eq!(layout(tmp.path()).unwrap(), Layout::Make);
    }

    #[test]
    fn hostile_file_content_never_in_errors_of_a_patch() {
        if bakeoff_os::path::which("patch").is_none() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a"), "one\n").unwrap();
        let file = tmp.path().join("x.patch");
        std::fs::write(
            &file,
            "s3cr3t44marker leading text\n--- a/missing\n+++ b/missing\n@@ -1 +1 @@\n-one\n+two\n",
        )
        .unwrap();
        let patch = &read_patches(&[file]).unwrap()[0];
        let err = apply(patch, tmp.path(), "test tree").unwrap_err();
        let shown = format!("{err} {}", err.tail());
        assert!(matches!(err, BuildError::PatchFailed { .. }), "{shown}");
        assert!(!shown.contains("s3cr3t44marker"), "{shown}");
    }

    #[test]
    fn missing_patch_file_is_an_error() {
        let err = read_patches(&[PathBuf::from("/nonexistent/x.patch")]).unwrap_err();
        assert!(matches!(err, BuildError::PatchNotFound { .. }), "{err}");
    }
}

//! Profile-guided optimization as build settings: an instrumented build (gcc
//! `-fprofile-generate`, clang `-fprofile-instr-generate`), what its server needs in its
//! environment to write profiles where bakeoff collects them, the check that it did, the
//! merge (clang: `llvm-profdata merge`), and the final build's flags.
//!
//! GCC writes one `.gcda` per object, at the object's absolute path from compile time; the
//! server gets `GCOV_PREFIX` (the profile dir) and `GCOV_PREFIX_STRIP` (the build dir's
//! depth), so the files land under the profile dir at their paths relative to the build
//! dir; the final build finds them there because the builder copies them into its own
//! build dir before compiling (`-fprofile-use` reads them beside each object). Clang
//! writes `.profraw` files named by `LLVM_PROFILE_FILE`; they are merged into one
//! `.profdata` for `-fprofile-instr-use`.

use crate::lto::{family, Family};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a build does with profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Instrumented, to write profiles when run.
    Generate,
    /// Built with these profiles (gcc: a dir of .gcda files; clang: a .profdata file),
    /// identified by the hash of their content (part of the cache key).
    Use { path: PathBuf, sha256: String },
}

/// Flags for `profile` with `compiler`: (cflags, ldflags), or why it cannot be done.
pub fn flags(compiler: &str, profile: &Profile) -> Result<(String, String), String> {
    match (family(compiler), profile) {
        (Some(Family::Gcc(_)), Profile::Generate) => Ok((
            "-fprofile-generate -fprofile-update=atomic".into(),
            "-fprofile-generate".into(),
        )),
        (Some(Family::Gcc(_)), Profile::Use { .. }) => Ok((
            "-fprofile-use -fprofile-partial-training -Wno-missing-profile".into(),
            "-fprofile-use".into(),
        )),
        (Some(Family::Clang(_)), Profile::Generate) => Ok((
            "-fprofile-instr-generate".into(),
            "-fprofile-instr-generate".into(),
        )),
        (Some(Family::Clang(_)), Profile::Use { path, .. }) => {
            let f = format!("-fprofile-instr-use={}", path.display());
            Ok((format!("{f} -Wno-profile-instr-unprofiled"), f))
        }
        (None, _) => Err(format!(
            "pgo knows gcc and clang (gcc-N, clang-N), not {compiler}"
        )),
    }
}

/// The environment a server built with [`Profile::Generate`] needs to write its profiles
/// into `dir`; `build_dir` is where it was compiled (gcc strips that many components).
pub fn server_env(compiler: &str, build_dir: &Path, dir: &Path) -> Vec<(String, String)> {
    match family(compiler) {
        Some(Family::Clang(_)) => vec![(
            "LLVM_PROFILE_FILE".into(),
            dir.join("%p-%m.profraw").display().to_string(),
        )],
        _ => vec![
            ("GCOV_PREFIX".into(), dir.display().to_string()),
            (
                "GCOV_PREFIX_STRIP".into(),
                build_dir.components().count().saturating_sub(1).to_string(),
            ),
        ],
    }
}

/// Collects what a training run wrote into `dir`: gcc's .gcda tree as it is, clang's
/// .profraw files merged into `dir/merged.profdata`. Returns the [`Profile::Use`] and how
/// many profile files there were; an error when there were none.
pub fn collect(compiler: &str, dir: &Path) -> Result<(Profile, usize), String> {
    let ext = match family(compiler) {
        Some(Family::Clang(_)) => "profraw",
        _ => "gcda",
    };
    let files = files_with(dir, ext);
    if files.is_empty() {
        return Err(format!(
            "the training run wrote no profile data (no .{ext} file): the server must exit cleanly to write it"
        ));
    }
    let (path, hashed): (PathBuf, Vec<PathBuf>) = match family(compiler) {
        Some(Family::Clang(v)) => {
            let out = dir.join("merged.profdata");
            let tool = format!("llvm-profdata{v}");
            let res = Command::new(&tool)
                .arg("merge")
                .arg("-o")
                .arg(&out)
                .args(&files)
                .output()
                .map_err(|e| format!("cannot run {tool}: {e}; run scripts/setup.sh (llvm-16)"))?;
            if !res.status.success() {
                return Err(format!(
                    "{tool} merge failed: {}",
                    String::from_utf8_lossy(&res.stderr).trim()
                ));
            }
            (out.clone(), vec![out])
        }
        _ => (dir.to_path_buf(), files.clone()),
    };
    let mut h = sha2_of(&hashed, dir);
    h.truncate(64);
    Ok((Profile::Use { path, sha256: h }, files.len()))
}

/// sha256 over the files' paths (relative to `base`) and contents.
fn sha2_of(files: &[PathBuf], base: &Path) -> String {
    let mut all = Vec::new();
    let mut sorted = files.to_vec();
    sorted.sort();
    for f in sorted {
        all.extend_from_slice(
            f.strip_prefix(base)
                .unwrap_or(&f)
                .to_string_lossy()
                .as_bytes(),
        );
        all.push(0);
        all.extend_from_slice(&std::fs::read(&f).unwrap_or_default());
    }
    crate::util::sha256_hex(&all)
}

/// Files under `dir` (recursively) ending in `.ext`.
pub fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t)
                    if t.is_file()
                        && p.extension().is_some_and(|x| x == ext)
                        && e.metadata().is_ok_and(|m| m.len() > 0) =>
                {
                    out.push(p)
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_per_family() {
        assert!(flags("gcc-12", &Profile::Generate)
            .unwrap()
            .0
            .contains("-fprofile-generate"));
        let u = Profile::Use {
            path: "/p/merged.profdata".into(),
            sha256: "x".into(),
        };
        assert!(flags("clang-16", &u)
            .unwrap()
            .0
            .contains("-fprofile-instr-use=/p/merged.profdata"));
        assert!(flags("icx", &u).is_err());
    }

    #[test]
    fn gcc_writes_under_the_profile_dir_relative_to_the_build_dir() {
        let env = server_env(
            "gcc-12",
            Path::new("/c/builds/k.tmp-1/build"),
            Path::new("/p"),
        );
        assert_eq!(env[0], ("GCOV_PREFIX".into(), "/p".into()));
        // /, c, builds, k.tmp-1, build: 5 components, 4 names to strip.
        assert_eq!(env[1], ("GCOV_PREFIX_STRIP".into(), "4".into()));
        let env = server_env("clang-16", Path::new("/b"), Path::new("/p"));
        assert_eq!(env[0].0, "LLVM_PROFILE_FILE");
    }

    #[test]
    fn no_profile_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(collect("gcc-12", tmp.path())
            .unwrap_err()
            .contains("no profile data"));
        std::fs::create_dir_all(tmp.path().join("sub")).unwrap();
        std::fs::write(tmp.path().join("sub/a.gcda"), b"data").unwrap();
        let (p, n) = collect("gcc-12", tmp.path()).unwrap();
        assert_eq!(n, 1);
        assert!(matches!(p, Profile::Use { .. }));
    }
}

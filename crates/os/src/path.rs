//! Finding programs, and names safe for a path.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Resolves a program the way a shell does: a name holding a `/` is taken as a path as
/// it is; a bare name is looked for in each directory of `$PATH` in turn (empty entries
/// skipped: they would mean the current directory). The first executable file is the
/// answer; `None` when there is none.
pub fn which(program: impl AsRef<Path>) -> Option<PathBuf> {
    which_in(program.as_ref(), &std::env::var_os("PATH")?)
}

/// [`which`] over the directories of `path` (a `$PATH`-style, colon-separated list).
pub fn which_in(program: &Path, path: &std::ffi::OsStr) -> Option<PathBuf> {
    let name = program.as_os_str().as_bytes();
    if name.is_empty() {
        return None;
    }
    if name.contains(&b'/') {
        return is_executable(program).then(|| program.to_path_buf());
    }
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

/// Whether `p` is (or links to) a regular file with an execute bit set.
pub fn is_executable(p: &Path) -> bool {
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A name safe for a file or folder: ASCII letters, digits, '-', '_' and '.' are kept,
/// anything else becomes '_'.
pub fn safe_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn finds_sh_and_rejects_missing() {
        assert!(which("sh").is_some_and(|p| p.is_absolute() && p.ends_with("sh")));
        assert!(which("definitely-not-a-command-bakeoff").is_none());
        assert!(which("/nonexistent/cc").is_none());
        assert!(which("").is_none());
    }

    #[test]
    fn safe_names_keep_only_plain_characters() {
        assert_eq!(safe_name("gcc-O2_v1.2"), "gcc-O2_v1.2");
        assert_eq!(safe_name("a b/c:d\u{e9}"), "a_b_c_d_");
    }

    #[test]
    fn takes_the_first_executable_match_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        for d in [&a, &b, &c] {
            std::fs::create_dir(d).unwrap();
        }
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        // a: not executable; b: a directory of that name; c: the program.
        std::fs::write(a.join("tool"), "").unwrap();
        mode(&a.join("tool"), 0o644);
        std::fs::create_dir(b.join("tool")).unwrap();
        std::fs::write(c.join("tool"), "#!/bin/sh\n").unwrap();
        mode(&c.join("tool"), 0o755);
        let path = std::env::join_paths([&a, &b, &c]).unwrap();
        assert_eq!(which_in(Path::new("tool"), &path), Some(c.join("tool")));
        assert_eq!(which_in(Path::new("tool"), &OsString::new()), None);
        // A name with a slash is a path, not looked up.
        assert_eq!(
            which_in(&c.join("tool"), &OsString::new()),
            Some(c.join("tool"))
        );
        assert_eq!(which_in(&a.join("tool"), &path), None);
        assert!(!is_executable(&b.join("tool")));
    }
}

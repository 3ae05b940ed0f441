//! Toolchains: resolve a compiler command on PATH, identify it by its `--version` output, and
//! find the matching C++ compiler (gcc-12 -> g++-12, clang-16 -> clang++-16).

use std::path::PathBuf;
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::error::{BuildError, Result};
use crate::util::{run_captured, sha256_hex};
use bakeoff_os::path::which;

/// What a compiler command resolves to, as recorded with every build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompilerId {
    /// The command as the variant gave it, e.g. `gcc-12`.
    pub command: String,
    /// Where it was found on PATH (not canonicalized: `cc` stays `/usr/bin/cc`).
    pub path: PathBuf,
    /// First line of `--version`, e.g. `gcc-12 (Debian 12.2.0-14) 12.2.0`.
    pub version: String,
    /// sha256 of the full `--version` output; part of every build's cache key.
    pub version_hash: String,
}

/// Resolve `cmd` on PATH without running it (what `bakeoff check` does: a compiler the
/// experiment names is a program of the file's choosing).
pub fn find_compiler(cmd: &str) -> Result<PathBuf> {
    which(cmd.trim()).ok_or_else(|| BuildError::CompilerNotFound {
        compiler: cmd.to_string(),
        variant: None,
    })
}

/// Resolve `cmd` on PATH and run `cmd --version`. Call this while validating an experiment,
/// before anything runs. Errors carry no variant name; add it with
/// [`BuildError::for_variant`].
pub fn check_compiler(cmd: &str) -> Result<CompilerId> {
    let not_found = || BuildError::CompilerNotFound {
        compiler: cmd.to_string(),
        variant: None,
    };
    let path = which(cmd.trim()).ok_or_else(not_found)?;
    let broken = |detail: String| BuildError::CompilerBroken {
        compiler: cmd.to_string(),
        detail,
        variant: None,
    };
    let out = run_captured(Command::new(&path).arg("--version").env("LC_ALL", "C"))
        .map_err(|e| broken(e.to_string()))?;
    let version = out.output.lines().next().unwrap_or("").trim().to_string();
    if !out.ok || version.is_empty() {
        return Err(broken(format!(
            "exit failure, output: {}",
            crate::util::last_lines(out.output.trim(), 1)
        )));
    }
    Ok(CompilerId {
        command: cmd.to_string(),
        path,
        version,
        version_hash: sha256_hex(out.output.as_bytes()),
    })
}

/// The C++ compiler that goes with a C compiler command, if it exists on PATH:
/// `gcc-12` -> `g++-12`, `clang-16` -> `clang++-16`, `/usr/bin/gcc` -> `/usr/bin/g++`,
/// `x86_64-linux-gnu-gcc-12` -> `x86_64-linux-gnu-g++-12`, `cc` -> `c++`, `icx` -> `icpx`.
pub fn matching_cxx(cc: &str) -> Option<String> {
    let candidate = cxx_name(cc)?;
    which(&candidate).map(|_| candidate)
}

/// The name [`matching_cxx`] looks for, without checking PATH.
fn cxx_name(cc: &str) -> Option<String> {
    let (dir, file) = match cc.rfind('/') {
        Some(i) => (&cc[..=i], &cc[i + 1..]),
        None => ("", cc),
    };
    let swapped = if file.contains("clang++") || file.contains("g++") {
        return None;
    } else if let Some(i) = file.rfind("clang") {
        format!("{}clang++{}", &file[..i], &file[i + "clang".len()..])
    } else if let Some(i) = file.rfind("gcc") {
        format!("{}g++{}", &file[..i], &file[i + "gcc".len()..])
    } else if file == "cc" {
        "c++".to_string()
    } else if file == "icx" {
        "icpx".to_string()
    } else {
        return None;
    };
    Some(format!("{dir}{swapped}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cxx_names() {
        assert_eq!(cxx_name("gcc-12").as_deref(), Some("g++-12"));
        assert_eq!(cxx_name("clang-16").as_deref(), Some("clang++-16"));
        assert_eq!(cxx_name("clang").as_deref(), Some("clang++"));
        assert_eq!(cxx_name("/usr/bin/gcc").as_deref(), Some("/usr/bin/g++"));
        assert_eq!(
            cxx_name("x86_64-linux-gnu-gcc-12").as_deref(),
            Some("x86_64-linux-gnu-g++-12")
        );
        assert_eq!(cxx_name("cc").as_deref(), Some("c++"));
        assert_eq!(cxx_name("icx").as_deref(), Some("icpx"));
        assert_eq!(cxx_name("tcc"), None);
        assert_eq!(cxx_name("clang++-16"), None);
    }

    #[test]
    fn gcc12_is_identified() {
        let id = check_compiler("gcc-12").expect("gcc-12 is installed on this machine");
        assert!(id.version.contains("12."), "{}", id.version);
        assert_eq!(id.version_hash.len(), 64);
        assert_eq!(matching_cxx("gcc-12").as_deref(), Some("g++-12"));
    }

    #[test]
    fn missing_compiler_is_an_error() {
        let err = check_compiler("gcc-99").unwrap_err();
        assert!(matches!(err, BuildError::CompilerNotFound { .. }), "{err}");
        assert!(err.to_string().contains("apt-get install gcc-99"));
    }

    #[test]
    fn a_command_that_fails_version_is_broken() {
        let err = check_compiler("false").unwrap_err();
        assert!(matches!(err, BuildError::CompilerBroken { .. }), "{err}");
    }
}

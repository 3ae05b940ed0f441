//! The one error type of this crate. Every variant's Display is a single line that names the
//! cause and says what to do next; multi-line detail (a build log tail, `patch` output) is kept
//! in fields for the caller to print underneath.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while fetching sources, checking compilers or building.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("compiler `{compiler}` not found on PATH: install it (e.g. apt-get install {compiler}) or fix {}", variant_phrase(.variant))]
    CompilerNotFound {
        compiler: String,
        variant: Option<String>,
    },

    #[error("compiler `{compiler}` did not answer `--version` ({detail}): check that it is a working C compiler or fix {}", variant_phrase(.variant))]
    CompilerBroken {
        compiler: String,
        detail: String,
        variant: Option<String>,
    },

    #[error("`{tool}` not found on PATH: install it with `apt-get install {package}`")]
    ToolMissing {
        tool: &'static str,
        package: &'static str,
    },

    #[error("invalid {what}: {detail}")]
    BadSpec { what: &'static str, detail: String },

    #[error("{context}: {source}; check the path, its permissions and free disk space")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },

    #[error("`apt-get source {package}` failed: {detail}; check the package name, that deb-src is enabled in /etc/apt/sources.list.d and that `apt-get update` ran")]
    DebianFetch { package: String, detail: String },

    #[error("cannot download `{location}`: {detail}; check the URL or use a local path")]
    Download { location: String, detail: String },

    #[error("tarball `{location}` has sha256 {actual} but the experiment expects {expected}: fix the sha256 or the location")]
    ChecksumMismatch {
        location: String,
        expected: String,
        actual: String,
    },

    #[error("cannot unpack tarball `{location}`: {detail}; check that it is a tar archive (.tar, .tar.gz, .tar.xz, .tar.bz2, .tar.zst)")]
    Unpack { location: String, detail: String },

    #[error(
        "git source `{url}` at `{rev}` failed: {detail}; check the url and that the rev exists"
    )]
    Git {
        url: String,
        rev: String,
        detail: String,
    },

    #[error("source path `{}` is not a directory: fix the path of the source", .path.display())]
    SourceNotFound { path: PathBuf },

    #[error("source `{dir}` cannot be built: {detail}; point the source at such a tree or pick the matching target kind")]
    UnsupportedSource { dir: String, detail: String },

    #[error("cannot bootstrap source `{dir}` ({command} failed, see {}): install autoconf/automake/libtool or ship a generated ./configure", .log.display())]
    Bootstrap {
        dir: String,
        command: String,
        log: PathBuf,
    },

    #[error("patch `{}` cannot be read: {source}; fix the patch path", .patch.display())]
    PatchNotFound {
        patch: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error("patch `{}` does not apply to {source_desc}: {}; regenerate it against this source", .patch.display(), first_line(.output))]
    PatchFailed {
        patch: PathBuf,
        source_desc: String,
        output: String,
    },

    #[error("build of variant `{variant}` failed in {step}: {}; full log: {}", last_line(.tail), .log.display())]
    BuildFailed {
        variant: String,
        step: String,
        log: PathBuf,
        tail: String,
    },

    #[error("build of variant `{variant}` finished but `{}` is not a file in the build dir: check the target kind (its recipe expects this file) and the log: {}", .product.display(), .log.display())]
    ProductMissing {
        variant: String,
        product: PathBuf,
        log: PathBuf,
    },
}

impl BuildError {
    /// The last lines of the build log for [`BuildError::BuildFailed`] (empty for other errors).
    pub fn tail(&self) -> &str {
        match self {
            BuildError::BuildFailed { tail, .. } => tail,
            BuildError::PatchFailed { output, .. } => output,
            _ => "",
        }
    }

    /// The build log path, when this error has one.
    pub fn log(&self) -> Option<&std::path::Path> {
        match self {
            BuildError::BuildFailed { log, .. }
            | BuildError::ProductMissing { log, .. }
            | BuildError::Bootstrap { log, .. } => Some(log),
            _ => None,
        }
    }

    /// Attach the variant name to compiler errors (which `check_compiler` raises without one).
    pub fn for_variant(self, name: &str) -> Self {
        match self {
            BuildError::CompilerNotFound { compiler, .. } => BuildError::CompilerNotFound {
                compiler,
                variant: Some(name.to_string()),
            },
            BuildError::CompilerBroken {
                compiler, detail, ..
            } => BuildError::CompilerBroken {
                compiler,
                detail,
                variant: Some(name.to_string()),
            },
            other => other,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        BuildError::Io {
            context: context.into(),
            source,
        }
    }
}

fn variant_phrase(variant: &Option<String>) -> String {
    match variant {
        Some(v) => format!("variant `{v}`'s compiler"),
        None => "the variant's compiler".to_string(),
    }
}

/// A tool's output as its non-empty lines, trimmed: where its messages pick the telling one.
pub(crate) fn output_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

fn first_line(text: &str) -> String {
    let lines = output_lines(text);
    let failing = lines
        .iter()
        .find(|l| l.contains("FAILED") || l.contains("Reversed") || l.contains("can't find"));
    match failing.or(lines.last()) {
        Some(l) => l.to_string(),
        None => "no output".to_string(),
    }
}

/// The most telling line of a build log tail: the last compiler/configure `error:` line, else
/// the last line mentioning an error, else the last line (bakeoff's own `==>` lines skipped).
fn last_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("==>"))
        .collect();
    let pick = lines
        .iter()
        .rev()
        .find(|l| l.contains("error:"))
        .or_else(|| {
            lines
                .iter()
                .rev()
                .find(|l| l.to_ascii_lowercase().contains("error"))
        })
        .or(lines.last());
    pick.map_or_else(|| "no output".to_string(), |l| l.to_string())
}

/// Shorthand used throughout the crate.
pub type Result<T, E = BuildError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_not_found_names_variant() {
        let e = BuildError::CompilerNotFound {
            compiler: "gcc-99".into(),
            variant: None,
        }
        .for_variant("x");
        assert_eq!(
            e.to_string(),
            "compiler `gcc-99` not found on PATH: install it (e.g. apt-get install gcc-99) or fix variant `x`'s compiler"
        );
    }

    #[test]
    fn build_failed_display_is_one_line() {
        let e = BuildError::BuildFailed {
            variant: "v".into(),
            step: "make".into(),
            log: "/tmp/l".into(),
            tail: "a\nerror: boom\nmake: *** Error 1\n==> make failed\n\n".into(),
        };
        let s = e.to_string();
        assert!(!s.contains('\n'));
        assert!(s.contains("error: boom"), "{s}");
        assert!(e.tail().starts_with("a\nerror: boom"));
    }
}

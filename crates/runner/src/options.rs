//! Where things go: the folders an experiment uses, filled by the CLI from flags and
//! defaults. A leaf: every stage reads it, it uses nothing of the runner.

use std::path::PathBuf;

/// Where things go; the CLI fills it from flags and defaults.
#[derive(Debug, Clone)]
pub struct Options {
    /// The results folder; None = `<results_root>/<name>-<UTC time>`.
    pub out: Option<PathBuf>,
    pub results_root: PathBuf,
    pub cache_root: PathBuf,
    pub sandbox_root: PathBuf,
    /// Stop before any run when a variant could not be built or found (bisect: a commit
    /// that does not build is skipped, not measured alone).
    pub every_variant: bool,
}

//! Why an experiment did not finish. A leaf: every stage returns it, it uses nothing of
//! the runner.

use std::path::PathBuf;

/// Why an experiment did not finish; the CLI maps these to exit statuses.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad input found before anything ran (exit status 2).
    #[error("{0}")]
    BadInput(String),
    /// The experiment could not finish (exit status 1).
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C or SIGTERM; what finished is in the folder (exit status 1).
    #[error("interrupted; the runs that finished are in {}", .0.display())]
    Interrupted(PathBuf),
    /// A write to the results folder failed (a full disk, say): the experiment stopped
    /// at once. The folder keeps its last complete version; `results` holds every run
    /// measured, for the table.
    #[error("{message}")]
    Unwritable {
        message: String,
        results: Box<bakeoff_report::Results>,
    },
}

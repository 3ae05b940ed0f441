//! Command-line arguments (clap). Parsed here, turned into typed options, and never seen
//! by the engine.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// bakeoff: build each variant of a server, run it in a private sandbox, drive it with
/// standard workloads, and say with confidence intervals which variant is faster.
#[derive(Debug, Parser)]
#[command(name = "bakeoff", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an experiment: fetch the source, build every variant (cached), run the
    /// workloads in interleaved rounds, and write a results folder.
    ///
    /// Exit status: 0 when the experiment finished, 1 when it could not finish (no
    /// variant built, Ctrl-C), 2 for bad input (the message names file:line:col).
    Run(RunArgs),
    /// Check an experiment file without running anything (exit status 2 if it is bad).
    Check {
        /// The experiment file (TOML).
        experiment: PathBuf,
    },
    /// Re-render report.md from a results folder's results.json and print its table.
    Report {
        /// A results folder written by `bakeoff run`.
        dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The experiment file (TOML); see docs/experiment-file.md.
    pub experiment: PathBuf,
    /// Write results into DIR (must be empty or absent) instead of
    /// results/<name>-<UTC time>/.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Parent folder for new results folders.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// Build and source cache [default: $BAKEOFF_CACHE, $XDG_CACHE_HOME/bakeoff or
    /// ~/.cache/bakeoff].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Where sandboxes live while they run [default: a per-user runtime folder].
    #[arg(long, value_name = "DIR")]
    pub sandbox_dir: Option<PathBuf>,
    /// No progress bars; only the final table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Never colour the table.
    #[arg(long)]
    pub no_color: bool,
}

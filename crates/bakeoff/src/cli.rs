//! Command-line arguments (clap). Parsed here, turned into typed options, and never seen
//! by the engine.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// `--pairing` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum PairingArg {
    Auto,
    Paired,
    Unpaired,
}

/// `--fail-on` values. Only a `slower` answer counts: `inconclusive`, `client-bound` and
/// `machine-busy` are no answer, and fail nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A comparison came out slower.
    Slower,
    /// A comparison came out slower, or a variant returned different results or had
    /// memory errors.
    Any,
}

/// bakeoff: build each variant of a server, run it in a private sandbox, drive it with
/// standard workloads, and say with confidence intervals which variant is faster.
#[derive(Debug, Parser)]
#[command(name = "bakeoff", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Colour the tables: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Accept `[[host]] ssh_options` beyond the ones a benchmark needs (port, user, keys,
    /// known hosts, algorithms, timeouts, compression): ProxyCommand, LocalCommand,
    /// forwards, ..., which can run a command on this machine or open a port. An
    /// experiment file alone never can: files are shared and run by CI.
    #[arg(long, global = true)]
    pub allow_ssh_commands: bool,
    /// Let variants set machine-wide settings (`thp`, `defrag`, `sysctl`, `smt`) for
    /// their runs; needs root. bakeoff journals the values it finds before it changes
    /// them and puts them back after every run (and at its next start after a kill).
    #[arg(long, global = true)]
    pub allow_system_changes: bool,
}

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour output going to a terminal (`tty`), NO_COLOR honoured in auto.
    pub fn enabled(self, tty: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an experiment: fetch the source, build every variant (cached), run the
    /// workloads in interleaved rounds, and write a results folder.
    ///
    /// The finished experiment (or an interrupted one, marked so) is recorded in the
    /// history store (see `bakeoff history`); a store that cannot be written is a
    /// warning, never a failed run.
    ///
    /// Exit status: 0 when the experiment finished, 1 when it could not finish (no
    /// variant built, or the results folder could not be written), 2 for bad input (the
    /// message names file:line:col), 3 when `--fail-on` was met, 4 when it finished but a
    /// variant has a cell without one valid run, 5 when it finished but no comparison
    /// could be made (the baseline, or every variant compared with it, failed to build,
    /// fetch, start or verify; the output's first lines say which and why), 130 on Ctrl-C
    /// or SIGTERM (what finished is in the folder). A failed variant among working ones
    /// keeps the status and leads the output; `--fail-on` counts it as a failure.
    Run(RunArgs),
    /// Check that every variant returns the baseline's results, without measuring.
    ///
    /// Builds the variants (cached), prepares their data, then runs the query set
    /// ([verify] queries, or else the replay workloads' statements) against each
    /// variant's server and compares every result's hash with the baseline's. A results
    /// folder holds the verdicts (results.json `verification`, report.md).
    ///
    /// Exit status: 0 when every variant returned the same results, 1 when one differed
    /// (the query, both hashes and the first differing rows are printed) or could not
    /// run, 2 for bad input. The history is not written. `--store` or `--no-history` is
    /// accepted and ignored (not both: they conflict, as for run).
    Verify(RunArgs),
    /// Check an experiment file, running no program it names (exit status 2 if it is bad).
    ///
    /// Compilers are found on PATH, not run; a `[[host]]` is reached with ssh and the
    /// command line is printed.
    ///
    /// With `--noise`, also measure what the budget buys before a long experiment: the
    /// baseline variant alone (built if needed, as `run` does) runs 6 times on the plan's
    /// first point with the plan's windows, each run in a fresh sandbox, and its run-to-run
    /// CV gives the forecast the experiment would make per comparison (the half-width the
    /// budget reaches, the rounds and time the precision target needs). Exit status 0
    /// when it measured, 1 when it could not, 2 for bad input.
    Check {
        /// Override a key before validation, e.g. --set plan.repetitions=1 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Run the baseline alone a few times and print the forecast per comparison.
        #[arg(long)]
        noise: bool,
        /// With --noise: the build cache (default: ~/.cache/bakeoff).
        #[arg(long, value_name = "DIR", requires = "noise")]
        cache: Option<PathBuf>,
        /// With --noise: where the sandboxes go (default: the plan's sandbox_dir, else
        /// the system's default).
        #[arg(long, value_name = "DIR", requires = "noise")]
        sandbox_dir: Option<PathBuf>,
        /// The experiment file (TOML).
        experiment: PathBuf,
    },
    /// Recompute the statistics from a results folder's saved runs, re-render its reports
    /// (report.md, report.html, results.csv, bench.txt) and print its table.
    Report {
        /// A results folder written by `bakeoff run`.
        dir: PathBuf,
        /// Re-decide every comparison from the saved runs with this pairing (auto, paired
        /// or unpaired) and print the table; writes nothing (unless with --baseline).
        #[arg(long, value_name = "HOW")]
        pairing: Option<PairingArg>,
        /// Re-decide every comparison against this variant instead of the plan's baseline
        /// (a three-way table from one run), print the table and write the reports beside
        /// the folder's own as report.baseline-NAME.md and so on (or, with --out, under
        /// their usual names into that folder).
        #[arg(long, value_name = "NAME")]
        baseline: Option<String>,
        /// With --baseline: the folder to write the re-decided reports into.
        #[arg(long, value_name = "DIR", requires = "baseline")]
        out: Option<PathBuf>,
    },
    /// List the experiments recorded in the history, newest first.
    ///
    /// `bakeoff run` records every experiment that completes, and every one that is
    /// interrupted (marked so), in an SQLite store: $BAKEOFF_STORE, else
    /// $XDG_DATA_HOME/bakeoff/history.sqlite, else ~/.local/share/bakeoff/history.sqlite.
    /// The store only indexes results folders; each folder stays readable on its own.
    ///
    /// One row per experiment: its id (for `bakeoff compare`), start time (UTC), name,
    /// status, variants, number of cells, the baseline's first cell median ops/s, and
    /// the results folder.
    History(HistoryArgs),
    /// Compare two saved experiments cell by cell: B against A.
    ///
    /// A and B are results folders, or history ids (an integer that is not an existing
    /// folder is an id; see `bakeoff history`). Cells are matched by workload,
    /// connections and variant; for each pair B is compared with A by the statistics a
    /// run uses (ratio of medians B/A with a Hodges-Lehmann 95% CI, Mann-Whitney p, and
    /// a verdict that is "same" unless p < 0.05 and the CI excludes 1). Cells on one side
    /// only are listed as unmatched. The comparison is written as a results folder
    /// (variants named A:<variant> and B:<variant>) with report.md and results.json.
    ///
    /// Example: `bakeoff compare 12 14`, or `bakeoff compare results/a results/b`.
    ///
    /// Exit status: 0 when compared, 2 for bad input (a missing folder, an unknown id,
    /// an unreadable results.json, no cell in common).
    Compare(CompareArgs),
    /// Show how an experiment's figures moved over its recorded runs.
    ///
    /// One row per recorded run of experiment NAME, oldest first, with each matching
    /// cell's median ops/s and 95% CI, then a sparkline per cell and the change from the
    /// first run to the last. Without --variant and --workload every cell is shown.
    ///
    /// Exit status 2 when no experiment has that name (the known names are listed) or no
    /// cell matches.
    Trend(TrendArgs),
    /// Make a static site over the history: plain files in DIR that open from disk or
    /// any static host.
    ///
    /// index.html lists every experiment (name, target, variants, when, machine, status,
    /// answer), newest first with the newest answer on top, filterable and sortable in
    /// the page; names/ has a page per experiment name with each cell's median and 95%
    /// CI per run and the change points `bakeoff trend` finds; runs/ a page per run with
    /// its report.html copied in, with links to its compare pages; compare/ what `bakeoff
    /// compare` prints, for every pair of a name's runs where it has at most 30, else
    /// each run against the run before it, the first and the newest. A second call rewrites only what changed
    /// (DIR/.bakeoff-site.json records what was written and from what).
    ///
    /// Exit status: 0 when made, 2 for bad input (no store, a folder holding other
    /// files, a bad --since).
    Site(SiteArgs),
    /// Write experiments' results folders into one bundle (a gzip-compressed tar) to
    /// carry them to another machine's history: the folders, and a manifest with each
    /// file's size and SHA-256, bakeoff's version, the bundle's schema and each
    /// experiment's machine.
    ///
    /// Exit status: 0 when written, 2 for bad input (not a results folder, a link inside
    /// one, an existing -o file).
    Export(ExportArgs),
    /// Add a bundle's experiments to this history: every file checked against the
    /// bundle's manifest before anything is written, the folders copied under
    /// --results-dir and recorded in the store; an experiment already there (same id
    /// and checksum) is skipped.
    ///
    /// Exit status: 0 when imported, 2 for a bundle that fails a check (a changed byte,
    /// a path leaving the folder, a link, a file over its size, an unknown newer
    /// schema), with the file named; nothing of it is written then.
    Import(ImportArgs),
    /// Find the first commit where a figure moved: `--good` and `--bad` revisions of the
    /// experiment's git source.
    ///
    /// Every step is an experiment of its own, run with the experiment's statistics and
    /// budget: the first build variant (its compiler, flags and patches) at the good
    /// revision against the same build at the step's commit, on one cell (--cell, default
    /// the first workload at its first connection count). First the bad revision against
    /// the good one fixes the direction (its verdict must be slower or faster); then the
    /// commits between them (`git rev-list --ancestry-path`) are halved until one is
    /// left: the first commit whose figure moved that way. A commit moved when its ratio's
    /// 95% CI lies past the ratio halfway (geometrically) between good and bad, and did
    /// not when it lies before it. A commit that does not build is skipped, as `git
    /// bisect skip` does. A step whose CI still straddles the halfway point after its
    /// rounds (the experiment's budget) ends the search, naming the range that is left
    /// rather than guessing. Each step's results folder,
    /// and bisect.md and bisect.json with the evidence per step (ratio, CI, verdict), go
    /// into results/bisect-<name>-<UTC time>/; every step is recorded in the history.
    ///
    /// Example: `bakeoff bisect exp.toml --good v1.6.17 --bad v1.6.18 --cell kv:16`.
    ///
    /// Exit status: 0 when a commit is named, 1 when the search ends without one (no
    /// change between good and bad, an inconclusive step, or only unbuildable commits
    /// left), 2 for bad input, 130 when interrupted.
    Bisect(BisectArgs),
    /// Search the `[tune]` space for the fastest build of the server on the
    /// experiment's first measured workload, within `[plan] budget`.
    ///
    /// Every combination of the `[tune]` lists (compiler, opt, march, lto, pgo, bolt,
    /// flags) is a candidate; impossible ones (thin LTO with gcc, BOLT or PGO where the
    /// target or this machine has none, PGO/BOLT without `train`) are left out and listed.
    /// The candidates race in stages, each an experiment of its own with the file's
    /// statistics: all built first (cached), verified, then measured against the baseline
    /// (`[tune] baseline`) in interleaved rounds; after each stage the candidates decided
    /// below the leader are dropped. The search ends when the leader is decided against
    /// the baseline and the runner-up, or the budget is spent. The answer: a ranked
    /// table, the winning recipe as a `[[variant]]` block, and what each choice is worth
    /// (main effects with intervals). With PGO or BOLT in the space the winner is also
    /// measured on the workloads it was not trained on. Results go into
    /// results/tune-<name>-<UTC time>/ (each stage in stage-N/) and the history.
    ///
    /// Exit status: 0 with a winner, 1 without one, 2 for bad input, 130 when interrupted.
    Tune(RunArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    ///
    /// scripts/setup.sh installs bash's under /usr/local/share/bash-completion/completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout; scripts/setup.sh installs it as bakeoff(1).
    Man,
    /// Serve bakeoff on another host: started by bakeoff itself over ssh, it speaks a
    /// line-delimited JSON protocol on stdin and stdout, and stops every server it
    /// started when stdin closes.
    #[command(hide = true)]
    Agent {
        /// Where it keeps copied binaries, sandboxes and logs.
        #[arg(long, value_name = "DIR")]
        root: PathBuf,
        /// The bakeoff run it serves (its SQL data outlives a lost agent of that run).
        #[arg(long, value_name = "ID", default_value = "solo")]
        run: String,
    },
}

/// Where the history store is.
#[derive(Debug, Args)]
pub struct StoreArg {
    /// The history store (an SQLite file) [default: $BAKEOFF_STORE,
    /// $XDG_DATA_HOME/bakeoff/history.sqlite or ~/.local/share/bakeoff/history.sqlite].
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Only experiments with this name.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Show at most N experiments (0 = all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// Print the records as JSON (an array, newest first) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference: a results folder or a history id.
    #[arg(value_name = "A")]
    pub a: String,
    /// The one judged against A: a results folder or a history id.
    #[arg(value_name = "B")]
    pub b: String,
    #[command(flatten)]
    pub store: StoreArg,
    /// Write the comparison into DIR (must be empty or absent) instead of
    /// results/compare-<A name>-vs-<B name>-<UTC time>/.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Parent folder for new comparison folders.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// Never colour the table (same as --color never).
    #[arg(long)]
    pub no_color: bool,
    /// Print the comparison as JSON (the results.json it writes) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The experiment's name (as in its file and in `bakeoff history`).
    pub name: String,
    /// Only this variant's cells.
    #[arg(long, value_name = "V")]
    pub variant: Option<String>,
    /// Only this workload's cells.
    #[arg(long, value_name = "W")]
    pub workload: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
    /// Print the trend as JSON (cells followed, and per record its figures).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The site's folder (new, empty, or one `bakeoff site` made).
    pub dir: PathBuf,
    #[command(flatten)]
    pub store: StoreArg,
    /// Only experiments started at or after this UTC date (YYYY-MM-DD or
    /// YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only experiments of this name.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Results folders (or history ids) to put in the bundle.
    #[arg(value_name = "RESULTS", required = true)]
    pub results: Vec<String>,
    /// The bundle to write (must not exist).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The bundle (`bakeoff export`'s file).
    pub bundle: PathBuf,
    /// Where the imported results folders go.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Args)]
pub struct BisectArgs {
    /// A revision whose figure is the reference (commit, tag or branch).
    #[arg(long, value_name = "REV")]
    pub good: String,
    /// A later revision whose figure moved.
    #[arg(long, value_name = "REV")]
    pub bad: String,
    /// The cell whose figure decides: WORKLOAD (its name) or WORKLOAD:CONNECTIONS.
    #[arg(long, value_name = "WORKLOAD[:CONNS]")]
    pub cell: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
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
    /// Where sandboxes and SQL data live while they run [default: `[plan] sandbox_dir`,
    /// else /var/tmp/bakeoff-$UID, on disk].
    #[arg(long, value_name = "DIR")]
    pub sandbox_dir: Option<PathBuf>,
    /// No progress (neither bars nor, without a terminal, the plain per-run lines); only
    /// notices, failures and the final table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Never colour the table (same as --color never).
    #[arg(long)]
    pub no_color: bool,
    #[command(flatten)]
    pub store: StoreArg,
    /// Do not record this experiment in the history.
    #[arg(long, conflicts_with = "store")]
    pub no_history: bool,
    /// Override a key of the experiment before validation (repeatable): a dotted path and
    /// a TOML value, e.g. --set plan.repetitions=1 --set plan.budget=2m --set
    /// workload.0.connections=[1,16]. The results folder's experiment shows them.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Serve the running experiment's figures in the OpenMetrics text format on ADDR
    /// (a loopback address and port, e.g. 127.0.0.1:9464), for Prometheus or Grafana:
    /// runs done, the current run's throughput, the last run's latency, the budget left.
    /// The endpoint ends with the run. `bakeoff run` only.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Exit with status 3 when a comparison is slower (`slower`), or also when a variant
    /// returned different results or had memory errors (`any`). For CI.
    #[arg(long, value_name = "WHAT")]
    pub fail_on: Option<FailOn>,
}

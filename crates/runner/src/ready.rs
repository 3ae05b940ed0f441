//! What the stages hand each other: the experiment's workloads and the variants ready to
//! run. A leaf: it uses nothing of the runner, so every stage (builds, prepared data,
//! verification, runs, other hosts) can name them without reaching the others.

use bakeoff_workloads::Workload;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The experiment's workloads, each behind the workloads crate's seam.
pub type Workloads = Vec<Box<dyn Workload>>;

/// A variant that can run: its binary, full server arguments and (SQL) server options.
pub struct ReadyVariant {
    pub name: String,
    pub binary: PathBuf,
    pub args: Vec<String>,
    /// Server options (SQL targets), merged and with bakeoff's defaults.
    pub options: BTreeMap<String, String>,
    /// MariaDB storage engine for this variant's tables, over the workload's.
    pub engine: Option<String>,
    /// Index into `results.variants`.
    pub record: usize,
    /// Sanitizers the build carries (their reports are read from the server's log).
    pub sanitize: Vec<bakeoff_plan::Sanitizer>,
    /// A checker the server runs under.
    pub run_under: Option<bakeoff_plan::RunUnder>,
    /// Its build's configure arguments (some change the server's file format: data
    /// loaded by a variant without the same ones is not shared with it).
    pub configure_args: Vec<String>,
    /// Its binaries, one per code layout (`[plan] layouts`); the first is `binary`.
    pub layouts: Vec<LayoutBinary>,
    /// Environment its server needs (a distribution's bundled libraries' path).
    pub env: Vec<(String, String)>,
}

/// One binary of a variant: a code layout of a build (its linker seed), or the one
/// binary of a plain build or an installed server.
#[derive(Debug, Clone)]
pub struct LayoutBinary {
    pub seed: Option<u64>,
    pub binary: PathBuf,
    pub sha256: String,
}

impl ReadyVariant {
    /// The layout round `round` runs (rounds rotate through a build's layouts; a variant
    /// of one binary always runs it) and its binary.
    pub fn layout_for(&self, round: usize) -> (usize, &std::path::Path) {
        match self.layouts.len() {
            0 | 1 => (0, &self.binary),
            n => (round % n, &self.layouts[round % n].binary),
        }
    }
}

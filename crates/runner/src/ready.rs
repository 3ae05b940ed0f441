//! What the stages hand each other: the experiment's workloads and the variants ready to
//! run. A leaf: it uses nothing of the runner, so every stage (builds, prepared data,
//! verification, runs, other hosts) can name them without reaching the others.

use bakeoff_plan::TargetKind;
use bakeoff_workloads::Workload;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The experiment's workloads, each behind the workloads crate's seam: made once per kind
/// of server the variants are (a kv load speaks memcached's protocol to one and RESP to
/// another), in the same order for every kind. As a slice it is the first kind's list:
/// names and cells are the same for every kind; a run asks [`Workloads::of_kind`].
#[derive(Default)]
pub struct Workloads {
    lists: Vec<(TargetKind, Vec<Box<dyn Workload>>)>,
}

impl Workloads {
    /// One kind's workloads.
    pub fn new(kind: TargetKind, list: Vec<Box<dyn Workload>>) -> Workloads {
        Workloads {
            lists: vec![(kind, list)],
        }
    }

    /// Adds another kind's (the same workloads, in the same order).
    pub fn add(&mut self, kind: TargetKind, list: Vec<Box<dyn Workload>>) {
        self.lists.push((kind, list));
    }

    /// Workload `i` as made for a server of `kind` (the first kind's where none was made
    /// for it).
    pub fn of_kind(&self, kind: TargetKind, i: usize) -> &dyn Workload {
        let list = self
            .lists
            .iter()
            .find(|(k, _)| *k == kind)
            .or(self.lists.first())
            .map(|(_, l)| l)
            .expect("workloads for at least one kind");
        &*list[i]
    }

    /// Every workload of every kind's list.
    pub fn every(&self) -> impl Iterator<Item = &dyn Workload> {
        self.lists.iter().flat_map(|(_, l)| l.iter().map(|w| &**w))
    }

    /// Keeps the workloads `keep` picks (by the first kind's), in every kind's list.
    pub fn retain(&mut self, keep: impl Fn(&dyn Workload) -> bool) {
        let Some((_, first)) = self.lists.first() else {
            return;
        };
        let kept: Vec<bool> = first.iter().map(|w| keep(&**w)).collect();
        for (_, list) in &mut self.lists {
            let mut i = 0;
            list.retain(|_| {
                let k = kept.get(i).copied().unwrap_or(true);
                i += 1;
                k
            });
        }
    }
}

impl std::ops::Deref for Workloads {
    type Target = [Box<dyn Workload>];
    fn deref(&self) -> &Self::Target {
        self.lists.first().map_or(&[], |(_, l)| l.as_slice())
    }
}

/// A variant that can run: its binary, full server arguments and (SQL) server options.
pub struct ReadyVariant {
    pub name: String,
    /// The kind of server it is (`Experiment::kind_of`).
    pub kind: TargetKind,
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
    /// What it asks of the machine and its server's process (`preload`, `thp`, `cpus`, ...).
    pub system: crate::system::SystemAsk,
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

//! bakeoff-plan: the experiment file. Types that mirror the TOML ([`Experiment`]), reading
//! the file as a document whose keys errors point into (`document.rs`: [`load`],
//! [`Loaded`], `file:line:col` errors), and the checks that run before anything else
//! does. Nothing here touches the network, a compiler or a server.

pub mod derive;
pub mod derived;
mod dist;
mod document;
mod experiment;
mod host;
mod located;
pub mod ssh_options;
pub mod system;
pub mod tune;
mod validate;
mod workload;

pub use dist::{Dist, Packages};
pub use document::{load, load_with, parse, read_input, MAX_INPUT_BYTES};
pub use experiment::*;
pub use experiment::{fitting_targets, KindKeys, KindSpec, Kinds, Loaded};
pub use host::Host;
pub use located::{Check, Key, KeyPath, PlanError};
pub use ssh_options::allow_ssh_commands;
pub use system::{allow_system_changes, system_changes_allowed, SysctlValue};
pub use tune::Tune;
pub use validate::range;
pub use workload::{article, fields_of};

use bakeoff_sandbox::ConnectionLimit;
use std::time::Duration;

/// The most connections one workload cell may open.
pub const MAX_CONNECTIONS: usize = 1024;

/// How the measured phase of each run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeasureFor {
    Time(Duration),
    Ops(u64),
}

/// The budget when an experiment gives neither `repetitions` nor `budget`.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(300);

/// The precision target when none is given: +-1% on every comparison's ratio.
pub const DEFAULT_PRECISION: f64 = 0.01;

/// Rounds before precision may stop a point, unless `min_repetitions` says otherwise: the
/// fewest pairs with which the signed-rank test can reach p < 0.05.
pub const DEFAULT_MIN_ROUNDS: usize = 6;
// `bakeoff tune`'s study plans its stages for the same count (it sits below the plan).
const _: () = assert!(DEFAULT_MIN_ROUNDS == bakeoff_tune::study::MIN_ROUNDS);

/// What ends the measured rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stopping {
    /// Most rounds (`repetitions`); None: as many as the budget allows.
    pub max_rounds: Option<usize>,
    /// Wall time for the rounds; None: no time limit (`repetitions` alone).
    pub budget: Option<Duration>,
    /// Stop a point once every comparison's CI half-width is within this; None: never
    /// early (`repetitions` alone, without `precision`).
    pub precision: Option<f64>,
    /// Rounds before `precision` may stop a point.
    pub min_rounds: usize,
}

impl Plan {
    /// The stopping rule the keys describe: `repetitions` alone is a fixed count (stopped
    /// early only if `precision` is also given); `budget` runs rounds until precision
    /// (default +-1%) or time runs out, capped by `repetitions` if given; neither means
    /// the default budget.
    pub fn stopping(&self) -> Stopping {
        let budget = self
            .budget
            .as_deref()
            .and_then(|b| parse_duration(b).ok())
            .or(self.repetitions.is_none().then_some(DEFAULT_BUDGET));
        let precision = match (self.precision, budget) {
            (Some(p), _) => Some(p),
            (None, Some(_)) => Some(DEFAULT_PRECISION),
            (None, None) => None,
        };
        Stopping {
            max_rounds: self.repetitions,
            budget,
            precision,
            // Over layouts, every layout slot needs rounds of its own.
            min_rounds: self
                .min_repetitions
                .unwrap_or(DEFAULT_MIN_ROUNDS)
                .max(if self.layouts > 1 {
                    2 * self.layouts
                } else {
                    0
                })
                .min(self.repetitions.unwrap_or(usize::MAX)),
        }
    }

    /// The target half-width comparisons are judged against.
    pub fn precision_target(&self) -> f64 {
        self.precision.unwrap_or(DEFAULT_PRECISION)
    }

    /// The equivalence band's half-width: `equivalence`, else the precision target.
    pub fn equivalence_band(&self) -> f64 {
        self.equivalence.unwrap_or_else(|| self.precision_target())
    }
}

/// Default warmup and measured window of a key-value experiment, chosen from measurements
/// on a noisy 2-core guest (docs/experiment-file.md, bench/RESULTS.md): past 2 s the
/// within-run noise of the mean is small next to the run-to-run noise, so a longer window
/// buys less precision per minute than another run does.
pub const KV_WINDOWS: (Duration, Duration) = (Duration::from_millis(500), Duration::from_secs(2));
/// Defaults for SQL workloads, whose runs start on a copied data dir and whose caches take
/// longer to warm.
pub const SQL_WINDOWS: (Duration, Duration) = (Duration::from_secs(2), Duration::from_secs(10));

impl Experiment {
    /// The default windows for this experiment's workloads: the longest any measured
    /// workload's kind asks for (the key-value ones when every workload is key-value).
    fn default_windows(&self) -> (Duration, Duration) {
        self.workloads
            .iter()
            .filter(|w| !w.train_only)
            .map(|w| w.keys.windows())
            .max()
            .unwrap_or(SQL_WINDOWS)
    }

    /// Runs in one full round: every (workload, connections) point times every variant (a
    /// tpcc warehouse sweep adds more; this is the plain count).
    pub fn runs_per_round(&self) -> usize {
        let points: usize = self
            .workloads
            .iter()
            .filter(|w| !w.train_only)
            .map(|w| w.connections_swept().len())
            .sum();
        points * self.variants_run()
    }

    /// What one run should take before any has run: its windows plus starting and stopping
    /// the sandbox (measured about 0.5 s for memcached; 1 s assumed for SQL servers, which
    /// start on a copied data dir). An `ops` window is guessed at 5 s.
    pub fn run_seconds_guess(&self) -> f64 {
        let measure = match self.measure() {
            MeasureFor::Time(d) => d.as_secs_f64(),
            MeasureFor::Ops(_) => 5.0,
        };
        // The slowest kind's start and stop: every round runs each variant.
        let start_stop = self
            .variant_kinds()
            .into_iter()
            .map(|k| bakeoff_sandbox::target_for(k).start_stop_guess_s())
            .fold(0.0, f64::max);
        self.warmup().as_secs_f64() + measure + start_stop
    }

    /// How the rounds will end, in one line, with what a budget buys at the guessed pace and
    /// a warning when that is fewer rounds than a comparison needs to decide.
    pub fn stopping_summary(&self) -> String {
        let stop = self.plan.stopping();
        let round = self.run_seconds_guess() * self.runs_per_round() as f64;
        let precision = stop
            .precision
            .map(|p| {
                format!(
                    ", stopping a point once its comparisons are within ±{:.1}%",
                    p * 100.0
                )
            })
            .unwrap_or_default();
        let Some(budget) = stop.budget else {
            let n = stop.max_rounds.unwrap_or(0);
            return format!(
                "{n} rounds of {} runs, about {:.0} s{precision}",
                self.runs_per_round(),
                n as f64 * round
            );
        };
        let fit = (budget.as_secs_f64() / round.max(0.001)).floor() as usize;
        let rounds = stop.max_rounds.map_or(fit, |n| n.min(fit));
        let mut s = format!(
            "budget {}: about {rounds} rounds of {} runs at {:.1} s a run{precision}",
            humantime::format_duration(budget),
            self.runs_per_round(),
            self.run_seconds_guess()
        );
        if rounds < DEFAULT_MIN_ROUNDS && self.variants_run() > 1 {
            s.push_str(&format!(
                "; warning: fewer than the {DEFAULT_MIN_ROUNDS} rounds a paired comparison needs to decide: raise the budget or shorten the runs"
            ));
        }
        let k = self.plan.layouts;
        if k > 1 {
            s.push_str(&format!(
                "; {k} code layouts per build variant, round r running layout r mod {k}, each start's environment padded to a random size"
            ));
            if rounds < 2 * k {
                s.push_str(&format!(
                    "; warning: fewer than 2 rounds per layout ({}): raise the budget",
                    2 * k
                ));
            }
        }
        s
    }

    /// The warmup phase (validated at load time).
    pub fn warmup(&self) -> Duration {
        self.plan
            .warmup
            .as_deref()
            .and_then(|w| parse_duration(w).ok())
            .unwrap_or(self.default_windows().0)
    }

    /// The measured phase: `ops` if given, else `duration`, else the default window. In
    /// `mode = "both"`, `ops` belongs to the instruction runs and this is the wall-clock
    /// runs' window (`duration`, else the default).
    pub fn measure(&self) -> MeasureFor {
        let ops = self.plan.ops.filter(|_| self.plan.mode != Mode::Both);
        match (ops, &self.plan.duration) {
            (Some(n), _) => MeasureFor::Ops(n),
            (None, Some(d)) => {
                MeasureFor::Time(parse_duration(d).unwrap_or(self.default_windows().1))
            }
            (None, None) => MeasureFor::Time(self.default_windows().1),
        }
    }

    /// The operations an instruction-count run measures (`[plan] ops`), in the modes that
    /// count instructions; None otherwise.
    pub fn instruction_ops(&self) -> Option<u64> {
        self.plan
            .ops
            .filter(|_| self.plan.mode.counts_instructions())
    }
}

/// Connections a server keeps beyond the largest sweep point when the experiment does not
/// set its cap (PostgreSQL reserves 3 for superusers; memcached counts its listening
/// sockets; bakeoff's own probe).
pub const SPARE_CONNECTIONS: usize = 16;

impl Experiment {
    /// The largest connection count any workload asks for (a tpcc workload with
    /// `think = "spec"` opens 10 per warehouse).
    pub fn max_connections_swept(&self) -> usize {
        self.workloads
            .iter()
            .flat_map(Workload::connections_swept)
            .max()
            .unwrap_or(1)
    }

    /// A variant's server options: the target's, then the variant's over them, then the
    /// server's connection cap (`max_connections`, Redis's `maxclients`) sized for the
    /// sweep when neither the options nor the arguments set it (not for SQLite, whose
    /// options are PRAGMAs). Empty for memcached.
    pub fn server_options(&self, v: &Variant) -> std::collections::BTreeMap<String, String> {
        let mut out: std::collections::BTreeMap<String, String> = self
            .target_options_for(v)
            .into_iter()
            .flatten()
            .chain(v.options.iter())
            .map(|(k, val)| (k.clone(), val.to_string()))
            .collect();
        let limit = self.cap_to_set(self.kind_of(v));
        if let Some(ConnectionLimit::Option(name)) = limit {
            let set = out.keys().any(|k| k.eq_ignore_ascii_case(name))
                || ConnectionLimit::Option(name)
                    .in_args(&self.raw_args(v))
                    .is_some();
            if !set {
                out.insert(
                    name.into(),
                    self.connection_cap_of(self.kind_of(v)).to_string(),
                );
            }
        }
        out
    }

    /// A variant's server arguments: the target's, then the variant's, then the server's
    /// connection cap sized for the sweep when it is a flag (memcached's `-c`) the
    /// arguments leave out.
    pub fn server_args(&self, v: &Variant) -> Vec<String> {
        let mut args = self.raw_args(v);
        let kind = self.kind_of(v);
        if let Some(l @ ConnectionLimit::Flag { short, .. }) = self.cap_to_set(kind) {
            if l.in_args(&args).is_none() {
                args.extend([short.to_string(), self.connection_cap_of(kind).to_string()]);
            }
        }
        args
    }

    /// The server's connection cap when bakeoff must size it: it has one, and its default
    /// (if it keeps one) is below what the sweep needs.
    fn cap_to_set(&self, kind: TargetKind) -> Option<ConnectionLimit> {
        let target = bakeoff_sandbox::target_for(kind);
        let limit = target.connection_limit()?;
        let needed = target
            .connection_default()
            .is_none_or(|d| self.connection_cap_of(kind) > d);
        needed.then_some(limit)
    }

    fn raw_args(&self, v: &Variant) -> Vec<String> {
        self.target_args_for(v)
            .iter()
            .chain(&v.args)
            .cloned()
            .collect()
    }

    /// The connection cap bakeoff gives a server when the experiment leaves it out: the
    /// sweep's largest point and some to spare.
    pub fn connection_cap(&self) -> usize {
        self.connection_cap_of(self.target.kind)
    }

    /// [`Experiment::connection_cap`] for a server of `kind` (a variant's own kind).
    pub fn connection_cap_of(&self, kind: TargetKind) -> usize {
        let target = bakeoff_sandbox::target_for(kind);
        self.max_connections_swept()
            + target.reserved_connections()
            + target.connection_headroom()
            + SPARE_CONNECTIONS
    }

    /// The baseline variant's name: `plan.baseline`, else the first variant.
    pub fn baseline(&self) -> &str {
        self.plan
            .baseline
            .as_deref()
            .or(self.variants.first().map(|v| v.name.as_str()))
            .unwrap_or("")
    }

    /// With `[plan] aa`, the name of the A/A variant: the baseline's name with
    /// [`AA_SUFFIX`] (the baseline's name cut to make room when it is long). None without
    /// `aa`. Validation refuses a file whose own variants already use that name or its
    /// file name.
    pub fn aa_variant(&self) -> Option<String> {
        if !self.plan.aa {
            return None;
        }
        let room = bakeoff_os::name::MAX_NAME_CHARS - AA_SUFFIX.chars().count();
        let base: String = self.baseline().chars().take(room).collect();
        Some(format!("{}{AA_SUFFIX}", base.trim_end()))
    }

    /// The variant `name` stands for: the baseline for the A/A check's second sandbox of
    /// it, else `name` itself.
    pub fn standing_for<'a>(&'a self, name: &'a str) -> &'a str {
        match self.aa_variant() {
            Some(aa) if aa == name => self.baseline(),
            _ => name,
        }
    }

    /// What variant `name`'s runs read of the server's own statistics (the A/A variant:
    /// its baseline's): its own `server_stats`, else `[plan] server_stats`.
    pub fn server_stats_of(&self, name: &str) -> bakeoff_sandbox::stats::StatsLevel {
        let name = self.standing_for(name);
        self.variants
            .iter()
            .find(|v| v.name == name)
            .and_then(|v| v.server_stats)
            .unwrap_or(self.plan.server_stats)
    }

    /// The `[[host]]` that serves variant `name` (the A/A variant: its baseline's): its
    /// own `host`, else `[target] host`; None on this machine.
    pub fn server_host(&self, name: &str) -> Option<&str> {
        let name = self.standing_for(name);
        self.variants
            .iter()
            .find(|v| v.name == name)
            .and_then(|v| v.host.as_deref())
            .or(self.target.host.as_deref())
    }

    /// The `[[host]]`s that drive variant `name`'s load of `workload` (a display name):
    /// the variant's `clients`, else the workload's, else the variant's own `host`.
    /// Empty: from this machine.
    pub fn load_hosts(&self, name: &str, workload: &str) -> Vec<String> {
        let name = match self.aa_variant() {
            Some(aa) if aa == name => self.baseline().to_string(),
            _ => name.to_string(),
        };
        let v = self.variants.iter().find(|v| v.name == name);
        if let Some(v) = v.filter(|v| !v.clients.is_empty()) {
            return v.clients.clone();
        }
        let w = self
            .workloads
            .iter()
            .find(|w| !w.clients.is_empty() && !w.train_only && w.display_name() == workload);
        if let Some(w) = w {
            return w.clients.clone();
        }
        v.and_then(|v| v.host.clone()).into_iter().collect()
    }

    /// Whether some variant names a `host` of its own (machines as variants).
    pub fn hosts_as_variants(&self) -> bool {
        self.variants.iter().any(|v| v.host.is_some())
    }

    /// Variants that run in every round: the file's, plus the A/A variant with `aa`.
    pub fn variants_run(&self) -> usize {
        self.variants.len() + usize::from(self.plan.aa)
    }
}

/// What `[plan] aa` adds to the baseline's name to name the A/A variant.
pub const AA_SUFFIX: &str = "~aa";

/// Parses "2s", "500ms", "1m 30s", or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let too_long = || format!("{s:?} is longer than any duration bakeoff takes (at most 7d)");
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            if secs > MAX_DURATION.as_secs_f64() {
                return Err(too_long());
            }
            return Ok(Duration::from_secs_f64(secs));
        }
    }
    let d = humantime::parse_duration(t)
        .map_err(|e| format!("{s:?} is not a duration ({e}); write e.g. \"10s\" or \"500ms\""))?;
    if d > MAX_DURATION {
        return Err(too_long());
    }
    Ok(d)
}

/// The longest duration any key takes (a budget of a week).
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 86_400);

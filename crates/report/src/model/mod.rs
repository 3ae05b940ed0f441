//! results.json: the contract between a run and everything that reads it later (the
//! exporters here, `bakeoff report`, other tools). Keys are kept stable; new ones are added,
//! never renamed. Schema id: [`SCHEMA`].
//!
//! One file per thing described: `plan.rs` (experiment, plan, source), `host.rs` (this
//! machine and the others), `variant.rs` (what each variant is), `verification.rs` (result
//! equivalence, A/A), `run.rs` (one run), `probes.rs` (what the probes saw of a run),
//! `cell.rs` (a cell's runs and summaries), `capacity.rs`, `comparison.rs` (ratios,
//! verdicts, the headline), `history.rs` (`bakeoff compare`'s), `tune.rs`; this file holds
//! [`Results`], which ties them together, and how results.json is read (`json_problem`).
//! Every item is re-exported here, so `model::X` names it wherever it lives. Each kind's
//! own figures are JSON on a run or a cell (`crate::figures`), never a record here.

mod capacity;
mod cell;
mod comparison;
mod history;
mod host;
mod plan;
mod probes;
mod run;
mod tune;
mod variant;
mod verification;

pub use capacity::{CapacityRecord, CapacitySearch, CapacityTrial};
pub use cell::{Cell, LayoutSpreadRecord, ServerStatCell, StatementCell};
pub(crate) use comparison::{comp_key, CompKey};
pub use comparison::{
    headline, ComparisonRecord, Forecast, Pairing, RatioRecord, RoundRatio, ServerChange,
    StatementChange, Verdict, CAPACITY, INSTRUCTIONS, MAX_INSTRUCTION_RUNS, THROUGHPUT,
};
pub use history::{HistoryChange, HistoryPoint, HistoryRecord};
pub use host::{Cache, ClientRecord, CpuPlacement, Disk, Host, HostRecord, Machine, NumaNode};
pub use plan::{ExperimentRecord, PlanRecord, SourceRecord};
pub use probes::{
    CountersRecord, CpuSample, FnDeltaRecord, FnInstructions, FnShareRecord, HotLineRecord,
    InstructionsRecord, LineDeltaRecord, ProfileRecord, SplitRecord, SystemRecord,
};
pub use run::{
    KindRecord, Latency, MemoryRecord, OtherProcess, Run, StatementRecord, OTHERS_CPUS, STEAL_PCT,
    WAITED_SHARE,
};
use serde::{Deserialize, Serialize};
pub use tune::{TuneRecord, Winner};
pub use variant::{
    AnatomyRecord, BuildRecord, DataRecord, DistRecord, FunctionSizeRecord, LayoutRecord,
    MemoryError, SettingDiff, VariantRecord,
};
pub use verification::{AaRecord, DifferenceRecord, ExplainedRecord, VerificationRecord};

pub const SCHEMA: &str = "bakeoff.results/1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    pub schema: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// running | complete | interrupted | failed
    pub status: String,
    pub bakeoff_version: String,
    pub started_utc: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_utc: Option<String>,
    pub host: Host,
    pub experiment: ExperimentRecord,
    pub plan: PlanRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRecord>,
    pub variants: Vec<VariantRecord>,
    pub cells: Vec<Cell>,
    pub comparisons: Vec<ComparisonRecord>,
    /// What ended the measured rounds: precision | budget | repetitions (None while
    /// running), or the caller's own rule (bisect's steps: decided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// Wall time the measured rounds took, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_s: Option<f64>,
    /// Problems worth a user's attention before any figure (verify failures, invalid runs).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Each warning's code (`warning.rs`), in the order of `warnings`; absent in folders
    /// written before codes existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warning_codes: Vec<String>,
    /// What could not be measured on this machine (said once): unsupported CPU counters,
    /// a profile that failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Result equivalence per variant (`[verify]`), before any run was measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verification: Vec<VerificationRecord>,
    /// `bakeoff compare`: each compared cell's figure over the history of its experiment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryRecord>,
    /// The other hosts (`[[host]]`), as each described itself when reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostRecord>,
    /// `[plan] aa`: the machine's own false-difference check, the A/A variant (a second
    /// sandbox of the baseline's binary) against the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aa: Option<AaRecord>,
    /// `bakeoff tune`: the search that chose the winner measured here (its section is
    /// `crate::tune`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<TuneRecord>,
    /// Every setting whose value differs between the variants that read their settings
    /// (`variants[].settings`), the ones that move performance first: a name some
    /// variants lack is listed with `only_some` (a diff across servers would drown in
    /// them otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_diff: Vec<SettingDiff>,
}

/// A results model with nothing measured yet: the current schema, status "running", no
/// plan, variants, cells or comparisons (what tests and the runner fill in).
impl Default for Results {
    fn default() -> Self {
        Results {
            schema: SCHEMA.into(),
            name: String::new(),
            description: None,
            status: "running".into(),
            bakeoff_version: String::new(),
            started_utc: String::new(),
            finished_utc: None,
            host: Host::default(),
            experiment: ExperimentRecord::default(),
            plan: PlanRecord::default(),
            source: None,
            variants: Vec::new(),
            cells: Vec::new(),
            comparisons: Vec::new(),
            stopped_by: None,
            rounds_s: None,
            warnings: Vec::new(),
            warning_codes: Vec::new(),
            notes: Vec::new(),
            verification: Vec::new(),
            history: Vec::new(),
            hosts: Vec::new(),
            aa: None,
            tune: None,
            settings_diff: Vec::new(),
        }
    }
}

impl Results {
    /// The names of the A/A variants (copies of the baseline that check the noise).
    pub fn aa_variants(&self) -> std::collections::HashSet<&str> {
        self.variants
            .iter()
            .filter(|v| v.aa)
            .map(|v| v.name.as_str())
            .collect()
    }

    /// The server kind of variant `name` (`variants[].kind`): None for the experiment's
    /// own `[target] kind`, and for a name no variant has.
    pub fn kind_of(&self, name: &str) -> Option<&str> {
        self.variants
            .iter()
            .find(|v| v.name == name)
            .and_then(|v| v.kind.as_deref())
    }

    /// The cell for (workload, variant, connections), if it exists.
    pub fn cell(&self, workload: &str, variant: &str, connections: usize) -> Option<&Cell> {
        self.cells.iter().find(|c| {
            c.workload == workload && c.variant == variant && c.connections == connections
        })
    }

    /// The comparison of (workload, variant, connections) against the baseline, if any:
    /// the headline one (throughput in `mode = "both"`; see `headline_comparisons`).
    pub fn comparison(
        &self,
        workload: &str,
        variant: &str,
        connections: usize,
    ) -> Option<&ComparisonRecord> {
        self.headline_comparisons().find(|c| {
            c.workload == workload && c.variant == variant && c.connections == connections
        })
    }

    /// The comparisons that answer for their cell, one each: every throughput record,
    /// and an instruction record only where no throughput record sits beside it
    /// (`mode = "instructions"`). In `mode = "both"` the instruction records are the
    /// second answer shown beside the first (`instructions_beside`), never counted as
    /// comparisons of their own.
    pub fn headline_comparisons(&self) -> impl Iterator<Item = &ComparisonRecord> {
        headline(&self.comparisons)
    }

    /// In `mode = "both"`, the instruction-count record beside throughput record `k`.
    pub fn instructions_beside(&self, k: &ComparisonRecord) -> Option<&ComparisonRecord> {
        if k.is_instructions() {
            return None;
        }
        self.comparisons
            .iter()
            .find(|i| i.is_instructions() && i.same_cell(k))
    }

    /// The rule comparisons are decided by, from the plan as recorded.
    pub fn rule(&self, direction: bakeoff_stats::Direction) -> bakeoff_stats::Rule {
        bakeoff_stats::Rule {
            direction,
            alpha: 0.05,
            equivalence: self.plan.equivalence,
            pairing: self.plan.pairing,
        }
    }
}

/// serde's detail with what it quotes from the text left out (`string "x"`, the name
/// in `unknown field `x``, `unknown variant `x``); the names it expects stay. A message
/// names the file and what is wrong, never what is in it.
fn without_values(detail: &str) -> String {
    let mut out = detail.to_string();
    for (open, close, word) in [
        ("string \"", '"', "a string"),
        ("unknown field `", '`', "an unknown field"),
        ("unknown variant `", '`', "an unknown variant"),
    ] {
        if let Some(at) = out.find(open) {
            let body = at + open.len();
            let end = if close == '`' {
                // A name may hold a backtick itself: it ends where serde's words go on.
                out[body..].find("`, ").map(|e| body + e)
            } else {
                // serde shows a quote inside the string as \".
                let mut escaped = false;
                out[body..].char_indices().find_map(|(i, c)| {
                    let end = c == close && !escaped;
                    escaped = c == '\\' && !escaped;
                    end.then_some(body + i)
                })
            };
            let end = end.map_or(out.len(), |e| e + 1);
            out.replace_range(at..end, word);
        }
    }
    out
}

/// A serde_json error in words a user reads: where (line and column), what kind of
/// problem, and serde's detail without its own position suffix or type jargon, and
/// without the values it quotes from the text. `what` says what the text was meant to be.
pub fn json_problem(e: &serde_json::Error, what: &str) -> String {
    use serde_json::error::Category;
    let raw = without_values(&e.to_string());
    let detail = match raw.rfind(" at line ") {
        Some(at) => &raw[..at],
        None => raw.as_str(),
    };
    let detail = if let Some(rest) = detail
        .strip_prefix("invalid type: ")
        .or_else(|| detail.strip_prefix("invalid value: "))
    {
        match rest.split_once(", expected ") {
            Some((found, wanted)) => {
                let wanted = match wanted {
                    "u64" | "u32" | "u16" | "u8" | "usize" => "a count (a whole number, 0 or more)",
                    "i64" | "i32" => "a whole number",
                    "f64" | "f32" => "a number",
                    w => w,
                };
                format!("found {found} where {wanted} belongs")
            }
            None => rest.to_string(),
        }
    } else if let Some(field) = detail.strip_prefix("missing field ") {
        format!("the key {field} is missing")
    } else {
        detail.to_string()
    };
    let kind = match e.classify() {
        Category::Eof => "it ends early (a truncated file?)".to_string(),
        Category::Syntax => format!("it is not valid JSON: {detail}"),
        Category::Data | Category::Io => detail,
    };
    format!("line {}, column {}: {what}: {kind}", e.line(), e.column())
}

/// Runs and cells read and write their kinds' figures through [`crate::figures`].
macro_rules! with_figures {
    ($t:ty, $field:ident) => {
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$t>::serialize(self, s)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                crate::figures::read_with_figures(d, |c| <$t>::deserialize(c), |x, f| x.$field = f)
            }
        }
    };
}

with_figures!(Run, figures);

impl crate::figures::RunRecord for Run {
    fn figures(&self) -> &crate::figures::Figures {
        &self.figures
    }
    fn figures_mut(&mut self) -> &mut crate::figures::Figures {
        &mut self.figures
    }
}

impl crate::figures::CellRecord for Cell {
    fn kinds(&self) -> &crate::figures::Figures {
        &self.kinds
    }
    fn kinds_mut(&mut self) -> &mut crate::figures::Figures {
        &mut self.kinds
    }
}

with_figures!(Cell, kinds);

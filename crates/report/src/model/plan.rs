//! results.json's `experiment`, `plan` and `source`: what was asked for and how it was run.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ExperimentRecord {
    /// The experiment file as given.
    pub file: String,
    /// Its exact text.
    pub text: String,
    /// The experiment with every default filled in.
    pub resolved: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlanRecord {
    /// The fixed round count or cap (`repetitions`); None: as many as the budget allows.
    #[serde(default)]
    pub repetitions: Option<usize>,
    pub warmup_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    pub seed: u64,
    pub baseline: String,
    /// The wall-time budget for the rounds, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// Target CI half-width per comparison (relative) that stops a point early.
    #[serde(default, alias = "target_ci", skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Half-width of the equivalence band.
    #[serde(default = "default_equivalence")]
    pub equivalence: f64,
    /// auto | paired | unpaired
    #[serde(default)]
    pub pairing: bakeoff_stats::Pairing,
    /// Rounds before precision may stop a point.
    #[serde(default)]
    pub min_rounds: usize,
    /// Code layouts per build variant (`[plan] layouts`); rounds rotate through them.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub layouts: usize,
    /// The variant order of each round, as run.
    pub rounds: Vec<Vec<String>>,
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn default_equivalence() -> f64 {
    0.01
}

impl Default for PlanRecord {
    fn default() -> Self {
        PlanRecord {
            repetitions: None,
            warmup_s: 0.0,
            duration_s: None,
            ops: None,
            seed: 0,
            baseline: String::new(),
            budget_s: None,
            precision: None,
            equivalence: default_equivalence(),
            pairing: bakeoff_stats::Pairing::Auto,
            min_rounds: 0,
            layouts: 1,
            rounds: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceRecord {
    pub description: String,
    pub id: String,
}

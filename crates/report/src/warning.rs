//! Warnings as values: each has a stable code (what it is about, for programs: store's
//! compare keeps or drops a side's warnings by it) and its text (for readers). results.json
//! keeps the texts under `warnings` as before and the codes beside them under
//! `warning_codes`, in the same order; a folder written before codes existed (texts only)
//! reads back with each text's code recognised from its words ([`WarningCode::of_text`]).

use crate::model::Results;

/// What a warning is about. The code strings are stable: they are written to results.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WarningCode {
    /// The A/A check (the baseline's binary against itself) found a difference.
    AaDiffers,
    /// Durability settings compared on a tmpfs, where fsync costs nothing.
    DurabilityOnTmpfs,
    /// A host's server listens on an address other than loopback.
    ExposedListen,
    /// A variant's answers differ from the baseline's.
    VerifyFailed,
    /// A variant's verification did not run.
    VerifySkipped,
    /// A sanitizer or valgrind found memory or threading errors.
    MemoryErrors,
    /// Too few repetitions for a rank test to decide.
    TooFewRepetitions,
    /// A difference no larger than two code layouts' of one binary.
    WithinLayoutSpread,
    /// A cell's runs returned wrong answers.
    WrongAnswers,
    /// Some of a cell's runs are invalid.
    InvalidRuns,
    /// The load engine set the pace of some runs.
    ClientBound,
    /// Other processes of the machine disturbed some runs.
    MachineBusy,
    /// A variant failed to build or start.
    VariantFailed,
    /// The run stopped early (results unwritable, a host gone).
    RunStopped,
    /// A setting that moves performance differs though nobody asked for it.
    UnaskedSetting,
    /// A variant read different settings in a later run.
    SettingsChanged,
    /// A variant's settings could not be read.
    SettingsUnread,
    /// A workload kind's own warning (tpcc's limits, ...).
    Workload,
    /// Two folders compared: one side's A/A check found a difference.
    SideAaDiffers,
    /// Two folders compared: one side measured instructions, the other time.
    MixedMetrics,
    /// Two folders compared: too few runs for the Mann-Whitney test.
    TooFewRuns,
    /// Two folders compared: cells only one side has.
    OnlyOneSide,
    /// Two folders compared: different machines.
    DifferentMachines,
    /// Two folders compared: different plans.
    DifferentPlans,
    /// Two folders compared: a side did not complete.
    SideIncomplete,
    /// None of the above (a text from an older or newer bakeoff).
    Other,
}

/// Every code, for lookups by string.
const ALL: [WarningCode; 26] = [
    WarningCode::AaDiffers,
    WarningCode::DurabilityOnTmpfs,
    WarningCode::ExposedListen,
    WarningCode::VerifyFailed,
    WarningCode::VerifySkipped,
    WarningCode::MemoryErrors,
    WarningCode::TooFewRepetitions,
    WarningCode::WithinLayoutSpread,
    WarningCode::WrongAnswers,
    WarningCode::InvalidRuns,
    WarningCode::ClientBound,
    WarningCode::MachineBusy,
    WarningCode::VariantFailed,
    WarningCode::RunStopped,
    WarningCode::UnaskedSetting,
    WarningCode::SettingsChanged,
    WarningCode::SettingsUnread,
    WarningCode::Workload,
    WarningCode::SideAaDiffers,
    WarningCode::MixedMetrics,
    WarningCode::TooFewRuns,
    WarningCode::OnlyOneSide,
    WarningCode::DifferentMachines,
    WarningCode::DifferentPlans,
    WarningCode::SideIncomplete,
    WarningCode::Other,
];

impl WarningCode {
    /// The stable code written to results.json.
    pub fn as_str(self) -> &'static str {
        use WarningCode::*;
        match self {
            AaDiffers => "aa-differs",
            DurabilityOnTmpfs => "durability-on-tmpfs",
            ExposedListen => "exposed-listen",
            VerifyFailed => "verify-failed",
            VerifySkipped => "verify-skipped",
            MemoryErrors => "memory-errors",
            TooFewRepetitions => "too-few-repetitions",
            WithinLayoutSpread => "within-layout-spread",
            WrongAnswers => "wrong-answers",
            InvalidRuns => "invalid-runs",
            ClientBound => "client-bound",
            MachineBusy => "machine-busy",
            VariantFailed => "variant-failed",
            RunStopped => "run-stopped",
            UnaskedSetting => "unasked-setting",
            SettingsChanged => "settings-changed",
            SettingsUnread => "settings-unread",
            Workload => "workload",
            SideAaDiffers => "side-aa-differs",
            MixedMetrics => "mixed-metrics",
            TooFewRuns => "too-few-runs",
            OnlyOneSide => "only-one-side",
            DifferentMachines => "different-machines",
            DifferentPlans => "different-plans",
            SideIncomplete => "side-incomplete",
            Other => "other",
        }
    }

    /// The code of a stable code string; [`WarningCode::Other`] for one this bakeoff
    /// does not know.
    pub fn parse(code: &str) -> WarningCode {
        ALL.into_iter()
            .find(|c| c.as_str() == code)
            .unwrap_or(WarningCode::Other)
    }

    /// The code of a text written before codes existed, recognised from its words (the
    /// texts this bakeoff writes; anything else is [`WarningCode::Other`]). Only for old
    /// folders: new ones carry their codes.
    pub fn of_text(text: &str) -> WarningCode {
        use WarningCode::*;
        // A compared folder's inherited warnings carry their side's label.
        let t = text
            .strip_prefix("A: ")
            .or_else(|| text.strip_prefix("B: "))
            .unwrap_or(text);
        let has = |s: &str| t.contains(s);
        if has("Mann-Whitney") {
            TooFewRuns
        } else if t.starts_with("VERIFY FAILED") {
            if has(" error(s) (") {
                MemoryErrors
            } else {
                VerifyFailed
            }
        } else if t.starts_with("the A/A check found") {
            AaDiffers
        } else if has("'s A/A check found a difference") {
            SideAaDiffers
        } else if has("repetitions per cell: too few") {
            TooFewRepetitions
        } else if has("is no larger than the difference between two code layouts") {
            WithinLayoutSpread
        } else if has("wrong answers (verify failures)") {
            WrongAnswers
        } else if has("runs client-bound") {
            ClientBound
        } else if has("disturbed by other processes") {
            MachineBusy
        } else if has("runs invalid (") {
            InvalidRuns
        } else if t.starts_with("verification of variant") {
            VerifySkipped
        } else if t.starts_with("variant ") && has(" failed: ") {
            VariantFailed
        } else if has("not on loopback") {
            ExposedListen
        } else if has("fsync costs nothing") {
            DurabilityOnTmpfs
        } else {
            Other
        }
    }
}

impl std::fmt::Display for WarningCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A warning: its code and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub code: WarningCode,
    pub text: String,
}

impl Warning {
    pub fn new(code: WarningCode, text: impl Into<String>) -> Warning {
        Warning {
            code,
            text: text.into(),
        }
    }

    /// The same warning under a label (`A: ...`): a compared folder's side.
    pub fn labelled(&self, label: &str) -> Warning {
        Warning::new(self.code, format!("{label}: {}", self.text))
    }
}

/// The codes of warnings about one cell (a variant at a workload and connection count):
/// their text starts with the cell's [`cell_label`] and `: `.
const CELL_CODES: [WarningCode; 5] = [
    WarningCode::WrongAnswers,
    WarningCode::InvalidRuns,
    WarningCode::ClientBound,
    WarningCode::MachineBusy,
    WarningCode::WithinLayoutSpread,
];

/// How a warning about one cell names it at its start (then `: `): `VARIANT WORKLOAD xN`.
/// The runner writes its cell warnings with it and the report finds their comparison by
/// it, so the two never drift apart.
pub fn cell_label(variant: &str, workload: &str, connections: usize) -> String {
    format!("{variant} {workload} x{connections}")
}

/// The warnings as the report lays them out: those that concern no one comparison, as
/// before, then under each comparison (its variant against its baseline at a workload and
/// connection count) the warnings about its two cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grouped {
    /// Warnings about no comparison, in their order: every warning of a folder written
    /// before codes existed, whose layout stays as it was.
    pub loose: Vec<String>,
    /// Per comparison, in the comparisons' order: what it is (`clang-O3 against gcc-O2,
    /// get x16`) and its warnings, in their order. A warning about a baseline's cell
    /// stands under every comparison made against that cell.
    pub groups: Vec<(String, Vec<String>)>,
}

impl Results {
    /// The warnings grouped under the comparisons they concern ([`Grouped`]). A warning
    /// is tied to a comparison by its code (one of a cell's, as written beside it in
    /// results.json) and by the label its text starts with (the comparison's variant or
    /// baseline, workload and connections). Texts without codes (old folders), other
    /// codes, and cell warnings of no comparison (a variant that never ran) stay loose.
    pub fn grouped_warnings(&self) -> Grouped {
        let coded =
            !self.warning_codes.is_empty() && self.warning_codes.len() == self.warnings.len();
        if !coded {
            return Grouped {
                loose: self.warnings.clone(),
                groups: Vec::new(),
            };
        }
        let mut seen: Vec<(&str, &str, &str, usize)> = Vec::new();
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for c in &self.comparisons {
            let key = (
                c.variant.as_str(),
                c.baseline.as_str(),
                c.workload.as_str(),
                c.connections,
            );
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let labels = [&c.variant, &c.baseline]
                .map(|v| format!("{}: ", cell_label(v, &c.workload, c.connections)));
            let mine: Vec<usize> = self
                .warnings
                .iter()
                .zip(&self.warning_codes)
                .enumerate()
                .filter(|(_, (text, code))| {
                    CELL_CODES.contains(&WarningCode::parse(code))
                        && labels.iter().any(|l| text.starts_with(l.as_str()))
                })
                .map(|(i, _)| i)
                .collect();
            if !mine.is_empty() {
                let about = format!(
                    "{} against {}, {} x{}",
                    c.variant, c.baseline, c.workload, c.connections
                );
                groups.push((about, mine));
            }
        }
        let tied: Vec<usize> = groups.iter().flat_map(|(_, m)| m.iter().copied()).collect();
        Grouped {
            loose: (0..self.warnings.len())
                .filter(|i| !tied.contains(i))
                .map(|i| self.warnings[i].clone())
                .collect(),
            groups: groups
                .into_iter()
                .map(|(about, m)| {
                    (
                        about,
                        m.into_iter().map(|i| self.warnings[i].clone()).collect(),
                    )
                })
                .collect(),
        }
    }

    /// Adds a warning (its text under `warnings`, its code under `warning_codes`).
    pub fn warn(&mut self, w: Warning) {
        self.coded_up_to_now();
        self.warnings.push(w.text);
        self.warning_codes.push(w.code.as_str().to_string());
    }

    /// Replaces every warning. A folder written before codes existed (warnings as texts
    /// alone) stays so when its warnings are derived again (`bakeoff report` re-analyzes
    /// the runs): its reports keep the layout they had, one list of warnings
    /// ([`Results::grouped_warnings`]).
    pub fn set_warnings(&mut self, ws: impl IntoIterator<Item = Warning>) {
        let texts_alone = !self.warnings.is_empty() && self.warning_codes.is_empty();
        self.warnings.clear();
        self.warning_codes.clear();
        for w in ws {
            self.warn(w);
        }
        if texts_alone {
            self.warning_codes.clear();
        }
    }

    /// Every warning with its code: the code written beside it, or for a folder written
    /// before codes existed, the code its words show.
    pub fn coded_warnings(&self) -> Vec<Warning> {
        let aligned = self.warning_codes.len() == self.warnings.len();
        self.warnings
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let code = match self.warning_codes.get(i) {
                    Some(c) if aligned => WarningCode::parse(c),
                    _ => WarningCode::of_text(text),
                };
                Warning::new(code, text.clone())
            })
            .collect()
    }

    /// The codes of warnings pushed as texts alone (an old folder's), so that the two
    /// lists stay aligned.
    fn coded_up_to_now(&mut self) {
        if self.warning_codes.len() != self.warnings.len() {
            self.warning_codes = self
                .coded_warnings()
                .into_iter()
                .map(|w| w.code.as_str().to_string())
                .collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_parse_back() {
        for c in ALL {
            assert_eq!(WarningCode::parse(c.as_str()), c);
        }
        assert_eq!(
            WarningCode::parse("from-a-newer-bakeoff"),
            WarningCode::Other
        );
    }

    /// A folder of texts alone (before codes) reads back with its texts' codes, and a
    /// warning added to it keeps both lists aligned.
    #[test]
    fn texts_alone_read_back_with_their_codes() {
        let mut json = serde_json::to_value(Results::default()).unwrap();
        json["warnings"] = serde_json::from_str(r#"[
            "3 repetitions per cell: too few for the rank tests to reach p < 0.05, so no verdict can be faster, slower or equivalent; use a budget, or at least 6 repetitions",
            "sync tpcc x2: 3 of 3 runs disturbed by other processes of the machine (rustc 59% of the CPUs)",
            "A: too few valid runs for the Mann-Whitney test to reach p < 0.05 (2 vs 2 valid runs per cell), so every verdict is \"same\"; use at least 4 runs on each side",
            "something new"
        ]"#).unwrap();
        assert!(json.get("warning_codes").is_none());
        let mut r: Results = serde_json::from_value(json).unwrap();
        let codes: Vec<WarningCode> = r.coded_warnings().iter().map(|w| w.code).collect();
        assert_eq!(
            codes,
            [
                WarningCode::TooFewRepetitions,
                WarningCode::MachineBusy,
                WarningCode::TooFewRuns,
                WarningCode::Other
            ]
        );
        // Derived again (a re-analysis), they stay texts alone, as the folder was.
        let again = r.coded_warnings();
        r.set_warnings(again.clone());
        assert!(r.warning_codes.is_empty());
        assert_eq!(r.coded_warnings(), again);
        r.warn(Warning::new(WarningCode::RunStopped, "stopped"));
        assert_eq!(r.warning_codes.len(), 5);
        assert_eq!(r.warning_codes[1], "machine-busy");
        let out = serde_json::to_value(&r).unwrap();
        assert_eq!(out["warning_codes"][4], "run-stopped");
        assert_eq!(out["warnings"][4], "stopped");
    }
}

//! The race: successive halving over stages. Each stage measures every candidate still in
//! against the baseline in interleaved rounds (the runner's), and feeds each candidate's
//! per-round ratios here. A screening stage reads instruction counts (fewer is better; a
//! candidate is dropped only when it needs more instructions than the leader by more than
//! a margin, since LTO, PGO and BOLT win by what counts do not see); a racing stage reads
//! wall-clock throughput. After each stage the leader is the candidate with the best mean
//! log ratio, and every other candidate whose paired interval against the leader lies
//! entirely below it (Bonferroni over the candidates in the stage) is dropped. The race
//! is decided when one candidate is left, or the leader and the runner-up are the same
//! within the equivalence band, and the leader's interval against the baseline is
//! decided too.

pub use crate::entry::{Entry, Status};
use crate::space::{Candidate, Recipe};
use crate::stat::{mean_interval, paired};
use bakeoff_stats::Verdict;
use serde::{Deserialize, Serialize};

/// What a stage measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signal {
    /// Instruction counts (callgrind), fewer is better: the screen.
    Instructions,
    /// Wall-clock throughput, more is better: the race.
    Throughput,
}

/// The race's rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Error rate of each stage's drops and of the final intervals (Bonferroni-split).
    pub alpha: f64,
    /// Ratios within 1 +- this are "equivalent" (the plan's equivalence band).
    pub equivalence: f64,
    /// A screening stage drops a candidate only when its instruction count exceeds the
    /// leader's by more than this (relative) with the stage's confidence.
    pub screen_margin: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            alpha: 0.05,
            equivalence: 0.01,
            screen_margin: 0.05,
        }
    }
}

/// What a stage measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StageData {
    /// Per candidate, the ratio over the baseline in each of the stage's rounds
    /// (round number within the stage, ratio).
    pub ratios: Vec<(String, Vec<(usize, f64)>)>,
    /// Candidates that failed in the stage, with why.
    pub failed: Vec<(String, String)>,
}

/// A stage as it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// 1-based.
    pub stage: usize,
    pub signal: Signal,
    /// Candidates measured.
    pub entered: usize,
    /// Rounds the stage ran (the most any candidate had).
    pub rounds: usize,
    /// Its first round's id across stages (its rounds are `first_round..first_round +
    /// rounds`).
    #[serde(default)]
    pub first_round: usize,
    pub leader: Option<String>,
    pub dropped: Vec<String>,
    pub out: Vec<String>,
    /// Seconds its rounds took (the caller fills it in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Measure these candidates in another stage.
    Stage(Vec<String>),
    /// The race is over.
    Done(Conclusion),
}

/// How the race ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conclusion {
    /// The leader at the end (None: every candidate out).
    pub winner: Option<String>,
    /// True when the leader is decided against the baseline and the runner-up.
    pub decided: bool,
    /// In words: why the race stopped.
    pub why: String,
}

/// A row of the ranked table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    pub name: String,
    pub recipe: Recipe,
    /// Throughput over the baseline (geometric mean of the round ratios).
    pub ratio: Option<f64>,
    /// Its interval, Bonferroni-adjusted over the candidates measured.
    pub interval: Option<[f64; 2]>,
    /// The interval's level (e.g. 0.9975 for 20 candidates).
    pub level: f64,
    pub verdict: Option<Verdict>,
    pub rounds: usize,
    pub status: Status,
}

/// The race over a set of candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Race {
    pub settings: Settings,
    pub entries: Vec<Entry>,
    pub stages: Vec<StageRecord>,
    next_round: usize,
    stopped: Option<String>,
}

impl Race {
    pub fn new(candidates: Vec<Candidate>, settings: Settings) -> Race {
        Race {
            settings,
            entries: candidates
                .into_iter()
                .map(|c| Entry {
                    name: c.name,
                    recipe: c.recipe,
                    status: Status::Alive,
                    throughput: Vec::new(),
                    instructions: Vec::new(),
                })
                .collect(),
            stages: Vec::new(),
            next_round: 0,
            stopped: None,
        }
    }

    /// The candidates still in, in their original order.
    pub fn alive(&self) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.status == Status::Alive)
            .collect()
    }

    /// Ends the race now (the budget is spent, or the caller was interrupted).
    pub fn stop(&mut self, why: impl Into<String>) {
        self.stopped = Some(why.into());
    }

    /// A candidate out before any stage (its build failed, it failed verification).
    pub fn out(&mut self, name: &str, reason: impl Into<String>) {
        let stage = self.stages.len() + 1;
        if let Some(e) = self.entries.iter_mut().find(|e| e.name == name) {
            e.status = Status::Out {
                stage,
                reason: reason.into(),
            };
        }
    }

    /// Takes a stage's measurements: pools them with the earlier stages', marks failures
    /// out, names the leader and drops those decided below it.
    pub fn feed(&mut self, signal: Signal, data: StageData) -> &StageRecord {
        let stage = self.stages.len() + 1;
        let entered = self.alive().len();
        let mut out = Vec::new();
        for (name, why) in &data.failed {
            if let Some(e) = self.entries.iter_mut().find(|e| &e.name == name) {
                e.status = Status::Out {
                    stage,
                    reason: why.clone(),
                };
                out.push(name.clone());
            }
        }
        let base = self.next_round;
        let mut rounds = 0;
        for (name, ratios) in &data.ratios {
            let Some(e) = self
                .entries
                .iter_mut()
                .find(|e| &e.name == name && e.status == Status::Alive)
            else {
                continue;
            };
            for &(round, ratio) in ratios {
                if !(ratio.is_finite() && ratio > 0.0) {
                    continue;
                }
                rounds = rounds.max(round + 1);
                let x = ratio.ln();
                match signal {
                    Signal::Throughput => e.throughput.push((base + round, x)),
                    Signal::Instructions => e.instructions.push((base + round, -x)),
                }
            }
        }
        self.next_round = base + rounds;
        // Alive but nothing measured in a stage that measured others: no valid run.
        let measured: Vec<&str> = data.ratios.iter().map(|(n, _)| n.as_str()).collect();
        for e in self.entries.iter_mut() {
            if e.status == Status::Alive && !measured.contains(&e.name.as_str()) {
                e.status = Status::Out {
                    stage,
                    reason: "no valid run in the stage".into(),
                };
                out.push(e.name.clone());
            }
        }
        let leader = self.leader_by(signal);
        let mut dropped = Vec::new();
        if let Some(l) = leader {
            let alive = self.alive().len();
            let alpha = self.settings.alpha / (alive.saturating_sub(1).max(1)) as f64;
            let margin = match signal {
                Signal::Throughput => 0.0,
                Signal::Instructions => (1.0 + self.settings.screen_margin).ln(),
            };
            let lead = self.entries[l].clone();
            for (i, e) in self.entries.iter_mut().enumerate() {
                if i == l || e.status != Status::Alive {
                    continue;
                }
                let (ls, es) = match signal {
                    Signal::Throughput => (&lead.throughput, &e.throughput),
                    Signal::Instructions => (&lead.instructions, &e.instructions),
                };
                if let Some((d, lo, _)) = paired(ls, es, alpha) {
                    if lo > margin {
                        e.status = Status::Dropped {
                            stage,
                            reason: format!(
                                "{} {:.1}% below {} ({:.1}% at least, {:.1}% confidence)",
                                match signal {
                                    Signal::Throughput => "throughput",
                                    Signal::Instructions => "instructions: efficiency",
                                },
                                (1.0 - (-d).exp()) * 100.0,
                                lead.name,
                                (1.0 - (-lo).exp()) * 100.0,
                                (1.0 - alpha) * 100.0
                            ),
                        };
                        dropped.push(e.name.clone());
                    }
                }
            }
        }
        self.stages.push(StageRecord {
            stage,
            signal,
            entered,
            rounds,
            first_round: base,
            leader: leader.map(|l| self.entries[l].name.clone()),
            dropped,
            out,
            seconds: None,
        });
        self.stages.last().expect("just pushed")
    }

    /// Index of the alive candidate with the best mean on a signal.
    fn leader_by(&self, signal: Signal) -> Option<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.status == Status::Alive)
            .filter_map(|(i, e)| {
                let xs = match signal {
                    Signal::Throughput => &e.throughput,
                    Signal::Instructions => &e.instructions,
                };
                mean(xs).map(|m| (i, m))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// The leader on throughput now (on instructions before any throughput stage).
    pub fn leader(&self) -> Option<&Entry> {
        self.leader_by(Signal::Throughput)
            .or_else(|| self.leader_by(Signal::Instructions))
            .map(|i| &self.entries[i])
    }

    /// The Bonferroni-adjusted level of the final intervals: over every candidate that
    /// was measured on throughput.
    pub fn level(&self) -> f64 {
        let m = self
            .entries
            .iter()
            .filter(|e| e.throughput.len() >= 2)
            .count()
            .max(1);
        1.0 - self.settings.alpha / m as f64
    }

    /// Is the race decided, and if not, why not.
    fn decided(&self) -> Result<String, String> {
        let Some(lead) = self.leader_by(Signal::Throughput) else {
            return Err("no candidate measured on throughput yet".into());
        };
        let lead = &self.entries[lead];
        let alive = self.alive();
        let alpha = 1.0 - self.level();
        let band = (1.0 + self.settings.equivalence).ln();
        let against_runner_up = if alive.len() == 1 {
            "the only candidate left".to_string()
        } else {
            let tied = alive.iter().filter(|e| e.name != lead.name).all(|e| {
                paired(&lead.throughput, &e.throughput, alpha)
                    .is_some_and(|(_, lo, hi)| lo > -band && hi < band)
            });
            if !tied {
                return Err(format!(
                    "{} candidates left, the leader {} not yet apart from the rest",
                    alive.len(),
                    lead.name
                ));
            }
            format!(
                "the {} left are the same within {:.1}%",
                alive.len(),
                self.settings.equivalence * 100.0
            )
        };
        match mean_interval(&lead.throughput, alpha) {
            Some((_, lo, hi)) if lo > 0.0 || hi < 0.0 || (lo > -band && hi < band) => Ok(format!(
                "{} leads ({against_runner_up}), decided against the baseline",
                lead.name
            )),
            _ => Err(format!(
                "the leader {} is not yet decided against the baseline",
                lead.name
            )),
        }
    }

    /// What to measure next, or the conclusion.
    pub fn next(&self) -> Next {
        let alive = self.alive();
        if alive.is_empty() {
            return Next::Done(Conclusion {
                winner: None,
                decided: false,
                why: "every candidate is out".into(),
            });
        }
        let decided = self.decided();
        if let Ok(why) = &decided {
            return Next::Done(Conclusion {
                winner: self.leader().map(|e| e.name.clone()),
                decided: true,
                why: why.clone(),
            });
        }
        if let Some(stop) = &self.stopped {
            return Next::Done(Conclusion {
                winner: self.leader().map(|e| e.name.clone()),
                decided: false,
                why: format!("{stop}; {}", decided.err().unwrap_or_default()),
            });
        }
        Next::Stage(alive.iter().map(|e| e.name.clone()).collect())
    }

    /// The ranked table: alive first, then dropped, then out; each by its ratio.
    pub fn standings(&self) -> Vec<Standing> {
        let level = self.level();
        let band = self.settings.equivalence;
        let mut rows: Vec<Standing> = self
            .entries
            .iter()
            .map(|e| {
                let est = mean_interval(&e.throughput, 1.0 - level);
                let ratio = mean(&e.throughput).map(f64::exp);
                let interval = est.map(|(_, lo, hi)| [lo.exp(), hi.exp()]);
                let verdict = interval.map(|[lo, hi]| {
                    if lo > 1.0 {
                        Verdict::Faster
                    } else if hi < 1.0 {
                        Verdict::Slower
                    } else if lo > 1.0 - band && hi < 1.0 + band {
                        Verdict::Equivalent
                    } else {
                        Verdict::Inconclusive
                    }
                });
                Standing {
                    name: e.name.clone(),
                    recipe: e.recipe.clone(),
                    ratio,
                    interval,
                    level,
                    verdict,
                    rounds: e.throughput.len(),
                    status: e.status.clone(),
                }
            })
            .collect();
        let rank = |s: &Standing| match s.status {
            Status::Alive => 0,
            Status::Dropped { .. } => 1,
            Status::Out { .. } => 2,
        };
        rows.sort_by(|a, b| {
            rank(a)
                .cmp(&rank(b))
                .then(b.ratio.unwrap_or(0.0).total_cmp(&a.ratio.unwrap_or(0.0)))
        });
        rows
    }
}

impl Race {
    /// What each choice is worth (`effects.rs`), from the first throughput stage: every
    /// candidate still in then was measured in the same rounds, before any was dropped,
    /// so no candidate's mean is one that was cut short for being low (later stages'
    /// rounds would bias the levels of the dropped candidates' downward).
    pub fn effects(&self, factors: &[(&str, Vec<String>)], confidence: f64) -> Vec<crate::Effect> {
        let Some(first) = self.stages.iter().find(|s| s.signal == Signal::Throughput) else {
            return Vec::new();
        };
        let span = first.first_round..first.first_round + first.rounds;
        let entries: Vec<Entry> = self
            .entries
            .iter()
            .map(|e| Entry {
                throughput: e
                    .throughput
                    .iter()
                    .filter(|x| span.contains(&x.0))
                    .copied()
                    .collect(),
                ..e.clone()
            })
            .collect();
        crate::effects::estimate(&entries, factors, confidence)
    }
}

fn mean(xs: &[(usize, f64)]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().map(|x| x.1).sum::<f64>() / xs.len() as f64)
}

//! bakeoff-tune: the search behind `bakeoff tune`, pure (no builds, no runs, no I/O).
//! `space.rs`: the candidates of a `[tune]` space (the cartesian product of its lists,
//! impossible combinations left out with why); `race.rs`: successive halving over stages
//! (a screen on instruction counts where the target has them, then wall-clock throughput
//! in interleaved rounds; after each stage those decided below the leader are dropped;
//! the race ends when the leader is decided against the baseline and the runner-up, or
//! the budget ends); `study.rs`: the race driven as a `bakeoff_study::Study` (each stage's
//! share of the budget, its signal, the overfitting check after); `effects.rs`: what each choice is worth, the main effect of each
//! factor's level with an interval. The runner (`bakeoff_runner::study`) builds and runs
//! the stages; the CLI (`crates/bakeoff/src/tune.rs`) drives them and renders the answer.

pub mod effects;
pub mod entry;
pub mod race;
pub mod space;
mod stat;
pub mod study;

pub use effects::{estimate, Effect};
pub use race::{
    Conclusion, Entry, Next, Race, Settings, Signal, StageData, StageRecord, Standing, Status,
};
pub use space::{Candidate, Excluded, Lto, Recipe, Space, FACTORS, MAX_CANDIDATES};
pub use study::{TuneOutcome, TuneStep, Tuned, Tuning, MAX_STAGES};

#[cfg(test)]
mod study_tests;
#[cfg(test)]
mod tests;

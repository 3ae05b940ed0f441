//! bakeoff-study: the loop every study runs, written once. A study (bisect's search over
//! commits, tune's race over candidates, capacity's search over offered rates) decides
//! what to run next from what it has read so far; something else runs it. The study runs
//! nothing itself, so its decisions are tested in milliseconds against a scripted
//! [`Runs`], and the real one (derive an experiment, run it, read its results) is the
//! runner's.
//!
//! ```text
//! loop {
//!     steps = study.next()          // decide: empty when the study has its answer
//!     for step in steps {           // a round: one step, or several decided together
//!         outcome = runs.run(step)  // derive, run, read
//!         study.record(step, outcome)
//!     }
//! }
//! study.answer()
//! ```

/// A study: a state machine over outcomes.
pub trait Study {
    /// What to run next: one commit's build, one candidate's settings, one offered rate.
    type Step;
    /// What running a step read back.
    type Outcome;
    /// What the study concludes when it ends.
    type Answer;

    /// The steps of the next round, decided from every outcome recorded so far; empty when
    /// the study has its answer (or has spent its budget). A round's steps are run in the
    /// order given and recorded one by one.
    fn next(&mut self) -> Vec<Self::Step>;
    /// Takes what one step read back.
    fn record(&mut self, step: &Self::Step, outcome: Self::Outcome);
    /// The conclusion, from everything recorded.
    fn answer(self) -> Self::Answer;
}

/// What runs a study's steps. An error stops the study where it is (an interrupt, a fault
/// that no later step can get past); a step that ran and failed is an outcome, not an error.
pub trait Runs<S: Study + ?Sized> {
    /// Why the study could not go on.
    type Error;
    /// Runs one step and reads what it measured.
    fn run(&mut self, step: &S::Step) -> Result<S::Outcome, Self::Error>;
}

/// Any closure from a step to its outcome runs steps (the scripted runs of tests).
impl<S, E, F> Runs<S> for F
where
    S: Study + ?Sized,
    F: FnMut(&S::Step) -> Result<S::Outcome, E>,
{
    type Error = E;
    fn run(&mut self, step: &S::Step) -> Result<S::Outcome, E> {
        self(step)
    }
}

/// Runs `study` to its answer: decide the next round, run each of its steps, record each
/// outcome, until the study asks for nothing more.
pub fn drive<S: Study, R: Runs<S>>(mut study: S, runs: &mut R) -> Result<S::Answer, R::Error> {
    loop {
        let steps = study.next();
        if steps.is_empty() {
            return Ok(study.answer());
        }
        for step in &steps {
            let outcome = runs.run(step)?;
            study.record(step, outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Finds the first true in a sorted list of booleans by halving: the smallest study.
    struct FirstTrue {
        lo: usize,
        hi: usize,
    }

    impl Study for FirstTrue {
        type Step = usize;
        type Outcome = bool;
        type Answer = usize;
        fn next(&mut self) -> Vec<usize> {
            if self.lo < self.hi {
                vec![(self.lo + self.hi) / 2]
            } else {
                Vec::new()
            }
        }
        fn record(&mut self, step: &usize, outcome: bool) {
            if outcome {
                self.hi = *step;
            } else {
                self.lo = step + 1;
            }
        }
        fn answer(self) -> usize {
            self.lo
        }
    }

    #[test]
    fn drives_a_study_to_its_answer_and_counts_its_steps() {
        let truth = [false, false, false, true, true, true, true, true];
        let mut ran = Vec::new();
        let mut runs = |step: &usize| -> Result<bool, ()> {
            ran.push(*step);
            Ok(truth[*step])
        };
        let answer = drive(FirstTrue { lo: 0, hi: 8 }, &mut runs).unwrap();
        assert_eq!(answer, 3);
        assert_eq!(ran, vec![4, 2, 3]);
    }

    #[test]
    fn an_error_stops_the_study_where_it_is() {
        let mut ran = 0;
        let mut runs = |step: &usize| -> Result<bool, String> {
            ran += 1;
            if ran == 2 {
                Err(format!("interrupted at {step}"))
            } else {
                Ok(true)
            }
        };
        let err = drive(FirstTrue { lo: 0, hi: 8 }, &mut runs).unwrap_err();
        assert_eq!(err, "interrupted at 2");
        assert_eq!(ran, 2);
    }
}

//! The `bakeoff` binary: parses arguments, wires the crates together, and is the only
//! place that picks an exit status (0 ok, 1 could not finish, 2 bad input, 3 `--fail-on`
//! met, 4 finished but a cell has no valid run, 5 finished but
//! no comparison could be made: the baseline or every compared variant failed, 130
//! interrupted).

mod app;
mod bisect;
mod bundle;
mod cli;
mod metrics;
mod progress;
mod session;
mod site;
mod tune;

use std::process::ExitCode;

fn main() -> ExitCode {
    use session::Failure;
    let (code, line) = match app::run() {
        Ok(()) => return ExitCode::SUCCESS,
        Err(Failure::Failed(m)) => (1, Some(format!("error: {m}"))),
        Err(Failure::BadInput(m)) => (2, Some(format!("error: {m}"))),
        Err(Failure::Threshold(m)) => (3, Some(m)),
        Err(Failure::NoValidRun(m)) => (4, Some(format!("error: {m}"))),
        Err(Failure::NoComparison(m)) => (5, Some(format!("error: {m}"))),
        Err(Failure::Interrupted(m)) => (130, Some(format!("error: {m}"))),
    };
    // A signal's handler ending bakeoff exits 130 itself; a step it killed may have
    // brought us here with that step's failure first.
    bakeoff_sandbox::wait_if_ending();
    if let Some(line) = line {
        eprintln!("{line}");
    }
    ExitCode::from(code)
}

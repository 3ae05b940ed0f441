//! The `bakeoff` binary: parses arguments, wires the crates together, and is the only
//! place that picks an exit status (0 ok, 1 could not finish, 2 bad input, 3 `--fail-on`
//! met, 130 interrupted).

mod app;
mod cli;
mod progress;

use std::process::ExitCode;

fn main() -> ExitCode {
    match app::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(app::Failure::BadInput(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(app::Failure::Failed(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
        Err(app::Failure::Usage) => ExitCode::from(2),
        Err(app::Failure::Threshold(m)) => {
            eprintln!("{m}");
            ExitCode::from(3)
        }
        Err(app::Failure::Interrupted(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(130)
        }
    }
}

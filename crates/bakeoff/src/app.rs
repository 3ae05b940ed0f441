//! Wiring: arguments to typed options, the experiment to the runner, results to the
//! terminal. Returns a [`Failure`] that main turns into an exit status.

use crate::cli::{Cli, Command, RunArgs};
use crate::progress::Bars;
use bakeoff_runner::{Options, RunError};
use clap::Parser;
use std::io::IsTerminal;
use std::path::Path;

pub enum Failure {
    /// Bad input: exit status 2.
    BadInput(String),
    /// Could not finish: exit status 1.
    Failed(String),
}

pub fn run() -> Result<(), Failure> {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let usage_error = e.use_stderr();
            let _ = e.print();
            return if usage_error {
                Err(Failure::BadInput("see --help".into()))
            } else {
                Ok(())
            };
        }
    };
    match cli.command {
        Command::Run(args) => run_cmd(&args),
        Command::Check { experiment } => {
            let l = load(&experiment)?;
            println!(
                "{}: ok ({} variants, {} workloads)",
                experiment.display(),
                l.experiment.variants.len(),
                l.experiment.workloads.len()
            );
            Ok(())
        }
        Command::Report { dir } => report_cmd(&dir),
    }
}

fn load(path: &Path) -> Result<bakeoff_plan::Loaded, Failure> {
    bakeoff_plan::load(path).map_err(|e| Failure::BadInput(e.to_string()))
}

fn run_cmd(args: &RunArgs) -> Result<(), Failure> {
    let loaded = load(&args.experiment)?;
    let opts = Options {
        out: args.out.clone(),
        results_root: args.results_dir.clone(),
        cache_root: args
            .cache
            .clone()
            .unwrap_or_else(bakeoff_build::Cache::default_root),
        sandbox_root: args
            .sandbox_dir
            .clone()
            .unwrap_or_else(bakeoff_sandbox::default_root),
    };
    let cancel = bakeoff_sandbox::install_signal_handler();
    let bars = Bars::new(!args.quiet && std::io::stderr().is_terminal());
    let outcome = bakeoff_runner::run_experiment(&loaded, &opts, &bars, cancel);
    bars.finish();
    match outcome {
        Ok(o) => {
            let color = !args.no_color && std::io::stdout().is_terminal();
            print!("{}", bakeoff_report::terminal(&o.results, color));
            println!("\nresults: {}", o.folder.display());
            Ok(())
        }
        Err(RunError::BadInput(m)) => Err(Failure::BadInput(m)),
        Err(e) => Err(Failure::Failed(e.to_string())),
    }
}

fn report_cmd(dir: &Path) -> Result<(), Failure> {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Failure::BadInput(format!(
            "cannot read {}: {e}; give a folder written by `bakeoff run`",
            path.display()
        ))
    })?;
    let results = bakeoff_report::Results::from_json(&text)
        .map_err(|m| Failure::BadInput(format!("{}: {m}", path.display())))?;
    let md = bakeoff_report::Exporter::render(&bakeoff_report::Markdown, &results);
    let out = dir.join("report.md");
    let tmp = dir.join(".report.md.tmp");
    std::fs::write(&tmp, md)
        .and_then(|_| std::fs::rename(&tmp, &out))
        .map_err(|e| Failure::Failed(format!("cannot write {}: {e}", out.display())))?;
    print!(
        "{}",
        bakeoff_report::terminal(&results, std::io::stdout().is_terminal())
    );
    println!("\nwrote {}", out.display());
    Ok(())
}

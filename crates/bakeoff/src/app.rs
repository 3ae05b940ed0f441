//! Wiring: arguments to typed options, the experiment to the runner, results to the
//! terminal; dispatches each subcommand. Returns a [`Failure`] that main turns into an
//! exit status. What the subcommands share (loading, options, progress, the history
//! record, results read back) is `session.rs`'s, which names no subcommand.

use crate::cli::{
    Cli, ColorChoice, Command, CompareArgs, HistoryArgs, RunArgs, StoreArg, TrendArgs,
};
use crate::progress::Bars;
use crate::session::{
    derived_failure, load, options, progress_mode, read_results, record, sandbox_root, side,
    store_failure, store_path, Failure,
};
use bakeoff_report::Results;
use bakeoff_runner::{Options, RunError};
use bakeoff_store::{Filter, Side, Store};
use clap::Parser;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub fn run() -> Result<(), Failure> {
    // Before anything else: machine settings a killed bakeoff changed are put back.
    for line in bakeoff_os::system::recover() {
        eprintln!("bakeoff: {line}");
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            // --help and --version: clap's own text on stdout.
            let _ = e.print();
            return Ok(());
        }
        Err(e) => {
            // The subcommand typed, for the help hint when clap names none.
            let sub = std::env::args().skip(1).find(|a| !a.starts_with('-'));
            let known = <Cli as clap::CommandFactory>::command()
                .get_subcommands()
                .any(|c| Some(c.get_name()) == sub.as_deref());
            let command = match sub.filter(|_| known) {
                Some(sub) => format!("bakeoff {sub}"),
                None => "bakeoff".into(),
            };
            return Err(Failure::BadInput(usage_line(
                &e.render().to_string(),
                &command,
            )));
        }
    };
    let color = cli.color;
    bakeoff_plan::allow_ssh_commands(cli.allow_ssh_commands);
    bakeoff_plan::allow_system_changes(cli.allow_system_changes);
    match cli.command {
        Command::Run(args) => run_cmd(&args, color),
        Command::Verify(args) => verify_cmd(&args),
        Command::Check {
            experiment,
            set,
            noise,
            cache,
            sandbox_dir,
        } => {
            let l = load(&experiment, &set)?;
            let root = sandbox_root(sandbox_dir.as_deref(), &l);
            let hosts = bakeoff_runner::check(&l, &root).map_err(|e| match e {
                RunError::BadInput(m) => Failure::BadInput(m),
                other => Failure::Failed(other.to_string()),
            })?;
            println!(
                "{}: ok ({} variants, {} workloads)\nplan: {}",
                experiment.display(),
                l.experiment.variants.len(),
                l.experiment.workloads.len(),
                l.experiment.stopping_summary()
            );
            if let Some(line) = builds_line(&l) {
                println!("{line}");
            }
            if let Some(line) = crate::tune::check_line(&l) {
                println!("{line}");
            }
            if let Some(line) = bakeoff_runner::system_line(&l) {
                println!("{line}");
            }
            for line in bakeoff_runner::capacity_cost(&l) {
                println!("{line}");
            }
            if let Some(line) = bakeoff_runner::wall_time_line(&l) {
                println!("{line}");
            }
            for h in hosts {
                println!("{h}\n  ran: {}", h.command);
            }
            if noise {
                let root = sandbox_root(sandbox_dir.as_deref(), &l);
                return noise_cmd(&l, cache, root);
            }
            Ok(())
        }
        Command::Report {
            dir,
            pairing,
            baseline,
            out,
        } => match (baseline, pairing) {
            (Some(name), how) => rebase_cmd(&dir, &name, how, out.as_deref(), color),
            (None, Some(how)) => reanalyze_cmd(&dir, how, color),
            (None, None) => report_cmd(&dir, color),
        },
        Command::History(args) => history_cmd(&args),
        Command::Compare(args) => compare_cmd(&args, color),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "bakeoff", &mut std::io::stdout());
            Ok(())
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            clap_mangen::Man::new(cmd)
                .render(&mut std::io::stdout())
                .map_err(|e| Failure::Failed(format!("cannot write the man page: {e}")))
        }
        Command::Trend(args) => trend_cmd(&args),
        Command::Site(args) => site_cmd(&args),
        Command::Export(args) => crate::bundle::export_cmd(&args),
        Command::Import(args) => crate::bundle::import_cmd(&args),
        Command::Bisect(args) => crate::bisect::bisect_cmd(&args),
        Command::Tune(args) => crate::tune::tune_cmd(&args),
        Command::Agent { root, run } => bakeoff_agent::serve(&root, &run).map_err(Failure::Failed),
    }
}

/// `bakeoff check --noise`: the baseline alone, `NOISE_RUNS` runs of the plan's first
/// point as an experiment of its own (the file reduced by `plan::derive::noise_check`, run
/// by the runner into a temporary folder, removed after), then the forecast per
/// comparison of the whole experiment at the noise measured.
fn noise_cmd(
    loaded: &bakeoff_plan::Loaded,
    cache: Option<PathBuf>,
    sandbox_root: PathBuf,
) -> Result<(), Failure> {
    use bakeoff_plan::derive::{noise_check, NoiseCheck};
    let e = &loaded.experiment;
    let Some((workload, w)) = e.workloads.iter().enumerate().find(|(_, w)| !w.train_only) else {
        return Err(Failure::BadInput(format!(
            "{}: no workload is measured (every one is train_only)",
            loaded.path.display()
        )));
    };
    let connections = w.connections_swept().first().copied();
    let runs = bakeoff_runner::NOISE_RUNS;
    let text = noise_check(
        &loaded.text,
        &NoiseCheck {
            baseline: e.baseline(),
            workload,
            connections: connections.map(|n| (w.keys.connections_key(), n)),
            runs,
        },
    )
    .map_err(|m| Failure::Failed(format!("cannot derive the noise check: {m}")))?;
    let stamp = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let reduced = bakeoff_plan::derived::load_derived(
        &loaded.path,
        "noise",
        &text,
        &bakeoff_workloads::KINDS,
    )
    .map_err(derived_failure)?;
    let folder = std::env::temp_dir().join(format!("bakeoff-noise-{stamp}"));
    let opts = Options {
        out: Some(folder.clone()),
        results_root: std::env::temp_dir(),
        cache_root: cache.unwrap_or_else(bakeoff_build::Cache::default_root),
        sandbox_root,
        every_variant: true,
    };
    eprintln!(
        "noise check: {} alone, {runs} runs of {}{} with the plan's windows",
        e.baseline(),
        w.display_name(),
        connections.map(|n| format!(" x{n}")).unwrap_or_default()
    );
    let cancel = bakeoff_sandbox::install_signal_handler();
    let show = if std::io::stderr().is_terminal() {
        crate::progress::Show::Bars
    } else {
        crate::progress::Show::Lines
    };
    let bars = Bars::new(show);
    let outcome = bakeoff_runner::run_experiment(&reduced, &opts, &bars, cancel);
    bars.finish();
    // Only the folder this check made (a name taken before it is not its to remove).
    if bakeoff_os::own::is_marked(&folder, bakeoff_runner::RESULTS_PURPOSE) {
        let _ = bakeoff_os::own::remove_tree(&folder);
    }
    let o = match outcome {
        Ok(o) => o,
        Err(RunError::BadInput(m)) => return Err(Failure::BadInput(m)),
        Err(e @ RunError::Interrupted(_)) => return Err(Failure::Interrupted(e.to_string())),
        Err(e) => return Err(Failure::Failed(e.to_string())),
    };
    let Some(cell) = o.results.cells.iter().find(|c| c.valid_runs >= 2) else {
        return Err(Failure::Failed(format!(
            "the baseline {} had fewer than 2 valid runs in the noise check; see `bakeoff run` for why",
            e.baseline()
        )));
    };
    let forecasts = bakeoff_runner::baseline_forecast(loaded, &o.results);
    let noise = forecasts.first().map_or(0.0, |f| f.1.noise);
    println!(
        "noise: {} x{} {}: {} valid runs, {} ops/s median, run-to-run CV {:.1}%",
        cell.workload,
        cell.connections,
        cell.variant,
        cell.valid_runs,
        bakeoff_report::summary::ops(cell.median_ops_per_s),
        cell.cv * 100.0
    );
    if forecasts.is_empty() {
        println!("no comparison to forecast: the experiment has one variant");
        return Ok(());
    }
    println!(
        "a round's ratio of two independent runs spreads about sqrt(2) x the runs' spread = {:.1}% (pairing within rounds narrows it where the noise is shared); the budget and the precision target are the experiment's ({})",
        noise * 100.0,
        e.stopping_summary()
    );
    for (at, f) in &forecasts {
        println!(
            "forecast: {at}: {}",
            bakeoff_report::summary::forecast_text(f)
        );
    }
    Ok(())
}

/// A clap usage error in one line: its message (with the tip, if any) and where help is.
/// clap writes several lines (the message, a list, a usage line, a hint); the first
/// paragraph and the tip say all that is needed.
fn usage_line(rendered: &str, command: &str) -> String {
    let mut message = Vec::new();
    let mut tips = Vec::new();
    let mut command = command.to_string();
    let mut paragraph = 0;
    for line in rendered.lines() {
        let t = line.trim();
        if t.is_empty() {
            paragraph += 1;
        } else if let Some(tip) = t.strip_prefix("tip:") {
            tips.push(tip.trim().to_string());
        } else if let Some(usage) = t.strip_prefix("Usage:") {
            // "bakeoff run [OPTIONS] <EXPERIMENT>": the words before the first option.
            command = usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect::<Vec<_>>()
                .join(" ");
        } else if paragraph == 0 {
            message.push(t.trim_start_matches("error:").trim().to_string());
        }
    }
    let mut line = message.join(" ");
    for tip in tips {
        line.push_str(&format!(" ({tip})"));
    }
    format!("{line}; see '{command} --help'")
}

/// `bakeoff verify`: the verdict table, each difference, and exit status 1 on any.
fn verify_cmd(args: &RunArgs) -> Result<(), Failure> {
    crate::metrics::refuse_on("verify", &args.metrics)?;
    let loaded = load(&args.experiment, &args.set)?;
    let opts = options(args, &loaded);
    let _cancel = bakeoff_sandbox::install_signal_handler();
    let bars = Bars::new(progress_mode(args));
    let outcome = bakeoff_runner::verify_experiment(&loaded, &opts, &bars);
    bars.finish();
    let o = match outcome {
        Ok(o) => o,
        Err(RunError::BadInput(m)) => return Err(Failure::BadInput(m)),
        Err(e @ RunError::Interrupted(_)) => return Err(Failure::Interrupted(e.to_string())),
        Err(e) => return Err(Failure::Failed(e.to_string())),
    };
    let r = &o.results;
    if r.verification.is_empty() {
        return Err(Failure::BadInput(format!(
            "{}: nothing to verify: give [verify] queries = \"file.sql\" or a replay workload",
            args.experiment.display()
        )));
    }
    print!(
        "{}",
        bakeoff_report::verification::verification_table(r).plain()
    );
    for v in r.verification.iter().filter(|v| !v.differences.is_empty()) {
        println!("\n{}: results differ from {}", v.variant, r.plan.baseline);
        for d in &v.differences {
            for line in bakeoff_report::verification::difference_lines(d) {
                println!("  {line}");
            }
        }
    }
    println!("\nresults: {}", o.folder.display());
    let bad: Vec<&str> = r
        .verification
        .iter()
        .filter(|v| v.status != "same")
        .map(|v| v.variant.as_str())
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(Failure::Failed(format!(
            "verification failed for {}",
            bad.join(", ")
        )))
    }
}

fn run_cmd(args: &RunArgs, color: ColorChoice) -> Result<(), Failure> {
    // --metrics is checked before anything runs: loopback only, a port free.
    let endpoint = match &args.metrics {
        Some(a) => {
            let addr = crate::metrics::parse_addr(a).map_err(Failure::BadInput)?;
            Some(crate::metrics::Endpoint::start(addr).map_err(Failure::BadInput)?)
        }
        None => None,
    };
    let loaded = load(&args.experiment, &args.set)?;
    let opts = options(args, &loaded);
    let cancel = bakeoff_sandbox::install_signal_handler();
    let bars = Bars::new(progress_mode(args));
    let outcome = match &endpoint {
        Some(e) => {
            eprintln!(
                "metrics: http://{}/metrics (OpenMetrics, until the run ends)",
                e.addr
            );
            let watched = crate::metrics::Watched {
                inner: &bars,
                endpoint: e,
            };
            bakeoff_runner::run_experiment(&loaded, &opts, &watched, cancel)
        }
        None => bakeoff_runner::run_experiment(&loaded, &opts, &bars, cancel),
    };
    // The endpoint ends with the run.
    drop(endpoint);
    bars.finish();
    match outcome {
        Ok(o) => {
            let color = !args.no_color && color.enabled(std::io::stdout().is_terminal());
            print!(
                "{}",
                bakeoff_report::terminal_with(&o.results, color, &bakeoff_workloads::KINDS)
            );
            println!("\nresults: {}", o.folder.display());
            if let Some((id, store)) = record(args, &o.results, &o.folder) {
                println!("history: #{id} in {}", store.display());
            }
            if let Some(why) = no_comparison(&o.results) {
                return Err(Failure::NoComparison(why));
            }
            if let Some(why) = no_valid_run(&o.results) {
                return Err(Failure::NoValidRun(why));
            }
            match args.fail_on.and_then(|f| failed_on(f, &o.results)) {
                Some(why) => Err(Failure::Threshold(why)),
                None => Ok(()),
            }
        }
        Err(RunError::Interrupted(folder)) => {
            // What finished is in the folder; the history says it was interrupted.
            match read_results(&folder) {
                Ok(r) => {
                    if let Some((id, store)) = record(args, &r, &folder) {
                        eprintln!("history: #{id} ({}) in {}", r.status, store.display());
                    }
                }
                Err(m) => eprintln!("warning: not recorded in the history: {m}"),
            }
            Err(Failure::Interrupted(
                RunError::Interrupted(folder).to_string(),
            ))
        }
        Err(RunError::Unwritable { message, results }) => {
            // What was measured is shown, though the folder could not take it.
            let color = !args.no_color && color.enabled(std::io::stdout().is_terminal());
            print!(
                "{}",
                bakeoff_report::terminal_with(&results, color, &bakeoff_workloads::KINDS)
            );
            Err(Failure::Failed(message))
        }
        Err(RunError::BadInput(m)) => Err(Failure::BadInput(m)),
        Err(e) => Err(Failure::Failed(e.to_string())),
    }
}

/// The cells of variants that ran (their build or binary was ready) where not one run
/// was valid, in one line; None when every such cell has a figure. A variant that could
/// not be built is reported as failed in the table and does not count here.
pub(crate) fn no_valid_run(r: &Results) -> Option<String> {
    let ran = |name: &str| {
        r.variants
            .iter()
            .any(|v| v.name == name && v.status == "ok")
    };
    let empty: Vec<&bakeoff_report::model::Cell> = r
        .cells
        .iter()
        .filter(|c| c.valid_runs == 0 && !c.runs.is_empty() && ran(&c.variant))
        .collect();
    let first = empty.first()?;
    let why = first
        .runs
        .iter()
        .find_map(|run| run.invalid_reason.as_deref())
        .unwrap_or("every run was invalid");
    let cells: Vec<String> = empty
        .iter()
        .map(|c| format!("{} {} x{}", c.variant, c.workload, c.connections))
        .collect();
    Some(format!(
        "no valid run in {} cell(s): {} (first reason: {why}); fix that and run again",
        cells.len(),
        cells.join(", ")
    ))
}

/// When no comparison could be made although the experiment finished (the baseline
/// failed, or every variant compared with it did), why in one line; None otherwise.
pub(crate) fn no_comparison(r: &Results) -> Option<String> {
    let failed = bakeoff_report::summary::failed_variants(r);
    if failed.is_empty() {
        return None;
    }
    let compared: Vec<_> = r
        .variants
        .iter()
        .filter(|v| v.name != r.plan.baseline && !v.aa)
        .collect();
    let baseline_failed = failed.iter().any(|v| v.name == r.plan.baseline);
    let all_failed = !compared.is_empty() && compared.iter().all(|v| v.status != "ok");
    if !(baseline_failed || all_failed) {
        return None;
    }
    let names: Vec<&str> = failed.iter().map(|v| v.name.as_str()).collect();
    Some(format!(
        "no comparison could be made: {} failed (first reason: {}); fix that and run again",
        names.join(", "),
        failed[0].error.as_deref().unwrap_or("no reason recorded")
    ))
}

/// What meets `--fail-on`, in one line; None when nothing does. The A/A check (`[plan]
/// aa`) is the machine's, not a candidate: it never counts.
fn failed_on(what: crate::cli::FailOn, r: &Results) -> Option<String> {
    use bakeoff_report::model::Verdict;
    // One hit per comparison: in mode both, slower on either metric (the instruction
    // count's answer said beside the throughput one).
    let mut hits: Vec<String> = r
        .headline_comparisons()
        .filter(|k| !k.aa)
        .filter_map(|k| {
            let counted = r
                .instructions_beside(k)
                .filter(|i| i.verdict == Verdict::Slower);
            if k.verdict != Verdict::Slower && counted.is_none() {
                return None;
            }
            Some(format!(
                "{} x{} {} {}{}",
                k.workload,
                k.connections,
                k.variant,
                bakeoff_report::summary::verdict_text(k),
                counted.map_or(String::new(), |i| format!(
                    " (instructions {})",
                    bakeoff_report::summary::verdict_text(i)
                ))
            ))
        })
        .collect();
    // A variant that failed answered nothing: whatever was asked of it is not known.
    hits.extend(
        bakeoff_report::summary::failed_variants(r)
            .iter()
            .map(|v| format!("{} failed", v.name)),
    );
    if what == crate::cli::FailOn::Any {
        hits.extend(
            r.verification
                .iter()
                .filter(|v| !v.differences.is_empty())
                .map(|v| format!("{} returned different results", v.variant)),
        );
        hits.extend(
            r.variants
                .iter()
                .filter(|v| !v.memory_errors.is_empty())
                .map(|v| format!("{} has memory errors", v.name)),
        );
    }
    (!hits.is_empty()).then(|| format!("--fail-on: {}", hits.join("; ")))
}

fn report_cmd(dir: &Path, color: ColorChoice) -> Result<(), Failure> {
    let mut results = read_results(dir).map_err(Failure::BadInput)?;
    // The runs are the record; every figure and verdict is derived from them again, so a
    // report never shows statistics its runs do not support.
    bakeoff_runner::analyze(&mut results);
    let mut wrote = Vec::new();
    // Every report from results.json, which is the input and stays as it is.
    for ex in bakeoff_report::exporters_with(&bakeoff_workloads::KINDS) {
        if ex.file_name() == "results.json" {
            continue;
        }
        let out = dir.join(ex.file_name());
        if let Err(e) = bakeoff_os::file::write_atomic(&out, &ex.render(&results)) {
            return Err(Failure::Failed(format!(
                "cannot write {}: {e}; check that the folder is writable",
                out.display()
            )));
        }
        wrote.push(ex.file_name());
    }
    print_table(&results, color);
    println!("\nwrote {} in {}", wrote.join(", "), dir.display());
    Ok(())
}

/// The comparisons re-decided from the saved runs against another variant (and pairing,
/// if given): printed, and written beside the folder's own reports with the baseline in
/// their names (`report.baseline-NAME.html`: the links to the folder's series, logs and
/// profiles still work), or under their usual names into `out`.
fn rebase_cmd(
    dir: &Path,
    name: &str,
    how: Option<crate::cli::PairingArg>,
    out: Option<&Path>,
    color: ColorChoice,
) -> Result<(), Failure> {
    let mut results = read_results(dir).map_err(Failure::BadInput)?;
    let at = dir.join("results.json");
    let Some(v) = results.variants.iter().find(|v| v.name == name) else {
        let names: Vec<&str> = results.variants.iter().map(|v| v.name.as_str()).collect();
        return Err(Failure::BadInput(format!(
            "{}: --baseline {name:?} is no variant of this experiment; give one of {}",
            at.display(),
            names.join(", ")
        )));
    };
    if v.aa {
        return Err(Failure::BadInput(format!(
            "{}: --baseline {name:?} is the A/A check (the baseline's binary again), not a variant to compare against; give one of the experiment's own variants",
            at.display()
        )));
    }
    if !results
        .cells
        .iter()
        .any(|c| c.variant == name && c.runs.iter().any(|x| x.valid))
    {
        return Err(Failure::BadInput(format!(
            "{}: --baseline {name:?} has no valid run to compare against; give a variant that ran",
            at.display()
        )));
    }
    let was = std::mem::replace(&mut results.plan.baseline, name.to_string());
    if let Some(how) = how {
        results.plan.pairing = pairing_of(how);
    }
    bakeoff_runner::analyze(&mut results);
    results.notes.push(format!(
        "re-decided by `bakeoff report --baseline {name}` against {name}; the experiment ran with {was} as its baseline"
    ));
    let (folder, suffix) = match out {
        // Like a run's --out: an absent or empty folder, claimed so that nothing of a
        // user's (the results folder itself included) is ever written over.
        Some(o) => match bakeoff_os::own::claim_fresh(o, bakeoff_runner::RESULTS_PURPOSE) {
            Ok(true) => (o.to_path_buf(), None),
            Ok(false) => {
                return Err(Failure::BadInput(format!(
                "--out {}: the folder already exists and is not empty; give a new or empty folder",
                o.display()
            )))
            }
            Err(e) => {
                return Err(Failure::BadInput(format!(
                    "--out {}: cannot create the folder: {e}; give a folder you can write",
                    o.display()
                )))
            }
        },
        None => (
            dir.to_path_buf(),
            Some(format!("baseline-{}", bakeoff_os::path::safe_name(name))),
        ),
    };
    let mut wrote = Vec::new();
    for ex in bakeoff_report::exporters_with(&bakeoff_workloads::KINDS) {
        let file = match &suffix {
            Some(tag) => match ex.file_name().rsplit_once('.') {
                Some((stem, ext)) => format!("{stem}.{tag}.{ext}"),
                None => format!("{}.{tag}", ex.file_name()),
            },
            None => ex.file_name().to_string(),
        };
        let path = folder.join(&file);
        if let Err(e) = bakeoff_os::file::write_atomic(&path, &ex.render(&results)) {
            return Err(Failure::Failed(format!(
                "cannot write {}: {e}; check that the folder is writable",
                path.display()
            )));
        }
        wrote.push(file);
    }
    print_table(&results, color);
    println!(
        "\n(re-decided against {name}, the experiment's baseline being {was}) wrote {} in {}",
        wrote.join(", "),
        folder.display()
    );
    Ok(())
}

/// The results' terminal table and notes, on stdout.
fn print_table(results: &Results, color: ColorChoice) {
    print!(
        "{}",
        bakeoff_report::terminal_with(
            results,
            color.enabled(std::io::stdout().is_terminal()),
            &bakeoff_workloads::KINDS
        )
    );
}

fn pairing_of(how: crate::cli::PairingArg) -> bakeoff_report::model::Pairing {
    match how {
        crate::cli::PairingArg::Auto => bakeoff_report::model::Pairing::Auto,
        crate::cli::PairingArg::Paired => bakeoff_report::model::Pairing::Paired,
        crate::cli::PairingArg::Unpaired => bakeoff_report::model::Pairing::Unpaired,
    }
}

/// The comparisons re-decided from the saved runs with another pairing, printed only.
fn reanalyze_cmd(
    dir: &Path,
    how: crate::cli::PairingArg,
    color: ColorChoice,
) -> Result<(), Failure> {
    let mut results = read_results(dir).map_err(Failure::BadInput)?;
    results.plan.pairing = pairing_of(how);
    bakeoff_runner::analyze(&mut results);
    print_table(&results, color);
    println!(
        "\n(re-decided with pairing {}; nothing written)",
        results.plan.pairing
    );
    Ok(())
}

fn history_cmd(args: &HistoryArgs) -> Result<(), Failure> {
    let path = store_path(&args.store)?;
    let Some(store) = Store::open_existing(&path).map_err(store_failure)? else {
        // --json always prints JSON: an empty history is an empty list.
        if args.json {
            println!("[]");
        } else {
            println!("no history yet (store: {})", path.display());
        }
        return Ok(());
    };
    let filter = Filter {
        name: args.name.clone(),
        limit: (args.limit > 0).then_some(args.limit),
    };
    let total = store.count(&filter).map_err(store_failure)?;
    if total == 0 && args.json {
        println!("[]");
        return Ok(());
    }
    if total == 0 {
        match &args.name {
            Some(name) => {
                let names = store.names().map_err(store_failure)?;
                println!(
                    "no experiment named {name:?} in the history (store: {}){}",
                    path.display(),
                    known_names(&names)
                );
            }
            None => println!("no history yet (store: {})", path.display()),
        }
        return Ok(());
    }
    let records = store.list(&filter).map_err(store_failure)?;
    if args.json {
        println!("{}", json(&records)?);
        return Ok(());
    }
    print!("{}", bakeoff_store::history_table(&records));
    if total > records.len() {
        println!(
            "({} older not shown; --limit 0 shows all)",
            total - records.len()
        );
    }
    println!("\nstore: {}", path.display());
    Ok(())
}

fn known_names(names: &[String]) -> String {
    if names.is_empty() {
        "; it is empty".into()
    } else {
        format!("; known: {}", text_list(names))
    }
}

/// Names from the store, joined for a message: text, never terminal controls.
fn text_list(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .map(|n| bakeoff_os::name::printable(n))
        .collect();
    shown.join(", ")
}

/// `dir`, or `dir-2`, `dir-3`, ... : the first that does not exist yet.
fn fresh_folder(dir: PathBuf) -> PathBuf {
    if !dir.exists() {
        return dir;
    }
    (2..)
        .map(|i| PathBuf::from(format!("{}-{i}", dir.display())))
        .find(|p| !p.exists())
        .unwrap_or(dir)
}

/// Each compared cell over the history of A's and B's experiments (once per name), when
/// a store holds it; a store that cannot be read leaves the report without it.
fn history_of(
    store: &StoreArg,
    sides: &[&Side],
    keys: &[bakeoff_store::CellKey],
) -> Vec<bakeoff_report::model::HistoryRecord> {
    let Ok(path) = store_path(store) else {
        return Vec::new();
    };
    let Ok(Some(s)) = Store::open_existing(&path) else {
        return Vec::new();
    };
    let mut names: Vec<&str> = Vec::new();
    for side in sides {
        if !names.contains(&side.results.name.as_str()) {
            names.push(&side.results.name);
        }
    }
    names
        .into_iter()
        .flat_map(|name| {
            let records = s.history_of(name).unwrap_or_default();
            bakeoff_store::histories(name, &records, keys)
        })
        .collect()
}

fn compare_cmd(args: &CompareArgs, color: ColorChoice) -> Result<(), Failure> {
    let a = side(&args.a, &args.store)?;
    let b = side(&args.b, &args.store)?;
    let now = bakeoff_store::now_utc();
    let mut c = bakeoff_store::compare(&a, &b, &now);
    c.results.history = history_of(&args.store, &[&a, &b], &c.matched);
    if c.matched.is_empty() {
        let list = |r: &Results| {
            r.cells
                .iter()
                .map(|c| bakeoff_store::CellKey::of(c).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Failure::BadInput(format!(
            "A and B have no cell in common (same workload, connections and variant): A has {}; B has {}",
            list(&a.results),
            list(&b.results)
        )));
    }
    let folder = match &args.out {
        Some(out) => {
            let non_empty = std::fs::read_dir(out)
                .map(|mut d| d.next().is_some())
                .unwrap_or(false);
            if non_empty {
                return Err(Failure::BadInput(format!(
                    "{} already exists and is not empty; choose another --out",
                    out.display()
                )));
            }
            out.clone()
        }
        None => fresh_folder(
            args.results_dir
                .join(bakeoff_store::folder_name(&a.results, &b.results, &now)),
        ),
    };
    bakeoff_runner::write_results(
        &bakeoff_runner::Folder {
            path: folder.clone(),
        },
        &c.results,
    )
    .map_err(|e| Failure::Failed(e.to_string()))?;
    if args.json {
        println!("{}", json(&c.results)?);
        return Ok(());
    }
    let color = !args.no_color && color.enabled(std::io::stdout().is_terminal());
    print!("{}", c.table(color));
    println!("\nresults: {}", folder.display());
    Ok(())
}

fn trend_cmd(args: &TrendArgs) -> Result<(), Failure> {
    let path = store_path(&args.store)?;
    let store = Store::open_existing(&path).map_err(store_failure)?;
    let records = match &store {
        Some(s) => s.history_of(&args.name).map_err(store_failure)?,
        None => Vec::new(),
    };
    if records.is_empty() {
        let names = match &store {
            Some(s) => s.names().map_err(store_failure)?,
            None => Vec::new(),
        };
        return Err(Failure::BadInput(format!(
            "no experiment named {:?} in the history ({}){}",
            args.name,
            path.display(),
            known_names(&names)
        )));
    }
    let t = bakeoff_store::trend(
        &args.name,
        &records,
        args.variant.as_deref(),
        args.workload.as_deref(),
    );
    if t.columns.is_empty() {
        return Err(Failure::BadInput(format!(
            "no cell of {:?} matches{}{}; variants: {}; workloads: {}",
            args.name,
            args.variant
                .as_deref()
                .map(|v| format!(" --variant {v}"))
                .unwrap_or_default(),
            args.workload
                .as_deref()
                .map(|w| format!(" --workload {w}"))
                .unwrap_or_default(),
            text_list(&bakeoff_store::known_values(&records, |c| &c.variant)),
            text_list(&bakeoff_store::known_values(&records, |c| &c.workload))
        )));
    }
    if args.json {
        println!("{}", json(&t)?);
        return Ok(());
    }
    print!("{}", t.render());
    Ok(())
}

fn site_cmd(args: &crate::cli::SiteArgs) -> Result<(), Failure> {
    let opts = crate::site::SiteOptions {
        dir: args.dir.clone(),
        store: store_path(&args.store)?,
        since: args.since.clone(),
        name: args.name.clone(),
    };
    let s = crate::site::build(&opts)?;
    println!(
        "site: {} ({} experiments; {} files written, {} unchanged, {} removed; {} results read)",
        args.dir.join("index.html").display(),
        s.experiments,
        s.written,
        s.unchanged,
        s.removed,
        s.results_read
    );
    Ok(())
}

/// Pretty JSON for `--json`.
fn json<T: serde::Serialize>(v: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(v).map_err(|e| Failure::Failed(format!("cannot write JSON: {e}")))
}

/// What `check` says of the variants built from source: their names, and that a build
/// runs the source's own build scripts (configure, make) on this machine. None: no
/// variant builds.
fn builds_line(l: &bakeoff_plan::Loaded) -> Option<String> {
    let names: Vec<String> = l
        .experiment
        .variants
        .iter()
        .filter(|v| v.is_build())
        .map(|v| bakeoff_os::name::printable(&v.name))
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "builds: {} (a build runs the source's own build scripts on this machine, as you would by hand)",
            names.join(", ")
        )
    })
}

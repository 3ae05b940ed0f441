//! Progress on the terminal: a spinner per build, then one bar over all runs with its ETA
//! and the current run's live ops/s, refreshed by a ticker thread (never by the engine).

use bakeoff_report::model::{BuildRecord, Forecast, Run};
use bakeoff_report::summary::ops;
use bakeoff_report::summary::{duration_text, forecast_text};
use bakeoff_runner::{Live, Observer, RoundStatus};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The run being shown: its label and live counters.
type Current = Arc<Mutex<Option<(String, Arc<Live>)>>>;

pub struct Bars {
    multi: MultiProgress,
    build: Mutex<Option<ProgressBar>>,
    runs: Mutex<Option<ProgressBar>>,
    current: Current,
    /// The budget and widest-CI line shown before the current run's live figures.
    standing: Arc<Mutex<String>>,
    started: std::time::Instant,
    /// Without a terminal: one plain line per run and per round (false with --quiet).
    lines: bool,
    /// Whether the forecast lines were printed (once, when the minimum rounds are in).
    forecast_said: std::sync::atomic::AtomicBool,
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// Bars on a terminal.
    Bars,
    /// Plain lines (no terminal: CI, nohup, a pipe).
    Lines,
    /// Nothing but notices and failures (--quiet).
    Quiet,
}

impl Bars {
    pub fn new(show: Show) -> Bars {
        let target = if show == Show::Bars {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Bars {
            multi: MultiProgress::with_draw_target(target),
            build: Mutex::new(None),
            runs: Mutex::new(None),
            current: Arc::new(Mutex::new(None)),
            standing: Arc::new(Mutex::new(String::new())),
            started: std::time::Instant::now(),
            lines: show == Show::Lines,
            forecast_said: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn println(&self, line: &str) {
        if self.multi.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.multi.println(line);
        }
    }

    /// Clears the bars before the final table is printed.
    pub fn finish(&self) {
        for slot in [&self.build, &self.runs] {
            if let Some(b) = slot.lock().ok().and_then(|mut g| g.take()) {
                b.finish_and_clear();
            }
        }
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl Observer for Bars {
    fn round_finished(&self, status: &RoundStatus) {
        self.show_round(status);
    }

    fn notice(&self, line: &str) {
        self.println(line);
    }

    fn builds_started(&self, total: usize) {
        if total == 0 {
            return;
        }
        let b = self.multi.add(ProgressBar::new(total as u64));
        b.set_style(style(
            "{spinner} builds [{bar:30}] {pos}/{len} {elapsed} {msg}",
        ));
        b.enable_steady_tick(Duration::from_millis(120));
        *self.build.lock().unwrap_or_else(|e| e.into_inner()) = Some(b);
    }

    fn build_started(&self, variant: &str) {
        if let Some(b) = self
            .build
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            b.set_message(format!("building {variant}"));
        }
    }

    fn build_finished(&self, variant: &str, outcome: Result<&BuildRecord, &str>) {
        let line = match outcome {
            Ok(r) if r.cached => format!(
                "built {variant}: cached ({} bytes, {})",
                r.binary_bytes, r.compiler_version
            ),
            Ok(r) => format!(
                "built {variant} in {:.1} s ({} bytes, {})",
                r.seconds, r.binary_bytes, r.compiler_version
            ),
            Err(e) => format!("FAILED {variant}: {e}"),
        };
        self.println(&line);
        if let Some(b) = self
            .build
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            b.inc(1);
        }
    }

    fn runs_started(&self, total: usize, _seconds_each: f64) {
        if let Some(b) = self.build.lock().unwrap_or_else(|e| e.into_inner()).take() {
            b.finish_and_clear();
        }
        // A second batch (the profiling runs): the measured runs' bar stays, finished.
        if let Some(b) = self.runs.lock().unwrap_or_else(|e| e.into_inner()).take() {
            b.finish();
        }
        let b = self.multi.add(ProgressBar::new(total as u64));
        b.set_style(style(
            "runs [{bar:30}] {pos}/{len} {elapsed_precise} ETA {eta_precise}  {msg}",
        ));
        b.enable_steady_tick(Duration::from_millis(250));
        let current = self.current.clone();
        let standing = self.standing.clone();
        let ticker = b.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            if ticker.is_finished() {
                return;
            }
            if let Some((label, live)) = current.lock().ok().and_then(|g| g.clone()) {
                let standing = standing.lock().map(|s| s.clone()).unwrap_or_default();
                ticker.set_message(format!(
                    "{standing}{label}: {} {} ops/s",
                    live.phase_name(),
                    ops(live.ops_per_s())
                ));
            }
        });
        *self.runs.lock().unwrap_or_else(|e| e.into_inner()) = Some(b);
    }

    fn run_started(&self, _index: usize, label: &str, live: &Arc<Live>) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((label.to_string(), live.clone()));
        if let Some(b) = self.runs.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            b.set_message(format!("{label}: starting"));
        }
    }

    fn run_finished(&self, index: usize, label: &str, run: &Run) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if !run.valid {
            self.println(&format!(
                "invalid run {label}: {}",
                run.invalid_reason.as_deref().unwrap_or("?")
            ));
        } else if self.lines {
            // Without a terminal: one plain line per run, as pgbench -P prints.
            let disturbed = run
                .disturbed
                .as_deref()
                .map(|d| format!(" (disturbed: {d})"))
                .unwrap_or_default();
            self.println(&format!(
                "[{}] run {}: {label}: {} ops/s{disturbed}",
                duration_text(self.started.elapsed().as_secs_f64()),
                index + 1,
                ops(run.ops_per_s)
            ));
        }
        if let Some(b) = self.runs.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            b.inc(1);
        }
    }
}

impl Bars {
    /// After each round: the budget left and the widest CI, on the bar and as a line.
    fn show_round(&self, s: &RoundStatus) {
        let budget = s
            .budget_left
            .map(|b| format!("budget {} left · ", duration_text(b.as_secs_f64())))
            .unwrap_or_default();
        let widest = match (&s.widest, s.target) {
            (Some((w, at)), Some(t)) => {
                format!(
                    "widest CI ±{:.1}% ({at}), target ±{:.1}%",
                    w * 100.0,
                    t * 100.0
                )
            }
            (Some((w, at)), None) => format!("widest CI ±{:.1}% ({at})", w * 100.0),
            _ => "no CI yet".to_string(),
        };
        let line = format!("{budget}{widest}{}", forecast_short(s));
        if let Ok(mut g) = self.standing.lock() {
            *g = format!("{line} · ");
        }
        if let Some(b) = self.runs.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            b.set_length(b.position() + s.runs_left as u64);
        }
        if self.lines {
            self.println(&format!(
                "[{}] round {} done: {line}",
                duration_text(self.started.elapsed().as_secs_f64()),
                s.rounds
            ));
        }
        self.say_forecast(s);
    }

    /// The forecast of every comparison, in full, once: when the minimum rounds are in
    /// (on the terminal above the bars, or as plain lines; not with --quiet).
    fn say_forecast(&self, s: &RoundStatus) {
        let shown = self.lines || !self.multi.is_hidden();
        if !shown || s.forecasts.is_empty() {
            return;
        }
        if self
            .forecast_said
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        for (at, f) in &s.forecasts {
            self.println(&format!(
                "[{}] forecast after {} rounds: {at}: {}",
                duration_text(self.started.elapsed().as_secs_f64()),
                s.rounds,
                forecast_text(f)
            ));
        }
    }
}

/// The forecast for the bar, updated every round: the comparison the budget resolves
/// least, in a few words ("noise 6.1%: the budget reaches about ±5.0%; ±1.0% needs about
/// 55m04s"); empty before the minimum rounds are in.
fn forecast_short(s: &RoundStatus) -> String {
    let widest = s.forecasts.iter().map(|x| &x.1).max_by(|a, b| {
        let w = |f: &Forecast| f.reaches.unwrap_or(f64::INFINITY);
        w(a).total_cmp(&w(b))
    });
    let Some(f) = widest else {
        return String::new();
    };
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let reaches = f
        .reaches
        .map_or("too few rounds for an interval".into(), |h| {
            format!("the budget reaches about ±{}", pct(h))
        });
    let need = f.seconds_for_target.map_or("out of reach".into(), |t| {
        format!("needs about {}", duration_text(t))
    });
    format!(
        " · noise {}: {reaches}; ±{} {need}",
        pct(f.noise),
        pct(f.target)
    )
}

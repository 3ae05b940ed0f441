//! Figures a run can never have written, refused when results.json is read: a throughput,
//! time, count or share below zero or not a number, percentiles out of order, an interval
//! whose ends are swapped, a probability outside [0, 1], a ratio that is not finite, a
//! round beyond the rounds a run makes. Each is named by its place in the file
//! (`cells[3].runs[1].latency_us.p99`), so an edited or damaged folder is refused in one
//! line instead of being drawn as if it were measured; and [`json_path_at`] names the
//! place of a value serde refused (a count below zero, a string for a number). Reading
//! results.json is here too (`Results::from_json`, `Results::check`), so the model's
//! types name no check.

use crate::model::{
    json_problem, Cell, ComparisonRecord, Latency, Results, Run, SystemRecord, VariantRecord,
    CAPACITY, INSTRUCTIONS, MAX_INSTRUCTION_RUNS, SCHEMA, THROUGHPUT,
};

/// What to do, after every refusal.
const TODO: &str = "this results.json was edited or damaged: use a folder written by `bakeoff run` (or restore its results.json)";

/// A percentile this far below the one before it is out of order; closer, it is the
/// rounding of two sources (sysbench's summary p99 beside its histogram's p99.9).
const ORDER_SLACK: f64 = 0.9;

type Check = Result<(), String>;

/// Reading results.json: the model's types, checked here.
impl Results {
    /// Reads results.json, checking the schema id.
    pub fn from_json(text: &str) -> Result<Results, String> {
        let r: Results = serde_json::from_str(text).map_err(|e| {
            // Where the value is, by its place in the file, when serde refused a value.
            let at = match e.classify() {
                serde_json::error::Category::Data => json_path_at(text, e.line(), e.column()),
                _ => None,
            };
            let problem = json_problem(&e, "not a bakeoff results.json");
            let problem = match at {
                Some(at) => {
                    problem.replacen(": not a bakeoff", &format!(", at {at}: not a bakeoff"), 1)
                }
                None => problem,
            };
            format!(
                "{problem}; give a folder written by `bakeoff run` (or restore its results.json)"
            )
        })?;
        if r.schema != SCHEMA {
            return Err(format!(
                "its schema is not {SCHEMA:?}; re-run with this bakeoff version"
            ));
        }
        r.check()?;
        Ok(r)
    }

    /// What a run could never have written, refused with the field it is in: a name the
    /// experiment file would refuse ([`bakeoff_os::name::valid_name`]), a baseline that is
    /// not one of the variants, more runs in a cell than
    /// [`bakeoff_stats::MAX_ROUNDS`], a throughput that is negative or not a number, a
    /// tune winner that is not one of the variants and candidates.
    pub fn check(&self) -> Result<(), String> {
        use bakeoff_os::name::{printable, valid_name, NAME_RULE};
        let name = |field: &str, n: &str| -> Result<(), String> {
            if valid_name(n) {
                Ok(())
            } else {
                Err(format!(
                    "{field} {:?} is not a name bakeoff writes (names are {NAME_RULE}); this results.json was edited or made by hand: use a folder written by `bakeoff run`",
                    printable(&n.chars().take(80).collect::<String>())
                ))
            }
        };
        let known = |field: &str, n: &str| -> Result<(), String> {
            name(field, n)?;
            // `bakeoff compare` with several variants a side: "A" heads "A:<name>", ...
            let side =
                |v: &VariantRecord| v.name.strip_prefix(n).is_some_and(|r| r.starts_with(':'));
            if self.variants.is_empty() || self.variants.iter().any(|v| v.name == n || side(v)) {
                Ok(())
            } else {
                Err(format!(
                    "{field} {n:?} is not one of the variants; this results.json was edited or made by hand: use a folder written by `bakeoff run`"
                ))
            }
        };
        name("name", &self.name)?;
        let mut seen = std::collections::HashSet::with_capacity(self.variants.len());
        for (i, v) in self.variants.iter().enumerate() {
            name(&format!("variants[{i}].name"), &v.name)?;
            if !seen.insert(v.name.as_str()) {
                return Err(format!(
                    "variants[{i}].name {:?} is there twice; use a folder written by `bakeoff run`",
                    v.name
                ));
            }
        }
        for (i, v) in self.variants.iter().enumerate() {
            if let Some(d) = &v.dist {
                dist(&format!("variants[{i}].dist"), d)?;
            }
        }
        known("plan.baseline", &self.plan.baseline)?;
        for (i, c) in self.cells.iter().enumerate() {
            name(&format!("cells[{i}].workload"), &c.workload)?;
            name(&format!("cells[{i}].variant"), &c.variant)?;
            let rounds = c.runs.iter().filter(|x| !x.instruction_run).count();
            if rounds > bakeoff_stats::MAX_ROUNDS || c.runs.len() - rounds > MAX_INSTRUCTION_RUNS {
                return Err(format!(
                    "cells[{i}].runs holds {} runs, more than the {} rounds a run makes; use a folder written by `bakeoff run`",
                    c.runs.len(),
                    bakeoff_stats::MAX_ROUNDS
                ));
            }
            for (j, run) in c.runs.iter().enumerate() {
                if !(run.ops_per_s.is_finite() && run.ops_per_s >= 0.0) {
                    return Err(format!(
                        "cells[{i}].runs[{j}].ops_per_s is {}, not a throughput (a number of operations per second, 0 or more); use a folder written by `bakeoff run`",
                        run.ops_per_s
                    ));
                }
            }
        }
        for (i, c) in self.comparisons.iter().enumerate() {
            name(&format!("comparisons[{i}].workload"), &c.workload)?;
            name(&format!("comparisons[{i}].variant"), &c.variant)?;
            name(&format!("comparisons[{i}].baseline"), &c.baseline)?;
            if ![THROUGHPUT, INSTRUCTIONS, CAPACITY].contains(&c.metric.as_str()) {
                return Err(format!(
                    "comparisons[{i}].metric {:?} is none of {THROUGHPUT:?}, {INSTRUCTIONS:?}, {CAPACITY:?}; use a folder written by `bakeoff run`",
                    c.metric
                ));
            }
        }
        if let Some(a) = &self.aa {
            name("aa.variant", &a.variant)?;
            name("aa.workload", &a.workload)?;
            name("aa.baseline", &a.baseline)?;
        }
        if let Some(t) = &self.tune {
            known("tune.baseline", &t.baseline)?;
            for (i, c) in t.candidates.iter().enumerate() {
                name(&format!("tune.candidates[{i}].name"), &c.name)?;
            }
            if let Some(w) = &t.winner {
                known("tune.winner.name", &w.name)?;
                if !t.candidates.iter().any(|c| c.name == w.name) {
                    return Err(format!(
                        "tune.winner.name {:?} is not one of tune.candidates; this results.json was edited or made by hand: use a folder written by `bakeoff tune`",
                        printable(&w.name)
                    ));
                }
            }
        }
        values(self)
    }
}

/// The distribution kinds `bakeoff run` records (`DistSource::spec`'s prefixes).
const DIST_KINDS: &[&str] = &["url:", "file:", "maven:", "pypi:", "debian:", "npm:"];

/// A `variants[i].dist` record as `bakeoff run` writes it: a spec of a known kind, one
/// line; a sha256 of 64 hex digits (or none, for a folder); version, compiler and
/// allocator one line each.
fn dist(at: &str, d: &crate::model::DistRecord) -> Check {
    let one_line = |s: &str| !s.is_empty() && s.len() <= 4096 && !s.chars().any(char::is_control);
    if !one_line(&d.spec) || !DIST_KINDS.iter().any(|k| d.spec.starts_with(k)) {
        return Err(format!(
            "{at}.spec is not a distribution bakeoff records (one line starting {}); {TODO}",
            DIST_KINDS.join(", ")
        ));
    }
    if !(d.sha256.is_empty()
        || (d.sha256.len() == 64 && d.sha256.chars().all(|c| c.is_ascii_hexdigit())))
    {
        return Err(format!("{at}.sha256 is not 64 hex digits; {TODO}"));
    }
    for (k, v) in [
        ("version", &d.version),
        ("compiler", &d.compiler),
        ("allocator", &d.allocator),
    ] {
        if v.as_deref()
            .is_some_and(|s| s.len() > 4096 || s.chars().any(char::is_control))
        {
            return Err(format!("{at}.{k} is not one line of text; {TODO}"));
        }
    }
    Ok(())
}

fn refuse(at: &str, v: f64, what: &str) -> Check {
    Err(format!("{at} is {v}, {what}; {TODO}"))
}

/// A figure that is a number, 0 or more.
fn amount(at: &str, v: f64) -> Check {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        refuse(at, v, "not a figure of 0 or more")
    }
}

fn opt_amount(at: &str, v: Option<f64>) -> Check {
    v.map_or(Ok(()), |v| amount(at, v))
}

/// A probability or coverage: between 0 and 1.
fn share(at: &str, v: f64) -> Check {
    if (-1e-9..=1.0 + 1e-9).contains(&v) {
        Ok(())
    } else {
        refuse(at, v, "not a probability between 0 and 1")
    }
}

/// A percentage of a machine's time: between 0 and 100.
fn percent(at: &str, v: f64) -> Check {
    if v.is_finite() && (0.0..=100.0 + 1e-6).contains(&v) {
        Ok(())
    } else {
        refuse(at, v, "not a percentage between 0 and 100")
    }
}

/// An interval: two figures, the lower first.
fn interval(at: &str, ci: [f64; 2]) -> Check {
    amount(&format!("{at}[0]"), ci[0])?;
    amount(&format!("{at}[1]"), ci[1])?;
    if ci[0] <= ci[1] {
        Ok(())
    } else {
        Err(format!(
            "{at} is [{}, {}], an interval whose lower end is above its upper end; {TODO}",
            ci[0], ci[1]
        ))
    }
}

/// Latency percentiles: each a figure of 0 or more, in order (0 is a percentile not
/// measured).
fn latency(at: &str, l: &Latency) -> Check {
    let all = [
        ("p50", l.p50),
        ("p90", l.p90),
        ("p99", l.p99),
        ("p999", l.p999),
        ("max", l.max),
    ];
    for (name, v) in all.iter().chain([("mean", l.mean)].iter()) {
        amount(&format!("{at}.{name}"), *v)?;
    }
    let mut before: Option<(&str, f64)> = None;
    for (name, v) in all {
        if v == 0.0 {
            continue;
        }
        if let Some((b, bv)) = before {
            if v < bv * ORDER_SLACK {
                return Err(format!(
                    "{at}.{name} is {v}, below {at}.{b} ({bv}): percentiles out of order; {TODO}"
                ));
            }
        }
        before = Some((name, v));
    }
    Ok(())
}

fn system(at: &str, s: &SystemRecord) -> Check {
    for (name, v) in [
        ("cpu_user_pct", s.cpu_user_pct),
        ("cpu_system_pct", s.cpu_system_pct),
        ("cpu_idle_pct", s.cpu_idle_pct),
        ("cpu_iowait_pct", s.cpu_iowait_pct),
        ("cpu_softirq_pct", s.cpu_softirq_pct),
        ("cpu_steal_pct", s.cpu_steal_pct),
    ] {
        percent(&format!("{at}.{name}"), v)?;
    }
    for (name, v) in [
        ("server_cpu_pct_mean", s.server_cpu_pct_mean),
        ("server_cpu_pct_max", s.server_cpu_pct_max),
        ("ctx_switches_per_op", s.ctx_switches_per_op),
        ("disk_util_pct_max", s.disk_util_pct_max),
        ("loopback_bytes_per_op", s.loopback_bytes_per_op),
    ] {
        amount(&format!("{at}.{name}"), v)?;
    }
    Ok(())
}

fn run(at: &str, x: &Run) -> Check {
    if x.round >= bakeoff_stats::MAX_ROUNDS {
        return Err(format!(
            "{at}.round is {}, beyond the {} rounds a run makes; {TODO}",
            x.round,
            bakeoff_stats::MAX_ROUNDS
        ));
    }
    for (name, v) in [
        ("ops_per_s", x.ops_per_s),
        ("elapsed_s", x.elapsed_s),
        ("client_cpu_s", x.client_cpu_s),
        ("client_wait_s", x.client_wait_s),
        ("client_cpu_us_per_op", x.client_cpu_us_per_op),
        ("server_cpu_s", x.server_cpu_s),
        ("server_cpu_us_per_op", x.server_cpu_us_per_op),
    ] {
        amount(&format!("{at}.{name}"), v)?;
    }
    for (name, v) in [
        ("wall_s", x.wall_s),
        ("offered_ops_per_s", x.offered_ops_per_s),
        ("tps", x.tps),
        ("qps", x.qps),
        ("client_cpu_us_per_txn", x.client_cpu_us_per_txn),
    ] {
        opt_amount(&format!("{at}.{name}"), v)?;
    }
    latency(&format!("{at}.latency_us"), &x.latency_us)?;
    if let Some(s) = &x.service_us {
        latency(&format!("{at}.service_us"), s)?;
    }
    for (i, v) in x.interval_ops_per_s.iter().enumerate() {
        amount(&format!("{at}.interval_ops_per_s[{i}]"), *v)?;
    }
    for (kind, k) in &x.statements {
        latency(&format!("{at}.statements.{kind}.latency_us"), &k.latency_us)?;
    }
    if let Some(s) = &x.system {
        system(&format!("{at}.system"), s)?;
    }
    if let Some(i) = &x.instructions {
        amount(
            &format!("{at}.instructions.instructions_per_op"),
            i.instructions_per_op,
        )?;
    }
    if let Some(c) = &x.counters {
        for (name, v) in [
            ("instructions_per_op", c.instructions_per_op),
            ("cycles_per_op", c.cycles_per_op),
            ("ipc", c.ipc),
        ] {
            opt_amount(&format!("{at}.counters.{name}"), v)?;
        }
    }
    kinds(at, &x.figures)?;
    for (i, c) in x.clients.iter().enumerate() {
        let at = format!("{at}.clients[{i}]");
        amount(&format!("{at}.ops_per_s"), c.ops_per_s)?;
        amount(&format!("{at}.client_cpu_s"), c.client_cpu_s)?;
    }
    Ok(())
}

/// A kind's own figures: every number in them is a figure of 0 or more (no kind writes
/// another).
fn kinds(at: &str, f: &crate::figures::Figures) -> Check {
    match f.negative() {
        Some((key, v)) => refuse(&format!("{at}.{key}"), v, "not a figure of 0 or more"),
        None => Ok(()),
    }
}

fn cell(at: &str, c: &Cell) -> Check {
    amount(&format!("{at}.median_ops_per_s"), c.median_ops_per_s)?;
    interval(&format!("{at}.ci95"), c.ci95)?;
    share(&format!("{at}.ci_coverage"), c.ci_coverage)?;
    amount(&format!("{at}.cv"), c.cv)?;
    latency(&format!("{at}.latency_us"), &c.latency_us)?;
    opt_amount(&format!("{at}.instructions_per_op"), c.instructions_per_op)?;
    if let Some(s) = &c.system {
        system(&format!("{at}.system"), s)?;
    }
    kinds(at, &c.kinds)?;
    if let Some(k) = &c.capacity {
        amount(&format!("{at}.capacity.ops_per_s"), k.ops_per_s)?;
        interval(&format!("{at}.capacity.ci"), k.ci)?;
        amount(&format!("{at}.capacity.limit_us"), k.limit_us)?;
        opt_amount(&format!("{at}.capacity.peak_ops_per_s"), k.peak_ops_per_s)?;
    }
    for (j, x) in c.runs.iter().enumerate() {
        run(&format!("{at}.runs[{j}]"), x)?;
    }
    Ok(())
}

fn comparison(at: &str, k: &ComparisonRecord) -> Check {
    if !(k.ratio.is_finite() && k.ratio >= 0.0) {
        return refuse(
            &format!("{at}.ratio"),
            k.ratio,
            "not a finite ratio of 0 or more",
        );
    }
    interval(&format!("{at}.ci95"), k.ci95)?;
    if let Some(ci) = k.ci95_unadjusted {
        interval(&format!("{at}.ci95_unadjusted"), ci)?;
    }
    share(&format!("{at}.p_value"), k.p_value)?;
    share(&format!("{at}.p_adjusted"), k.p_adjusted)?;
    share(&format!("{at}.ci_level"), k.ci_level)?;
    share(&format!("{at}.ci_coverage"), k.ci_coverage)?;
    opt_amount(&format!("{at}.detectable"), k.detectable)?;
    opt_amount(&format!("{at}.hiding"), k.hiding)?;
    opt_amount(&format!("{at}.more_seconds"), k.more_seconds)?;
    Ok(())
}

/// Every figure of `r` that a run could have written, or one line naming the first that
/// it could not.
pub fn values(r: &Results) -> Check {
    amount("plan.warmup_s", r.plan.warmup_s)?;
    opt_amount("plan.duration_s", r.plan.duration_s)?;
    opt_amount("plan.budget_s", r.plan.budget_s)?;
    opt_amount("plan.precision", r.plan.precision)?;
    amount("plan.equivalence", r.plan.equivalence)?;
    if r.plan.rounds.len() > bakeoff_stats::MAX_ROUNDS {
        return Err(format!(
            "plan.rounds holds {} rounds, more than the {} a run makes; {TODO}",
            r.plan.rounds.len(),
            bakeoff_stats::MAX_ROUNDS
        ));
    }
    opt_amount("rounds_s", r.rounds_s)?;
    for (i, c) in r.cells.iter().enumerate() {
        cell(&format!("cells[{i}]"), c)?;
    }
    for (i, k) in r.comparisons.iter().enumerate() {
        comparison(&format!("comparisons[{i}]"), k)?;
    }
    for (i, v) in r.variants.iter().enumerate() {
        if let Some(b) = &v.build {
            amount(&format!("variants[{i}].build.seconds"), b.seconds)?;
        }
        for (j, d) in v.data.iter().enumerate() {
            amount(&format!("variants[{i}].data[{j}].seconds"), d.seconds)?;
        }
    }
    for (i, h) in r.history.iter().enumerate() {
        for (j, p) in h.points.iter().enumerate() {
            let at = format!("history[{i}].points[{j}]");
            amount(&format!("{at}.median_ops_per_s"), p.median_ops_per_s)?;
            interval(&format!("{at}.ci95"), p.ci95)?;
        }
    }
    Ok(())
}

/// The place in a JSON text of the value at `line` and `column` (serde_json's, both from
/// 1): `cells[0].runs[2].ops`, or None at the top.
pub fn json_path_at(text: &str, line: usize, column: usize) -> Option<String> {
    enum Frame {
        Object { key: Option<String>, value: bool },
        Array { index: usize },
    }
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let end = (line_start + column).min(text.len());
    let b = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match b[i] {
            b'{' => stack.push(Frame::Object {
                key: None,
                value: false,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                if let Some(Frame::Object { value, .. }) = stack.last_mut() {
                    *value = true;
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key, value }) => {
                    *key = None;
                    *value = false;
                }
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, value: false }) = stack.last_mut() {
                    let raw = &text[start..i.min(b.len())];
                    *key = Some(serde_json::from_str(&format!("\"{raw}\"")).unwrap_or_default());
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for f in &stack {
        match f {
            Frame::Object { key: Some(k), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    (!path.is_empty()).then(|| crate::format::printable(&path))
}

#[cfg(test)]
mod tests {
    use super::json_path_at;

    #[test]
    fn a_place_in_json_is_named_by_its_path() {
        let text = "{\"cells\": [{\"runs\": []}, {\"runs\": [{\"ops\": 1}, {\"ops\": -1}]}]}";
        let col = text.find("-1").unwrap() + 2;
        assert_eq!(
            json_path_at(text, 1, col).as_deref(),
            Some("cells[1].runs[1].ops")
        );
        let text = "{\n  \"a\": {\"b\\\"c\": [1,\n 2, x]}}";
        assert_eq!(json_path_at(text, 3, 5).as_deref(), Some("a.b\"c[2]"));
        assert_eq!(json_path_at("oops", 1, 1), None);
    }
}

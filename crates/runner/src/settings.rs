//! The settings each variant ran with: read from every ready server before its load
//! (`one_run.rs`, through `Sandbox::settings`, which asks the target), recorded once per
//! variant from its first valid run (`variants[].settings`; a later run that reads
//! differently is noted in `settings_changed`), and the diff between the variants
//! (`settings_diff`), the target's table of settings that move performance
//! (`Target::knobs`) first. The warnings they give are [`warnings`], a pure function of
//! the results that `analyze` calls with the rest.

use crate::context::{Context, SettingsRead};
use crate::schedule::Slot;
use bakeoff_report::model::{ExperimentRecord, Results, SettingDiff, VariantRecord};
use bakeoff_report::warning::{Warning, WarningCode as Code};
use bakeoff_sandbox::settings::{is_secret, Knob, MASKED};
use bakeoff_sandbox::stats::StatsLevel;
use bakeoff_sandbox::Sandbox;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// Reads the ready sandbox's settings (masked, see `Sandbox::settings`).
pub(crate) fn read(sandbox: &Sandbox) -> SettingsRead {
    let began = Instant::now();
    let settings = sandbox.settings();
    SettingsRead {
        settings,
        ms: began.elapsed().as_secs_f64() * 1e3,
    }
}

/// What a server on another host gives: its settings are not read (yet).
pub(crate) fn not_here(host: &str) -> SettingsRead {
    SettingsRead {
        settings: Err(format!(
            "its server ran on {host}; bakeoff reads settings only from servers on this machine"
        )),
        ms: 0.0,
    }
}

/// Keeps what a run of `slot` read: the variant's first valid run's settings (or why
/// they could not be read), a later valid run that read differently as a line in
/// `settings_changed`; then the diff between the variants anew.
pub(crate) fn record(
    ctx: &Context<'_>,
    results: &mut Results,
    slot: &Slot,
    read: Option<SettingsRead>,
    valid: bool,
) {
    let (Some(read), true) = (read, valid) else {
        return;
    };
    let target = bakeoff_sandbox::target_for(ctx.variants[slot.variant].kind);
    let Some(v) = results.variants.get_mut(ctx.variants[slot.variant].record) else {
        return;
    };
    let tls = match target.protocol() {
        bakeoff_sandbox::Protocol::Sql => bakeoff_sqlclient::ENCRYPTED,
        _ => bakeoff_engine::ENCRYPTED,
    };
    keep(v, read, slot.round, tls);
    let e = &ctx.loaded.experiment;
    results.settings_diff = diff(&results.variants, &knobs_of(e));
    results
        .settings_diff
        .extend(stats_diff(&results.variants, e.plan.server_stats));
}

/// The knobs of every kind of server the variants are, each kind's table in variant
/// order, a name once (the first kind's entry).
fn knobs_of(e: &bakeoff_plan::Experiment) -> Vec<Knob> {
    let mut out: Vec<Knob> = Vec::new();
    for kind in e.variant_kinds() {
        for k in bakeoff_sandbox::target_for(kind).knobs() {
            if !out.iter().any(|o| o.name == k.name) {
                out.push(*k);
            }
        }
    }
    out
}

/// Most lines `settings_changed` keeps per variant.
const MAX_CHANGED: usize = 5;

/// See [`record`] (the first read with its time and the clients' TLS).
fn keep(v: &mut VariantRecord, read: SettingsRead, round: usize, tls: bool) {
    v.tls = Some(tls);
    let first = v.settings.is_empty() && v.settings_error.is_none();
    match read.settings {
        Ok(s) if first => {
            v.settings = s;
            v.settings_read_ms = Some(read.ms);
        }
        Err(e) if first => v.settings_error = Some(e),
        Ok(s) => {
            if v.settings_error.is_some() || v.settings_changed.len() >= MAX_CHANGED {
                return;
            }
            if let Some(line) = changed(&v.settings, &s) {
                v.settings_changed
                    .push(format!("round {}: {line}", round + 1));
            }
        }
        Err(_) => {}
    }
}

/// The first few differences between a first read and a later one, as one line.
fn changed(first: &BTreeMap<String, String>, now: &BTreeMap<String, String>) -> Option<String> {
    let names: BTreeSet<&String> = first.keys().chain(now.keys()).collect();
    let none = "(absent)".to_string();
    let diffs: Vec<String> = names
        .into_iter()
        .filter(|n| first.get(*n) != now.get(*n))
        .map(|n| {
            format!(
                "{n} = {} (first run: {})",
                now.get(n).unwrap_or(&none),
                first.get(n).unwrap_or(&none)
            )
        })
        .collect();
    match diffs.len() {
        0 => None,
        1..=3 => Some(diffs.join(", ")),
        n => Some(format!("{} and {} more", diffs[..3].join(", "), n - 3)),
    }
}

/// Every setting whose value differs between the variants that read theirs (at least
/// two), the knobs first in their table's order, then the rest by name; a name only
/// some variants have is marked `only_some` and comes after the shared ones of its rank.
pub fn diff(variants: &[VariantRecord], knobs: &[Knob]) -> Vec<SettingDiff> {
    let mut out = server_diff(variants, knobs);
    out.extend(system_diff(variants));
    out
}

/// The variants' system settings (`variants[].system`) where they differ, each named
/// `system NAME` under the topic `machine`, asked by the variants that set it; a variant
/// that did not set it ran with the machine as found.
fn system_diff(variants: &[VariantRecord]) -> Vec<SettingDiff> {
    if variants.len() < 2 {
        return Vec::new();
    }
    let names: BTreeSet<&String> = variants.iter().flat_map(|v| v.system.keys()).collect();
    let found = "(as found)".to_string();
    names
        .into_iter()
        .filter_map(|name| {
            let values: BTreeMap<String, String> = variants
                .iter()
                .map(|v| (v.name.clone(), v.system.get(name).unwrap_or(&found).clone()))
                .collect();
            let distinct: BTreeSet<&String> = values.values().collect();
            (distinct.len() > 1).then(|| SettingDiff {
                name: format!("system {name}"),
                values,
                topic: Some("machine".into()),
                asked_by: variants
                    .iter()
                    .filter(|v| v.system.contains_key(name))
                    .map(|v| v.name.clone())
                    .collect(),
                only_some: false,
            })
        })
        .collect()
}

/// The row `server_stats` where the variants read the servers' statistics at different
/// levels (a variant's own `server_stats` over the plan's), asked by the variants that
/// set their own.
fn stats_diff(variants: &[VariantRecord], plan: StatsLevel) -> Vec<SettingDiff> {
    let values: BTreeMap<String, String> = variants
        .iter()
        .map(|v| {
            let level = v.server_stats.as_deref().unwrap_or(plan.as_str());
            (v.name.clone(), level.to_string())
        })
        .collect();
    let distinct: BTreeSet<&String> = values.values().collect();
    if distinct.len() < 2 {
        return Vec::new();
    }
    vec![SettingDiff {
        name: "server_stats".into(),
        values,
        topic: Some("measurement".into()),
        asked_by: variants
            .iter()
            .filter(|v| v.server_stats.is_some())
            .map(|v| v.name.clone())
            .collect(),
        only_some: false,
    }]
}

/// Whether `v` asked for `knob`: in its options or arguments, or, for a setting of the
/// server's instrumentation (performance_schema, which `server_stats = "full"` turns
/// on), by its own `server_stats`.
fn asks(knob: &Knob, v: &VariantRecord) -> bool {
    knob.asked(&v.options, &v.args) || (knob.topic == "instrumentation" && v.server_stats.is_some())
}

/// [`diff`] of the settings the servers reported.
fn server_diff(variants: &[VariantRecord], knobs: &[Knob]) -> Vec<SettingDiff> {
    let with: Vec<&VariantRecord> = variants.iter().filter(|v| !v.settings.is_empty()).collect();
    if with.len() < 2 {
        return Vec::new();
    }
    let names: BTreeSet<&String> = with.iter().flat_map(|v| v.settings.keys()).collect();
    let mut out: Vec<(usize, SettingDiff)> = Vec::new();
    for name in names {
        let values: BTreeMap<String, String> = with
            .iter()
            .filter_map(|v| Some((v.name.clone(), v.settings.get(name)?.clone())))
            .collect();
        let only_some = values.len() < with.len();
        let distinct: BTreeSet<&String> = values.values().collect();
        if !only_some && distinct.len() < 2 {
            continue;
        }
        let at = knobs.iter().position(|k| k.name == name.as_str());
        let knob = at.map(|i| knobs[i]);
        let asked_by = knob.map_or_else(Vec::new, |k| {
            with.iter()
                .filter(|v| asks(&k, v))
                .map(|v| v.name.clone())
                .collect()
        });
        out.push((
            at.unwrap_or(usize::MAX),
            SettingDiff {
                name: name.clone(),
                values,
                topic: knob.map(|k| k.topic.to_string()),
                asked_by,
                only_some,
            },
        ));
    }
    out.sort_by(|(ra, a), (rb, b)| (a.only_some, *ra, &a.name).cmp(&(b.only_some, *rb, &b.name)));
    out.into_iter().map(|(_, d)| d).collect()
}

/// The warnings the settings give: a setting that moves performance differing between
/// variants though the experiment file asked for it on none, a variant whose later runs
/// read different settings, and settings that could not be read.
pub fn warnings(r: &Results) -> Vec<Warning> {
    let mut out: Vec<Warning> = r
        .settings_diff
        .iter()
        .filter(|d| d.topic.is_some() && d.asked_by.is_empty() && !d.only_some)
        .map(|d| Warning::new(Code::UnaskedSetting, unasked(d)))
        .collect();
    for v in &r.variants {
        if let Some(first) = v.settings_changed.first() {
            out.push(Warning::new(Code::SettingsChanged, format!(
                "{} read different settings in a later run than in its first ({first}): its runs did not all run alike",
                v.name
            )));
        }
        if let Some(e) = &v.settings_error {
            out.push(Warning::new(
                Code::SettingsUnread,
                format!(
                    "{}'s settings could not be read ({e}); the settings diff leaves it out",
                    v.name
                ),
            ));
        }
    }
    out
}

/// "b ran with log_bin = ON, a with OFF: the comparison includes binary logging ...".
fn unasked(d: &SettingDiff) -> String {
    let topic = d.topic.as_deref().unwrap_or("setting");
    let mut by_value: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (v, val) in &d.values {
        by_value.entry(val.as_str()).or_default().push(v.as_str());
    }
    let shown = |val: &str| {
        if val.is_empty() {
            "''".to_string()
        } else {
            val.to_string()
        }
    };
    let parts: Vec<String> = by_value
        .iter()
        .enumerate()
        .map(|(i, (val, vs))| {
            if i == 0 {
                format!("{} ran with {} = {}", vs.join(", "), d.name, shown(val))
            } else {
                format!("{} with {}", vs.join(", "), shown(val))
            }
        })
        .collect();
    format!(
        "{}: the comparison includes this difference in {topic}, which the experiment file did not ask for; set {} on every variant to compare the servers alone",
        parts.join(", "),
        d.name
    )
}

/// An experiment's secrets kept out of results.json: the values of its servers' secret
/// options and arguments (by name, `bakeoff_sandbox::settings::is_secret`: `requirepass`,
/// `masterauth`, `*password*`, ...), written `(masked)` in the experiment's text and
/// resolved form; [`masked_options`] and [`masked_args`] do the same for a variant's
/// record.
pub(crate) fn mask_experiment(l: &bakeoff_plan::Loaded, record: &mut ExperimentRecord) {
    let e = &l.experiment;
    let mut secrets: BTreeSet<String> = BTreeSet::new();
    for v in &e.variants {
        for (k, val) in e.server_options(v) {
            if is_secret(&k) && !val.is_empty() {
                secrets.insert(val);
            }
        }
        secrets.extend(secret_args(&e.server_args(v)));
    }
    for secret in &secrets {
        record.text = mask_in(&record.text, secret);
        mask_json(&mut record.resolved, secret);
    }
}

/// `value` with `secret` written as `(masked)`: everywhere when it is long enough not to
/// be an ordinary word, else only where it stands quoted whole.
fn mask_in(value: &str, secret: &str) -> String {
    if secret.len() >= 4 {
        return value.replace(secret, MASKED);
    }
    value
        .replace(&format!("\"{secret}\""), &format!("\"{MASKED}\""))
        .replace(&format!("'{secret}'"), &format!("'{MASKED}'"))
}

fn mask_json(v: &mut serde_json::Value, secret: &str) {
    match v {
        serde_json::Value::String(s) if s == secret => *s = MASKED.to_string(),
        serde_json::Value::String(s) if secret.len() >= 4 && s.contains(secret) => {
            *s = s.replace(secret, MASKED)
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| mask_json(x, secret)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| mask_json(x, secret)),
        _ => {}
    }
}

/// A variant's options as recorded: a secret's value masked.
pub(crate) fn masked_options(options: BTreeMap<String, String>) -> BTreeMap<String, String> {
    options
        .into_iter()
        .map(|(k, v)| {
            let v = bakeoff_sandbox::settings::mask(&k, &v, &[]);
            (k, v)
        })
        .collect()
}

/// A variant's arguments as recorded: the value of a secret flag masked.
pub(crate) fn masked_args(args: &[String]) -> Vec<String> {
    let secrets = secret_args(args);
    args.iter()
        .map(|a| {
            let mut a = a.clone();
            for s in &secrets {
                if a == *s || a.ends_with(&format!("={s}")) || a.ends_with(&format!(" {s}")) {
                    a = a[..a.len() - s.len()].to_string() + MASKED;
                }
            }
            a
        })
        .collect()
}

/// The values that secret flags take in `args`: `--requirepass x`, `--requirepass=x`,
/// `"--requirepass x"` (Redis reads one argument as a config line), `-c password=x`.
fn secret_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let body = a.trim_start_matches('-');
        let (name, value) = match body.split_once(['=', ' ']) {
            Some((n, v)) => (n, Some(v.trim().to_string())),
            None => (body, None),
        };
        if name.is_empty() || !is_secret(name) {
            continue;
        }
        match value {
            Some(v) if !v.is_empty() => out.push(v),
            None if a.starts_with('-') => {
                if let Some(next) = args.get(i + 1).filter(|n| !n.starts_with('-')) {
                    out.push(next.clone());
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sandbox::settings::knob;

    fn variant(name: &str, settings: &[(&str, &str)]) -> VariantRecord {
        VariantRecord {
            name: name.into(),
            status: "ok".into(),
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..VariantRecord::default()
        }
    }

    const KNOBS: &[Knob] = &[knob("log_bin", "durability"), knob("shared", "memory")];

    #[test]
    fn a_variants_own_server_stats_is_a_row_it_asked_and_asks_for_instrumentation() {
        let a = variant("a", &[("performance_schema", "OFF")]);
        let mut b = variant("b", &[("performance_schema", "ON")]);
        b.server_stats = Some("full".into());
        let knobs = [knob("performance_schema", "instrumentation")];
        let d = diff(&[a.clone(), b.clone()], &knobs);
        assert_eq!(d[0].asked_by, ["b"], "{d:?}");
        let row = stats_diff(&[a.clone(), b], StatsLevel::Basic);
        assert_eq!(row[0].name, "server_stats");
        assert_eq!(row[0].values["a"], "basic");
        assert_eq!(row[0].values["b"], "full");
        assert_eq!(row[0].asked_by, ["b"]);
        // The same level on every variant: no row.
        let mut c = variant("c", &[]);
        c.server_stats = Some("basic".into());
        assert!(stats_diff(&[a, c], StatsLevel::Basic).is_empty());
    }

    #[test]
    fn the_diff_lists_differences_knobs_first_and_one_sided_names_apart() {
        let a = variant(
            "a",
            &[
                ("log_bin", "OFF"),
                ("x", "1"),
                ("same", "s"),
                ("only_a", "1"),
            ],
        );
        let b = variant("b", &[("log_bin", "ON"), ("x", "2"), ("same", "s")]);
        let d = diff(&[a.clone(), b], KNOBS);
        let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["log_bin", "x", "only_a"]);
        assert_eq!(d[0].topic.as_deref(), Some("durability"));
        assert_eq!(d[0].values["a"], "OFF");
        assert_eq!(d[0].values["b"], "ON");
        assert!(!d[0].only_some && d[2].only_some);
        assert_eq!(d[2].values.len(), 1);
        assert!(d[0].asked_by.is_empty());
        // One variant alone, or one without settings, makes no diff.
        assert!(diff(std::slice::from_ref(&a), KNOBS).is_empty());
        assert!(diff(&[a, variant("c", &[])], KNOBS).is_empty());
    }

    #[test]
    fn an_unasked_knob_difference_is_a_warning_an_asked_one_is_not() {
        let a = variant("a", &[("log_bin", "OFF"), ("x", "1")]);
        let mut b = variant("b", &[("log_bin", "ON"), ("x", "2")]);
        let mut r = results(vec![a.clone(), b.clone()]);
        let w = warnings(&r);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].text.starts_with("a ran with log_bin = OFF, b with ON: the comparison includes this difference in durability"),
            "{w:?}"
        );
        b.options.insert("log-bin".into(), "ON".into());
        r = results(vec![a, b]);
        assert_eq!(r.settings_diff[0].asked_by, ["b"]);
        assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
    }

    #[test]
    fn the_first_valid_read_is_kept_and_a_later_different_one_noted() {
        let mut v = variant("a", &[]);
        let read = |kv: &[(&str, &str)]| SettingsRead {
            settings: Ok(kv
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()),
            ms: 2.0,
        };
        keep(&mut v, read(&[("maxmemory", "0")]), 0, false);
        keep(&mut v, read(&[("maxmemory", "0")]), 1, false);
        assert!(v.settings_changed.is_empty());
        keep(&mut v, read(&[("maxmemory", "100")]), 2, false);
        assert_eq!(v.settings["maxmemory"], "0");
        assert_eq!(v.settings_read_ms, Some(2.0));
        assert_eq!(v.tls, Some(false));
        assert_eq!(
            v.settings_changed,
            ["round 3: maxmemory = 100 (first run: 0)"]
        );
        let r = results(vec![v]);
        assert!(warnings(&r)[0]
            .text
            .contains("read different settings in a later run"));
        let mut refused = variant("b", &[]);
        keep(
            &mut refused,
            SettingsRead {
                settings: Err("CONFIG GET * refused: ERR unknown command".into()),
                ms: 1.0,
            },
            0,
            false,
        );
        assert!(refused.settings.is_empty());
        let r = results(vec![refused]);
        assert!(warnings(&r)[0]
            .text
            .contains("could not be read (CONFIG GET * refused"));
    }

    #[test]
    fn secret_options_and_arguments_are_masked_in_the_record() {
        let opts = BTreeMap::from([
            ("requirepass".to_string(), "hunter2x".to_string()),
            ("maxmemory".to_string(), "100mb".to_string()),
        ]);
        let m = masked_options(opts);
        assert_eq!(m["requirepass"], MASKED);
        assert_eq!(m["maxmemory"], "100mb");
        let args: Vec<String> = [
            "--requirepass",
            "hunter2x",
            "--masterauth=pw9",
            "--io-threads",
            "2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            masked_args(&args),
            [
                "--requirepass",
                MASKED,
                "--masterauth=(masked)",
                "--io-threads",
                "2"
            ]
        );
        assert_eq!(secret_args(&["-c".into(), "password=abc".into()]), ["abc"]);
        assert_eq!(
            mask_in("options = { requirepass = \"hunter2x\" }", "hunter2x"),
            "options = { requirepass = \"(masked)\" }"
        );
        assert_eq!(
            mask_in("a = \"pw\", b = \"pwx\"", "pw"),
            "a = \"(masked)\", b = \"pwx\""
        );
        let mut j = serde_json::json!({"o": {"requirepass": "hunter2x"}, "a": ["--x=hunter2x"]});
        mask_json(&mut j, "hunter2x");
        assert_eq!(
            j.to_string(),
            r#"{"a":["--x=(masked)"],"o":{"requirepass":"(masked)"}}"#
        );
    }

    fn results(variants: Vec<VariantRecord>) -> Results {
        Results {
            settings_diff: diff(&variants, KNOBS),
            variants,
            ..Results::default()
        }
    }
}

use super::*;
use bakeoff_report::model::{
    Cell, ExperimentRecord, Host, InstructionsRecord, Latency, PlanRecord, Results, Run,
    VariantRecord, Verdict, SCHEMA,
};
use std::path::Path;

fn cell_entry(variant: &str, median: f64) -> CellEntry {
    CellEntry {
        workload: "mixed".into(),
        connections: 4,
        variant: variant.into(),
        median_ops_per_s: median,
        ci95: [median * 0.9, median * 1.1],
        valid_runs: 5,
        instructions_per_op: None,
    }
}

fn entry(name: &str, started: &str, cells: usize) -> Entry {
    Entry {
        started_utc: started.into(),
        finished_utc: Some(started.replace("00Z", "30Z")),
        name: name.into(),
        status: "complete".into(),
        baseline: "base".into(),
        hostname: "lab".into(),
        cpu_model: "cpu".into(),
        bakeoff_version: "0.1.0".into(),
        folder: format!("/results/{name}-{started}").into(),
        variants: vec![
            VariantEntry {
                name: "base".into(),
                status: "ok".into(),
            },
            VariantEntry {
                name: "broken".into(),
                status: "failed".into(),
            },
        ],
        cells: (0..cells)
            .map(|i| cell_entry(if i % 2 == 0 { "base" } else { "fast" }, 1000.0 + i as f64))
            .collect(),
    }
}

fn scratch() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join("sub").join("history.sqlite");
    (d, p)
}

#[test]
fn a_record_round_trips() {
    let (_d, path) = scratch();
    let mut s = Store::open(&path).expect("open");
    let mut e = entry("e2e", "2024-05-01T12:00:00Z", 3);
    e.cells[1].instructions_per_op = Some(1234.5);
    let id = s.record(&e).expect("record");
    let back = s.get(id).expect("get").expect("present");
    assert_eq!(back.id, id);
    assert_eq!(back.entry, e);
    assert!(back.recorded_utc.ends_with('Z'), "{}", back.recorded_utc);
    assert_eq!(s.get(id + 1).expect("get"), None);
    // A second connection (another process, later) sees the same.
    drop(s);
    let s = Store::open_existing(&path).expect("open").expect("exists");
    assert_eq!(s.list(&Filter::default()).expect("list")[0].entry, e);
}

/// A history longer than the bulk read's threshold reads back as record by record.
#[test]
fn a_long_history_reads_back_whole_in_bulk() {
    let (_d, path) = scratch();
    let mut s = Store::open(&path).expect("open");
    for i in 0..150 {
        let name = if i % 3 == 0 { "a" } else { "b" };
        s.record(&entry(
            name,
            &format!("2024-05-01T12:{:02}:{:02}Z", i / 60, i % 60),
            1 + i % 4,
        ))
        .expect("record");
    }
    let all = s.list(&Filter::default()).expect("list");
    assert_eq!(all.len(), 150);
    for r in &all {
        assert_eq!(Some(r), s.get(r.id).expect("get").as_ref());
    }
    let b = s.history_of("b").expect("history");
    assert_eq!(b.len(), 100);
    assert!(b
        .iter()
        .all(|r| r.entry.name == "b" && !r.entry.cells.is_empty()));
}

#[test]
fn records_list_newest_first_with_name_and_limit() {
    let (_d, path) = scratch();
    let mut s = Store::open(&path).expect("open");
    // Recorded out of time order: the listing follows the experiments' start times.
    let a = s.record(&entry("e2e", "2024-05-02T00:00:00Z", 1)).unwrap();
    let b = s.record(&entry("e2e", "2024-05-01T00:00:00Z", 1)).unwrap();
    let c = s
        .record(&entry("other", "2024-05-03T00:00:00Z", 1))
        .unwrap();
    let d = s.record(&entry("e2e", "2024-05-02T00:00:00Z", 1)).unwrap();
    let ids = |rs: Vec<Record>| rs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(s.list(&Filter::default()).unwrap()), vec![c, d, a, b]);
    let e2e = Filter {
        name: Some("e2e".into()),
        limit: Some(2),
    };
    assert_eq!(ids(s.list(&e2e).unwrap()), vec![d, a]);
    assert_eq!(s.count(&e2e).unwrap(), 3);
    assert_eq!(ids(s.history_of("e2e").unwrap()), vec![b, a, d]);
    assert_eq!(s.names().unwrap(), vec!["e2e".to_string(), "other".into()]);
    assert!(s.history_of("nope").unwrap().is_empty());
}

#[test]
fn a_new_store_has_the_schema_version_and_newer_ones_are_refused() {
    let (_d, path) = scratch();
    let s = Store::open(&path).expect("open");
    assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
    drop(s);
    // Another program's SQLite file (version 0, its own tables) is refused and left as
    // it was, for writing and for reading alike.
    let (_d2, foreign) = scratch();
    std::fs::create_dir_all(foreign.parent().unwrap()).unwrap();
    rusqlite::Connection::open(&foreign)
        .and_then(|c| c.execute_batch("CREATE TABLE unrelated (x)"))
        .unwrap();
    refused_and_untouched(&foreign);
    // An empty file is a new store for a writer, and an empty history for a reader.
    let (_d3, empty) = scratch();
    std::fs::create_dir_all(empty.parent().unwrap()).unwrap();
    std::fs::write(&empty, "").unwrap();
    assert!(Store::open_existing(&empty).unwrap().is_none());
    let mut s = Store::open(&empty).expect("new store");
    assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
    s.record(&entry("e2e", "2024-05-01T00:00:00Z", 1)).unwrap();
    // A newer schema is refused, and says so.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(c);
    let e = Store::open(&path).err().expect("refused");
    assert!(matches!(e, Error::Newer { .. }) && e.is_bad_input(), "{e}");
    assert!(e.to_string().contains("newer bakeoff"), "{e}");
}

/// Another program's SQLite file at `path` is refused as no store, for writing and for
/// reading alike, and left as it was.
fn refused_and_untouched(path: &std::path::Path) {
    let before = std::fs::read(path).unwrap();
    let e = Store::open(path).err().expect("refused");
    assert!(
        matches!(e, Error::NotAStore { .. }) && e.is_bad_input(),
        "{e}"
    );
    assert!(Store::open_existing(path).is_err());
    assert_eq!(std::fs::read(path).unwrap(), before);
}

/// Issue 28: `run --store` switched another program's SQLite file to WAL because it had a
/// table named `experiments` and `user_version >= 1`.
#[test]
fn another_programs_sqlite_file_with_an_experiments_table_is_left_untouched() {
    let (_d, path) = scratch();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch(
        "CREATE TABLE experiments (id INTEGER PRIMARY KEY, what TEXT);
         INSERT INTO experiments (what) VALUES ('theirs');
         PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(c);
    let before = std::fs::read(&path).unwrap();
    for version in [1, 7] {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", version).unwrap();
        drop(c);
        refused_and_untouched(&path);
    }
    let _ = before;
    let wal = path.with_extension("sqlite-wal");
    assert!(!wal.exists(), "no WAL switch");
    let mode: String = rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    // Another program's file that has bakeoff's tables but another application id.
    let (_d2, other) = scratch();
    drop(Store::open(&other).unwrap());
    let c = rusqlite::Connection::open(&other).unwrap();
    c.pragma_update(None, "application_id", 42).unwrap();
    drop(c);
    assert!(matches!(
        Store::open(&other).err(),
        Some(Error::NotAStore { .. })
    ));
}

#[test]
fn a_new_store_is_stamped_and_an_unstamped_one_from_before_is_recognised_then_stamped() {
    let (_d, path) = scratch();
    let mut s = Store::open(&path).unwrap();
    s.record(&entry("e2e", "2024-05-01T00:00:00Z", 1)).unwrap();
    drop(s);
    let app = |p: &std::path::Path| -> i64 {
        rusqlite::Connection::open(p)
            .unwrap()
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .unwrap()
    };
    assert_eq!(app(&path), APPLICATION_ID);
    // As an earlier bakeoff left it: the same tables, no stamp.
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "application_id", 0)
        .unwrap();
    let r = Store::open_existing(&path).unwrap().expect("recognised");
    assert_eq!(r.list(&Filter::default()).unwrap().len(), 1);
    drop(r);
    assert_eq!(app(&path), 0, "a reader writes nothing");
    let s = Store::open(&path).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 1);
    drop(s);
    assert_eq!(app(&path), APPLICATION_ID);
}

#[test]
fn a_file_that_is_not_a_store_is_bad_input() {
    let (_d, path) = scratch();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "results are not kept here\n".repeat(200)).unwrap();
    let e = Store::open(&path).err().expect("refused");
    assert!(e.is_bad_input(), "{e:?}");
    assert!(e.to_string().contains("not a bakeoff history store"), "{e}");
}

#[test]
fn reading_a_missing_store_creates_nothing() {
    let (_d, path) = scratch();
    assert!(Store::open_existing(&path).expect("ok").is_none());
    assert!(!path.exists() && !path.parent().unwrap().exists());
}

#[test]
fn concurrent_opens_and_writes_of_a_new_store() {
    let (_d, path) = scratch();
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut s = Store::open(&path).expect("open");
                s.record(&entry(&format!("t{i}"), "2024-05-01T00:00:00Z", 4))
                    .expect("record")
            })
        })
        .collect();
    let mut ids: Vec<i64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 8);
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(s.count(&Filter::default()).unwrap(), 8);
    assert_eq!(s.rows("cells"), 32);
}

#[test]
fn a_write_that_does_not_commit_leaves_no_partial_record() {
    let (_d, path) = scratch();
    let mut s = Store::open(&path).expect("open");
    let kept = s.record(&entry("kept", "2024-05-01T00:00:00Z", 2)).unwrap();
    {
        let mut w = s.begin().expect("begin");
        w.insert(&entry("dropped", "2024-05-02T00:00:00Z", 50))
            .expect("insert");
        // Dropped here without commit, as a panic or an early return would.
    }
    // A write that fails half-way (the experiment and variants inserted, then a cell
    // that cannot be stored) leaves nothing either.
    let mut bad = entry("failed", "2024-05-03T00:00:00Z", 3);
    bad.cells[2].connections = usize::MAX;
    assert!(s.record(&bad).is_err());
    let all = s.list(&Filter::default()).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].id, kept);
    assert_eq!((s.rows("variants"), s.rows("cells")), (2, 2));
    // And the store goes on working.
    s.record(&entry("after", "2024-05-04T00:00:00Z", 1))
        .unwrap();
    assert_eq!(s.count(&Filter::default()).unwrap(), 2);
}

#[test]
fn figures_that_are_not_finite_are_kept_as_unknown() {
    let (_d, path) = scratch();
    let mut s = Store::open(&path).unwrap();
    let mut e = entry("nan", "2024-05-01T00:00:00Z", 1);
    e.cells[0].median_ops_per_s = f64::NAN;
    e.cells[0].valid_runs = 0;
    let id = s.record(&e).unwrap();
    let back = s.get(id).unwrap().unwrap();
    assert!(back.entry.cells[0].median_ops_per_s.is_nan());
    assert!(history_table(&[back]).contains("  -  "));
}

#[test]
fn default_path_order() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    };
    const ALL: [(&str, &str); 3] = [
        ("BAKEOFF_STORE", "/s/h.sqlite"),
        ("XDG_DATA_HOME", "/x"),
        ("HOME", "/h"),
    ];
    assert_eq!(pick_path(env(&ALL)), Some("/s/h.sqlite".into()));
    assert_eq!(
        pick_path(env(&ALL[1..])),
        Some("/x/bakeoff/history.sqlite".into())
    );
    assert_eq!(
        pick_path(env(&[("XDG_DATA_HOME", "relative"), ("HOME", "/h")])),
        Some("/h/.local/share/bakeoff/history.sqlite".into())
    );
    assert_eq!(pick_path(env(&[("BAKEOFF_STORE", "")])), None);
}

#[test]
fn the_history_table_shows_the_baselines_first_cell() {
    let mut e = entry("e2e", "2024-05-01T12:00:00Z", 2);
    e.cells[0].valid_runs = 0;
    e.cells.push(cell_entry("base", 52345.0));
    let t = history_table(&[Record {
        id: 7,
        recorded_utc: "2024-05-01T12:01:00Z".into(),
        entry: e,
    }]);
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("id  time (UTC)"), "{t}");
    assert!(lines[2].contains("52,345 (mixed x4 base)"), "{t}");
    assert!(lines[2].contains("base, broken (failed)"), "{t}");
    assert!(
        lines[2].ends_with("/results/e2e-2024-05-01T12:00:00Z"),
        "{t}"
    );
}

#[test]
fn sparklines_scale_between_the_extremes() {
    assert_eq!(
        text::sparkline(&[Some(1.0), Some(8.0), None, Some(4.5)]),
        "▁█·▅"
    );
    assert_eq!(text::sparkline(&[Some(3.0), Some(3.0)]), "▄▄");
    assert_eq!(text::sparkline(&[]), "");
}

#[test]
fn a_trend_follows_matching_cells_oldest_first() {
    let rec = |id, started: &str, median| Record {
        id,
        recorded_utc: started.into(),
        entry: Entry {
            cells: vec![cell_entry("base", median), cell_entry("fast", median * 2.0)],
            ..entry("e2e", started, 0)
        },
    };
    let records = vec![
        rec(1, "2024-05-01T00:00:00Z", 1000.0),
        rec(2, "2024-05-02T00:00:00Z", 1100.0),
        rec(3, "2024-05-03T00:00:00Z", 1050.0),
    ];
    let t = trend("e2e", &records, Some("base"), None);
    assert_eq!(t.columns.len(), 1);
    assert_eq!(t.rows.len(), 3);
    let text = t.render();
    assert!(text.contains("1,100 [990, 1,210]"), "{text}");
    assert!(text.contains("▁█▅"), "{text}");
    assert!(text.contains("1,000 -> 1,050 (+5.0%)"), "{text}");
    let all = trend("e2e", &records, None, Some("mixed"));
    assert_eq!(all.columns.len(), 2);
    assert!(trend("e2e", &records, Some("nope"), None)
        .columns
        .is_empty());
    assert_eq!(
        known_values(&records, |c| &c.variant),
        vec!["base".to_string(), "fast".into()]
    );
}

/// Issue 50: names from the store reach the terminal as text: escape sequences, bidi
/// controls and line breaks in the experiment's, workload's and variant's names are
/// shown escaped, in the title, the table and the sparkline lines, as `history` shows them.
#[test]
fn trend_renders_names_as_text() {
    let hostile = [
        "\u{1b}]0;pwned\u{7}",
        "\u{1b}[2J\u{1b}[H",
        "a\u{202e}gnp.exe",
        "x\ny",
        "tab\there\r",
        "\u{2066}iso\u{2069}",
    ];
    for bad in hostile {
        let mut c = cell_entry(&format!("v{bad}"), 1000.0);
        c.workload = format!("w{bad}");
        let records = vec![Record {
            id: 1,
            recorded_utc: "2024-05-01T00:00:00Z".into(),
            entry: Entry {
                cells: vec![c],
                ..entry(&format!("e{bad}"), "2024-05-01T00:00:00Z", 0)
            },
        }];
        let text = trend(&format!("e{bad}"), &records, None, None).render();
        let raw = text.chars().find(|&ch| {
            (ch.is_control() && ch != '\n')
                || ('\u{202a}'..='\u{202e}').contains(&ch)
                || ('\u{2066}'..='\u{2069}').contains(&ch)
        });
        assert_eq!(raw, None, "{bad:?}: {text:?}");
        assert!(!text.contains("\ny"), "{bad:?}: {text:?}");
        assert!(text.contains("\\u{"), "{bad:?}: {text:?}");
    }
}

// --- compare ---

fn run(ops: f64) -> Run {
    Run {
        ops_per_s: ops,
        valid: true,
        hdr_log: Some("hdr/run.hlog".into()),
        latency_us: Latency {
            p50: 10.0,
            ..Latency::default()
        },
        ..Run::default()
    }
}

fn cell(variant: &str, connections: usize, runs: Vec<Run>) -> Cell {
    let ops: Vec<f64> = runs.iter().map(|r| r.ops_per_s).collect();
    let s = bakeoff_stats::summarize(&ops).expect("runs");
    Cell {
        workload: "mixed".into(),
        variant: variant.into(),
        connections,
        valid_runs: runs.len(),
        runs,
        median_ops_per_s: s.median,
        ci95: [s.ci95.0, s.ci95.1],
        ci_coverage: s.coverage,
        cv: s.cv,
        ..Default::default()
    }
}

fn results(name: &str, cells: Vec<Cell>) -> Results {
    let mut variants: Vec<VariantRecord> = Vec::new();
    for c in &cells {
        if !variants.iter().any(|v| v.name == c.variant) {
            variants.push(VariantRecord {
                name: c.variant.clone(),
                status: "ok".into(),
                ..VariantRecord::default()
            });
        }
    }
    Results {
        schema: SCHEMA.into(),
        name: name.into(),
        description: None,
        status: "complete".into(),
        bakeoff_version: "0".into(),
        started_utc: "2024-05-01T00:00:00Z".into(),
        finished_utc: None,
        host: Host {
            hostname: "lab".into(),
            ..Host::default()
        },
        experiment: ExperimentRecord {
            file: format!("{name}.toml"),
            text: "name = \"x\"\n".into(),
            resolved: serde_json::Value::Null,
        },
        plan: PlanRecord {
            repetitions: Some(5),
            duration_s: Some(1.0),
            seed: 1,
            baseline: "base".into(),
            ..PlanRecord::default()
        },
        variants,
        cells,
        ..Results::default()
    }
}

/// A side of a comparison: `results` from `folder`, not in the store.
fn side(results: Results, folder: &str) -> Side {
    Side {
        results,
        folder: folder.into(),
        id: None,
    }
}

fn runs(from: f64) -> Vec<Run> {
    (0..5).map(|i| run(from + f64::from(i))).collect()
}

#[test]
fn compare_matches_cells_and_judges_b_against_a() {
    // "fast" at 4 connections on both sides; "base" at 4 on both, and once more at 8
    // connections in A, at 16 in B.
    let e2e = |fast: f64, base_also_at: usize| {
        results(
            "e2e",
            vec![
                cell("base", 4, runs(100.0)),
                cell("fast", 4, runs(fast)),
                cell("base", base_also_at, runs(100.0)),
            ],
        )
    };
    let a = Side {
        id: Some(1),
        ..side(e2e(100.0, 8), "/r/a")
    };
    let b = side(e2e(130.0, 16), "/r/b");
    let c = compare(&a, &b, "2024-06-01T10:20:30Z");
    assert_eq!(c.matched.len(), 2);
    assert_eq!(c.only_a[0].to_string(), "mixed x8 base");
    assert_eq!(c.only_b[0].to_string(), "mixed x16 base");
    let r = &c.results;
    assert_eq!(r.schema, SCHEMA);
    assert_eq!(r.plan.baseline, "A");
    let variants: Vec<&str> = r.cells.iter().map(|c| c.variant.as_str()).collect();
    assert_eq!(variants, ["A:base", "B:base", "A:fast", "B:fast"]);
    let fast = r.comparison("mixed", "B:fast", 4).expect("compared");
    assert_eq!(fast.baseline, "A:fast");
    assert_eq!(fast.verdict, Verdict::Faster);
    assert!((fast.ratio - 132.0 / 102.0).abs() < 1e-9);
    assert_eq!(
        r.comparison("mixed", "B:base", 4).unwrap().verdict,
        Verdict::Inconclusive
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("only in A") && w.contains("mixed x8 base")),
        "{:?}",
        r.warnings
    );
    // Files stay where they are: their paths point into the original folders.
    assert_eq!(
        r.cells[1].runs[0].hdr_log.as_deref(),
        Some("/r/b/hdr/run.hlog")
    );
    assert!(r.description.as_deref().unwrap().contains("history #1"));
    // The outcome is valid results.json and every exporter renders it.
    let json = bakeoff_report::Exporter::render(&bakeoff_report::Json, r);
    let back = Results::from_json(std::str::from_utf8(&json).unwrap()).expect("valid");
    assert_eq!(
        (
            back.cells.len(),
            back.comparisons.len(),
            &back.plan.baseline
        ),
        (4, 2, &r.plan.baseline)
    );
    let md = String::from_utf8(bakeoff_report::Exporter::render(
        &bakeoff_report::Markdown::default(),
        r,
    ))
    .unwrap();
    assert!(md.contains("B:fast") && md.contains("faster"), "{md}");
    let t = c.table(false);
    let row = t
        .lines()
        .find(|l| l.starts_with("mixed") && l.contains("fast"))
        .unwrap();
    assert!(
        row.contains("102") && row.contains("132") && row.ends_with("faster"),
        "{t}"
    );
    let colored = c.table(true);
    assert!(colored.contains("\x1b[32mfaster\x1b[0m"), "{colored}");
    assert_eq!(
        folder_name(&a.results, &b.results, "2024-06-01T10:20:30Z"),
        "compare-e2e-vs-e2e-20240601T102030Z"
    );
}

#[test]
fn one_variant_is_its_own_baseline_and_mixed_modes_are_not_compared() {
    let mut ia = cell("base", 4, runs(100.0));
    for r in &mut ia.runs {
        r.instructions = Some(InstructionsRecord {
            instructions: 1_000_000,
            instructions_per_op: 1000.0,
            top: vec![],
        });
    }
    let a = side(results("one", vec![ia]), "/r/a");
    let mut rb = results("two", vec![cell("base", 4, runs(100.0)[..2].to_vec())]);
    rb.host.hostname = "elsewhere".into();
    let b = side(rb, "/r/b");
    let c = compare(&a, &b, "2024-06-01T10:20:30Z");
    assert_eq!(c.results.plan.baseline, "A:base");
    assert!(c.results.comparisons.is_empty());
    let w = c.results.warnings.join("\n");
    assert!(w.contains("instructions"), "{w}");
    assert!(w.contains("different machines"), "{w}");
    let t = c.table(false);
    let row = t.lines().find(|l| l.starts_with("mixed")).unwrap();
    assert!(row.ends_with(" -"), "{t}");
}

#[test]
fn too_few_runs_for_a_verdict_are_warned() {
    let a = side(
        results("e2e", vec![cell("base", 4, runs(100.0)[..2].to_vec())]),
        "/r/a",
    );
    let b = side(
        results("e2e", vec![cell("base", 4, runs(200.0)[..2].to_vec())]),
        "/r/b",
    );
    let c = compare(&a, &b, "2024-06-01T10:20:30Z");
    let k = &c.results.comparisons[0];
    assert_eq!(k.verdict, Verdict::Inconclusive);
    assert!(
        c.results.warnings[0].contains("(2 vs 2 valid runs per cell), so every verdict is"),
        "{:?}",
        c.results.warnings
    );
    let four = bakeoff_stats::compare(
        &[1.0, 2.0, 3.0, 4.0],
        &[5.0, 6.0, 7.0, 8.0],
        &bakeoff_stats::Rule::new(bakeoff_stats::Direction::HigherIsBetter),
    )
    .unwrap();
    assert!((four.smallest_p() - 2.0 / 70.0).abs() < 1e-12);
}

#[test]
fn records_are_made_from_results() {
    let r = results("e2e", vec![cell("base", 4, runs(100.0))]);
    let e = Entry::from_results(&r, Path::new("relative/out"));
    assert!(e.folder.is_absolute() && e.folder.ends_with("relative/out"));
    assert_eq!(e.cells[0].median_ops_per_s, 102.0);
    assert_eq!(e.variants[0].name, "base");
    assert_eq!(e.headline().unwrap().variant, "base");
}

#[test]
fn trend_marks_where_a_series_shifted() {
    let records: Vec<Record> = (0..12)
        .map(|i| {
            let mut e = entry("e2e", &format!("2024-05-{:02}T00:00:00Z", i + 1), 0);
            let level = if i < 7 { 1000.0 } else { 900.0 };
            e.cells = vec![cell_entry("base", level + f64::from(i % 3))];
            Record {
                id: i64::from(i) + 1,
                recorded_utc: e.started_utc.clone(),
                entry: e,
            }
        })
        .collect();
    let t = trend("e2e", &records, None, None);
    assert_eq!(t.changes[0].len(), 1, "{:?}", t.changes);
    assert_eq!(t.changes[0][0].index, 7);
    let text = t.render();
    assert!(
        text.contains("shift at #8") && text.contains("-10."),
        "{text}"
    );
    // A flat series: no mark.
    let flat: Vec<Record> = records
        .iter()
        .cloned()
        .map(|mut r| {
            r.entry.cells[0].median_ops_per_s = 1000.0 + f64::from((r.id % 4) as u32);
            r
        })
        .collect();
    assert!(trend("e2e", &flat, None, None).changes[0].is_empty());
}

/// `[plan] aa`: the A/A variant is each run's check of its own machine, never matched
/// as a candidate; a side whose check differed is said first.
#[test]
fn compare_leaves_the_aa_check_out_and_says_when_it_differed() {
    let side = |differ: usize, folder: &str| {
        let mut r = results(
            "e2e",
            vec![
                cell("base", 4, runs(100.0)),
                cell("base~aa", 4, runs(100.0)),
            ],
        );
        r.variants[1].aa = true;
        r.aa = Some(bakeoff_report::model::AaRecord {
            variant: "base~aa".into(),
            baseline: "base".into(),
            workload: "mixed".into(),
            connections: 4,
            ratio: 1.0,
            ci95: [0.99, 1.01],
            verdict: Verdict::Inconclusive,
            detectable: None,
            comparisons: 1,
            differ,
        });
        self::side(r, folder)
    };
    let c = compare(&side(0, "/r/a"), &side(1, "/r/b"), "2024-06-01T10:20:30Z");
    let keys: Vec<String> = c.matched.iter().map(|k| k.to_string()).collect();
    assert_eq!(keys, ["mixed x4 base"]);
    assert!(c.only_a.is_empty() && c.only_b.is_empty());
    assert_eq!(c.results.plan.baseline, "A:base");
    let w = &c.results.warnings;
    assert!(
        w.iter()
            .any(|w| w.starts_with("B's A/A check found a difference")),
        "{w:?}"
    );
    assert!(!w.iter().any(|w| w.starts_with("A's A/A")), "{w:?}");
}

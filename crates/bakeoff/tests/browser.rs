//! report.html in a real browser: a short memcached experiment (a variant named like an
//! HTML injection among them), then Debian's chromium, driven headless by chromedriver
//! over the WebDriver protocol, opens the report from its file. Every chart must have
//! drawn something, the console must hold no errors, no injected element may exist, and
//! a screenshot is kept as an artifact (target/tmp/browser/report.png).

mod common;

use common::chromedriver::{base64_decode, Driver};
use common::{Scratch, NASTY};
use serde_json::json;
use std::path::Path;
use std::process::Command;

fn experiment() -> String {
    common::memcached_three_ways("browser")
        + &common::kv("sweep", "1, 4", 2000, "")
        + "\n"
        + &common::kv("sets", "4", 2000, "mix = { get = 50, set = 50 }\n")
        + "\n[plan]\nrepetitions = 2\nwarmup = \"100ms\"\nduration = \"1s\"\n\n[measure]\ninterval = \"250ms\"\n"
}

#[test]
fn report_html_renders_every_chart_without_errors_in_chromium() {
    if Command::new("chromedriver")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("chromedriver is not installed (scripts/setup.sh installs it): skipped");
        return;
    }
    let s = Scratch::new();
    let f = s.write("b.toml", &experiment());
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    common::assert_ok(&out);
    let report = s.out().join("report.html");
    let html = std::fs::read_to_string(&report).expect("report.html");
    assert!(
        !html.contains(NASTY),
        "the variant name went into the HTML unescaped"
    );

    let mut d = Driver::start().expect("chromedriver did not start");
    let id = d
        .open_session(&s.path().join("chromium-profile"))
        .expect("chromium session");
    let url = format!("file://{}", report.display());
    d.call(
        "POST",
        &format!("/session/{id}/url"),
        Some(&json!({ "url": url })),
    )
    .expect("open the report");
    let run = |script: &str| {
        d.call(
            "POST",
            &format!("/session/{id}/execute/sync"),
            Some(&json!({ "script": script, "args": [] })),
        )
        .expect("script")
    };
    // Every chart drew data; there are charts; nothing was injected.
    let marks = run(
        "return Array.from(document.querySelectorAll('svg')).map(s => \
         s.querySelectorAll('path,rect,line,circle,polyline,polygon').length)",
    );
    let marks: Vec<u64> = marks
        .as_array()
        .expect("list")
        .iter()
        .map(|v| v.as_u64().unwrap_or(0))
        .collect();
    assert!(marks.len() >= 3, "charts: {marks:?}");
    assert!(marks.iter().all(|&n| n > 0), "an empty chart: {marks:?}");
    let sizes = run(
        "return Array.from(document.querySelectorAll('svg')).map(s => { \
         const r = s.getBoundingClientRect(); return r.width * r.height; })",
    );
    assert!(
        sizes
            .as_array()
            .expect("list")
            .iter()
            .all(|v| v.as_f64().unwrap_or(0.0) > 100.0),
        "a chart with no area: {sizes}"
    );
    assert_eq!(
        run("return document.querySelectorAll('img').length"),
        json!(0)
    );
    let text = run("return document.body.innerText");
    let text = text.as_str().unwrap_or("");
    assert!(text.contains(NASTY), "the name is shown as text");
    for section in [
        "Verdicts",
        "Throughput by connections",
        "Relative to the baseline",
        "Latency percentiles",
        "CPU over time",
        "Experiment file",
    ] {
        assert!(text.contains(section), "no {section} section");
    }
    // No console errors.
    d.assert_no_console_errors(&id);
    // The screenshot, kept as the test's artifact.
    let png = d
        .call("GET", &format!("/session/{id}/screenshot"), None)
        .expect("screenshot");
    let bytes = base64_decode(png.as_str().unwrap_or(""));
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).expect("artifact dir");
    std::fs::write(dir.join("report.png"), &bytes).expect("screenshot file");
    std::fs::copy(&report, dir.join("report.html")).expect("report copy");
}

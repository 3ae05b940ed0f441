//! The site in a real browser (Debian's chromium, headless, driven by chromedriver as
//! report.html's test drives it): a history of 31 experiments (two short runs of the
//! installed memcached with a variant named like an HTML injection, the real results
//! folder in tests/data, and 28 scripted folders whose figure shifts halfway), then
//! `bakeoff site`. The index shows every experiment and filters them, the newest answer
//! lies in the first screen at 1280x800 and at 390x844, the scripted name's trend page
//! marks its change point (and zooms its chart), a run page opens its report and its compare page, every link
//! of the site's pages resolves, nothing injected exists and the console holds no error.
//! Screenshots are kept under target/tmp/site/.

mod common;

use common::chromedriver::{base64_decode, Driver};
use common::{recorded_folder, Scratch, NASTY};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn experiment() -> String {
    common::memcached_three_ways("live")
        + &common::kv("kv", "4", 2000, "")
        + "\n[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"500ms\"\n"
}

/// Every relative link of the site's own pages (not the copied reports, whose links
/// point into their results folders) resolves to a file.
fn links_resolve(dir: &Path) -> usize {
    let mut checked = 0;
    for p in common::html_files(dir) {
        if p.ends_with("report.html") {
            continue;
        }
        let html = std::fs::read_to_string(&p).unwrap();
        assert!(!html.contains(NASTY), "{}: unescaped", p.display());
        for h in html
            .split("href=\"")
            .skip(1)
            .filter_map(|t| t.split('"').next())
        {
            if h.starts_with('#') || h.contains("://") {
                continue;
            }
            let target = p.parent().unwrap().join(h);
            assert!(target.is_file(), "{}: {h} resolves to nothing", p.display());
            checked += 1;
        }
    }
    checked
}

struct Page<'a> {
    d: &'a Driver,
    id: String,
}

impl Page<'_> {
    fn open(&self, path: &Path) {
        let url = format!("file://{}", path.display());
        self.d
            .call(
                "POST",
                &format!("/session/{}/url", self.id),
                Some(&json!({ "url": url })),
            )
            .expect("open");
    }
    fn run(&self, script: &str) -> Value {
        self.d
            .call(
                "POST",
                &format!("/session/{}/execute/sync", self.id),
                Some(&json!({ "script": script, "args": [] })),
            )
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }
    fn size(&self, w: u32, h: u32) {
        self.d
            .call(
                "POST",
                &format!("/session/{}/window/rect", self.id),
                Some(&json!({ "width": w, "height": h })),
            )
            .expect("window size");
    }
    fn screenshot(&self, name: &str) {
        let png = self
            .d
            .call("GET", &format!("/session/{}/screenshot", self.id), None)
            .expect("screenshot");
        let bytes = base64_decode(png.as_str().unwrap_or(""));
        assert!(bytes.starts_with(b"\x89PNG"));
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), &bytes).unwrap();
    }
    /// The current page's file, relative to `root`.
    fn href(&self, selector: &str) -> String {
        let v = self.run(&format!(
            "const a = document.querySelector({}); return a ? a.getAttribute('href') : null",
            json!(selector)
        ));
        v.as_str()
            .unwrap_or_else(|| panic!("no link {selector}"))
            .to_string()
    }
    /// The newest answer's box lies wholly in the first screen.
    fn newest_in_first_screen(&self, size: &str) {
        let v = self.run(
            "const r = document.getElementById('newest').getBoundingClientRect(); \
             return [r.top, r.bottom, r.left, r.right, innerHeight, innerWidth, \
             document.getElementById('newest').innerText]",
        );
        let a = v.as_array().unwrap();
        let n = |i: usize| a[i].as_f64().unwrap();
        assert!(
            n(0) >= 0.0 && n(1) <= n(4) && n(2) >= 0.0 && n(3) <= n(5) + 1.0,
            "{size}: the newest answer is not in the first screen: {v}"
        );
        let text = a[6].as_str().unwrap();
        assert!(text.contains("live"), "{size}: {text}");
        assert!(
            text.contains(NASTY),
            "{size}: the answer names the variant as text: {text}"
        );
    }
}

#[test]
fn the_site_in_chromium() {
    if !common::chromedriver::installed() {
        eprintln!("chromedriver is not installed (scripts/setup.sh installs it): skipped");
        return;
    }
    let s = Scratch::new();
    let store = s.path().join("history.sqlite");
    // Two real runs, recorded by `bakeoff run` in the scratch's store.
    let f = s.write("live.toml", &experiment());
    let mut outs = Vec::new();
    for i in 0..2 {
        let out = s.path().join(format!("live-{i}"));
        let o = s.command("run", &f, &out).output().expect("run bakeoff");
        common::assert_ok(&o);
        outs.push(out);
    }
    common::no_server_left("memcached", &s);
    // The real folder in tests/data, and 28 scripted ones.
    let kinds = s.path().join("kinds");
    common::copy_kinds_data(&kinds);
    common::record_folder(&store, &kinds, 1);
    for i in 0..28 {
        let level = if i < 14 { 100_000.0 } else { 125_000.0 };
        recorded_folder(
            &s,
            &store,
            &format!("scripted/{i:02}"),
            "scripted",
            &format!("2026-10-01T{:02}:{:02}:00Z", i / 60, i % 60),
            &[("base", 1.0), ("fast", 1.05)],
            level,
        );
    }
    let site: PathBuf = s.path().join("site");
    let said = common::assert_ok(&common::site_output(&site, &store));
    assert!(said.contains("31 experiments"), "{said}");
    assert!(links_resolve(&site) > 31 * 3);

    let mut d = Driver::start().expect("chromedriver did not start");
    let id = d
        .open_session(&s.path().join("chromium-profile"))
        .expect("chromium session");
    let p = Page { d: &d, id };

    // The index at 1280x800: every experiment, the newest answer first and in view.
    p.size(1280, 800);
    p.open(&site.join("index.html"));
    assert_eq!(
        p.run("return document.querySelectorAll('#runs tbody tr').length"),
        json!(31)
    );
    p.newest_in_first_screen("1280x800");
    p.screenshot("index-1280x800.png");
    // Filtering in the page.
    let shown = p.run(
        "const f = document.getElementById('filter'); f.value = 'scripted'; \
         f.dispatchEvent(new Event('input')); \
         return Array.from(document.querySelectorAll('#runs tbody tr')).filter(r => !r.hidden).length",
    );
    assert_eq!(shown, json!(28));
    // Sorting by id, ascending after one click on the header... then descending.
    let first_ids = p.run(
        "const f = document.getElementById('filter'); f.value = ''; f.dispatchEvent(new Event('input')); \
         const th = document.querySelector('#runs thead th'); th.click(); \
         const a = document.querySelector('#runs tbody tr').cells[0].dataset.v; th.click(); \
         return [a, document.querySelector('#runs tbody tr').cells[0].dataset.v]",
    );
    assert_eq!(first_ids, json!(["1", "31"]), "sorting by id");
    assert_eq!(
        p.run("return document.querySelectorAll('img').length"),
        json!(0)
    );

    // At 390x844 (a phone): the newest answer still in the first screen.
    p.size(390, 844);
    p.open(&site.join("index.html"));
    p.newest_in_first_screen("390x844");
    p.screenshot("index-390x844.png");
    p.size(1280, 800);

    // The scripted name's trend page: a chart with the change point marked.
    p.open(&site.join("index.html"));
    let trend = p.href("a[href^='names/scripted-']");
    p.open(&site.join(&trend));
    let marked = p.run("return document.querySelectorAll('.change-point').length");
    assert!(marked.as_u64().unwrap_or(0) >= 1, "no change point marked");
    let marks = p.run(
        "return Array.from(document.querySelectorAll('svg')).map(s => s.querySelectorAll('path,circle').length)",
    );
    assert!(
        marks
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m.as_u64().unwrap_or(0) > 0),
        "an empty chart: {marks}"
    );
    assert!(
        p.run("return document.querySelectorAll('tr.change').length")
            .as_u64()
            >= Some(1)
    );
    p.screenshot("trend.png");
    // Zoom: a click widens the chart.
    let widths = p.run(
        "const b = document.querySelector('.zoombox'); const s = b.querySelector('svg'); \
         const w0 = s.getBoundingClientRect().width; b.click(); \
         return [w0, s.getBoundingClientRect().width]",
    );
    let w: Vec<f64> = widths
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(w[1] > 2.0 * w[0], "zoom: {w:?}");

    // The newest real run's page, its report, its compare page.
    p.open(&site.join("index.html"));
    let run = p.href("#newest a[href^='runs/']");
    p.open(&site.join(&run));
    let report = p.href("a[href$='report.html']");
    let compare = p.href("a[href^='../compare/']");
    let run_dir = site.join(&run).parent().unwrap().to_path_buf();
    p.open(&run_dir.join(&report));
    let text = p.run("return document.body.innerText");
    assert!(
        text.as_str().unwrap_or("").contains("Verdicts"),
        "not the report"
    );
    assert_eq!(
        p.run("return document.querySelectorAll('img').length"),
        json!(0)
    );
    p.open(&run_dir.join(&compare));
    let rows = p.run("return document.querySelectorAll('table tbody tr').length");
    assert!(
        rows.as_u64().unwrap_or(0) >= 1,
        "no comparison on the compare page"
    );
    let text = p.run("return document.body.innerText");
    assert!(
        text.as_str().unwrap_or("").contains(NASTY),
        "the variant as text"
    );
    p.screenshot("compare.png");

    // No console errors on any page opened.
    d.assert_no_console_errors(&p.id);
}

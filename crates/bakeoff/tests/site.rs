//! `bakeoff site` over a history made from scripted results folders (no servers): the
//! pages are there and link to each other (every relative link of every page resolves),
//! the trend page marks the change point `bakeoff trend` finds, names, answers and notes
//! from the store and the folders render as text on every page, a second call rewrites
//! nothing, one new experiment rewrites only the pages it touches, `--name` restricts
//! the site (and removes what the site no longer holds), and bad input is one line with
//! exit status 2. The browser's view is tests/site_browser.rs.

mod common;

use common::{assert_ok as ok, recorded_folder, Scratch};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const NASTY_NAME: &str = "\"><svg onload=alert('name')>";
const NASTY_VARIANT: &str = "<img src=x onerror=alert(1)>";

fn bakeoff(s: &Scratch) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.current_dir(s.path())
        .env("BAKEOFF_STORE", s.path().join("env-store.sqlite"));
    c
}

fn site(s: &Scratch, store: &Path, dir: &Path, extra: &[&str]) -> Output {
    bakeoff(s)
        .arg("site")
        .arg(dir)
        .arg("--store")
        .arg(store)
        .args(extra)
        .output()
        .expect("run bakeoff")
}

/// The number after `what` in the site's summary line ("3 files written").
fn count(line: &str, what: &str) -> usize {
    let at = line
        .find(what)
        .unwrap_or_else(|| panic!("{what} in {line}"));
    line[..at]
        .trim_end()
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a count before {what} in {line}"))
}

/// A history: 12 runs of `steady` whose figure shifts by 20% after the sixth, 3 runs of
/// a hostile name with a hostile variant.
fn history(s: &Scratch, store: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for i in 0..12 {
        let level = if i < 6 { 100_000.0 } else { 120_000.0 };
        folders.push(recorded_folder(
            s,
            store,
            &format!("res/steady-{i:02}"),
            "steady",
            &format!("2026-11-01T10:{i:02}:00Z"),
            &[("base", 1.0), ("fast", 1.05)],
            level,
        ));
    }
    for i in 0..3 {
        folders.push(recorded_folder(
            s,
            store,
            &format!("res/nasty-{i}"),
            NASTY_NAME,
            &format!("2026-11-02T10:{i:02}:00Z"),
            &[("base", 1.0), (NASTY_VARIANT, 0.9)],
            50_000.0,
        ));
    }
    folders
}

/// Every HTML file under `dir`, relative.
fn pages(dir: &Path) -> Vec<PathBuf> {
    common::html_files(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().to_path_buf())
        .collect()
}

/// The href values of a page.
fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|t| t.split('"').next())
        .map(|h| h.replace("&amp;", "&"))
        .collect()
}

#[test]
fn the_site_links_up_marks_changes_shows_names_as_text_and_rewrites_only_what_changed() {
    let s = Scratch::new();
    let store = s.path().join("h.sqlite");
    history(&s, &store);
    let dir = s.path().join("site");
    let first = ok(&site(&s, &store, &dir, &[]));
    assert!(first.contains("15 experiments"), "{first}");

    // The pages: index, a trend page per name, a page per run with its report, the
    // compare pages: every pair of runs of a name (both names have at most 30 runs).
    let all = pages(&dir);
    let count_under = |p: &str| all.iter().filter(|x| x.starts_with(p)).count();
    assert!(all.contains(&PathBuf::from("index.html")));
    assert_eq!(count_under("names"), 2, "{all:?}");
    assert_eq!(count_under("compare"), 12 * 11 / 2 + 3, "{all:?}");
    assert_eq!(
        all.iter()
            .filter(|p| p.starts_with("runs") && p.ends_with("report.html"))
            .count(),
        15
    );

    // Every relative link of every page the site made resolves (the copied reports'
    // own links point into their results folders, which are not copied).
    for page in all.iter().filter(|p| !p.ends_with("report.html")) {
        let html = std::fs::read_to_string(dir.join(page)).unwrap();
        for h in hrefs(&html) {
            if h.starts_with('#') || h.contains("://") {
                continue;
            }
            let target = dir.join(page).parent().unwrap().join(&h);
            assert!(
                target.is_file(),
                "{}: link {h} resolves to nothing",
                page.display()
            );
        }
        // Names, variants and answers are text: nothing of them became markup.
        assert!(!html.contains(NASTY_NAME), "{}", page.display());
        assert!(!html.contains(NASTY_VARIANT), "{}", page.display());
        assert!(!html.contains("<img"), "{}", page.display());
    }
    // A pair that is not consecutive (#3 and #9 of `steady`) has its compare page,
    // linked from both runs' pages, in the list and in the picker.
    let pair = "compare/3-9.html";
    assert!(dir.join(pair).is_file(), "{all:?}");
    let compared = std::fs::read_to_string(dir.join(pair)).unwrap();
    assert!(compared.contains("bakeoff compare 3 9"), "{compared}");
    for run in ["runs/3.html", "runs/9.html"] {
        let html = std::fs::read_to_string(dir.join(run)).unwrap();
        let link = format!("href=\"../{pair}\"");
        assert!(html.contains(&link), "{run} does not link {pair}");
        assert!(
            html.contains(&format!("<option value=\"../{pair}\"")),
            "{run}: no picker entry"
        );
        // Every other run of its name is offered: 11 links, 11 picker entries.
        assert_eq!(html.matches("href=\"../compare/").count(), 11, "{run}");
    }
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(index.contains("&quot;&gt;&lt;svg onload=alert(&#39;name&#39;)&gt;"));
    assert!(
        index.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "the answer names the variant"
    );
    // The newest experiment's answer comes first.
    let newest = index.find("id=\"newest\"").expect("the newest box");
    assert!(newest < index.find("<table").unwrap());

    // The trend page of `steady` marks the shift at the seventh run (id 7), as `bakeoff
    // trend` does.
    let trend = ok(&bakeoff(&s)
        .args(["trend", "steady", "--store"])
        .arg(&store)
        .output()
        .unwrap());
    assert!(trend.contains("shift at #7"), "{trend}");
    let steady = all
        .iter()
        .find(|p| p.to_string_lossy().starts_with("names/steady-"))
        .unwrap();
    let page = std::fs::read_to_string(dir.join(steady)).unwrap();
    assert!(
        page.contains("class=\"change-point\">shift at <a href=\"../runs/7.html\">#7</a>"),
        "no marked change point"
    );
    assert!(page.contains("<svg"), "no chart");
    assert!(
        page.contains("<tr class=\"change\">"),
        "the run is not marked in the table"
    );

    // A second call: nothing rewritten, no results.json read again.
    let second = ok(&site(&s, &store, &dir, &[]));
    assert_eq!(count(&second, "files written"), 0, "{second}");
    assert_eq!(count(&second, "results read"), 0, "{second}");

    // One new experiment: its page and report, its name's trend page, the index, its 12
    // compare pages and the 12 other run pages of its name (each now offers it);
    // nothing else.
    recorded_folder(
        &s,
        &store,
        "res/steady-12",
        "steady",
        "2026-11-03T10:00:00Z",
        &[("base", 1.0), ("fast", 1.05)],
        120_000.0,
    );
    let third = ok(&site(&s, &store, &dir, &[]));
    let written = count(&third, "files written");
    assert_eq!(written, 4 + 12 + 12, "{third}");
    assert_eq!(count(&third, "results read"), 1, "{third}");

    // --name: the site holds that name only; what it held of others is removed.
    let only = ok(&site(&s, &store, &dir, &["--name", "steady"]));
    assert!(only.contains("13 experiments"), "{only}");
    // The hostile name's 3 run pages, 3 reports, 3 compare pages and its trend page.
    assert!(count(&only, "removed") >= 9, "{only}");
    assert_eq!(
        pages(&dir)
            .iter()
            .filter(|p| p.starts_with("names"))
            .count(),
        1
    );
    // --since in the future: an empty site, still a page.
    let none = ok(&site(&s, &store, &dir, &["--since", "2030-01-01"]));
    assert!(none.contains("0 experiments"), "{none}");
    assert!(dir.join("index.html").is_file());
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    let s = Scratch::new();
    let store = s.path().join("h.sqlite");
    let one_line_2 = |out: &Output, want: &str| {
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    };
    // No store yet.
    one_line_2(
        &site(&s, &store, &s.path().join("site"), &[]),
        "no history store",
    );
    history(&s, &store);
    // A folder holding someone else's file is never written into.
    let theirs = s.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
    one_line_2(&site(&s, &store, &theirs, &[]), "notes.txt");
    assert_eq!(common::entries(&theirs), vec!["notes.txt".to_string()]);
    one_line_2(
        &site(
            &s,
            &store,
            &s.path().join("site"),
            &["--since", "yesterday"],
        ),
        "--since",
    );
}

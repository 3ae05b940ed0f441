//! `bakeoff site DIR`: a static site over the history store (plain files that open from
//! disk or any static host): `index.html` (every experiment, newest first, the newest
//! answer on top), `names/<name>.html` (an experiment's cells over time with the change
//! points `bakeoff trend` finds), `runs/<id>.html` (one run) with its report.html copied
//! to `runs/<id>/report.html`, and `compare/<a>-<b>.html` (what `bakeoff compare`
//! prints: every pair of a name's runs up to [`ALL_PAIRS_UP_TO`] runs, else each run
//! against the run before it, the first run and the newest run).
//!
//! Incremental: `.bakeoff-site.json` records, per file written, a checksum of what it
//! was made from and of what was written, and per run the facts read from its
//! results.json with that file's size and modification time. A second call renders only
//! the pages whose inputs changed, writes only the files whose bytes changed, reads only
//! the results.json files that changed, and removes the files it wrote before that are
//! no longer part of the site. The folder is claimed as bakeoff's (`bakeoff_os::own`), so
//! a folder holding anyone else's files is refused.

mod pages;

use crate::session::Failure;
use bakeoff_store::{Filter, Record, Side, Store};
use pages::RunView;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The manifest's name in the site's folder.
pub const MANIFEST: &str = ".bakeoff-site.json";
const MANIFEST_SCHEMA: &str = "bakeoff.site/1";
/// `bakeoff_os::own`'s purpose for a site folder.
pub const SITE_PURPOSE: &str = "site";

/// What `bakeoff site` was asked.
pub struct SiteOptions {
    pub dir: PathBuf,
    pub store: PathBuf,
    /// Only experiments started at or after this (UTC, `YYYY-MM-DD[THH:MM:SSZ]`).
    pub since: Option<String>,
    /// Only experiments of this name.
    pub name: Option<String>,
}

/// What a call did.
#[derive(Debug, Default)]
pub struct Summary {
    pub experiments: usize,
    pub written: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub results_read: usize,
}

/// What the site reads from a run's results folder (cached in the manifest while the
/// results.json keeps its size and modification time).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Facts {
    pub size: u64,
    pub mtime_ns: i64,
    /// `[target] kind` (or the kinds, where variants differ).
    pub target: String,
    /// The answer lines, as report.md and the terminal say them.
    pub answers: Vec<String>,
    /// What each point of a trend ran: the source's id (a commit), else the baseline
    /// server's version line.
    pub version: String,
    /// Whether the folder holds a report.html.
    pub report: bool,
    /// Why the folder could not be read (the page says so).
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Written {
    input: String,
    output: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    schema: String,
    files: BTreeMap<String, Written>,
    facts: BTreeMap<i64, Facts>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn checksum(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A checksum of anything serializable: a page's inputs.
fn key_of<T: Serialize + ?Sized>(v: &T) -> String {
    checksum(&serde_json::to_vec(v).unwrap_or_default())
}

/// A file's size and modification time (ns), without following a link; None when absent.
fn stamp(path: &Path) -> Option<(u64, i64)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    m.is_file()
        .then(|| (m.len(), m.mtime() * 1_000_000_000 + m.mtime_nsec()))
}

/// The facts of a results folder, read from its results.json.
fn read_facts(folder: &Path, size: u64, mtime_ns: i64) -> (Facts, Option<bakeoff_report::Results>) {
    let mut f = Facts {
        size,
        mtime_ns,
        report: stamp(&folder.join("report.html")).is_some(),
        ..Facts::default()
    };
    match crate::session::read_results(folder) {
        Ok(r) => {
            let mut kinds: Vec<String> = Vec::new();
            let main = r
                .experiment
                .resolved
                .pointer("/target/kind")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            for v in &r.variants {
                let k = v.kind.clone().unwrap_or_else(|| main.clone());
                if !k.is_empty() && !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
            if kinds.is_empty() && !main.is_empty() {
                kinds.push(main);
            }
            f.target = kinds.join(", ");
            f.answers = bakeoff_report::summary::answers(&r);
            f.version = r
                .source
                .as_ref()
                .map(|s| s.id.clone())
                .or_else(|| {
                    r.variants
                        .iter()
                        .find(|v| v.name == r.plan.baseline)
                        .and_then(|v| v.server_version.clone())
                })
                .unwrap_or_default();
            (f, Some(r))
        }
        Err(e) => {
            f.error = Some(e);
            (f, None)
        }
    }
}

/// Checks `--since`: a date, or a date and time, in UTC.
pub fn check_since(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        r.into_iter()
            .all(|i| b.get(i).is_some_and(u8::is_ascii_digit))
    };
    if b.len() >= 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b.len() == 10 || b[10] == b'T' || b[10] == b' ')
    {
        Ok(())
    } else {
        Err(format!(
            "--since {s:?}: not a UTC date; give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ"
        ))
    }
}

/// The site's folder, with the manifest of what is in it.
struct Out {
    dir: PathBuf,
    old: Manifest,
    new: Manifest,
    sum: Summary,
}

impl Out {
    /// Writes `rel` from `render` unless its inputs (`input`) are those of the file there
    /// already; writes only when the bytes differ from what is there.
    fn put(
        &mut self,
        rel: &str,
        input: String,
        render: impl FnOnce() -> Result<Vec<u8>, Failure>,
    ) -> Result<(), Failure> {
        let path = self.dir.join(rel);
        let old = self.old.files.get(rel).cloned();
        let exists = stamp(&path).is_some();
        if let Some(o) = old.as_ref().filter(|o| o.input == input && exists) {
            self.new.files.insert(rel.to_string(), o.clone());
            self.sum.unchanged += 1;
            return Ok(());
        }
        let bytes = render()?;
        let output = checksum(&bytes);
        if exists && old.is_some_and(|o| o.output == output) {
            self.sum.unchanged += 1;
        } else {
            write_file(&path, &bytes)?;
            self.sum.written += 1;
        }
        self.new
            .files
            .insert(rel.to_string(), Written { input, output });
        Ok(())
    }
}

/// Writes `bytes` to a temporary name beside `path`, then renames it over `path`: a
/// reader of the site never sees half a page. Not fsynced: the site is made from the
/// store again at will.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let fail = |e: std::io::Error| {
        Failure::Failed(format!(
            "cannot write {}: {e}; check that the folder is writable",
            path.display()
        ))
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(fail)?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let done = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

/// The trend page's file of experiment `name`: readable, and never two names in one.
fn name_page(name: &str) -> String {
    let mut safe = bakeoff_os::path::safe_name(name);
    safe.truncate(60);
    format!("names/{safe}-{}.html", &checksum(name.as_bytes())[..10])
}

/// Builds or brings up to date the site in `opts.dir`.
pub fn build(opts: &SiteOptions) -> Result<Summary, Failure> {
    if let Some(s) = &opts.since {
        check_since(s).map_err(Failure::BadInput)?;
    }
    let store = Store::open_existing(&opts.store)
        .map_err(|e| {
            if e.is_bad_input() {
                Failure::BadInput(e.to_string())
            } else {
                Failure::Failed(e.to_string())
            }
        })?
        .ok_or_else(|| {
            Failure::BadInput(format!(
                "no history store at {}; run an experiment first, or pass --store FILE",
                opts.store.display()
            ))
        })?;
    let mut records = store
        .list(&Filter {
            name: opts.name.clone(),
            limit: None,
        })
        .map_err(|e| Failure::Failed(e.to_string()))?;
    if let Some(since) = &opts.since {
        records.retain(|r| r.entry.started_utc.as_str() >= since.as_str());
    }
    claim(&opts.dir)?;
    let old = read_manifest(&opts.dir);
    let mut out = Out {
        dir: opts.dir.clone(),
        old,
        new: Manifest {
            schema: MANIFEST_SCHEMA.into(),
            ..Manifest::default()
        },
        sum: Summary {
            experiments: records.len(),
            ..Summary::default()
        },
    };
    // Facts: from the manifest while the results.json is unchanged, else read.
    let mut loaded: HashMap<i64, bakeoff_report::Results> = HashMap::new();
    for r in &records {
        let results = r.entry.folder.join("results.json");
        let (size, mtime) = stamp(&results).unwrap_or((0, 0));
        let cached = out
            .old
            .facts
            .get(&r.id)
            .filter(|f| f.size == size && f.mtime_ns == mtime && size > 0)
            .cloned();
        let facts = match cached {
            Some(f) => f,
            None => {
                out.sum.results_read += 1;
                let (f, res) = read_facts(&r.entry.folder, size, mtime);
                if let Some(res) = res {
                    // Kept for this call's compare pages; dropped when many.
                    if loaded.len() < 64 {
                        loaded.insert(r.id, res);
                    }
                }
                f
            }
        };
        out.new.facts.insert(r.id, facts);
    }
    let facts = std::mem::take(&mut out.new.facts);
    let views: Vec<RunView> = records
        .iter()
        .map(|r| RunView {
            record: r,
            facts: &facts[&r.id],
            name_page: name_page(&r.entry.name),
        })
        .collect();
    pages_of(&mut out, &views, &mut loaded)?;
    out.new.facts = facts.clone();
    finish(out)
}

/// Every page of the site, each written only when its inputs changed.
fn pages_of(
    out: &mut Out,
    views: &[RunView],
    loaded: &mut HashMap<i64, bakeoff_report::Results>,
) -> Result<(), Failure> {
    let version = env!("CARGO_PKG_VERSION");
    // One style sheet for every page.
    out.put("style.css", key_of(version), || {
        Ok(pages::style().into_bytes())
    })?;
    // The index: every run's line.
    let index_key = key_of(&(
        version,
        views
            .iter()
            .map(|v| (&v.record.id, &v.record.entry, v.facts))
            .collect::<Vec<_>>(),
    ));
    out.put("index.html", index_key, || {
        Ok(pages::index(views).into_bytes())
    })?;
    // Runs of each name, oldest first.
    let mut by_name: BTreeMap<&str, Vec<&RunView>> = BTreeMap::new();
    for v in views.iter().rev() {
        by_name.entry(&v.record.entry.name).or_default().push(v);
    }
    for (name, runs) in &by_name {
        let key = key_of(&(
            version,
            name,
            runs.iter()
                .map(|v| (&v.record.id, &v.record.entry, v.facts))
                .collect::<Vec<_>>(),
        ));
        let page = runs[0].name_page.clone();
        out.put(&page, key, || {
            let records: Vec<Record> = runs.iter().map(|v| v.record.clone()).collect();
            let t = bakeoff_store::trend(name, &records, None, None);
            let owned: Vec<RunView> = runs
                .iter()
                .map(|v| RunView {
                    record: v.record,
                    facts: v.facts,
                    name_page: v.name_page.clone(),
                })
                .collect();
            Ok(pages::trend_page(&t, &owned).into_bytes())
        })?;
        // The compare pages of this name: every pair where it has few runs, else each
        // run against the run before it, the first run and the newest run. A page
        // exists only where both folders could be read.
        let readable = |x: &RunView| x.facts.error.is_none();
        let pairs: Vec<(usize, usize)> = compare_pairs(runs.len())
            .into_iter()
            .filter(|&(a, b)| readable(runs[a]) && readable(runs[b]))
            .collect();
        let mut partners: Vec<Vec<usize>> = vec![Vec::new(); runs.len()];
        for &(a, b) in &pairs {
            partners[a].push(b);
            partners[b].push(a);
        }
        let every = runs.len() <= ALL_PAIRS_UP_TO;
        for (i, v) in runs.iter().enumerate() {
            let id = v.record.id;
            let mut with: Vec<pages::Partner> = partners[i]
                .iter()
                .map(|&j| pages::Partner {
                    id: runs[j].record.id,
                    page: pair_page(runs, i.min(j), i.max(j)),
                    role: if j + 1 == i {
                        "the run before"
                    } else if j == i + 1 {
                        "the run after"
                    } else if j == 0 {
                        "the first run"
                    } else if j + 1 == runs.len() {
                        "the newest run"
                    } else {
                        ""
                    },
                    when: runs[j].record.entry.started_utc.clone(),
                })
                .collect();
            with.sort_by_key(|p| std::cmp::Reverse(p.id));
            let choice = pages::Choice {
                with,
                runs: runs.len(),
                every,
            };
            let key = key_of(&(version, &v.record.entry, v.facts, &choice));
            out.put(&format!("runs/{id}.html"), key, || {
                Ok(pages::run_page(v, &choice).into_bytes())
            })?;
            if v.facts.report {
                let src = v.record.entry.folder.join("report.html");
                let key = key_of(&stamp(&src));
                out.put(&format!("runs/{id}/report.html"), key, || {
                    std::fs::read(&src)
                        .map_err(|e| Failure::Failed(format!("cannot read {}: {e}", src.display())))
                })?;
            }
        }
        // Results read for this name's pages, kept while a later page may need them:
        // all of them where every pair is made, else the first, the newest and the
        // last one read.
        let mut sides: HashMap<usize, Side> = HashMap::new();
        for &(a, b) in &pairs {
            let (ra, rb) = (runs[a], runs[b]);
            let key = key_of(&(version, ra.record.id, rb.record.id, ra.facts, rb.facts));
            let rel = pair_page(runs, a, b);
            out.put(&rel, key, || {
                for x in [a, b] {
                    if let std::collections::hash_map::Entry::Vacant(slot) = sides.entry(x) {
                        let r = runs[x].record;
                        let results = match loaded.remove(&r.id) {
                            Some(res) => res,
                            None => crate::session::read_results(&r.entry.folder)
                                .map_err(Failure::Failed)?,
                        };
                        slot.insert(Side {
                            results,
                            folder: r.entry.folder.clone(),
                            id: Some(r.id),
                        });
                    }
                }
                let (sa, sb) = (&sides[&a], &sides[&b]);
                let c = bakeoff_store::compare(sa, sb, &sb.results.started_utc);
                Ok(pages::compare_page(name, ra.record.id, rb.record.id, &c).into_bytes())
            })?;
            if !every {
                let last = runs.len() - 1;
                let k = pair_key(a, b, last);
                sides.retain(|&x, _| x == 0 || x == last || x == k);
            }
        }
    }
    Ok(())
}

/// The names with at most this many runs get a compare page for every pair of runs.
pub const ALL_PAIRS_UP_TO: usize = 30;

/// Which pairs (older, newer; indexes, oldest first) of a name's `n` runs get a compare
/// page: every pair up to [`ALL_PAIRS_UP_TO`] runs; beyond, each run against the run
/// before it, the first run and the newest run. Ordered so that, beyond, each run's
/// results are read once: by the run that is neither the first nor the newest.
fn compare_pairs(n: usize) -> Vec<(usize, usize)> {
    let mut pairs = std::collections::BTreeSet::new();
    for b in 1..n {
        if n <= ALL_PAIRS_UP_TO {
            pairs.extend((0..b).map(|a| (a, b)));
        } else {
            pairs.insert((b - 1, b));
            pairs.insert((0, b));
            pairs.insert((b, n - 1));
        }
    }
    pairs.remove(&(n.saturating_sub(1), n.saturating_sub(1)));
    let mut pairs: Vec<(usize, usize)> = pairs.into_iter().collect();
    let last = n.saturating_sub(1);
    pairs.sort_by_key(|&(a, b)| (pair_key(a, b, last), a, b));
    pairs
}

/// The run of a pair that is neither the first nor the newest (where one is).
fn pair_key(a: usize, b: usize, last: usize) -> usize {
    if b == last && a != 0 {
        a
    } else {
        b
    }
}

/// The compare page of runs `a` (older) and `b` of one name, relative to the root.
fn pair_page(runs: &[&RunView], a: usize, b: usize) -> String {
    format!("compare/{}-{}.html", runs[a].record.id, runs[b].record.id)
}

/// Removes what the last call wrote that is no longer part of the site, then writes the
/// manifest.
fn finish(mut out: Out) -> Result<Summary, Failure> {
    for rel in out.old.files.keys() {
        if out.new.files.contains_key(rel) || !safe_rel(rel) {
            continue;
        }
        let path = out.dir.join(rel);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            && std::fs::remove_file(&path).is_ok()
        {
            out.sum.removed += 1;
        }
    }
    let bytes = serde_json::to_vec(&out.new)
        .map_err(|e| Failure::Failed(format!("cannot write the site's manifest: {e}")))?;
    write_file(&out.dir.join(MANIFEST), &bytes)?;
    Ok(out.sum)
}

/// A manifest path the site could have written: relative, plain names only.
fn safe_rel(rel: &str) -> bool {
    Path::new(rel)
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
}

fn read_manifest(dir: &Path) -> Manifest {
    std::fs::read(dir.join(MANIFEST))
        .ok()
        .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
        .filter(|m| m.schema == MANIFEST_SCHEMA)
        .unwrap_or_default()
}

/// Claims the site's folder: new, empty, or a site bakeoff made.
fn claim(dir: &Path) -> Result<(), Failure> {
    // A site an earlier call made (its manifest there) is taken again even where
    // bakeoff's state does not vouch for the folder's marker.
    let made = dir.join(MANIFEST).is_file();
    let ours = |e: &std::fs::DirEntry| {
        let n = e.file_name();
        let n = n.to_string_lossy();
        made && [
            MANIFEST,
            "index.html",
            "style.css",
            "names",
            "runs",
            "compare",
        ]
        .contains(&n.as_ref())
    };
    bakeoff_os::own::claim(dir, SITE_PURPOSE, &ours).map_err(|e| {
        Failure::BadInput(format!(
            "{}: cannot make the site there: {e}; give a new or empty folder, or one `bakeoff site` made",
            dir.display()
        ))
    })
}

//! Bundles: experiments' results folders carried between machines. `bakeoff export`
//! writes one gzip-compressed tar: first `bakeoff-bundle.json` (the manifest: the bundle
//! schema, bakeoff's version, and per experiment its name, start, identity, checksum,
//! machine table and every file's path, size and SHA-256), then each file as
//! `files/<n>`, whose place in its folder only the manifest says (so no member name is
//! ever a path to write to).
//!
//! `bakeoff import` checks the whole bundle before anything of it reaches the results
//! folder or the store: the manifest's schema (a newer one is refused), every path in it
//! (relative, plain names, nothing leaving the folder: the build crate's
//! `names_outside` and more), every member (a regular file the manifest lists, once, no
//! bigger than the manifest says, with its checksum). Members are written while checked
//! into a fresh staging folder inside the results root, and only when every check
//! passed is each experiment's folder renamed into place and recorded; on any failure the
//! staging folder is removed and the one line names the file. An experiment the store
//! holds already (same identity, same results.json checksum) is skipped.

mod tar;

use crate::cli::{ExportArgs, ImportArgs};
use crate::session::{read_results, Failure};
use bakeoff_store::{Entry, Store};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// The manifest's member name, first in every bundle.
pub const MANIFEST: &str = "bakeoff-bundle.json";
/// The bundle schema this bakeoff writes and reads.
pub const SCHEMA: &str = "bakeoff.bundle/1";
const SCHEMA_PREFIX: &str = "bakeoff.bundle/";
/// The largest manifest read (a bundle of very many files stays far below).
const MAX_MANIFEST: u64 = 64 << 20;

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    schema: String,
    bakeoff_version: String,
    created_utc: String,
    experiments: Vec<Experiment>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Experiment {
    /// The folder's name where it was made (the imported folder's name, made unique).
    folder: String,
    name: String,
    started_utc: String,
    /// What makes it the same experiment on every machine: a checksum of its name,
    /// start and host.
    id: String,
    /// The SHA-256 of its results.json.
    checksum: String,
    /// The machine it ran on, as results.json describes it.
    machine: serde_json::Value,
    files: Vec<FileEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct FileEntry {
    /// Its place in the folder, `/`-separated.
    path: String,
    size: u64,
    sha256: String,
    /// The bundle member holding it.
    member: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn identity(name: &str, started: &str, host: &str) -> String {
    sha256(format!("{name}\n{started}\n{host}").as_bytes())
}

/// Every regular file under `dir`, relative, sorted; a link or anything else refused.
fn files_of(dir: &Path) -> Result<Vec<String>, Failure> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let here = dir.join(&rel);
        let entries = std::fs::read_dir(&here).map_err(|e| {
            Failure::BadInput(format!("{}: cannot read the folder: {e}", here.display()))
        })?;
        for e in entries {
            let e = e.map_err(|e| Failure::BadInput(format!("{}: {e}", here.display())))?;
            let name = e.file_name();
            let rel = rel.join(&name);
            let ft = e
                .file_type()
                .map_err(|err| Failure::BadInput(format!("{}: {err}", e.path().display())))?;
            if rel == Path::new(".bakeoff-owned") {
                continue; // this machine's marker, not the experiment's
            }
            let Some(s) = rel.to_str() else {
                return Err(Failure::BadInput(format!(
                    "{}: a file name that is not UTF-8; a bundle carries UTF-8 names only",
                    e.path().display()
                )));
            };
            if ft.is_dir() {
                todo.push(rel.clone());
            } else if ft.is_file() {
                out.push(s.to_string());
            } else {
                return Err(Failure::BadInput(format!(
                    "{}: a link or special file in a results folder; a bundle carries regular files only: remove it or copy what it points to",
                    e.path().display()
                )));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `bakeoff export RESULTS... -o FILE`.
pub fn export_cmd(args: &ExportArgs) -> Result<(), Failure> {
    if std::fs::symlink_metadata(&args.output).is_ok() {
        return Err(Failure::BadInput(format!(
            "{}: already exists; give -o a new file",
            args.output.display()
        )));
    }
    let mut experiments = Vec::new();
    let mut contents: Vec<(String, Vec<u8>)> = Vec::new();
    for arg in &args.results {
        let side = crate::session::side(arg, &args.store)?;
        let r = &side.results;
        let dir = &side.folder;
        let mut files = Vec::new();
        for rel in files_of(dir)? {
            let path = dir.join(&rel);
            let bytes = std::fs::read(&path)
                .map_err(|e| Failure::Failed(format!("cannot read {}: {e}", path.display())))?;
            let member = format!("files/{:06}", contents.len());
            files.push(FileEntry {
                path: rel,
                size: bytes.len() as u64,
                sha256: sha256(&bytes),
                member: member.clone(),
            });
            contents.push((member, bytes));
        }
        let checksum = files
            .iter()
            .find(|f| f.path == "results.json")
            .map(|f| f.sha256.clone())
            .unwrap_or_default();
        let folder = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "results".into());
        experiments.push(Experiment {
            folder,
            name: r.name.clone(),
            started_utc: r.started_utc.clone(),
            id: identity(&r.name, &r.started_utc, &r.host.hostname),
            checksum,
            machine: serde_json::to_value(&r.host).unwrap_or_default(),
            files,
        });
    }
    let manifest = Manifest {
        schema: SCHEMA.into(),
        bakeoff_version: env!("CARGO_PKG_VERSION").into(),
        created_utc: bakeoff_store::now_utc(),
        experiments,
    };
    let json = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| Failure::Failed(format!("cannot write the manifest: {e}")))?;
    let fail = |e: std::io::Error| {
        Failure::Failed(format!(
            "cannot write {}: {e}; check that its folder is writable",
            args.output.display()
        ))
    };
    let tmp = args
        .output
        .with_extension(format!("tmp-{}", std::process::id()));
    let written = (|| {
        let f = std::fs::File::create(&tmp)?;
        let mut gz = flate2::write::GzEncoder::new(
            std::io::BufWriter::new(f),
            flate2::Compression::default(),
        );
        tar::write_file(&mut gz, MANIFEST, &json)?;
        for (member, bytes) in &contents {
            tar::write_file(&mut gz, member, bytes)?;
        }
        tar::finish(&mut gz)?;
        let mut w = gz.finish()?;
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, &args.output)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(e));
    }
    println!(
        "bundle: {} ({} experiments, {} files)",
        args.output.display(),
        manifest.experiments.len(),
        contents.len()
    );
    Ok(())
}

/// A path from a manifest that stays inside its folder: relative, `/`-separated plain
/// names (no `..`, no `.`, no empty part, nothing absolute).
fn confined(path: &str) -> bool {
    !path.is_empty()
        && !bakeoff_build::dist::names_outside(path)
        && !path.contains('\\')
        && !path.contains('\0')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// The one line a refused bundle gets.
fn refused(bundle: &Path, file: &str, why: &str) -> Failure {
    Failure::BadInput(format!(
        "{}: refused, nothing imported: {file}: {why}",
        bundle.display()
    ))
}

/// The manifest: the bundle's first member, checked.
fn read_manifest<R: Read>(bundle: &Path, r: &mut tar::Reader<R>) -> Result<Manifest, Failure> {
    let io = |e: std::io::Error| {
        refused(
            bundle,
            MANIFEST,
            &format!("unreadable ({e}); is this a file `bakeoff export` wrote?"),
        )
    };
    let h = r
        .next()
        .map_err(io)?
        .ok_or_else(|| refused(bundle, MANIFEST, "the bundle is empty"))?;
    if h.name != MANIFEST || h.kind != tar::Kind::File {
        return Err(refused(
            bundle,
            &h.name,
            "the bundle does not start with its manifest; is this a file `bakeoff export` wrote?",
        ));
    }
    if h.size > MAX_MANIFEST {
        return Err(refused(
            bundle,
            MANIFEST,
            "larger than any manifest bakeoff writes",
        ));
    }
    let mut bytes = vec![0u8; h.size as usize];
    let mut at = 0;
    while at < bytes.len() {
        let n = r.read_member(&mut bytes[at..]).map_err(io)?;
        at += n;
    }
    let v: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| refused(bundle, MANIFEST, &format!("not JSON: {e}")))?;
    let schema = v["schema"].as_str().unwrap_or("");
    if schema != SCHEMA {
        let newer = schema
            .strip_prefix(SCHEMA_PREFIX)
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n > 1);
        let why = if newer {
            format!("written by a newer bakeoff (schema {schema}; this bakeoff reads {SCHEMA}); import it with that bakeoff")
        } else {
            format!("unknown schema {schema:?} (this bakeoff reads {SCHEMA})")
        };
        return Err(refused(bundle, MANIFEST, &why));
    }
    let m: Manifest = serde_json::from_value(v)
        .map_err(|e| refused(bundle, MANIFEST, &format!("not a bundle manifest: {e}")))?;
    for e in &m.experiments {
        if !confined(&e.folder) || e.folder.contains('/') || e.folder.starts_with('.') {
            return Err(refused(
                bundle,
                &e.folder,
                "a folder name that is not a plain name (it would leave the results folder)",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for f in &e.files {
            if !confined(&f.path) || f.path.starts_with(".bakeoff") {
                return Err(refused(
                    bundle,
                    &format!("{}/{}", e.folder, f.path),
                    "a path that leaves the results folder",
                ));
            }
            if !seen.insert(f.path.as_str()) {
                return Err(refused(
                    bundle,
                    &format!("{}/{}", e.folder, f.path),
                    "listed twice",
                ));
            }
        }
        if !e.files.iter().any(|f| f.path == "results.json") {
            return Err(refused(
                bundle,
                &format!("{}/results.json", e.folder),
                "missing: every experiment carries its results.json",
            ));
        }
    }
    Ok(m)
}

/// A staging folder inside the results root, removed on drop unless kept.
struct Staging(PathBuf);
impl Drop for Staging {
    fn drop(&mut self) {
        if self.0.as_os_str().is_empty() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `bakeoff import FILE`.
pub fn import_cmd(args: &ImportArgs) -> Result<(), Failure> {
    let bundle = &args.bundle;
    let file = std::fs::File::open(bundle)
        .map_err(|e| Failure::BadInput(format!("{}: cannot open: {e}", bundle.display())))?;
    let mut r = tar::Reader::new(flate2::read::GzDecoder::new(std::io::BufReader::new(file)));
    let m = read_manifest(bundle, &mut r)?;
    let path = crate::session::store_path(&args.store)?;
    // The store is checked before anything is unpacked (a file that is not a store is
    // refused here), and written only once every check passed.
    Store::open_existing(&path).map_err(crate::session::store_failure)?;
    let root = &args.results_dir;
    let made_root = std::fs::symlink_metadata(root).is_err();
    std::fs::create_dir_all(root).map_err(|e| {
        Failure::BadInput(format!(
            "{}: cannot create the results folder: {e}",
            root.display()
        ))
    })?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let stage = root.join(format!(".bakeoff-import-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&stage)
        .map_err(|e| Failure::Failed(format!("cannot create {}: {e}", stage.display())))?;
    let staging = Staging(stage.clone());
    let checked = check_members(bundle, &m, &mut r, &stage);
    let ready = match checked {
        Ok(ready) => ready,
        Err(e) => {
            drop(staging);
            if made_root {
                // Nothing of the bundle stays: not even the folder made for it.
                let _ = std::fs::remove_dir(root);
            }
            return Err(e);
        }
    };
    let mut store = Store::open(&path).map_err(crate::session::store_failure)?;
    let (mut added, mut skipped) = (0, 0);
    for (e, dir, res) in ready {
        if already_there(&store, e, &res) {
            skipped += 1;
            continue;
        }
        let dest = fresh(root.join(&e.folder));
        std::fs::rename(&dir, &dest).map_err(|err| {
            Failure::Failed(format!(
                "cannot move {} to {}: {err}",
                dir.display(),
                dest.display()
            ))
        })?;
        let entry = Entry::from_results(&res, &dest);
        store
            .record(&entry)
            .map_err(crate::session::store_failure)?;
        added += 1;
    }
    drop(staging);
    println!(
        "imported {added} experiment(s) into {} (results in {}); {skipped} already there, skipped",
        path.display(),
        root.display()
    );
    Ok(())
}

/// Every member checked against the manifest and written into `stage`; then each
/// experiment's results read. Nothing outside `stage` is touched.
fn check_members<'m, R: Read>(
    bundle: &Path,
    m: &'m Manifest,
    r: &mut tar::Reader<R>,
    stage: &Path,
) -> Result<Vec<(&'m Experiment, PathBuf, bakeoff_report::Results)>, Failure> {
    // Which manifest entry each member is.
    let mut wanted: HashMap<&str, (usize, &FileEntry)> = HashMap::new();
    for (i, e) in m.experiments.iter().enumerate() {
        for f in &e.files {
            if wanted.insert(f.member.as_str(), (i, f)).is_some() {
                return Err(refused(bundle, &f.member, "two files in one member"));
            }
        }
    }
    let mut done = std::collections::HashSet::new();
    let io = |what: &str, e: std::io::Error| refused(bundle, what, &format!("unreadable ({e})"));
    while let Some(h) = r.next().map_err(|e| io("the archive", e))? {
        if let tar::Kind::Other(what) = h.kind {
            // Named as the manifest names it, where it does.
            let shown = wanted
                .get(h.name.as_str())
                .map_or(h.name.clone(), |(exp, f)| {
                    format!("{}/{} ({})", m.experiments[*exp].folder, f.path, h.name)
                });
            return Err(refused(
                bundle,
                &shown,
                &format!("{what}; a bundle holds regular files only"),
            ));
        }
        if h.kind == tar::Kind::Folder && h.name.trim_end_matches('/') == "files" {
            continue;
        }
        let Some(&(exp, f)) = wanted.get(h.name.as_str()) else {
            return Err(refused(bundle, &h.name, "not in the manifest"));
        };
        let shown = format!("{}/{}", m.experiments[exp].folder, f.path);
        if h.kind != tar::Kind::File {
            return Err(refused(bundle, &shown, "not a regular file"));
        }
        if !done.insert(h.name.clone()) {
            return Err(refused(bundle, &shown, "in the bundle twice"));
        }
        if h.size > f.size {
            return Err(refused(
                bundle,
                &shown,
                &format!("{} bytes, over the manifest's {}", h.size, f.size),
            ));
        }
        if h.size != f.size {
            return Err(refused(
                bundle,
                &shown,
                &format!("{} bytes, the manifest says {}", h.size, f.size),
            ));
        }
        let dest = stage.join(exp.to_string()).join(&f.path);
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d)
                .map_err(|e| Failure::Failed(format!("cannot create {}: {e}", d.display())))?;
        }
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&dest)
            .map_err(|e| refused(bundle, &shown, &format!("cannot be written ({e})")))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = r.read_member(&mut buf).map_err(|e| io(&shown, e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n])
                .map_err(|e| Failure::Failed(format!("cannot write {}: {e}", dest.display())))?;
        }
        if hex(&hasher.finalize()) != f.sha256 {
            return Err(refused(
                bundle,
                &shown,
                "its bytes do not match the manifest's checksum (changed after export)",
            ));
        }
    }
    if let Some((_, f)) = wanted.iter().find(|(k, _)| !done.contains(**k)) {
        let (exp, f) = f;
        return Err(refused(
            bundle,
            &format!("{}/{}", m.experiments[*exp].folder, f.path),
            "listed in the manifest but not in the bundle",
        ));
    }
    // Every byte checked: each experiment's results read before any moves in.
    let mut ready = Vec::new();
    for (i, e) in m.experiments.iter().enumerate() {
        let dir = stage.join(i.to_string());
        let res = read_results(&dir)
            .map_err(|why| refused(bundle, &format!("{}/results.json", e.folder), &why))?;
        if identity(&res.name, &res.started_utc, &res.host.hostname) != e.id {
            return Err(refused(
                bundle,
                &format!("{}/results.json", e.folder),
                "its experiment is not the one the manifest names",
            ));
        }
        ready.push((e, dir, res));
    }
    Ok(ready)
}

/// Whether the store records this experiment already, with a results.json of the same
/// checksum.
fn already_there(store: &Store, e: &Experiment, res: &bakeoff_report::Results) -> bool {
    let Ok(records) = store.history_of(&res.name) else {
        return false;
    };
    records.iter().any(|r| {
        r.entry.started_utc == res.started_utc
            && r.entry.hostname == res.host.hostname
            && std::fs::read(r.entry.folder.join("results.json"))
                .is_ok_and(|b| sha256(&b) == e.checksum)
    })
}

/// `dir`, or `dir-2`, `dir-3`, ...: the first that does not exist.
fn fresh(dir: PathBuf) -> PathBuf {
    if std::fs::symlink_metadata(&dir).is_err() {
        return dir;
    }
    (2..)
        .map(|i| PathBuf::from(format!("{}-{i}", dir.display())))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or(dir)
}

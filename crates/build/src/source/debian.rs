//! Debian source packages: `apt-get source PACKAGE` in a staging dir inside the cache (which
//! downloads and unpacks with the Debian patches applied), then the unpacked tree is renamed
//! into place. Identity: sha256 of the `.dsc`, which pins both tarballs by sha256. When the
//! newest version cannot be downloaded (a mirror behind its index), the next listed version is
//! fetched instead and the description says so.

use std::path::Path;
use std::process::Command;

use super::{cached_or_fill, rename, subdirs, SourceMeta, SourceTree};
use crate::cache::Cache;
use crate::error::{BuildError, Result};
use crate::util::{last_lines, name_of, remove_tree, require_tool, run_captured, sha256_hex};

pub(super) fn fetch(package: &str, cache: &Cache) -> Result<SourceTree> {
    validate_name(package)?;
    cached_or_fill(cache, "debian", package, |staging| {
        require_tool("apt-get", "apt")?;
        require_tool("dpkg-source", "dpkg-dev")?;
        let dl = staging.join("download");
        crate::cache::create_dir_all(&dl)?;
        let note = download(package, &dl)?;
        let dsc = dsc_path(package, &dl)?;
        let mut meta = meta_from_dsc(package, &dsc)?;
        if let Some(note) = note {
            meta.description = format!("{} ({note})", meta.description);
        }
        let unpacked = only_subdir(package, &dl)?;
        rename(&unpacked, &staging.join("tree"))?;
        rename(&dsc, &staging.join(name_of(&dsc)))?;
        remove_tree(&dl)?;
        Ok(meta)
    })
}

/// Debian policy for a source package name: lowercase letters, digits, `+ - .`, at least
/// two characters, starting with a letter or digit (so never an option of apt's).
pub fn is_package_name(package: &str) -> bool {
    package.len() >= 2
        && package.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && package
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
}

fn validate_name(package: &str) -> Result<()> {
    if is_package_name(package) {
        Ok(())
    } else {
        Err(BuildError::BadSpec {
            what: "debian package name",
            detail: format!("`{package}` is not a Debian source package name (e.g. memcached)"),
        })
    }
}

/// `apt-get source PACKAGE`; when that fails to download (a mirror that lags its index, as
/// when the newest version is in a security suite the mirror does not carry), each other
/// version the index lists is tried, newest first, as `apt-get source PACKAGE=VERSION`.
/// Returns a note naming the version that could not be downloaded, if one was skipped.
fn download(package: &str, dir: &Path) -> Result<Option<String>> {
    let first = apt_source(package, dir)?;
    if first.ok {
        return Ok(None);
    }
    let fail = |output: &str| BuildError::DebianFetch {
        package: package.to_string(),
        detail: last_lines(output.trim(), 1),
    };
    if !first.output.contains("Failed to fetch") {
        return Err(fail(&first.output));
    }
    let versions = listed_versions(package)?;
    let newest = versions.first().cloned().unwrap_or_default();
    for version in versions.iter().skip(1) {
        clear_dir(dir)?;
        if apt_source(&format!("{package}={version}"), dir)?.ok {
            return Ok(Some(format!("{newest} could not be downloaded")));
        }
    }
    Err(fail(&first.output))
}

fn apt_source(what: &str, dir: &Path) -> Result<crate::util::Captured> {
    run_captured(
        Command::new("apt-get")
            .args(["source", "-q", "--", what])
            .current_dir(dir)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
    .map_err(|e| BuildError::io("cannot run apt-get", e))
}

/// Remove what a failed `apt-get source` left in `dir`.
fn clear_dir(dir: &Path) -> Result<()> {
    remove_tree(dir)?;
    crate::cache::create_dir_all(dir)
}

/// The versions of source package `package` in the apt index, newest first.
fn listed_versions(package: &str) -> Result<Vec<String>> {
    let res = run_captured(Command::new("apt-cache").args(["showsrc", "-q", "--", package]))
        .map_err(|e| BuildError::io("cannot run apt-cache", e))?;
    let mut versions = showsrc_versions(&res.output, package);
    versions.sort_by(|a, b| compare_versions(b, a));
    versions.dedup();
    Ok(versions)
}

/// The `Version:` of every `apt-cache showsrc` stanza whose `Package:` is `package` (showsrc
/// also lists the sources of binary packages with that name).
fn showsrc_versions(text: &str, package: &str) -> Vec<String> {
    text.split("\n\n")
        .filter(|stanza| {
            stanza
                .lines()
                .any(|l| l.strip_prefix("Package:").map(str::trim) == Some(package))
        })
        .filter_map(dsc_version)
        .collect()
}

/// Debian version order (`dpkg --compare-versions`): epoch numerically, then the upstream
/// version and the revision with `verrevcmp` (`~` before everything, letters before other
/// characters, digit runs numerically).
fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    fn split(v: &str) -> (u64, &str, &str) {
        let (epoch, rest) = match v.split_once(':') {
            Some((e, r)) => (e.parse().unwrap_or(0), r),
            None => (0, v),
        };
        match rest.rsplit_once('-') {
            Some((up, rev)) => (epoch, up, rev),
            None => (epoch, rest, ""),
        }
    }
    let (ea, ua, ra) = split(a);
    let (eb, ub, rb) = split(b);
    ea.cmp(&eb)
        .then_with(|| verrevcmp(ua, ub))
        .then_with(|| verrevcmp(ra, rb))
}

fn verrevcmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn order(c: Option<u8>) -> i32 {
        match c {
            None => 0,
            Some(b'~') => -1,
            Some(c) if c.is_ascii_digit() => 0,
            Some(c) if c.is_ascii_alphabetic() => i32::from(c),
            Some(c) => i32::from(c) + 256,
        }
    }
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        while (i < a.len() && !a[i].is_ascii_digit()) || (j < b.len() && !b[j].is_ascii_digit()) {
            let (x, y) = (order(a.get(i).copied()), order(b.get(j).copied()));
            if x != y {
                return x.cmp(&y);
            }
            i += 1;
            j += 1;
        }
        let digits = |s: &[u8], k: &mut usize| {
            *k = (*k).min(s.len());
            while *k < s.len() && s[*k] == b'0' {
                *k += 1;
            }
            let start = *k;
            while *k < s.len() && s[*k].is_ascii_digit() {
                *k += 1;
            }
            start..*k
        };
        let (da, db) = (digits(a, &mut i), digits(b, &mut j));
        let by_len = da.len().cmp(&db.len());
        if by_len != std::cmp::Ordering::Equal {
            return by_len;
        }
        let by_digits = a[da].cmp(&b[db]);
        if by_digits != std::cmp::Ordering::Equal {
            return by_digits;
        }
    }
    std::cmp::Ordering::Equal
}

fn dsc_path(package: &str, dir: &Path) -> Result<std::path::PathBuf> {
    let read = std::fs::read_dir(dir)
        .map_err(|e| BuildError::io(format!("cannot list {}", dir.display()), e))?;
    let mut dscs: Vec<_> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "dsc"))
        .collect();
    dscs.sort();
    dscs.into_iter()
        .next()
        .ok_or_else(|| BuildError::DebianFetch {
            package: package.to_string(),
            detail: "no .dsc file was downloaded".to_string(),
        })
}

fn meta_from_dsc(package: &str, dsc: &Path) -> Result<SourceMeta> {
    let text = std::fs::read(dsc)
        .map_err(|e| BuildError::io(format!("cannot read {}", dsc.display()), e))?;
    let version = dsc_version(&String::from_utf8_lossy(&text)).unwrap_or_else(|| "?".into());
    let mut keyed = b"debian:".to_vec();
    keyed.extend_from_slice(&text);
    Ok(SourceMeta {
        id: sha256_hex(&keyed),
        description: format!("debian {package} {version}"),
    })
}

/// The `Version:` field of a `.dsc`.
fn dsc_version(dsc: &str) -> Option<String> {
    dsc.lines()
        .find_map(|l| l.strip_prefix("Version:"))
        .map(|v| v.trim().to_string())
}

fn only_subdir(package: &str, dir: &Path) -> Result<std::path::PathBuf> {
    let mut dirs = subdirs(dir)?;
    if dirs.len() == 1 {
        return Ok(dirs.remove(0));
    }
    Err(BuildError::DebianFetch {
        package: package.to_string(),
        detail: format!(
            "expected one unpacked directory, found {} (is dpkg-dev installed?)",
            dirs.len()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(validate_name("memcached").is_ok());
        assert!(validate_name("postgresql-15").is_ok());
        assert!(validate_name("libc++").is_ok());
        assert!(validate_name("../etc").is_err());
        assert!(validate_name("Memcached").is_err());
        assert!(validate_name("a").is_err());
        assert!(validate_name("mem cached").is_err());
    }

    #[test]
    fn debian_version_order() {
        use std::cmp::Ordering::*;
        let cases = [
            ("15.20-0+deb12u1", "15.18-0+deb12u1", Greater),
            ("1:10.11.18-0+deb12u1", "10.12-1", Greater),
            ("1.6.18-1+deb12u1", "1.6.18-1", Greater),
            ("1.0~rc1-1", "1.0-1", Less),
            ("1.0a", "1.0", Greater),
            ("1.0-1", "1.0-1", Equal),
            ("1.01", "1.1", Equal),
            ("2.10", "2.9", Greater),
            ("1.0+b1", "1.0a", Greater),
        ];
        for (a, b, want) in cases {
            assert_eq!(compare_versions(a, b), want, "{a} vs {b}");
            assert_eq!(compare_versions(b, a), want.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn versions_from_showsrc() {
        let text = "Package: postgresql-15\nBinary: x\nVersion: 15.18-0+deb12u1\n\nPackage: other\nVersion: 9\n\nPackage: postgresql-15\nVersion: 15.20-0+deb12u1\n";
        assert_eq!(
            showsrc_versions(text, "postgresql-15"),
            ["15.18-0+deb12u1", "15.20-0+deb12u1"]
        );
    }

    #[test]
    fn version_from_dsc() {
        let dsc = "Format: 3.0 (quilt)\nSource: memcached\nVersion: 1.6.18-1+deb12u1\n";
        assert_eq!(dsc_version(dsc).as_deref(), Some("1.6.18-1+deb12u1"));
        assert_eq!(dsc_version("Source: x\n"), None);
    }
}

//! Debian source packages: `apt-get source PACKAGE` in a staging dir inside the cache (which
//! downloads and unpacks with the Debian patches applied), then the unpacked tree is renamed
//! into place. Identity: sha256 of the `.dsc`, which pins both tarballs by sha256.

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
        download(package, &dl)?;
        let dsc = dsc_path(package, &dl)?;
        let meta = meta_from_dsc(package, &dsc)?;
        let unpacked = only_subdir(package, &dl)?;
        rename(&unpacked, &staging.join("tree"))?;
        rename(&dsc, &staging.join(name_of(&dsc)))?;
        remove_tree(&dl)?;
        Ok(meta)
    })
}

/// Debian policy: lowercase letters, digits, `+ - .`, at least two chars, starting alnum.
fn validate_name(package: &str) -> Result<()> {
    let ok = package.len() >= 2
        && package.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && package
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(BuildError::BadSpec {
            what: "debian package name",
            detail: format!("`{package}` is not a Debian source package name (e.g. memcached)"),
        })
    }
}

fn download(package: &str, dir: &Path) -> Result<()> {
    let res = run_captured(
        Command::new("apt-get")
            .args(["source", "-q", package])
            .current_dir(dir)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
    .map_err(|e| BuildError::io("cannot run apt-get", e))?;
    if res.ok {
        Ok(())
    } else {
        Err(BuildError::DebianFetch {
            package: package.to_string(),
            detail: last_lines(res.output.trim(), 1),
        })
    }
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
    fn version_from_dsc() {
        let dsc = "Format: 3.0 (quilt)\nSource: memcached\nVersion: 1.6.18-1+deb12u1\n";
        assert_eq!(dsc_version(dsc).as_deref(), Some("1.6.18-1+deb12u1"));
        assert_eq!(dsc_version("Source: x\n"), None);
    }
}

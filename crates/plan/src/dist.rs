//! `[[variant]] dist = { ... }`: a variant that runs a distribution's released binaries
//! (an official archive, a local archive or folder, or a package of Maven, PyPI, Debian
//! or npm) instead of a build. Its keys, checked in `validate/dist.rs`; fetching and
//! unpacking are the build crate's (`bakeoff_build::dist`).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where a variant's released binaries come from: exactly one of `url` (with `sha256`),
/// `file`, `maven`, `pypi`, `debian` or `npm`; `path` picks the server where the
/// unpacked tree holds more than one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Dist {
    /// An official binary archive, downloaded once (needs `sha256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The archive's sha256 (required with `url`, checked with `file` where given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// A local archive or folder, relative to the experiment file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// `GROUP:ARTIFACT:VERSION` (optionally `:PACKAGING[:CLASSIFIER]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maven: Option<String>,
    /// `NAME==VERSION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pypi: Option<String>,
    /// `PACKAGE=VERSION`, or a list of them unpacked into one tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debian: Option<Packages>,
    /// `NAME@VERSION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub npm: Option<String>,
    /// Inside the unpacked tree: the server binary, or a folder holding it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The most the archive (nested archives too) may unpack to, in MB (default 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unpacked_mb: Option<u64>,
    /// The most files, folders and links it may unpack to (default 200,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u64>,
}

/// `debian = "PKG=V"` or `debian = ["PKG=V", "LIB=V"]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Packages {
    One(String),
    Many(Vec<String>),
}

impl Packages {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            Packages::One(p) => vec![p.clone()],
            Packages::Many(v) => v.clone(),
        }
    }
}

impl Dist {
    /// What the archive may unpack to: `max_unpacked_mb` and `max_files`, else the
    /// defaults.
    pub fn limits(&self) -> bakeoff_build::dist::Limits {
        let d = bakeoff_build::dist::Limits::default();
        bakeoff_build::dist::Limits {
            max_bytes: self
                .max_unpacked_mb
                .map_or(d.max_bytes, |mb| mb.saturating_mul(1024 * 1024)),
            max_files: self.max_files.unwrap_or(d.max_files),
        }
    }

    /// The source keys that are set, by name.
    pub fn sources(&self) -> Vec<&'static str> {
        [
            ("url", self.url.is_some()),
            ("file", self.file.is_some()),
            ("maven", self.maven.is_some()),
            ("pypi", self.pypi.is_some()),
            ("debian", self.debian.is_some()),
            ("npm", self.npm.is_some()),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| k)
        .collect()
    }
}

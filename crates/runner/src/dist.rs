//! A `[[variant]] dist`: the distribution fetched and unpacked once into the cache
//! (`bakeoff_build::dist`), the target's server found in it (`Target::dist_layout`), its
//! bundled library folder put on the server's library path, and what built it recorded.
//! From there it runs like an installed binary.

use crate::ready::LayoutBinary;
use bakeoff_build::dist::{self, DistError, DistSource};
use bakeoff_build::Cache;
use bakeoff_plan::{Dist, Loaded};
use bakeoff_report::model::{BuildRecord, DistRecord};

/// A dist variant ready to run: its binary, the record of it, the server's extra
/// environment (the bundled libraries' path).
pub struct Fetched {
    pub binary: LayoutBinary,
    pub build: BuildRecord,
    pub dist: DistRecord,
    pub env: Vec<(String, String)>,
}

/// The plan's keys as the build crate's source, paths resolved against the file.
pub fn source(l: &Loaded, d: &Dist) -> Option<DistSource> {
    if let Some(u) = &d.url {
        return Some(DistSource::Url {
            url: u.clone(),
            sha256: d.sha256.clone().unwrap_or_default().to_ascii_lowercase(),
        });
    }
    if let Some(f) = &d.file {
        return Some(DistSource::File {
            path: l.resolve(f),
            sha256: d.sha256.as_ref().map(|s| s.to_ascii_lowercase()),
        });
    }
    if let Some(m) = &d.maven {
        return Some(DistSource::Maven(m.clone()));
    }
    if let Some(p) = &d.pypi {
        return Some(DistSource::Pypi(p.clone()));
    }
    if let Some(p) = &d.debian {
        return Some(DistSource::Debian(p.to_vec()));
    }
    d.npm.as_ref().map(|n| DistSource::Npm(n.clone()))
}

/// The registry client (or unpacker) a dist needs that is not on PATH: its key and what
/// to do.
pub fn missing_client(d: &Dist) -> Option<(&'static str, String)> {
    let (key, tools): (&'static str, &[&str]) = if d.maven.is_some() {
        ("maven", &["mvn", "unzip", "tar"])
    } else if d.pypi.is_some() {
        ("pypi", &["pip3|pip", "unzip"])
    } else if d.debian.is_some() {
        ("debian", &["apt-get", "dpkg-deb"])
    } else if d.npm.is_some() {
        ("npm", &["npm", "tar"])
    } else if d.url.is_some() {
        ("url", &["curl"])
    } else {
        return None;
    };
    let missing = tools.iter().find(|t| {
        t.split('|')
            .all(|name| bakeoff_os::path::which(name).is_none())
    })?;
    Some((
        key,
        format!(
            "`{}` is not installed; run scripts/setup.sh (it installs what dist fetches and unpacks with)",
            missing.replace('|', "` or `")
        ),
    ))
}

/// Fetches (or finds in the cache), unpacks, finds and describes the server of `d`.
/// Err is one line: the variant fails with it. A server that is not in the tree (or not
/// for this machine) is the experiment's input, as the fetch's own input errors are.
pub fn fetch(
    l: &Loaded,
    kind: bakeoff_plan::TargetKind,
    d: &Dist,
    cache: &Cache,
) -> Result<Fetched, DistError> {
    let src = source(l, d).ok_or_else(|| DistError::input("dist names no source"))?;
    let layout = bakeoff_sandbox::target_for(kind).dist_layout();
    let started = std::time::Instant::now();
    let tree = dist::fetch(&src, cache, &d.limits())?;
    let found =
        dist::find_server(&tree.dir, &layout, d.path.as_deref()).map_err(DistError::input)?;
    let env: Vec<(String, String)> = if found.lib_dirs.is_empty() {
        Vec::new()
    } else {
        // Relative to the server ($ORIGIN, which the dynamic linker expands here too), so
        // it still holds when the tree is copied where the server's user can reach it.
        let dirs: Vec<String> = found
            .lib_dirs
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| format!("$ORIGIN/../{}", n.to_string_lossy()))
            .collect();
        vec![("LD_LIBRARY_PATH".to_string(), dirs.join(":"))]
    };
    let (bytes, sha) = bakeoff_build::describe_binary(&found.binary).map_err(|e| e.to_string())?;
    let facts = dist::describe(&found.binary, &layout, &env);
    let sha256 = if tree.sha256.is_empty() {
        sha.clone()
    } else {
        tree.sha256.clone()
    };
    Ok(Fetched {
        binary: LayoutBinary {
            seed: None,
            binary: found.binary.clone(),
            sha256: sha.clone(),
        },
        build: BuildRecord {
            kind: "dist".into(),
            binary_sha256: sha,
            binary_bytes: bytes,
            seconds: started.elapsed().as_secs_f64(),
            cached: tree.cached,
            source: Some(tree.spec.clone()),
            ..BuildRecord::default()
        },
        dist: DistRecord {
            spec: tree.spec,
            sha256,
            version: facts.version,
            compiler: facts.compiler,
            allocator: facts.allocator,
        },
        env,
    })
}

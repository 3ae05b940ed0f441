//! Tarball sources: a local path (or `file://` URL) is copied, an http(s) URL is downloaded
//! with `curl`; the sha256 is verified before unpacking with `tar -xf` (which detects gz, xz,
//! bz2 and zst). A tarball with one top-level directory becomes that directory. Cached under
//! its sha256, so a second fetch is instant.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{cached_or_fill, rename, subdirs, SourceMeta, SourceTree};
use crate::cache::{create_dir_all, Cache};
use crate::error::{BuildError, Result};
use crate::util::{hash_file, last_lines, remove_tree, require_tool, run_captured, sha256_hex};

pub(super) fn fetch(location: &str, sha256: &str, cache: &Cache) -> Result<SourceTree> {
    let expected = validate_sha256(sha256)?;
    cached_or_fill(cache, "tarball", &expected, |staging| {
        let archive = staging.join("archive");
        obtain(location, &archive)?;
        let (_, actual) = hash_file(&archive)
            .map_err(|e| BuildError::io(format!("cannot read {}", archive.display()), e))?;
        if actual != expected {
            return Err(BuildError::ChecksumMismatch {
                location: location.to_string(),
                expected: expected.clone(),
                actual,
            });
        }
        unpack(location, &archive, staging)?;
        remove_tree(&staging.join("unpack"))?;
        std::fs::remove_file(&archive)
            .map_err(|e| BuildError::io(format!("cannot remove {}", archive.display()), e))?;
        Ok(SourceMeta {
            id: sha256_hex(format!("tarball:{expected}").as_bytes()),
            description: format!(
                "tarball {} (sha256 {})",
                display_name(location),
                &expected[..12]
            ),
        })
    })
}

fn validate_sha256(sha256: &str) -> Result<String> {
    let s = sha256.trim().to_ascii_lowercase();
    if s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(s)
    } else {
        Err(BuildError::BadSpec {
            what: "tarball sha256",
            detail: format!("`{sha256}` is not 64 hex digits; compute it with `sha256sum FILE`"),
        })
    }
}

/// Put the archive at `to`: download URLs, copy local files.
fn obtain(location: &str, to: &Path) -> Result<()> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return download(location, to);
    }
    if location.contains("://") && !location.starts_with("file://") {
        return Err(BuildError::BadSpec {
            what: "tarball location",
            detail: format!("`{location}`: use a local path, a file:// URL or an http(s) URL"),
        });
    }
    let path = PathBuf::from(location.strip_prefix("file://").unwrap_or(location));
    copy_regular(&path, to)
}

/// Copies a local tarball, which must be a regular file. Opened without blocking (a FIFO
/// would wait for a writer forever) and checked on the open file, so a device or FIFO is
/// refused before one byte is read.
fn copy_regular(path: &Path, to: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |e| BuildError::io(format!("cannot read tarball {}", path.display()), e);
    let mut from = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    let meta = from.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(BuildError::BadSpec {
            what: "tarball location",
            detail: format!(
                "{} is not a regular file; give a tar archive file or an http(s) URL",
                path.display()
            ),
        });
    }
    let mut out = std::fs::File::create(to)
        .map_err(|e| BuildError::io(format!("cannot write {}", to.display()), e))?;
    std::io::copy(&mut from, &mut out).map_err(cannot)?;
    Ok(())
}

fn download(url: &str, to: &Path) -> Result<()> {
    require_tool("curl", "curl")?;
    let res = run_captured(
        Command::new("curl")
            .args(["-fsSL", "--retry", "2", "--max-time", "900", "-o"])
            .arg(to)
            .arg(url),
    )
    .map_err(|e| BuildError::io("cannot run curl", e))?;
    if res.ok {
        Ok(())
    } else {
        Err(BuildError::Download {
            location: url.to_string(),
            detail: last_lines(res.output.trim(), 1),
        })
    }
}

/// Unpack into `<staging>/unpack`, then move the tree to `<staging>/tree`.
fn unpack(location: &str, archive: &Path, staging: &Path) -> Result<()> {
    require_tool("tar", "tar")?;
    let dir = staging.join("unpack");
    create_dir_all(&dir)?;
    let res = run_captured(
        Command::new("tar")
            .arg("-xf")
            .arg(archive)
            .arg("-C")
            .arg(&dir),
    )
    .map_err(|e| BuildError::io("cannot run tar", e))?;
    if !res.ok {
        return Err(BuildError::Unpack {
            location: location.to_string(),
            detail: last_lines(res.output.trim(), 1),
        });
    }
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| BuildError::io(format!("cannot list {}", dir.display()), e))?
        .count();
    let dirs = subdirs(&dir)?;
    let top = if entries == 1 && dirs.len() == 1 {
        dirs[0].clone()
    } else {
        dir.clone()
    };
    rename(&top, &staging.join("tree"))
}

fn display_name(location: &str) -> &str {
    location.rsplit('/').next().unwrap_or(location)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{fetch as fetch_source, SourceSpec};

    fn make_tarball(dir: &Path) -> PathBuf {
        let src = dir.join("proj-1.0");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("Makefile"), "all:\n\ttrue\n").unwrap();
        let tar = dir.join("proj-1.0.tar.gz");
        let ok = Command::new("tar")
            .arg("-czf")
            .arg(&tar)
            .arg("-C")
            .arg(dir)
            .arg("proj-1.0")
            .status()
            .unwrap()
            .success();
        assert!(ok);
        tar
    }

    #[test]
    fn regression_a_fifo_or_device_tarball_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("t.tar.gz");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let to = tmp.path().join("copy");
        for p in [fifo.as_path(), Path::new("/dev/zero")] {
            let e = copy_regular(p, &to).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
        let e = obtain("ftp://example.invalid/x.tar.gz", &to)
            .unwrap_err()
            .to_string();
        assert!(e.contains("file:// URL or an http(s) URL"), "{e}");
    }

    #[test]
    fn verified_tarball_is_unpacked_and_cached() {
        let tmp = tempfile::tempdir().unwrap();
        let tar = make_tarball(tmp.path());
        let (_, sha) = hash_file(&tar).unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let spec = SourceSpec::Tarball {
            location: tar.display().to_string(),
            sha256: sha.to_uppercase(),
        };
        let tree = fetch_source(&spec, &cache).unwrap();
        assert!(
            tree.dir.join("Makefile").is_file(),
            "{}",
            tree.dir.display()
        );
        assert!(tree.description.starts_with("tarball proj-1.0.tar.gz"));
        std::fs::remove_file(&tar).unwrap();
        let again = fetch_source(&spec, &cache).unwrap();
        assert_eq!(again, tree, "second fetch must come from the cache");
    }

    #[test]
    fn sha256_mismatch_is_an_error_and_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let tar = make_tarball(tmp.path());
        let cache = Cache::new(tmp.path().join("cache"));
        let wrong = "0".repeat(64);
        let spec = SourceSpec::Tarball {
            location: tar.display().to_string(),
            sha256: wrong.clone(),
        };
        let err = fetch_source(&spec, &cache).unwrap_err();
        assert!(matches!(err, BuildError::ChecksumMismatch { .. }), "{err}");
        assert!(err.to_string().contains(&wrong));
        let entries = std::fs::read_dir(cache.dir(&["sources", "tarball"]))
            .unwrap()
            .count();
        assert_eq!(
            entries, 0,
            "a failed fetch must not leave an entry or staging dir"
        );
    }

    /// Serve `body` to one HTTP request on 127.0.0.1; gives up after 10 s.
    fn serve_once(body: Vec<u8>) -> (String, std::thread::JoinHandle<()>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/proj-1.0.tar.gz", listener.local_addr().unwrap());
        listener.set_nonblocking(true).unwrap();
        let handle = std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            let mut conn = loop {
                match listener.accept() {
                    Ok((c, _)) => break c,
                    Err(_) if std::time::Instant::now() < deadline => {
                        std::thread::sleep(std::time::Duration::from_millis(10))
                    }
                    Err(_) => return,
                }
            };
            conn.set_nonblocking(false).unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(&body);
        });
        (url, handle)
    }

    #[test]
    fn http_tarball_is_downloaded_and_verified() {
        let tmp = tempfile::tempdir().unwrap();
        let tar = make_tarball(tmp.path());
        let (_, sha) = hash_file(&tar).unwrap();
        let (url, server) = serve_once(std::fs::read(&tar).unwrap());
        let cache = Cache::new(tmp.path().join("cache"));
        let spec = SourceSpec::Tarball {
            location: url,
            sha256: sha,
        };
        let tree = fetch_source(&spec, &cache).unwrap();
        server.join().unwrap();
        assert!(tree.dir.join("Makefile").is_file());
    }

    #[test]
    fn unreachable_url_is_a_download_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let tmp = tempfile::tempdir().unwrap();
        let err = obtain(
            &format!("http://127.0.0.1:{port}/x.tar.gz"),
            &tmp.path().join("a"),
        )
        .unwrap_err();
        assert!(matches!(err, BuildError::Download { .. }), "{err}");
    }

    #[test]
    fn bad_sha256_text_is_rejected() {
        assert!(validate_sha256("abc").is_err());
        assert!(validate_sha256(&"g".repeat(64)).is_err());
        assert!(validate_sha256(&"A".repeat(64)).is_ok());
    }

    #[test]
    fn unknown_scheme_is_rejected() {
        let tmp = tempfile::tempdir().unwrap();
        let err = obtain("ftp://example.org/x.tar.gz", &tmp.path().join("a")).unwrap_err();
        assert!(matches!(err, BuildError::BadSpec { .. }), "{err}");
    }
}

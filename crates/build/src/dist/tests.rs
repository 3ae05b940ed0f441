//! Fetching from a local archive: unpacked once, nested archives opened, the server
//! found; a wrong sha256 and an archive without the server are one line, nothing left.

use super::*;
use std::process::Command;

fn tar_of(dir: &Path, name: &str, what: &str) -> PathBuf {
    let out = dir.join(name);
    let ok = Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(dir)
        .arg(what)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    out
}

/// A "distribution" whose server is this machine's `true`, in bin/, inside a nested tar.
fn fake_dist(dir: &Path) -> PathBuf {
    let inner = dir.join("pkg");
    std::fs::create_dir_all(inner.join("bin")).unwrap();
    std::fs::copy(
        bakeoff_os::path::which("true").unwrap(),
        inner.join("bin").join("memcached"),
    )
    .unwrap();
    tar_of(dir, "inner.txz", "pkg");
    let outer = dir.join("outer");
    std::fs::create_dir_all(&outer).unwrap();
    std::fs::rename(dir.join("inner.txz"), outer.join("inner.txz")).unwrap();
    tar_of(dir, "dist.tar.gz", "outer")
}

const LAYOUT: Layout = Layout {
    servers: &["memcached"],
    helpers: &[],
    version_args: &["--version"],
};

fn leftovers(cache: &Cache) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(cache.dir(&["dist"])) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if n.contains(".tmp-") {
                out.push(n);
            }
        }
    }
    out
}

#[test]
fn a_nested_archive_is_unpacked_once_and_its_server_found() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = fake_dist(tmp.path());
    let cache = Cache::new(tmp.path().join("cache"));
    let (_, sha) = hash_file(&archive).unwrap();
    let src = DistSource::File {
        path: archive.clone(),
        sha256: Some(sha.clone()),
    };
    let t = fetch(&src, &cache).unwrap();
    assert_eq!(t.sha256, sha);
    let found = find_server(&t.dir, &LAYOUT, None).unwrap();
    assert!(
        found.binary.ends_with("outer/inner/pkg/bin/memcached"),
        "{found:?}"
    );
    let again = fetch(&src, &cache).unwrap();
    assert_eq!(again.dir, t.dir);
    assert!(leftovers(&cache).is_empty());
    // path picks a folder; a path outside the tree is one line.
    assert!(find_server(&t.dir, &LAYOUT, Some(Path::new("outer/inner"))).is_ok());
    let e = find_server(&t.dir, &LAYOUT, Some(Path::new("nope"))).unwrap_err();
    assert!(e.contains("not in the unpacked tree"), "{e}");
}

#[test]
fn a_wrong_sha256_or_no_server_is_one_line_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = fake_dist(tmp.path());
    let cache = Cache::new(tmp.path().join("cache"));
    let src = DistSource::File {
        path: archive,
        sha256: Some("0".repeat(64)),
    };
    let e = fetch(&src, &cache).unwrap_err();
    assert!(e.contains("has sha256") && !e.contains('\n'), "{e}");
    assert!(leftovers(&cache).is_empty());
    let other = Layout {
        servers: &["redis-server"],
        ..LAYOUT
    };
    let src = DistSource::File {
        path: tmp.path().join("dist.tar.gz"),
        sha256: None,
    };
    let t = fetch(&src, &cache).unwrap();
    let e = find_server(&t.dir, &other, None).unwrap_err();
    assert!(e.starts_with("no redis-server for this machine"), "{e}");
}

#[test]
fn not_an_archive_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("notes.txt");
    std::fs::write(&f, "hello").unwrap();
    let cache = Cache::new(tmp.path().join("cache"));
    let e = fetch(
        &DistSource::File {
            path: f,
            sha256: None,
        },
        &cache,
    )
    .unwrap_err();
    assert!(e.contains("not an archive"), "{e}");
    assert!(leftovers(&cache).is_empty());
}

#[test]
fn elf_machine_reads_this_machine() {
    let t = bakeoff_os::path::which("true").unwrap();
    let t = std::fs::canonicalize(t).unwrap();
    assert_eq!(
        find::elf_machine(&t),
        Some(super::find::this_machine_for_tests())
    );
}

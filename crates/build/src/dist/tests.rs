//! Fetching from a local archive: unpacked once, nested archives opened, the server
//! found; a wrong sha256 and an archive without the server are one line, nothing left.

use super::*;
use bakeoff_testkit::tar_gz as tar_of;

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
    let t = fetch(&src, &cache, &Limits::default()).unwrap();
    assert_eq!(t.sha256, sha);
    let found = find_server(&t.dir, &LAYOUT, None).unwrap();
    assert!(
        found.binary.ends_with("outer/inner/pkg/bin/memcached"),
        "{found:?}"
    );
    let again = fetch(&src, &cache, &Limits::default()).unwrap();
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
    let e = fetch(&src, &cache, &Limits::default()).unwrap_err();
    assert!(e.input, "{e}");
    let e = e.message;
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
    let t = fetch(&src, &cache, &Limits::default()).unwrap();
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
        &Limits::default(),
    )
    .unwrap_err();
    assert!(e.input && e.message.contains("not an archive"), "{e}");
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

/// A loopback HTTP server that answers every GET with `body` (404 for other paths) and
/// counts the requests; it stops when the test ends.
use bakeoff_testkit::http::serve;

#[test]
fn a_url_is_downloaded_once_and_a_wrong_sha256_leaves_nothing() {
    use std::sync::atomic::Ordering;
    let tmp = tempfile::tempdir().unwrap();
    let archive = fake_dist(tmp.path());
    let bytes = std::fs::read(&archive).unwrap();
    let (_, sha) = hash_file(&archive).unwrap();
    let served = serve("memcached-1.0.tar.gz", bytes);
    let cache = Cache::new(tmp.path().join("cache"));
    let src = DistSource::Url {
        url: served.url.clone(),
        sha256: sha.clone(),
    };
    let t = fetch(&src, &cache, &Limits::default()).unwrap();
    assert!(!t.cached && t.sha256 == sha, "{t:?}");
    assert!(find_server(&t.dir, &LAYOUT, None).is_ok());
    assert_eq!(served.hits.load(Ordering::SeqCst), 1);
    // A second fetch reads the cache: no request.
    let again = fetch(&src, &cache, &Limits::default()).unwrap();
    assert!(again.cached && again.dir == t.dir, "{again:?}");
    assert_eq!(served.hits.load(Ordering::SeqCst), 1);
    // The same url named with another sha256: fetched again (never taken from the
    // cache) and refused in one line, nothing of it kept.
    let entries = |c: &Cache| {
        let mut v: Vec<String> = std::fs::read_dir(c.dir(&["dist"]))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = entries(&cache);
    let wrong = DistSource::Url {
        url: served.url.clone(),
        sha256: "0".repeat(64),
    };
    let e = fetch(&wrong, &cache, &Limits::default()).unwrap_err();
    assert_eq!(served.hits.load(Ordering::SeqCst), 2);
    assert!(e.input, "{e}");
    assert!(
        e.message.contains("has sha256") && e.message.contains(&sha) && !e.message.contains('\n'),
        "{e}"
    );
    assert_eq!(entries(&cache), before, "the wrong archive left something");
    // A url the server does not have: curl's 404, the experiment's input.
    let missing = DistSource::Url {
        url: served.url.replace("memcached-1.0", "nothing"),
        sha256: sha,
    };
    let e = fetch(&missing, &cache, &Limits::default()).unwrap_err();
    assert!(e.input && e.message.contains("404"), "{e}");
    assert_eq!(entries(&cache), before);
}

/// This machine's `true`, as `dir/bin/memcached`, with `patch` applied to its bytes.
fn patched_server(dir: &Path, patch: impl Fn(&mut Vec<u8>)) -> PathBuf {
    let t = std::fs::canonicalize(bakeoff_os::path::which("true").unwrap()).unwrap();
    let mut bytes = std::fs::read(t).unwrap();
    patch(&mut bytes);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    let to = dir.join("bin").join("memcached");
    std::fs::write(&to, bytes).unwrap();
    unpack::make_runnable(dir);
    to
}

#[test]
fn a_server_for_another_machine_or_a_newer_glibc_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    // e_machine 183: an aarch64 build.
    let arm = tmp.path().join("arm");
    patched_server(&arm, |b| b[18..20].copy_from_slice(&183u16.to_le_bytes()));
    let e = find_server(&arm, &LAYOUT, None).unwrap_err();
    assert!(
        e.contains("bin/memcached is built for aarch64, this machine is x86_64")
            && !e.contains('\n'),
        "{e}"
    );
    // Every GLIBC_2.x symbol version it asks for renamed GLIBC_9.x.
    let new = tmp.path().join("new");
    patched_server(&new, |b| {
        let mut i = 0;
        while let Some(at) = b[i..].windows(8).position(|w| w == b"GLIBC_2.") {
            b[i + at + 6] = b'9';
            i += at + 8;
        }
    });
    let e = find_server(&new, &LAYOUT, None).unwrap_err();
    assert!(
        e.contains("bin/memcached needs glibc 9.")
            && e.contains("this machine has 2.")
            && !e.contains('\n'),
        "{e}"
    );
}

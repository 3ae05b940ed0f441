//! Hostile distributions (issue 50) through the CLI, none of which starts a server: a
//! package coordinate that names a place (a path, a URL, a VCS checkout, an option, a
//! range) refused by `bakeoff check` at its key with exit 2 in one line, credentials and
//! control characters never echoed, `file = "/"` refused without listing the system; an
//! archive that holds a device, a link out of the tree as its server, a hard link to a
//! file outside, or that unpacks past its limits fails its variant with the reason (exit
//! 2), leaving nothing outside the scratch folder changed and no device, set-id or
//! writable mode in the cache; and a run killed with kill -9 while `tar` unpacks leaves no
//! `tar` behind and a staging folder the next run (of any archive) removes.

mod common;

use common::{check_cmd, one_line_2, Scratch};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A memcached experiment whose only variant is `dist = { DIST }` (on line 6).
fn experiment(dist: &str) -> String {
    format!(
        "name = \"hostile-dist\"\n[target]\nkind = \"memcached\"\n[[variant]]\nname = \"d\"\ndist = {dist}\n[[workload]]\nkind = \"kv\"\nconnections = [2]\n[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"200ms\"\n"
    )
}

/// A TOML basic string of `s`.
fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Every entry under `dir` (links not followed) with its mode, length and content.
fn snapshot(dir: &Path) -> Vec<(String, u32, u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let body = if m.is_file() {
                std::fs::read(&p).unwrap_or_default()
            } else {
                Vec::new()
            };
            out.push((p.display().to_string(), m.mode(), m.len(), body));
            if m.is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn package_coordinates_are_names_never_places() {
    let s = Scratch::new();
    let abs = s.path().join("pkg");
    std::fs::create_dir_all(&abs).unwrap();
    std::fs::write(
        abs.join("package.json"),
        "{\"scripts\":{\"prepack\":\"touch /tmp/x\"}}",
    )
    .unwrap();
    std::fs::write(abs.join("setup.py"), "raise SystemExit(1)\n").unwrap();
    let a = abs.display().to_string();
    let mut cases: Vec<(&str, String)> = Vec::new();
    for npm in [
        format!("{a}@1"),
        format!("{a}@1.0.0"),
        format!("file:{a}@1.0.0"),
        "file:../pkg@1.0.0".into(),
        "./pkg@1.0.0".into(),
        "git+https://example.org/a/b.git@1.0.0".into(),
        "github:user/repo@1.0.0".into(),
        "https://example.org/x.tgz@1.0.0".into(),
        "x@^1.0.0".into(),
        "x@latest".into(),
        "x@1".into(),
        "X@1.0.0".into(),
        "_x@1.0.0".into(),
        ".x@1.0.0".into(),
        "@scope/../x@1.0.0".into(),
        "x@1.0.0 --foo".into(),
        "--prefix=/x@1.0.0".into(),
    ] {
        cases.push(("npm", npm));
    }
    for pypi in [
        "x==1/evil".to_string(),
        "x==1/../../evil".into(),
        format!("{a}==1"),
        "./pkg==1".into(),
        format!("x @ file://{a}"),
        "x @ https://example.org/x.whl".into(),
        "x[extra]==1".into(),
        "x==1; python_version>'3'".into(),
        "x>=1".into(),
        "x==1.*".into(),
        "x===1".into(),
        "git+https://example.org/a/b==1".into(),
        "x==1 --index-url=https://evil.example".into(),
        "-r==1".into(),
        "x==1,y==2".into(),
    ] {
        cases.push(("pypi", pypi));
    }
    for debian in [
        format!("memcached={a}/x.deb"),
        "./x.deb".into(),
        format!("{a}/x.deb"),
        "-o=x".into(),
        "memcached=1.6 ".into(),
        "Memcached=1.6".into(),
        "memcached".into(),
        "memcached=1.6/../../x".into(),
        "memcached=-1".into(),
    ] {
        cases.push(("debian", debian));
    }
    for maven in [
        ".:a:1".to_string(),
        ".tmp:a:1".into(),
        "a..b:c:1".into(),
        "a.:b:1".into(),
        "a:b:../1".into(),
        "a:b:1/2".into(),
        "/abs:b:1".into(),
        "a:-b:1".into(),
        "a:b:LATEST".into(),
        "a:b".into(),
        "a:b:1:jar:../x".into(),
        "a:b:[1,2)".into(),
    ] {
        cases.push(("maven", maven));
    }
    for url in [
        "http://example.org/x.tgz",
        "file:///etc/passwd",
        "git+https://example.org/x",
        "ftp://example.org/x.tgz",
        "https://alice:s3cret@example.org/x.tgz",
        "https://example.org/x\nHost: evil",
        "https://example.org/x\u{1b}[2J",
        "https://bob:s3cret@example.org/x\n",
    ] {
        cases.push(("url", url.to_string()));
    }
    let sha = "0".repeat(64);
    let before = snapshot(s.path());
    for (key, value) in &cases {
        let dist = if *key == "url" {
            format!("{{ url = {}, sha256 = \"{sha}\" }}", toml_str(value))
        } else {
            format!("{{ {key} = {} }}", toml_str(value))
        };
        let f = s.write("e.toml", &experiment(&dist));
        let before_file = snapshot(s.path());
        let out = check_cmd(&f).output().unwrap();
        let err = one_line_2(&out);
        assert!(
            err.contains("e.toml:6:") && err.contains(key),
            "{key} = {value:?}: {err}"
        );
        assert!(!err.contains("s3cret"), "{key} = {value:?} echoed: {err}");
        assert!(
            !err.chars().any(|c| c.is_control() && c != '\n'),
            "{key} = {value:?}: {err:?}"
        );
        assert_eq!(
            snapshot(s.path()),
            before_file,
            "{key} = {value:?} changed a file"
        );
    }
    // A folder of the system as `file`: refused without naming what is in it.
    for folder in ["/", "/usr", "/etc/.."] {
        let f = s.write(
            "e.toml",
            &experiment(&format!("{{ file = {} }}", toml_str(folder))),
        );
        let err = one_line_2(&check_cmd(&f).output().unwrap());
        assert!(
            err.contains("e.toml:6:") && err.contains("system folder"),
            "{err}"
        );
        assert!(!err.contains("bin/"), "{err}");
    }
    // Limits out of range.
    for limit in [
        "max_unpacked_mb = 0",
        "max_files = 0",
        "max_unpacked_mb = 99999999",
    ] {
        let f = s.write(
            "e.toml",
            &experiment(&format!("{{ debian = \"memcached=1.6.18-1\", {limit} }}")),
        );
        let err = one_line_2(&check_cmd(&f).output().unwrap());
        assert!(
            err.contains("e.toml:6:") && err.contains("out of range"),
            "{err}"
        );
    }
    std::fs::remove_file(s.path().join("e.toml")).unwrap();
    assert_eq!(snapshot(s.path()), before);
}

/// Writes `name` as an archive of `members` (`kind|name|mode|argument`: `f` a file, its
/// content the argument or the bytes of the file after `@`; `l` a symlink; `h` a hard
/// link; `c` a character device `major,minor`; `z` that many zero bytes), tar or tar.gz,
/// with python3's tarfile.
fn archive(dir: &Path, name: &str, members: &[String]) -> PathBuf {
    const MAKER: &str = r#"
import sys, tarfile, io
out = sys.argv[1]
class Zeros:
    def __init__(self, n): self.n = n
    def read(self, k=-1):
        k = self.n if k < 0 else min(k, self.n)
        self.n -= k
        return b'\0' * k
t = tarfile.open(out, 'w:gz' if out.endswith('gz') else 'w', format=tarfile.GNU_FORMAT)
for line in sys.stdin.read().splitlines():
    kind, name, perm, arg = line.split('|', 3)
    i = tarfile.TarInfo(name); i.mode = int(perm, 8); src = None
    if kind == 'f':
        data = open(arg[1:], 'rb').read() if arg.startswith('@') else arg.encode()
        i.size = len(data); src = io.BytesIO(data)
    elif kind == 'z': i.size = int(arg); src = Zeros(i.size)
    elif kind == 'l': i.type = tarfile.SYMTYPE; i.linkname = arg
    elif kind == 'h': i.type = tarfile.LNKTYPE; i.linkname = arg
    elif kind == 'c':
        i.type = tarfile.CHRTYPE; i.devmajor, i.devminor = map(int, arg.split(','))
    t.addfile(i, src)
t.close()
"#;
    let out = dir.join(name);
    assert!(bakeoff_testkit::python_fed(
        MAKER,
        &[out.as_os_str()],
        members
    ));
    out
}

/// `bakeoff run FILE --out <scratch>/out-OUT` with the scratch folder's own cache, quiet,
/// no history.
fn run(s: &Scratch, file: &Path, out: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.arg("run")
        .arg(file)
        .arg("--out")
        .arg(s.path().join(format!("out-{out}")))
        .arg("--cache")
        .arg(s.path().join("cache"))
        .arg("--sandbox-dir")
        .arg(s.sandboxes())
        .args(["--quiet", "--no-history"]);
    c
}

/// The last line of stderr, after asserting exit 2.
fn failed_2(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err.trim().lines().last().unwrap_or_default().to_string()
}

/// No device, FIFO, socket, set-id or group/world-writable file, and no staging folder,
/// anywhere in the cache.
fn cache_is_clean(cache: &Path) {
    let mut todo = vec![cache.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let ft = m.file_type();
            let name = p.display().to_string();
            assert!(
                !(ft.is_block_device() || ft.is_char_device() || ft.is_fifo() || ft.is_socket()),
                "{name} is a device, FIFO or socket"
            );
            assert!(
                !name.contains(".tmp-") && !name.contains(".unpack-"),
                "{name} left"
            );
            if ft.is_file() {
                assert_eq!(m.mode() & 0o7022, 0, "{name} kept {:o}", m.mode());
            }
            if ft.is_dir() {
                todo.push(p);
            }
        }
    }
}

#[test]
fn archive_variants_fail_with_the_reason_and_write_nothing_outside() {
    let s = Scratch::new();
    let outside = s.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "untouched\n").unwrap();
    let o = outside.display().to_string();
    let server = "f|bin/memcached|6777|@/usr/bin/memcached".to_string();
    let inner = archive(
        s.path(),
        "inner.tar",
        &[server.clone(), "f|evil.txt|644|x".into()],
    );
    let cases: Vec<(&str, Vec<String>, &str, &str)> = vec![
        (
            "device.tar.gz",
            vec![server.clone(), "c|dev/mem|666|1,1".into()],
            "",
            "holds a character device",
        ),
        (
            "server-link.tar.gz",
            vec!["l|bin/memcached|777|/usr/bin/memcached".into()],
            "",
            "no memcached",
        ),
        (
            "hard-link.tar",
            vec![server.clone(), format!("h|stolen|644|{o}/keep.txt")],
            "",
            "outside the archive",
        ),
        (
            "bomb.tar.gz",
            vec![server.clone(), format!("z|zeros|644|{}", 64 << 20)],
            ", max_unpacked_mb = 16",
            "raise dist.max_unpacked_mb",
        ),
        (
            "many.tar",
            (0..120).map(|i| format!("f|f{i}|644|")).collect(),
            ", max_files = 100",
            "raise dist.max_files",
        ),
        (
            // Links where the inner archive would be unpacked, and path through a link
            // out: the links are removed, so path names nothing in the tree.
            "beside.tar.gz",
            vec![
                format!("l|inner|777|{o}"),
                format!("l|inner.unpacked|777|{o}"),
                format!("l|bin|777|{o}"),
                format!("f|inner.tar|644|@{}", inner.display()),
            ],
            ", path = \"bin\"",
            "path bin is not in the unpacked tree",
        ),
    ];
    let before = snapshot(&outside);
    for (name, members, extra, says) in cases {
        archive(s.path(), name, &members);
        let f = s.write(
            "e.toml",
            &experiment(&format!("{{ file = \"{name}\"{extra} }}")),
        );
        let last = failed_2(&run(&s, &f, name).output().unwrap());
        assert!(
            last.contains("e.toml:6:") && last.contains(says),
            "{name}: {last}"
        );
        assert_eq!(snapshot(&outside), before, "{name} wrote outside");
        cache_is_clean(&s.path().join("cache"));
    }
    // What unpacked (the links beside the inner archive) kept no mode.
    cache_is_clean(&s.path().join("cache"));
}

/// `tar` processes whose command line names `what`.
fn tars_naming(what: &str) -> Vec<u32> {
    bakeoff_testkit::pids_named("tar")
        .into_iter()
        .filter(|pid| {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie
                && std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                    .unwrap_or_default()
                    .contains(what)
        })
        .collect()
}

#[test]
fn a_run_killed_while_unpacking_leaves_no_tar_and_a_staging_folder_the_next_run_removes() {
    let s = Scratch::new();
    // 192 MiB of zeros (a sparse file, packed by tar and gzip -1): under 1 MB packed,
    // about a second to list and unpack, long enough to be caught at it.
    let src = s.path().join("big");
    std::fs::create_dir_all(src.join("bin")).unwrap();
    std::fs::copy("/usr/bin/memcached", src.join("bin/memcached")).unwrap();
    std::fs::File::create(src.join("zeros"))
        .unwrap()
        .set_len(192 << 20)
        .unwrap();
    let packed = Command::new("sh")
        .args(["-c", "tar -cf - -C \"$1\" . | gzip -1 > \"$2\"", "sh"])
        .arg(&src)
        .arg(s.path().join("big.tar.gz"))
        .status()
        .unwrap();
    assert!(packed.success());
    std::fs::remove_dir_all(&src).unwrap();
    let f = s.write("e.toml", &experiment("{ file = \"big.tar.gz\" }"));
    let mut child = run(&s, &f, "killed")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The archive is copied into the cache's download folder: tar names the scratch
    // folder's cache.
    let name = s.path().display().to_string();
    let caught = common::wait_for(60.0, || !tars_naming(&name).is_empty());
    // Stopped, a tar would outlive bakeoff for good unless bakeoff's death kills it.
    let stopped = tars_naming(&name);
    for pid in &stopped {
        unsafe { libc::kill(*pid as i32, libc::SIGSTOP) };
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    let _ = child.wait();
    assert!(caught, "tar never ran");
    let gone = common::wait_for(5.0, || tars_naming(&name).is_empty());
    let left = tars_naming(&name);
    for pid in &left {
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    assert!(gone, "tar outlived bakeoff: {left:?}");
    let dist = s.path().join("cache/dist");
    let staged = |d: &Path| {
        common::entries(d)
            .into_iter()
            .filter(|n| n.contains(".tmp-"))
            .collect::<Vec<_>>()
    };
    assert!(
        !staged(&dist).is_empty(),
        "nothing staged: {:?}",
        common::entries(&dist)
    );
    // The next run, of another archive, removes the staging folder (here it then stops
    // at a limit, so no server starts).
    archive(
        s.path(),
        "other.tar",
        &["f|a|644|".to_string(), "f|b|644|".to_string()],
    );
    let f = s.write(
        "e.toml",
        &experiment("{ file = \"other.tar\", max_files = 1 }"),
    );
    let last = failed_2(&run(&s, &f, "next").output().unwrap());
    assert!(last.contains("raise dist.max_files"), "{last}");
    assert!(staged(&dist).is_empty(), "{:?}", common::entries(&dist));
    cache_is_clean(&s.path().join("cache"));
}

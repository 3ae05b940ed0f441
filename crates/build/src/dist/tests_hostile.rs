//! Hostile archives (issue 50), one test per class, each archive made here (python3's
//! tarfile and zipfile write any member kind and mode without root; `dpkg-deb --build`
//! a .deb): links beside inner archives and members through links, a server or `path`
//! that leads out of the tree, device nodes, FIFOs, set-id and writable modes, hard links
//! to outside files, size and file-count bombs, and a cached tree changed after it was
//! checked. Each asserts the refusal (or the re-unpack), that a folder outside the cache
//! kept every byte and mode, and that the cache holds no device, set-id or writable mode
//! and no staging folder.

use super::*;
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::process::{Command, Stdio};

const LAYOUT: Layout = Layout {
    servers: &["memcached"],
    helpers: &[],
    version_args: &["--version"],
};

/// Writes an archive of `members` (`kind|name|octal mode|argument` lines; kinds: `f` a
/// file whose content is the argument, or the bytes of the file after `@`; `z` a file of
/// that many zero bytes; `d` a folder; `l` a symlink to the argument; `h` a hard link to
/// the argument; `c`/`b` a device `major,minor`; `p` a FIFO) as `format`: tar, tar.gz or
/// zip.
const MAKER: &str = r#"
import sys, tarfile, zipfile
out, fmt = sys.argv[1], sys.argv[2]
specs = [l.split('|', 3) for l in sys.stdin.read().splitlines() if l]
class Zeros:
    def __init__(self, n): self.n = n
    def read(self, k=-1):
        k = self.n if k < 0 else min(k, self.n)
        self.n -= k
        return b'\0' * k
def content(arg):
    if arg.startswith('@'):
        return open(arg[1:], 'rb').read()
    return arg.encode()
if fmt.startswith('tar'):
    t = tarfile.open(out, {'tar': 'w', 'tar.gz': 'w:gz'}[fmt], format=tarfile.GNU_FORMAT)
    for kind, name, perm, arg in specs:
        i = tarfile.TarInfo(name); i.mode = int(perm, 8); i.mtime = 0
        src = None
        if kind == 'f':
            data = content(arg); i.size = len(data)
            import io; src = io.BytesIO(data)
        elif kind == 'z':
            i.size = int(arg); src = Zeros(i.size)
        elif kind == 'd': i.type = tarfile.DIRTYPE
        elif kind == 'l': i.type = tarfile.SYMTYPE; i.linkname = arg
        elif kind == 'h': i.type = tarfile.LNKTYPE; i.linkname = arg
        elif kind in 'cb':
            i.type = tarfile.CHRTYPE if kind == 'c' else tarfile.BLKTYPE
            i.devmajor, i.devminor = map(int, arg.split(','))
        elif kind == 'p': i.type = tarfile.FIFOTYPE
        t.addfile(i, src)
    t.close()
else:
    z = zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED)
    for kind, name, perm, arg in specs:
        i = zipfile.ZipInfo(name + ('/' if kind == 'd' else ''))
        i.create_system = 3
        typ = {'f': 0o100000, 'z': 0o100000, 'd': 0o040000, 'l': 0o120000}[kind]
        i.external_attr = (typ | int(perm, 8)) << 16
        i.compress_type = zipfile.ZIP_DEFLATED
        if kind == 'z':
            with z.open(i, 'w', force_zip64=True) as w:
                n = int(arg)
                while n > 0:
                    k = min(n, 1 << 20); w.write(b'\0' * k); n -= k
        elif kind == 'd': z.writestr(i, b'')
        elif kind == 'l': z.writestr(i, arg.encode())
        else: z.writestr(i, content(arg))
    z.close()
"#;

fn archive(dir: &Path, name: &str, format: &str, members: &[String]) -> PathBuf {
    let out = dir.join(name);
    assert!(
        bakeoff_testkit::python_fed(MAKER, &[out.as_os_str(), format.as_ref()], members),
        "python3 could not make {name}"
    );
    out
}

fn true_path() -> String {
    std::fs::canonicalize(bakeoff_os::path::which("true").unwrap())
        .unwrap()
        .display()
        .to_string()
}

/// `bin/memcached` (this machine's `true`) as a member line.
fn server() -> String {
    format!("f|bin/memcached|755|@{}", true_path())
}

/// A folder outside the cache that no archive may touch: one file in it.
fn outside(tmp: &Path) -> PathBuf {
    let o = tmp.join("outside");
    std::fs::create_dir_all(&o).unwrap();
    std::fs::write(o.join("keep.txt"), "untouched\n").unwrap();
    std::fs::set_permissions(o.join("keep.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
    o
}

/// Every entry under `dir` (links not followed): its kind, mode, length, link count and
/// content or link target.
fn snapshot(dir: &Path) -> BTreeMap<String, (u32, u64, u64, Vec<u8>)> {
    let mut out = BTreeMap::new();
    unpack::walk(dir, &mut |p, m| {
        let body = if m.is_file() {
            std::fs::read(p).unwrap()
        } else if m.file_type().is_symlink() {
            std::fs::read_link(p)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else {
            Vec::new()
        };
        out.insert(
            p.strip_prefix(dir).unwrap().display().to_string(),
            (m.mode(), m.len(), m.nlink(), body),
        );
    });
    out
}

/// The cache holds no device, FIFO or socket, no set-id, sticky or group/world-writable
/// file, every folder of a tree is 755, every link of a tree stays inside it, and no
/// staging folder is left.
fn cache_is_clean(cache: &Cache) {
    let dist = cache.dir(&["dist"]);
    if unsafe { libc::geteuid() } == 0 {
        let mode = std::fs::metadata(&dist).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700, "dist/ is {mode:o} as root");
    }
    unpack::walk(cache.root(), &mut |p, m| {
        let ft = m.file_type();
        assert!(
            !(ft.is_block_device() || ft.is_char_device() || ft.is_fifo() || ft.is_socket()),
            "{} is a device, FIFO or socket",
            p.display()
        );
        let name = p.display().to_string();
        assert!(!name.contains(".tmp-"), "staging folder left: {name}");
        assert!(!name.contains(".unpack-"), "unpack folder left: {name}");
        if !p
            .ancestors()
            .any(|a| a.file_name().is_some_and(|n| n == "tree"))
        {
            return;
        }
        if ft.is_file() {
            assert_eq!(m.mode() & 0o7022, 0, "{name} kept mode {:o}", m.mode());
        } else if ft.is_dir() {
            assert_eq!(m.mode() & 0o7777, 0o755, "{name} is {:o}", m.mode());
        } else if ft.is_symlink() {
            let tree = p
                .ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "tree"))
                .unwrap();
            let rel = p.strip_prefix(tree).unwrap();
            assert!(
                unpack::resolve_inside(tree, rel).is_some(),
                "{name} leads out of its tree"
            );
        }
    });
}

fn file(path: &Path) -> DistSource {
    DistSource::File {
        path: path.to_path_buf(),
        sha256: None,
    }
}

#[test]
fn archive_links_never_leave_the_staging_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out = outside(tmp.path());
    let before = snapshot(&out);
    let o = out.display().to_string();
    let inner_members = vec![
        server(),
        "f|evil.txt|644|written through a link".to_string(),
    ];
    let mut spellings: Vec<(String, PathBuf)> = Vec::new();
    for inner_fmt in ["tar", "zip"] {
        let inner = archive(
            tmp.path(),
            &format!("x.{inner_fmt}"),
            inner_fmt,
            &inner_members,
        );
        for outer_fmt in ["tar.gz", "zip"] {
            // Links named as the inner archive's folder would be (x, x.unpacked, and the
            // next free names), absolute and relative, beside it.
            let depth_up = "../".repeat(12);
            let links = [
                format!("l|x|777|{o}"),
                format!("l|x.unpacked|777|{depth_up}{}", o.trim_start_matches('/')),
                format!("l|x.unpacked-2|777|{o}"),
            ];
            let mut members: Vec<String> = links.to_vec();
            members.push(format!("f|x.{inner_fmt}|644|@{}", inner.display()));
            let name = format!("beside-{inner_fmt}-in.{outer_fmt}");
            spellings.push((
                name.clone(),
                archive(tmp.path(), &name, outer_fmt, &members),
            ));
        }
    }
    // Members written through a link the archive made first, and `..` or `/` in names.
    let through = [
        vec![
            format!("l|l|777|{o}"),
            "f|l/evil.txt|644|through".to_string(),
        ],
        vec![
            "l|rel|777|../../../../../../../../..".to_string(),
            format!("f|rel{o}/evil2.txt|644|through"),
        ],
        vec![format!("f|../../../../../../..{o}/evil3.txt|644|dotdot")],
        vec![format!("f|{o}/evil4.txt|644|absolute")],
        vec![
            "d|d|755|".to_string(),
            "l|d/up|777|..".to_string(),
            "l|m|777|d/up/..".to_string(),
            "f|m/evil5.txt|644|up".to_string(),
        ],
    ];
    for (i, members) in through.iter().enumerate() {
        for fmt in ["tar.gz", "zip"] {
            let mut members = members.clone();
            members.push(server());
            let name = format!("through-{i}.{fmt}");
            spellings.push((name.clone(), archive(tmp.path(), &name, fmt, &members)));
        }
    }
    let cache = Cache::new(tmp.path().join("cache"));
    for (name, a) in &spellings {
        match fetch(&file(a), &cache, &Limits::default()) {
            Ok(t) => {
                // Whatever was unpacked stayed in the tree, and its links point inside.
                if name.starts_with("beside") {
                    let found = find_server(&t.dir, &LAYOUT, None).unwrap();
                    assert!(found.binary.starts_with(&t.dir), "{name}: {found:?}");
                }
            }
            Err(e) => assert!(e.input && !e.message.contains('\n'), "{name}: {e}"),
        }
        assert_eq!(snapshot(&out), before, "{name} wrote outside the cache");
        cache_is_clean(&cache);
    }
    // A server that is a link out of the tree, and a `path` through a link out of it: an
    // archive's such links are removed (no server found); in a folder used in place they
    // are refused by name.
    let t = tmp.path().to_path_buf();
    let server_link = archive(
        &t,
        "server-link.tar.gz",
        "tar.gz",
        &[format!("l|bin/memcached|777|{}", true_path())],
    );
    let e = fetch(&file(&server_link), &cache, &Limits::default())
        .and_then(|t| find_server(&t.dir, &LAYOUT, None).map_err(DistError::input))
        .unwrap_err();
    assert!(e.message.contains("no memcached"), "{e}");
    let folder = t.join("folder");
    std::fs::create_dir_all(folder.join("bin")).unwrap();
    std::os::unix::fs::symlink(true_path(), folder.join("bin/memcached")).unwrap();
    std::os::unix::fs::symlink(&out, folder.join("lib")).unwrap();
    let ft = fetch(&file(&folder), &cache, &Limits::default()).unwrap();
    let e = find_server(&ft.dir, &LAYOUT, None).unwrap_err();
    assert!(
        e.contains("bin/memcached is a link out of the unpacked tree"),
        "{e}"
    );
    for path in ["lib", "lib/keep.txt", "bin/../lib"] {
        let e = find_server(&ft.dir, &LAYOUT, Some(Path::new(path))).unwrap_err();
        assert!(e.contains("leads out of the unpacked tree"), "{path}: {e}");
    }
    let e = fetch(&file(Path::new("/")), &cache, &Limits::default()).unwrap_err();
    assert!(e.input && e.message.contains("system folder"), "{e}");
    assert_eq!(snapshot(&out), before);
    cache_is_clean(&cache);
}

#[test]
fn archive_device_nodes_setuid_and_writable_modes_are_never_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let out = outside(t);
    let o = out.display().to_string();
    let before = snapshot(&out);
    let cache = Cache::new(t.join("cache"));
    // Devices, FIFOs: refused, in a tar, in a tar inside a zip, in a .deb.
    let kinds = [
        ("c", "dev/mem", "1,1", "character device"),
        ("b", "dev/sda", "8,0", "block device"),
        ("p", "run/fifo", "", "FIFO"),
    ];
    for (kind, name, arg, says) in kinds {
        let members = vec![server(), format!("{kind}|{name}|666|{arg}")];
        let plain = archive(t, &format!("{kind}.tar"), "tar", &members);
        let zip = archive(
            t,
            &format!("{kind}-in.zip"),
            "zip",
            &[format!("f|inner.tar|644|@{}", plain.display())],
        );
        for a in [plain, zip] {
            let e = fetch(&file(&a), &cache, &Limits::default()).unwrap_err();
            assert!(e.input && e.message.contains(says), "{}: {e}", a.display());
            assert!(!e.message.contains('\n'), "{e}");
            cache_is_clean(&cache);
        }
    }
    // A device node made with mknod (as root), packed by tar itself.
    if unsafe { libc::geteuid() } == 0 {
        let d = t.join("mknod");
        std::fs::create_dir_all(d.join("bin")).unwrap();
        std::fs::copy(true_path(), d.join("bin/memcached")).unwrap();
        let made = Command::new("mknod")
            .arg(d.join("null-again"))
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        assert!(made.success());
        let a = t.join("mknod.tar.gz");
        assert!(Command::new("tar")
            .arg("-czf")
            .arg(&a)
            .arg("-C")
            .arg(&d)
            .arg(".")
            .status()
            .unwrap()
            .success());
        let e = fetch(&file(&a), &cache, &Limits::default()).unwrap_err();
        assert!(e.message.contains("character device"), "{e}");
        cache_is_clean(&cache);
    }
    // Set-id, sticky and writable modes, a writable folder, a hard link to a file outside:
    // the modes are cut, the link refused.
    let modes = vec![
        "d|bin|777|".to_string(),
        format!("f|bin/memcached|777|@{}", true_path()),
        "f|bin/sh-root|6777|#!/bin/sh\n".to_string(),
        "f|bin/sticky|1666|x".to_string(),
        "f|etc/my.cnf|666|[mysqld]".to_string(),
        "d|share|2777|".to_string(),
    ];
    for fmt in ["tar.gz", "zip"] {
        let a = archive(t, &format!("modes.{fmt}"), fmt, &modes);
        let got = fetch(&file(&a), &cache, &Limits::default()).unwrap();
        let found = find_server(&got.dir, &LAYOUT, None).unwrap();
        let mode = std::fs::metadata(&found.binary).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o755, "{fmt}: the server kept {mode:o}");
        let sh = std::fs::metadata(got.dir.join("bin/sh-root"))
            .unwrap()
            .mode()
            & 0o7777;
        assert_eq!(sh, 0o755, "{fmt}: {sh:o}");
        cache_is_clean(&cache);
    }
    // The same modes in a .deb (dpkg-deb -x would keep them as root).
    let root = t.join("debroot");
    std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    std::fs::write(
        root.join("DEBIAN/control"),
        "Package: hostile\nVersion: 1\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n",
    )
    .unwrap();
    std::fs::copy(true_path(), root.join("usr/bin/memcached")).unwrap();
    std::fs::set_permissions(
        root.join("usr/bin/memcached"),
        std::fs::Permissions::from_mode(0o6777),
    )
    .unwrap();
    let deb = t.join("hostile_1_all.deb");
    let built = Command::new("dpkg-deb")
        .args(["--build", "--root-owner-group"])
        .arg(&root)
        .arg(&deb)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(built.success());
    let got = fetch(&file(&deb), &cache, &Limits::default()).unwrap();
    let mode = std::fs::metadata(got.dir.join("usr/bin/memcached"))
        .unwrap()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o755, "the .deb's server kept {mode:o}");
    cache_is_clean(&cache);
    // Hard links: to a file outside (absolute and by ..), refused or not made; among the
    // archive's own members, kept.
    for (i, target) in [
        format!("{o}/keep.txt"),
        format!("../../../../../../..{o}/keep.txt"),
    ]
    .iter()
    .enumerate()
    {
        let a = archive(
            t,
            &format!("hard-{i}.tar"),
            "tar",
            &[server(), format!("h|stolen|644|{target}")],
        );
        let e = fetch(&file(&a), &cache, &Limits::default()).unwrap_err();
        assert!(e.input, "{e}");
        cache_is_clean(&cache);
    }
    let a = archive(
        t,
        "hard-inside.tar",
        "tar",
        &[
            server(),
            "h|bin/memcached-again|644|bin/memcached".to_string(),
        ],
    );
    let got = fetch(&file(&a), &cache, &Limits::default()).unwrap();
    assert_eq!(
        std::fs::metadata(got.dir.join("bin/memcached-again"))
            .unwrap()
            .nlink(),
        2
    );
    assert_eq!(snapshot(&out), before, "an archive changed a file outside");
    cache_is_clean(&cache);
}

/// Rewrites every local and central header of the zip at `path` to say its member
/// inflates to `size` bytes.
fn understate_zip_sizes(path: &Path, size: u32) {
    let mut b = std::fs::read(path).unwrap();
    for (sig, at) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
        let mut i = 0;
        while let Some(j) = b[i..].windows(4).position(|w| w == sig) {
            let j = i + j;
            b[j + at..j + at + 4].copy_from_slice(&size.to_le_bytes());
            i = j + 4;
        }
    }
    std::fs::write(path, b).unwrap();
}

#[test]
fn archive_size_and_file_count_bombs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = Cache::new(t.join("cache"));
    let small = Limits {
        max_bytes: 16 * 1024 * 1024,
        max_files: 100,
    };
    let bomb = vec![server(), format!("z|data/zeros|644|{}", 64 * 1024 * 1024)];
    let tar_bomb = archive(t, "bomb.tar.gz", "tar.gz", &bomb);
    let zip_bomb = archive(t, "bomb.zip", "zip", &bomb);
    assert!(std::fs::metadata(&tar_bomb).unwrap().len() < 1024 * 1024);
    // Inside another archive (the outer one is small and holds one member).
    let nested = archive(
        t,
        "nested.zip",
        "zip",
        &[format!("f|inner.tar.gz|644|@{}", tar_bomb.display())],
    );
    // A sparse file, packed by tar itself.
    let sparse = t.join("sparse");
    std::fs::create_dir_all(&sparse).unwrap();
    std::fs::File::create(sparse.join("hole"))
        .unwrap()
        .set_len(64 * 1024 * 1024)
        .unwrap();
    let sparse_tar = t.join("sparse.tar.gz");
    assert!(Command::new("tar")
        .arg("-czSf")
        .arg(&sparse_tar)
        .arg("-C")
        .arg(&sparse)
        .arg(".")
        .status()
        .unwrap()
        .success());
    // A zip whose headers say each of its 6 members holds 1000 bytes, where each
    // inflates to 10 MB: unzip writes what the data holds.
    let lying = archive(
        t,
        "lying.zip",
        "zip",
        &(0..6)
            .map(|i| format!("z|f{i}|644|{}", 10 << 20))
            .collect::<Vec<_>>(),
    );
    understate_zip_sizes(&lying, 1000);
    for a in [&tar_bomb, &zip_bomb, &nested, &sparse_tar, &lying] {
        let e = fetch(&file(a), &cache, &small).unwrap_err();
        assert!(
            e.input
                && e.message.contains("more than 16 MB")
                && e.message.contains("dist.max_unpacked_mb"),
            "{}: {e}",
            a.display()
        );
        assert!(!e.message.contains('\n'), "{e}");
        cache_is_clean(&cache);
    }
    // Too many files, flat and nested.
    let many: Vec<String> = (0..300).map(|i| format!("f|f/{i}|644|")).collect();
    let flat = archive(t, "many.tar", "tar", &many);
    let zip_many = archive(t, "many.zip", "zip", &many);
    let in_tar = archive(
        t,
        "many-in.tar",
        "tar",
        &[format!("f|inner.zip|644|@{}", zip_many.display())],
    );
    for a in [&flat, &zip_many, &in_tar] {
        let e = fetch(&file(a), &cache, &small).unwrap_err();
        assert!(
            e.input
                && e.message.contains("more than 100 files")
                && e.message.contains("dist.max_files"),
            "{}: {e}",
            a.display()
        );
        cache_is_clean(&cache);
    }
    // Nothing of them in the cache; within the default limits the bomb unpacks.
    let entries: Vec<String> = std::fs::read_dir(cache.dir(&["dist"]))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(entries.is_empty(), "{entries:?}");
    assert!(fetch(&file(&tar_bomb), &cache, &Limits::default()).is_ok());
    cache_is_clean(&cache);
}

#[test]
fn cached_dist_tree_changed_after_verification_is_refused() {
    use std::sync::atomic::Ordering;
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let out = outside(t);
    std::fs::write(out.join("memcached"), "not the distribution's").unwrap();
    let before = snapshot(&out);
    let a = archive(
        t,
        "dist.tar.gz",
        "tar.gz",
        &[server(), "f|share/x|644|x".to_string()],
    );
    let original = std::fs::read(true_path()).unwrap();
    let (_, sha) = hash_file(&a).unwrap();
    let served = bakeoff_testkit::http::serve("dist.tar.gz", std::fs::read(&a).unwrap());
    let cache = Cache::new(t.join("cache"));
    let sources = [
        file(&a),
        DistSource::Url {
            url: served.url.clone(),
            sha256: sha,
        },
    ];
    // Each change made to the tree after it was unpacked and checked.
    type Change = fn(&Path, &Path);
    let changes: [(&str, Change); 6] = [
        ("server bytes", |tree, _| {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(tree.join("bin/memcached"))
                .unwrap();
            std::io::Write::write_all(&mut f, b"patched").unwrap();
        }),
        ("server replaced by a link", |tree, out| {
            std::fs::remove_file(tree.join("bin/memcached")).unwrap();
            std::os::unix::fs::symlink(out.join("memcached"), tree.join("bin/memcached")).unwrap();
        }),
        ("a mode", |tree, _| {
            std::fs::set_permissions(
                tree.join("share/x"),
                std::fs::Permissions::from_mode(0o4755),
            )
            .unwrap();
        }),
        ("a file added", |tree, _| {
            std::fs::write(tree.join("share/planted"), "x").unwrap();
        }),
        ("the tree replaced by a link", |tree, out| {
            std::fs::remove_dir_all(tree).unwrap();
            std::os::unix::fs::symlink(out, tree).unwrap();
        }),
        ("the entry replaced by a link", |tree, out| {
            let entry = tree.parent().unwrap();
            std::fs::remove_dir_all(entry).unwrap();
            std::os::unix::fs::symlink(out, entry).unwrap();
        }),
    ];
    for src in &sources {
        let first = fetch(src, &cache, &Limits::default()).unwrap();
        for (what, change) in changes {
            change(&first.dir, &out);
            let again = fetch(src, &cache, &Limits::default()).unwrap();
            assert!(
                !again.cached,
                "{what}: the changed tree was taken from the cache"
            );
            assert_eq!(again.dir, first.dir);
            let found = find_server(&again.dir, &LAYOUT, None).unwrap();
            assert!(
                std::fs::symlink_metadata(&found.binary).unwrap().is_file(),
                "{what}"
            );
            assert_eq!(std::fs::read(&found.binary).unwrap(), original, "{what}");
            assert!(!again.dir.join("share/planted").exists(), "{what}");
            assert_eq!(snapshot(&out), before, "{what}: outside changed");
            cache_is_clean(&cache);
            // Unchanged, it is the cache's again.
            let third = fetch(src, &cache, &Limits::default()).unwrap();
            assert!(
                third.cached || matches!(src, DistSource::File { .. }),
                "{what}"
            );
        }
    }
    // The url was fetched again for each change (its archive is not kept), never more.
    assert_eq!(served.hits.load(Ordering::SeqCst), 1 + changes.len());
}

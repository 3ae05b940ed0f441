//! Unpacking, recursively, trusting nothing in the archive: the fetched archive into the
//! tree (its kind from its name, else from its first bytes), then every archive found
//! inside (by name: .jar, .zip, .whl, .deb, .tar and compressed tars), each into a folder
//! beside it named after it, down to a few levels. `unzip`, `tar` (gz, xz, bz2, zstd) and
//! `dpkg-deb --fsys-tarfile` (then `tar`) do the work, confined (`confine.rs`).
//!
//! Each archive is first listed (members of a kind bakeoff never makes, devices, FIFOs,
//! sockets, refused before anything is written; the file count and size checked against
//! the limits), then unpacked into a fresh, empty folder of the staging folder, never into
//! a place an earlier member could have made a link. That folder is walked without
//! following links: anything but files, folders and links refused, hard links to files
//! outside it refused, modes cut to the owner's rwx and read/execute for others (no
//! set-id, sticky or group/world-write bits; folders 755), sizes and counts added up. Only
//! then is it moved into the tree, through folders that are real folders, and every link
//! of the tree whose target, resolved component by component, leaves the tree is removed.
//! Zip archives made by Java keep no modes, so ELF files and scripts are made runnable.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use super::{confine, DistError, Limits};

/// How deep archives inside archives are unpacked (a txz in a jar is one level).
const MAX_DEPTH: usize = 3;

/// How many links a path may go through while it is resolved.
const MAX_HOPS: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Zip,
    Tar,
    Deb,
}

const TAR_ENDINGS: &[&str] = &[
    ".tar",
    ".tgz",
    ".txz",
    ".tbz",
    ".tbz2",
    ".tzst",
    ".tar.gz",
    ".tar.xz",
    ".tar.bz2",
    ".tar.zst",
    ".tar.zstd",
];

/// The archive kind a file name says.
pub(super) fn kind_by_name(name: &str) -> Option<Kind> {
    let n = name.to_ascii_lowercase();
    if n.ends_with(".deb") {
        Some(Kind::Deb)
    } else if [".jar", ".zip", ".whl"].iter().any(|e| n.ends_with(e)) {
        Some(Kind::Zip)
    } else if TAR_ENDINGS.iter().any(|e| n.ends_with(e)) {
        Some(Kind::Tar)
    } else {
        None
    }
}

/// The archive kind a file's first bytes say (for a fetched file whose name says none).
fn kind_by_magic(path: &Path) -> Option<Kind> {
    let mut head = [0u8; 512];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .ok()?;
    let h = &head[..n];
    if h.starts_with(b"PK\x03\x04") {
        Some(Kind::Zip)
    } else if h.starts_with(b"!<arch>\ndebian") {
        Some(Kind::Deb)
    } else if h.starts_with(&[0x1f, 0x8b])
        || h.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0])
        || h.starts_with(b"BZh")
        || h.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || (n > 262 && &h[257..262] == b"ustar")
    {
        Some(Kind::Tar)
    } else {
        None
    }
}

/// What a member's name looks like in a message: printable, short.
fn shown(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(160)
        .collect();
    format!("{clean:?}")
}

/// One unpacking of a distribution into `tree` (a folder of the staging folder `staging`),
/// counting what it writes against the limits.
pub(super) struct Unpacker<'a> {
    staging: PathBuf,
    tree: PathBuf,
    limits: &'a Limits,
    bytes: u64,
    entries: u64,
    fresh: usize,
}

impl<'a> Unpacker<'a> {
    /// An unpacker into `staging/tree` (made here, empty).
    pub(super) fn new(staging: &Path, limits: &'a Limits) -> Result<Unpacker<'a>, DistError> {
        let tree = staging.join("tree");
        make_dir(&tree)?;
        Ok(Unpacker {
            staging: staging.to_path_buf(),
            tree,
            limits,
            bytes: 0,
            entries: 0,
            fresh: 0,
        })
    }

    /// The tree being unpacked into.
    pub(super) fn tree(&self) -> &Path {
        &self.tree
    }

    /// Unpacks the fetched archive `archive` into the tree.
    pub(super) fn top(&mut self, archive: &Path) -> Result<(), DistError> {
        let name = crate::util::name_of(archive);
        let kind = kind_by_name(&name)
            .or_else(|| kind_by_magic(archive))
            .ok_or_else(|| {
                DistError::input(format!(
                    "{name} is not an archive bakeoff unpacks (jar, zip, whl, deb, tar with gz, xz, bz2 or zstd); give one of those or a folder"
                ))
            })?;
        let tree = self.tree.clone();
        self.unpack(kind, archive, &tree)
    }

    /// Unpacks every archive in the tree into a folder beside it (its name without the
    /// ending; a free name when that is taken, by anything, a link too), removes the
    /// archive, and goes on inside, `MAX_DEPTH` levels at most.
    pub(super) fn nested(&mut self) -> Result<(), DistError> {
        let tree = self.tree.clone();
        self.nested_in(&tree, 0)
    }

    fn nested_in(&mut self, dir: &Path, depth: usize) -> Result<(), DistError> {
        if depth >= MAX_DEPTH {
            return Ok(());
        }
        for (path, kind) in archives_under(dir) {
            // An earlier archive's links were cleaned; this one is still where it was found.
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let dest = free_name_beside(&path)?;
            self.unpack(kind, &path, &dest)?;
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
            self.bytes = self.bytes.saturating_sub(meta.len());
            self.entries = self.entries.saturating_sub(1);
            self.nested_in(&dest, depth + 1)?;
        }
        Ok(())
    }

    /// One archive into `dest` (made, or merged into when it is the tree): listed, unpacked
    /// into a fresh folder, checked, moved in; then the tree's links checked.
    fn unpack(&mut self, kind: Kind, archive: &Path, dest: &Path) -> Result<(), DistError> {
        let name = crate::util::name_of(archive);
        self.fresh += 1;
        let fresh = self.staging.join(format!(".unpack-{}", self.fresh));
        make_dir(&fresh)?;
        let mut debtar = None;
        let result = (|| {
            let (kind, archive) = match kind {
                Kind::Deb => {
                    let tar = self.deb_to_tar(archive, &name)?;
                    debtar = Some(tar.clone());
                    (Kind::Tar, tar)
                }
                k => (k, archive.to_path_buf()),
            };
            let listed = list(kind, &archive, &name)?;
            self.within_limits(&name, listed.bytes, listed.entries)?;
            self.extract(kind, &archive, &fresh, &name)?;
            let (bytes, entries) = sanitize(&fresh, &name)?;
            self.within_limits(&name, bytes, entries)?;
            self.bytes += bytes;
            self.entries += entries;
            merge(&fresh, dest)?;
            self.drop_links_out();
            Ok(())
        })();
        if let Some(t) = debtar {
            let _ = std::fs::remove_file(t);
        }
        let _ = std::fs::remove_dir_all(&fresh);
        result
    }

    /// A .deb's data as a plain tar in the staging folder (`dpkg-deb --fsys-tarfile`), so
    /// it is listed and unpacked like any tar, never with the owners and modes
    /// `dpkg-deb -x` keeps when run as root.
    fn deb_to_tar(&mut self, deb: &Path, name: &str) -> Result<PathBuf, DistError> {
        let to = self.staging.join(format!(".deb-{}.debtar", self.fresh));
        let file = std::fs::File::create(&to)
            .map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        need("dpkg-deb", name)?;
        let mut cmd = Command::new("dpkg-deb");
        cmd.arg("--fsys-tarfile").arg(deb).stdout(file);
        let ran = confine::run(&mut cmd, Some(self.room()))
            .map_err(|e| format!("cannot run dpkg-deb: {e}"))?;
        if ran.over_file_size() {
            return Err(self.too_big(name));
        }
        if !ran.ok() {
            return Err(tool_failed("dpkg-deb", name, &ran.output));
        }
        Ok(to)
    }

    /// The bytes still allowed (a file written beyond them kills the unpacker).
    fn room(&self) -> u64 {
        self.limits.max_bytes.saturating_sub(self.bytes).max(1)
    }

    fn too_big(&self, name: &str) -> DistError {
        DistError::input(format!(
            "{} unpacks to more than {} MB; bakeoff stops there: raise dist.max_unpacked_mb if the distribution is really this large",
            shown(name),
            self.limits.max_bytes / (1024 * 1024)
        ))
    }

    /// Whether `bytes` and `entries` more still fit the limits.
    fn within_limits(&self, name: &str, bytes: u64, entries: u64) -> Result<(), DistError> {
        if self.bytes.saturating_add(bytes) > self.limits.max_bytes {
            return Err(self.too_big(name));
        }
        if self.entries.saturating_add(entries) > self.limits.max_files {
            return Err(DistError::input(format!(
                "{} unpacks to more than {} files and folders; bakeoff stops there: raise dist.max_files if the distribution really holds this many",
                shown(name),
                self.limits.max_files
            )));
        }
        Ok(())
    }

    /// Runs the unpacker into the empty folder `fresh`.
    fn extract(
        &self,
        kind: Kind,
        archive: &Path,
        fresh: &Path,
        name: &str,
    ) -> Result<(), DistError> {
        let (tool, mut cmd) = match kind {
            Kind::Zip => {
                let mut c = Command::new("unzip");
                c.args(["-qq", "-o"]).arg(archive).arg("-d").arg(fresh);
                ("unzip", c)
            }
            Kind::Tar | Kind::Deb => {
                let mut c = Command::new("tar");
                c.args([
                    "--no-same-owner",
                    "--no-same-permissions",
                    "--no-overwrite-dir",
                    "-xf",
                ])
                .arg(archive)
                .arg("-C")
                .arg(fresh);
                ("tar", c)
            }
        };
        need(tool, name)?;
        let (ran, over) = confine::run_watched(&mut cmd, Some(self.room()), fresh, self.room())
            .map_err(|e| format!("cannot run {tool}: {e}"))?;
        if over || ran.over_file_size() {
            return Err(self.too_big(name));
        }
        if !ran.ok() {
            return Err(tool_failed(tool, name, &ran.output));
        }
        Ok(())
    }

    /// Removes every link of the tree whose target, resolved inside the tree, leaves it
    /// (an absolute target, `..` above the top, a loop).
    fn drop_links_out(&mut self) {
        let tree = self.tree.clone();
        let mut out = Vec::new();
        walk(&tree, &mut |p, meta| {
            if meta.file_type().is_symlink() {
                let rel = p.strip_prefix(&tree).unwrap_or(p);
                if resolve_inside(&tree, rel).is_none() {
                    out.push(p.to_path_buf());
                }
            }
        });
        for p in out {
            if std::fs::remove_file(&p).is_ok() {
                self.entries = self.entries.saturating_sub(1);
            }
        }
    }
}

/// `mkdir` (not `-p`: the folder is new) with mode 755.
fn make_dir(dir: &Path) -> Result<(), DistError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o755)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()).into())
}

fn need(tool: &str, name: &str) -> Result<(), DistError> {
    if bakeoff_os::path::which(tool).is_none() {
        return Err(format!("`{tool}` is needed to unpack {name}: run scripts/setup.sh").into());
    }
    Ok(())
}

/// A tool's refusal is the archive's fault (input): its last line that says why.
fn tool_failed(tool: &str, name: &str, output: &str) -> DistError {
    let line = output
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.contains("Exiting with failure status"))
        .unwrap_or("");
    let line = line.strip_prefix(&format!("{tool}: ")).unwrap_or(line);
    let line: String = line.chars().filter(|c| !c.is_control()).take(240).collect();
    DistError::input(format!(
        "cannot unpack {} ({tool}: {line}); check that the archive is whole",
        shown(name)
    ))
}

/// A member name (or hard link target) that names a place outside the archive: absolute,
/// or with a `..` component.
pub fn names_outside(member: &str) -> bool {
    member.starts_with('/') || member.split('/').any(|c| c == "..")
}

/// What an archive's listing says it holds.
struct Listed {
    bytes: u64,
    entries: u64,
}

/// Lists an archive before anything of it is written: a tar's members one by one (a
/// device, FIFO, socket or any kind but file, folder, link and hard link refused), a
/// zip's totals.
fn list(kind: Kind, archive: &Path, name: &str) -> Result<Listed, DistError> {
    let (tool, mut cmd) = match kind {
        Kind::Zip => {
            let mut c = Command::new("unzip");
            c.args(["-Z", "-t"]).arg(archive);
            ("unzip", c)
        }
        Kind::Tar | Kind::Deb => {
            let mut c = Command::new("tar");
            c.args(["--quoting-style=escape", "-tvf"]).arg(archive);
            ("tar", c)
        }
    };
    need(tool, name)?;
    let ran = confine::run(&mut cmd, Some(0)).map_err(|e| format!("cannot run {tool}: {e}"))?;
    if !ran.ok() {
        return Err(tool_failed(tool, name, &ran.output));
    }
    if ran.output[ran.stdout.len()..].contains("Removing leading") {
        return Err(DistError::input(format!(
            "{} holds a member or hard link named outside the archive (absolute, or with ..); bakeoff writes only inside the unpacked tree: remove it from the archive",
            shown(name)
        )));
    }
    match kind {
        Kind::Zip => zip_totals(&ran.stdout)
            .map(|(entries, bytes)| Listed { bytes, entries })
            .ok_or_else(|| tool_failed("unzip", name, &ran.output)),
        Kind::Tar | Kind::Deb => {
            let mut listed = Listed {
                bytes: 0,
                entries: 0,
            };
            for line in ran.stdout.lines().filter(|l| !l.trim().is_empty()) {
                let size = tar_member(line, name)?;
                listed.entries += 1;
                listed.bytes = listed.bytes.saturating_add(size);
            }
            Ok(listed)
        }
    }
}

/// `unzip -Z -t`'s last line, "N files, X bytes uncompressed, ...": (entries, bytes).
fn zip_totals(stdout: &str) -> Option<(u64, u64)> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.contains("bytes uncompressed"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
    Some((number(0)?, number(2)?))
}

/// One line of `tar -tv` (`-rw-r--r-- root/root 3 2026-01-01 00:00 name`): its size, or
/// why the member is refused (a device, FIFO, socket or other kind; a name or hard link
/// target outside the archive).
fn tar_member(line: &str, name: &str) -> Result<u64, DistError> {
    let kind = line.chars().next().unwrap_or('?');
    let member = line
        .split_whitespace()
        .skip(5)
        .collect::<Vec<_>>()
        .join(" ");
    if !matches!(kind, '-' | 'd' | 'l' | 'h') {
        return Err(DistError::input(format!(
            "{} holds {} ({}); bakeoff never makes devices, FIFOs or sockets from an archive: remove it from the archive",
            shown(name),
            member_kind(kind),
            shown(&member)
        )));
    }
    let (member, target) = match kind {
        'h' => member
            .split_once(" link to ")
            .map_or((member.as_str(), ""), |(m, t)| (m, t)),
        'l' => member
            .split_once(" -> ")
            .map_or((member.as_str(), ""), |(m, _)| (m, "")),
        _ => (member.as_str(), ""),
    };
    if names_outside(member) || names_outside(target) {
        let what = if names_outside(member) {
            "a member named outside the archive"
        } else {
            "a hard link to a file outside the archive"
        };
        return Err(DistError::input(format!(
            "{} holds {what} ({}); bakeoff writes only inside the unpacked tree: remove it from the archive",
            shown(name),
            shown(member)
        )));
    }
    Ok(line
        .split_whitespace()
        .nth(2)
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0))
}

/// A file type as `tar -tv` writes it (`c`, `b`, `p`, `s`; `?` for another).
fn kind_char(ft: &std::fs::FileType) -> char {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_block_device() {
        'b'
    } else if ft.is_char_device() {
        'c'
    } else if ft.is_fifo() {
        'p'
    } else if ft.is_socket() {
        's'
    } else {
        '?'
    }
}

fn member_kind(c: char) -> &'static str {
    match c {
        'c' => "a character device",
        'b' => "a block device",
        'p' => "a FIFO",
        's' => "a socket",
        _ => "a member of a kind bakeoff does not unpack",
    }
}

/// Checks and tidies a freshly unpacked folder: only files, folders and links; hard
/// links only among its own files; modes cut (files `& 0o755`, folders 755). Returns its
/// bytes (files' lengths) and entries.
fn sanitize(fresh: &Path, name: &str) -> Result<(u64, u64), DistError> {
    let mut bytes = 0u64;
    let mut entries = 0u64;
    let mut linked: HashMap<(u64, u64), (u64, u64, PathBuf)> = HashMap::new();
    let mut problem: Option<DistError> = None;
    // A folder's callback (which opens it up, 755) runs before the folder is read.
    walk(fresh, &mut |p, meta| {
        if problem.is_some() {
            return;
        }
        entries += 1;
        let ft = meta.file_type();
        let rel = p.strip_prefix(fresh).unwrap_or(p).display().to_string();
        if ft.is_dir() {
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755));
        } else if ft.is_file() {
            bytes = bytes.saturating_add(meta.len());
            let mode = meta.mode() & 0o7777;
            if mode != mode & 0o755 {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode & 0o755));
            }
            if meta.nlink() > 1 {
                let e = linked.entry((meta.dev(), meta.ino())).or_insert((
                    meta.nlink(),
                    0,
                    p.to_path_buf(),
                ));
                e.1 += 1;
            }
        } else if !ft.is_symlink() {
            let what = kind_char(&ft);
            problem = Some(DistError::input(format!(
                "{} holds {} ({}); bakeoff never makes devices, FIFOs or sockets from an archive: remove it from the archive",
                shown(name),
                member_kind(what),
                shown(&rel)
            )));
        }
    });
    if let Some(p) = problem {
        return Err(p);
    }
    if let Some((_, _, p)) = linked.values().find(|(n, seen, _)| seen < n) {
        let rel = p.strip_prefix(fresh).unwrap_or(p).display().to_string();
        return Err(DistError::input(format!(
            "{} holds a hard link ({}) to a file outside the archive; bakeoff links only members already inside: remove it from the archive",
            shown(name),
            shown(&rel)
        )));
    }
    Ok((bytes, entries))
}

/// Moves the contents of `from` into `to`: renamed whole when `to` does not exist, else
/// entry by entry, into folders that are real folders (never a link), a file replacing a
/// file or link of the same name (a later .deb's copy).
fn merge(from: &Path, to: &Path) -> Result<(), DistError> {
    let moved = |a: &Path, b: &Path| -> Result<(), DistError> {
        std::fs::rename(a, b)
            .map_err(|e| format!("cannot move {} to {}: {e}", a.display(), b.display()).into())
    };
    let Ok(meta) = std::fs::symlink_metadata(to) else {
        return moved(from, to);
    };
    if !meta.is_dir() {
        return Err(format!("{} is not a folder; cannot unpack into it", to.display()).into());
    }
    let rd = std::fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
    for entry in rd.flatten() {
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let src_dir = std::fs::symlink_metadata(&src).is_ok_and(|m| m.is_dir());
        match std::fs::symlink_metadata(&dst) {
            Err(_) => moved(&src, &dst)?,
            Ok(m) if m.is_dir() && src_dir => merge(&src, &dst)?,
            Ok(m) if !m.is_dir() && !src_dir => moved(&src, &dst)?,
            Ok(_) => {
                return Err(DistError::input(format!(
                    "{} is a folder in one package and a file in another; give packages that agree",
                    shown(&crate::util::name_of(&dst))
                )))
            }
        }
    }
    let _ = std::fs::remove_dir(from);
    Ok(())
}

/// A name beside `archive` for its contents that nothing has (its stem, else
/// `<stem>.unpacked`, `<stem>.unpacked-2`, ...), tested without following links.
fn free_name_beside(archive: &Path) -> Result<PathBuf, DistError> {
    let name = crate::util::name_of(archive);
    let stem = strip_ending(&name);
    let taken = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let mut candidates = vec![stem.to_string(), format!("{stem}.unpacked")];
    candidates.extend((2..10).map(|i| format!("{stem}.unpacked-{i}")));
    candidates
        .into_iter()
        .map(|n| archive.with_file_name(n))
        .find(|p| !taken(p))
        .ok_or_else(|| {
            DistError::input(format!(
                "no free name beside {} to unpack it into; give an archive without so many entries of that name",
                shown(&name)
            ))
        })
}

fn strip_ending(name: &str) -> &str {
    let lower = name.to_ascii_lowercase();
    let all = TAR_ENDINGS
        .iter()
        .chain([".jar", ".zip", ".whl", ".deb"].iter());
    let longest = all
        .filter(|e| lower.ends_with(*e))
        .map(|e| e.len())
        .max()
        .unwrap_or(0);
    match &name[..name.len() - longest] {
        "" => name,
        s => s,
    }
}

/// Regular files under `dir` (links not followed) whose name says an archive.
fn archives_under(dir: &Path) -> Vec<(PathBuf, Kind)> {
    let mut out = Vec::new();
    walk(dir, &mut |p, meta| {
        if meta.is_file() {
            if let Some(k) = kind_by_name(&crate::util::name_of(p)) {
                out.push((p.to_path_buf(), k));
            }
        }
    });
    out
}

/// `rel` (a path inside `root`) resolved the way the kernel would, one component at a
/// time, following links only while they stay inside `root`: the physical path relative
/// to `root`, or None when it leaves (an absolute link, `..` above `root`, a loop).
/// Components that do not exist are taken as they are.
pub(super) fn resolve_inside(root: &Path, rel: &Path) -> Option<PathBuf> {
    let mut done: Vec<OsString> = Vec::new();
    let mut todo: Vec<OsString> = Vec::new();
    let push_path = |todo: &mut Vec<OsString>, p: &Path| -> bool {
        let mut parts = Vec::new();
        for c in p.components() {
            match c {
                Component::Normal(n) => parts.push(n.to_os_string()),
                Component::ParentDir => parts.push(OsString::from("..")),
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => return false,
            }
        }
        // `todo` is a stack: the next component last.
        todo.extend(parts.into_iter().rev());
        true
    };
    if !push_path(&mut todo, rel) {
        return None;
    }
    let mut hops = 0;
    while let Some(c) = todo.pop() {
        if c == ".." {
            done.pop()?;
            continue;
        }
        let here: PathBuf = root.join(done.iter().collect::<PathBuf>()).join(&c);
        match std::fs::symlink_metadata(&here) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_HOPS {
                    return None;
                }
                let target = std::fs::read_link(&here).ok()?;
                if !push_path(&mut todo, &target) {
                    return None;
                }
            }
            _ => done.push(c),
        }
    }
    Some(done.iter().collect())
}

/// Calls `f` on every entry under `dir`, depth first, never following a link.
pub(super) fn walk(dir: &Path, f: &mut dyn FnMut(&Path, &std::fs::Metadata)) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        f(&p, &meta);
        if meta.is_dir() {
            walk(&p, f);
        }
    }
}

/// Makes ELF files and `#!` scripts executable and every file readable (a jar keeps no
/// modes; the server may run as another user). Never adds a set-id or write bit.
pub(super) fn make_runnable(dir: &Path) {
    walk(dir, &mut |p, meta| {
        let mode = meta.permissions().mode() & 0o7777;
        if meta.is_dir() {
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755));
        } else if meta.is_file() {
            let mut head = [0u8; 4];
            let n = std::fs::File::open(p)
                .and_then(|mut f| f.read(&mut head))
                .unwrap_or(0);
            let runnable = (n == 4 && &head == b"\x7fELF") || (n >= 2 && &head[..2] == b"#!");
            let want = (if runnable { mode | 0o755 } else { mode | 0o644 }) & 0o755;
            if want != mode {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(want));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_stems() {
        assert_eq!(kind_by_name("postgres-linux-x86_64.txz"), Some(Kind::Tar));
        assert_eq!(kind_by_name("x-1.0.tar.zst"), Some(Kind::Tar));
        assert_eq!(kind_by_name("a.whl"), Some(Kind::Zip));
        assert_eq!(
            kind_by_name("memcached_1.6.18-1_amd64.deb"),
            Some(Kind::Deb)
        );
        assert_eq!(kind_by_name("changelog.Debian.gz"), None);
        assert_eq!(
            strip_ending("postgres-linux-x86_64.txz"),
            "postgres-linux-x86_64"
        );
        assert_eq!(strip_ending("x-1.0.tar.gz"), "x-1.0");
        assert_eq!(strip_ending(".jar"), ".jar");
    }

    #[test]
    fn links_resolve_inside_or_not_at_all() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("d/e")).unwrap();
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, root.join(at)).unwrap();
        link("..", "d/up"); // d/up -> root: inside
        link("d/up/..", "m"); // m -> d/up/.. -> above root: outside
        link("e", "d/ok"); // d/ok -> d/e
        link("/etc", "abs");
        link("loop2", "loop1");
        link("loop1", "loop2");
        assert_eq!(
            resolve_inside(&root, Path::new("d/up")),
            Some(PathBuf::new())
        );
        assert_eq!(resolve_inside(&root, Path::new("m")), None);
        assert_eq!(
            resolve_inside(&root, Path::new("d/ok/x")),
            Some(PathBuf::from("d/e/x"))
        );
        assert_eq!(resolve_inside(&root, Path::new("abs")), None);
        assert_eq!(resolve_inside(&root, Path::new("loop1")), None);
        assert_eq!(resolve_inside(&root, Path::new("../x")), None);
    }
}

//! Points the crate at the SQLite amalgamation that `libsqlite3-sys` bundles (see
//! `src/source/bundled.rs`, which embeds it). libsqlite3-sys declares `links = "sqlite3"` and,
//! with its `bundled` feature, prints `cargo:include=<crate>/sqlite3`, so this build script
//! gets that directory as `DEP_SQLITE3_INCLUDE`. It exports, for `env!`:
//!
//! - `BAKEOFF_SQLITE_AMALGAMATION`: the directory holding `sqlite3.c`, `sqlite3.h` and
//!   `sqlite3ext.h`;
//! - `BAKEOFF_SQLITE_VERSION`: the `#define SQLITE_VERSION "..."` of its `sqlite3.h`;
//! - `BAKEOFF_LIBSQLITE3_SYS_VERSION`: the libsqlite3-sys version (from its `Cargo.toml`;
//!   empty when it cannot be read), for descriptions only.

use std::path::{Path, PathBuf};

const FILES: [&str; 3] = ["sqlite3.c", "sqlite3.h", "sqlite3ext.h"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_SQLITE3_INCLUDE");
    let dir = std::env::var_os("DEP_SQLITE3_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "DEP_SQLITE3_INCLUDE is not set: bakeoff-build embeds the SQLite amalgamation \
                 bundled by libsqlite3-sys, which must be built with its `bundled` feature \
                 (and without LIBSQLITE3_SYS_USE_PKG_CONFIG)"
            )
        });
    for file in FILES {
        let path = dir.join(file);
        assert!(
            path.is_file(),
            "{} is missing: libsqlite3-sys must be built with its `bundled` feature \
             (and without LIBSQLITE3_SYS_USE_PKG_CONFIG) for bakeoff-build to embed SQLite",
            path.display()
        );
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let header = std::fs::read_to_string(dir.join("sqlite3.h"))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join("sqlite3.h").display()));
    let version = sqlite_version(&header).unwrap_or_else(|| {
        panic!(
            "no `#define SQLITE_VERSION \"...\"` line in {}",
            dir.join("sqlite3.h").display()
        )
    });
    println!(
        "cargo:rustc-env=BAKEOFF_SQLITE_AMALGAMATION={}",
        dir.display()
    );
    println!("cargo:rustc-env=BAKEOFF_SQLITE_VERSION={version}");
    println!(
        "cargo:rustc-env=BAKEOFF_LIBSQLITE3_SYS_VERSION={}",
        sys_version(&dir).unwrap_or_default()
    );
}

/// The quoted value of the `#define SQLITE_VERSION "3.x.y"` line.
fn sqlite_version(header: &str) -> Option<String> {
    header.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("#define")?.trim_start();
        let value = rest.strip_prefix("SQLITE_VERSION")?;
        if !value.starts_with(char::is_whitespace) {
            return None; // SQLITE_VERSION_NUMBER
        }
        let value = value.trim();
        let version = value.strip_prefix('"')?.strip_suffix('"')?;
        (!version.is_empty()).then(|| version.to_string())
    })
}

/// The `version` of the `[package]` in the Cargo.toml beside the include dir (the
/// libsqlite3-sys crate root), else from a `libsqlite3-sys-<version>` directory name.
fn sys_version(include: &Path) -> Option<String> {
    let root = include.parent()?;
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let mut in_package = false;
    let from_manifest = manifest.lines().map(str::trim).find_map(|line| {
        if line.starts_with('[') {
            in_package = line == "[package]";
            return None;
        }
        let value = line
            .strip_prefix("version")?
            .trim_start()
            .strip_prefix('=')?;
        let version = value.trim().strip_prefix('"')?.strip_suffix('"')?;
        in_package.then(|| version.to_string())
    });
    from_manifest.or_else(|| {
        let name = root.file_name()?.to_str()?;
        name.strip_prefix("libsqlite3-sys-").map(str::to_string)
    })
}

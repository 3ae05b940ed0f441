//! Integration tests for the sqlite recipe with the bundled source: the SQLite amalgamation
//! embedded in bakeoff is written into a fresh temporary cache and compiled with `cc -O0` (a
//! few seconds; `-O2` takes 35-45 s on 2 cores, see the README) into `libsqlite3.so`, which is
//! then loaded with `dlopen` and asked for its version, thread safety and a compile option that
//! came from the variant's configure_args.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::time::{Duration, Instant};

use bakeoff_build::{
    build, bundled_sqlite_version, fetch, BuildError, BuildSpec, Cache, Recipe, SourceSpec,
};

fn spec(cflags: &str) -> BuildSpec {
    BuildSpec {
        variant: format!("cc {cflags}"),
        compiler: "cc".into(),
        cflags: cflags.into(),
        configure_args: vec!["-DSQLITE_DEFAULT_CACHE_SIZE=-8000".into()],
        recipe: Recipe::Sqlite,
        ..BuildSpec::default()
    }
}

/// A library loaded with `dlopen(RTLD_NOW | RTLD_LOCAL)`, closed on drop.
struct Library(*mut c_void);

impl Library {
    fn open(path: &Path) -> Self {
        let name = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; the handle is checked and closed on drop.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            // SAFETY: dlerror returns a NUL-terminated message after a failed dlopen.
            let err = unsafe { CStr::from_ptr(libc::dlerror()) };
            panic!("dlopen {}: {}", path.display(), err.to_string_lossy());
        }
        Library(handle)
    }

    /// The address of an exported symbol (looked up in this library, not the test binary).
    fn symbol(&self, name: &str) -> *mut c_void {
        let c_name = CString::new(name).unwrap();
        // SAFETY: a live handle and a NUL-terminated name.
        let sym = unsafe { libc::dlsym(self.0, c_name.as_ptr()) };
        assert!(!sym.is_null(), "the library does not export {name}");
        sym
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful dlopen and is closed once.
        unsafe { libc::dlclose(self.0) };
    }
}

/// Whether the file is an ELF shared object (`e_type` = `ET_DYN`).
fn is_shared_object(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap();
    bytes.len() > 18 && bytes.starts_with(b"\x7fELF") && bytes[16..18] == [3, 0]
}

#[test]
fn bundled_source_is_written_once_then_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new(tmp.path());
    let tree = fetch(&SourceSpec::Bundled, &cache).unwrap();
    let version = bundled_sqlite_version();
    assert_eq!(
        tree.dir,
        tmp.path()
            .join(format!("sources/bundled/sqlite-{version}/tree"))
    );
    for file in ["sqlite3.c", "sqlite3.h", "sqlite3ext.h"] {
        assert!(tree.dir.join(file).is_file(), "{file} missing");
    }
    let header = std::fs::read_to_string(tree.dir.join("sqlite3.h")).unwrap();
    assert!(header.contains(&format!("\"{version}\"")));
    assert!(
        tree.description.starts_with(&format!(
            "bundled SQLite {version} (amalgamation from libsqlite3-sys"
        )),
        "{}",
        tree.description
    );
    assert_eq!(tree.id.len(), 64);
    let again = fetch(&SourceSpec::Bundled, &cache).unwrap();
    assert_eq!(again, tree);

    // The spec round-trips through serde (it is recorded in cache metadata and results).
    let json = serde_json::to_string(&SourceSpec::Bundled).unwrap();
    assert_eq!(
        serde_json::from_str::<SourceSpec>(&json).unwrap(),
        SourceSpec::Bundled
    );
}

#[test]
fn bundled_sqlite_builds_loads_and_is_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new(tmp.path());
    let tree = fetch(&SourceSpec::Bundled, &cache).unwrap();
    let s = spec("-O0");
    let first = build(&tree, &s, &cache).unwrap_or_else(|e| panic!("{e}\n{}", e.tail()));
    assert!(!first.cached);
    assert_eq!(
        first.binary,
        tmp.path()
            .join(format!("builds/{}/build/libsqlite3.so", first.key))
    );
    assert_eq!(first.install, None);
    assert!(
        is_shared_object(&first.binary),
        "{}",
        first.binary.display()
    );

    let log = std::fs::read_to_string(&first.log).unwrap();
    assert!(log.contains("recipe: sqlite/1"), "{log}");
    assert!(log.contains("==> compile: "), "{log}");
    assert!(
        log.contains(r#""cc" "-O0" "-fPIC" "-shared" "-DSQLITE_THREADSAFE=1" "-DSQLITE_DEFAULT_CACHE_SIZE=-8000" "-o" "libsqlite3.so""#),
        "the command line is in the log: {log}"
    );

    {
        let lib = Library::open(&first.binary);
        // SAFETY: the signatures of sqlite3_libversion, sqlite3_threadsafe and
        // sqlite3_compileoption_used from sqlite3.h.
        unsafe {
            let libversion = std::mem::transmute::<*mut c_void, extern "C" fn() -> *const c_char>(
                lib.symbol("sqlite3_libversion"),
            );
            let threadsafe = std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(
                lib.symbol("sqlite3_threadsafe"),
            );
            let option_used = std::mem::transmute::<
                *mut c_void,
                extern "C" fn(*const c_char) -> c_int,
            >(lib.symbol("sqlite3_compileoption_used"));
            let version = CStr::from_ptr(libversion()).to_str().unwrap();
            assert_eq!(version, bundled_sqlite_version());
            assert_eq!(threadsafe(), 1, "SQLITE_THREADSAFE=1");
            let option = CString::new("DEFAULT_CACHE_SIZE=-8000").unwrap();
            assert_eq!(
                option_used(option.as_ptr()),
                1,
                "configure_args reach the compiler"
            );
        }
    }

    let started = Instant::now();
    let cached = build(&tree, &s, &cache).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "a cached build is instant"
    );
    assert!(cached.cached);
    assert_eq!(cached.key, first.key);
    assert_eq!(cached.binary_sha256, first.binary_sha256);
    assert_eq!(cached.seconds, first.seconds);
}

#[test]
fn sqlite_compile_errors_name_the_step() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new(tmp.path());
    let tree = fetch(&SourceSpec::Bundled, &cache).unwrap();
    let s = spec("-O0 -include /nonexistent/bakeoff-force-error.h");
    let err = build(&tree, &s, &cache).unwrap_err();
    let BuildError::BuildFailed { step, log, .. } = &err else {
        panic!("expected BuildFailed, got {err}");
    };
    assert!(step.starts_with("compile"), "{step}");
    assert!(log.is_file());
    assert!(
        err.tail().contains("bakeoff-force-error.h"),
        "{}",
        err.tail()
    );

    let mut s = spec("-O0");
    s.make_args = vec!["-j4".into()];
    let err = build(&tree, &s, &cache).unwrap_err();
    assert!(matches!(err, BuildError::BadSpec { .. }), "{err}");
    assert!(err.to_string().contains("variant `cc -O0`"), "{err}");
}

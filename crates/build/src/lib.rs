//! bakeoff-build: sources (including the SQLite amalgamation bakeoff carries), toolchains,
//! patching, per-target build recipes (autotools, PostgreSQL, MariaDB, SQLite), out-of-tree
//! builds and the build cache.
//!
//! ```no_run
//! use bakeoff_build::{build, fetch, Recipe, BuildSpec, Cache, SourceSpec};
//! let cache = Cache::new(Cache::default_root());
//! let tree = fetch(&SourceSpec::Debian { package: "memcached".into() }, &cache)?;
//! let spec = BuildSpec {
//!     variant: "gcc-O2".into(),
//!     compiler: "gcc-12".into(),
//!     cflags: "-O2".into(),
//!     recipe: Recipe::autotools("memcached"), // the target kind: memcached, postgres, mariadb, sqlite
//!     ..BuildSpec::default()
//! };
//! let info = build(&tree, &spec, &cache)?;
//! println!("{} {} ({} bytes)", info.binary.display(), info.binary_sha256, info.binary_bytes);
//! # Ok::<(), bakeoff_build::BuildError>(())
//! ```

pub mod anatomy;
mod builder;
mod cache;
mod compiler;
pub mod dist;
mod error;
mod key;
pub mod layout;
pub mod lto;
pub mod pgo;
mod prepare;
mod recipe;
mod source;
mod spec;
mod util;

pub use builder::{build, describe_binary, BuildInfo};
pub use cache::Cache;
pub use compiler::{check_compiler, find_compiler, matching_cxx, CompilerId};
pub use error::BuildError;
pub use key::cache_key;
pub use lto::Lto;
pub use source::{bundled_sqlite_version, fetch, is_debian_package_name, SourceSpec, SourceTree};
pub use spec::{BuildSpec, Recipe};
pub use util::sha256_hex;

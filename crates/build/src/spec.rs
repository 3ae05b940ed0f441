//! What a build is asked for: a variant's [`BuildSpec`] and the target's [`Recipe`], plain
//! data (serde) that the cache key (`key`), the recipes' commands (`recipe`) and the builder
//! read. This module uses none of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One variant's build recipe.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildSpec {
    /// The variant's name (for messages only; not part of the cache key).
    pub variant: String,
    /// Compiler command or path, e.g. `gcc-12`, `clang-16`, `/opt/x/bin/icx`; becomes `CC`.
    pub compiler: String,
    /// `CFLAGS`; when empty, `CFLAGS` is left unset so the project's default applies.
    pub cflags: String,
    /// `LDFLAGS`; when empty, left unset.
    pub ldflags: String,
    /// Appended to `configure` (or `cmake`), after the recipe's own options, so they win.
    pub configure_args: Vec<String>,
    /// Appended to every `make` (after `-j<nproc>`).
    pub make_args: Vec<String>,
    /// Unified diffs applied in order with `patch -p1`.
    pub patches: Vec<PathBuf>,
    /// Extra environment for configure and make (applied last, so it can override `CC` etc.).
    pub env: BTreeMap<String, String>,
    /// How the target is built, and so which binary is the product: use
    /// the target's recipe (`bakeoff_sandbox::Target::recipe`).
    pub recipe: Recipe,
    /// Link-time optimization: its flags and tools join the build (see [`crate::lto`]),
    /// and the objects are checked to carry LTO code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lto: Option<crate::lto::Lto>,
    /// Profile-guided optimization: an instrumented build, or one that uses profiles (see
    /// [`crate::pgo`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::pgo::Profile>,
    /// A code layout: functions in their own sections, shuffled by the linker with this
    /// seed (see [`crate::layout`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_seed: Option<u64>,
}

impl BuildSpec {
    /// The spec as it is built: LTO's flags appended to cflags and ldflags (cflags `-O2`
    /// first when the variant gives none, the usual default that setting CFLAGS would
    /// otherwise drop) and its archiver, ranlib and nm in env, unless env sets them.
    pub fn resolved(&self) -> std::result::Result<BuildSpec, String> {
        if self.lto.is_none() && self.profile.is_none() && self.layout_seed.is_none() {
            return Ok(self.clone());
        }
        let join = |a: &str, b: &str| format!("{a} {b}").trim().to_string();
        let mut out = self.clone();
        if out.cflags.is_empty() {
            out.cflags = "-O2".into();
        }
        if let Some(lto) = self.lto {
            let s = crate::lto::settings(&self.compiler, lto)?;
            out.cflags = join(&out.cflags, &s.cflags);
            out.ldflags = join(&out.ldflags, &s.ldflags);
            for (k, v) in s.env {
                out.env.entry(k).or_insert(v);
            }
        }
        if let Some(p) = &self.profile {
            let (c, l) = crate::pgo::flags(&self.compiler, p)?;
            out.cflags = join(&out.cflags, &c);
            out.ldflags = join(&out.ldflags, &l);
        }
        if let Some(seed) = self.layout_seed {
            let s = crate::layout::settings(&self.compiler, seed)?;
            out.cflags = join(&out.cflags, &s.cflags);
            out.ldflags = join(&out.ldflags, &s.ldflags);
        }
        Ok(out)
    }
}

/// How a target is built; part of every build's cache key (with [`Recipe::id`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "recipe", rename_all = "lowercase")]
pub enum Recipe {
    /// `SRC/configure` from a fresh build dir (or a `cp -a` copy of a configure-less tree),
    /// then `make -j<n> <make_args> <product>` (the default goal for plain-make trees, or when
    /// make_args name a goal). `product` is relative to the build dir, e.g. `memcached`.
    Autotools { product: PathBuf },
    /// Redis and its forks (Valkey): a plain-make tree, `make -j<n> <make_args>` in a copy
    /// of it; `product` relative to the build dir (`src/redis-server`, the default, left
    /// out of the cache key so Redis builds keep theirs; `src/valkey-server`). Adds
    /// `USE_SYSTEM_JEMALLOC=yes` when the tree needs it and nothing chose an allocator
    /// (see [`crate::recipe::redis_system_jemalloc`]).
    Redis {
        #[serde(default = "redis_product", skip_serializing_if = "is_redis_product")]
        product: PathBuf,
    },
    /// PostgreSQL: a reduced but complete server install; product `install/bin/postgres`,
    /// with `initdb` and `pg_ctl` beside it and `install/share/postgresql/` filled.
    Postgres,
    /// MariaDB with cmake, server only; product `install/bin/mariadbd`, with
    /// `install/scripts/mariadb-install-db` and `install/share/` (errmsg, system tables).
    Mariadb,
    /// SQLite from its amalgamation (`sqlite3.c` at the top of the tree), compiled by one
    /// compiler command into the product `libsqlite3.so` (no install). configure_args are
    /// extra compiler arguments (`-DSQLITE_...`); make_args are rejected.
    Sqlite,
}

impl Default for Recipe {
    fn default() -> Self {
        Recipe::Autotools {
            product: PathBuf::new(),
        }
    }
}

impl Recipe {
    /// An autotools or plain-make build whose product is `product` in the build dir.
    pub fn autotools(product: &str) -> Recipe {
        Recipe::Autotools {
            product: PathBuf::from(product),
        }
    }

    /// A Redis-like plain-make build whose server is `product` in the build dir
    /// (`src/redis-server`, `src/valkey-server`).
    pub fn redis(product: &str) -> Recipe {
        Recipe::Redis {
            product: PathBuf::from(product),
        }
    }
}

/// The redis recipe's default product, in the build dir.
const REDIS_PRODUCT: &str = "src/redis-server";

fn redis_product() -> PathBuf {
    PathBuf::from(REDIS_PRODUCT)
}

fn is_redis_product(p: &Path) -> bool {
    p == Path::new(REDIS_PRODUCT)
}

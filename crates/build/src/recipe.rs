//! Build recipes: how one target kind goes from a prepared source tree to the files a sandbox
//! runs. A recipe turns a [`BuildSpec`] into a list of commands ([`Step`]s), all run from the
//! build dir with the variant's environment (see `builder`), so the command lines can be
//! checked without building anything.
//!
//! - [`Recipe::Autotools`] (memcached and any other autotools or plain-make tree):
//!   `SRC/configure`, then `make <product>`; the product stays in the build dir.
//! - [`Recipe::Redis`]: a plain-make tree copied into the build dir, `make <make_args>`, product
//!   `src/redis-server`. When neither make_args nor the variant's env choose an allocator and
//!   the tree cannot link its bundled jemalloc (no `deps/jemalloc`, or Debian's tree, whose
//!   patched source links only the system's), `USE_SYSTEM_JEMALLOC=yes` is added, as Debian's
//!   own build does, and the build log says so.
//! - [`Recipe::Postgres`]: `SRC/configure --prefix=<build>/install ...` with a minimal set of
//!   options, then `make` and `make install` in only the directories a running server needs
//!   (backend, conversion procs, snowball, time zones, PL/pgSQL, initdb, pg_ctl).
//! - [`Recipe::Mariadb`]: `cmake SRC` with the variant's compilers and flags and the heavy
//!   plugins off, then `make` of the server-only goals and an install of the `Server` and
//!   `Common` components (no client programs, tests or example plugins); a variant whose
//!   configure_args turn plugins on builds and installs everything (`make`, `make install`).
//! - [`Recipe::Sqlite`]: the SQLite amalgamation (`sqlite3.c` at the top of the tree: the
//!   bundled source, a `sqlite-autoconf-*` tarball, or a path holding `sqlite3.c`) compiled and
//!   linked by one compiler command, no configure and no make, into `libsqlite3.so` in the
//!   build dir (no install dir):
//!   `$CC <CFLAGS, or -O2 when empty> -fPIC -shared -DSQLITE_THREADSAFE=1 <configure_args>
//!   -o libsqlite3.so SRC/sqlite3.c <LDFLAGS> -lpthread -ldl -lm`. The configure_args are extra
//!   compiler arguments (e.g. `-DSQLITE_DEFAULT_CACHE_SIZE=-8000`, `-DSQLITE_CASE_SENSITIVE_LIKE`),
//!   after the recipe's `-D`s so they win; make_args are rejected ([`BuildError::BadSpec`]).
//!   No shell is involved: `CC`, `CFLAGS` and `LDFLAGS` (the variant's compiler, cflags and
//!   ldflags, or the variant env's `CC`/`CFLAGS`/`LDFLAGS` when it sets them, as the other
//!   recipes' configure would see them) are split at whitespace here, without shell quoting,
//!   so the log shows every argument the compiler gets.
//!
//! Installing recipes configure with the entry's final prefix (`builds/<key>/build/install`)
//! and install with `DESTDIR=<staging>/destdir`; the builder then moves the installed tree to
//! `<staging>/build/install`, so the prefix compiled into the binaries is where they end up.

use std::path::{Path, PathBuf};

use crate::error::{BuildError, Result};
use crate::prepare::Layout;
use crate::spec::{BuildSpec, Recipe};

/// make variables that choose Redis's allocator (src/Makefile, and Debian's patch).
const REDIS_ALLOCATOR_VARS: &[&str] = &[
    "MALLOC",
    "USE_JEMALLOC",
    "USE_TCMALLOC",
    "USE_TCMALLOC_MINIMAL",
    "USE_SYSTEM_JEMALLOC",
];

/// Why a Redis build of the tree at `src` takes the system's jemalloc
/// (`USE_SYSTEM_JEMALLOC=yes`), or `None` when it builds as asked: `make_args` or `env`
/// choose an allocator, or the tree's bundled jemalloc links. Debian's source keeps
/// `deps/jemalloc`, but its patch for the flag renames the allocator's calls to the
/// unprefixed system names in every build (`#if USE_SYSTEM_JEMALLOC == yes` holds when the
/// macro is undefined), so a plain `make` fails to link (`undefined reference to
/// dallocx`); Debian's rules pass the flag. Decided from the prepared tree alone, which the
/// build's key already hashes.
pub(crate) fn redis_system_jemalloc(
    src: &Path,
    make_args: &[String],
    env: &std::collections::BTreeMap<String, String>,
) -> Option<&'static str> {
    let chooses = |name: &str| REDIS_ALLOCATOR_VARS.contains(&name.trim());
    let chosen = make_args
        .iter()
        .filter_map(|a| a.split_once('='))
        .any(|(name, _)| chooses(name))
        || env.keys().any(|k| chooses(k));
    if chosen {
        return None;
    }
    let bundled =
        std::fs::read_dir(src.join("deps/jemalloc")).is_ok_and(|mut d| d.next().is_some());
    if !bundled {
        return Some("the source has no bundled jemalloc (deps/jemalloc)");
    }
    let rules = std::fs::read_to_string(src.join("debian/rules")).unwrap_or_default();
    rules.contains("USE_SYSTEM_JEMALLOC=yes").then_some(
        "Debian's source links only the system's jemalloc (its debian/rules passes the flag)",
    )
}

/// Where installing recipes install, relative to the build dir.
pub(crate) const INSTALL_DIR: &str = "install";

/// PostgreSQL directories built and installed, in order: the server, the modules and data
/// initdb loads (conversion procs, snowball dictionaries, PL/pgSQL, time zone data and
/// abbreviations), and the two programs a sandbox needs.
const POSTGRES_DIRS: &[&str] = &[
    "src/backend",
    "src/backend/utils/mb/conversion_procs",
    "src/backend/snowball",
    "src/timezone",
    "src/pl/plpgsql",
    "src/bin/initdb",
    "src/bin/pg_ctl",
];

/// PostgreSQL configure options: no optional libraries (so no build dependencies beyond a C
/// compiler and make), and a libdir containing "postgresql" so Debian's per-version-dirs
/// patch keeps extension modules inside the prefix instead of `/usr/lib/postgresql/15/lib`.
fn postgres_options(prefix: &Path) -> Vec<String> {
    vec![
        format!("--prefix={}", prefix.display()),
        format!("--libdir={}", prefix.join("lib/postgresql").display()),
        "--without-readline".into(),
        "--without-zlib".into(),
        "--without-icu".into(),
    ]
}

/// The sqlite recipe's product, in the build dir.
const SQLITE_PRODUCT: &str = "libsqlite3.so";

/// The sqlite recipe's compiler options, between the cflags and the variant's configure_args.
const SQLITE_OPTIONS: &[&str] = &["-fPIC", "-shared", "-DSQLITE_THREADSAFE=1"];

/// Libraries linked after the ldflags (threads, `dlopen` for extensions, libm).
const SQLITE_LIBS: &[&str] = &["-lpthread", "-ldl", "-lm"];

/// MariaDB plugins switched off: the big storage engines and the ones needing libraries
/// beyond the minimal set. InnoDB, Aria, MyISAM, MEMORY, CSV and the small plugins stay.
const MARIADB_PLUGINS_OFF: &[&str] = &[
    "ROCKSDB",
    "COLUMNSTORE",
    "MROONGA",
    "SPIDER",
    "CONNECT",
    "OQGRAPH",
    "SPHINX",
    "S3",
    "FEDERATED",
    "FEDERATEDX",
    "ARCHIVE",
    "AUTH_GSSAPI",
    "AUTH_PAM",
    "AUTH_PAM_V1",
    "HASHICORP_KEY_MANAGEMENT",
    "AWS_KEY_MANAGEMENT",
    // Dynamic plugins of the `Server` install component that a benchmark does not load
    // (a component install would want each one built).
    "AUTH_ED25519",
    "CRACKLIB_PASSWORD_CHECK",
    "DISKS",
    "HANDLERSOCKET",
    "LOCALES",
    "METADATA_LOCK_INFO",
    "PASSWORD_REUSE_CHECK",
    "QUERY_CACHE_INFO",
    "QUERY_RESPONSE_TIME",
    "SIMPLE_PASSWORD_CHECK",
    "SQL_ERRLOG",
    "TYPE_MYSQL_JSON",
    "WSREP_INFO",
];

/// The make goals of a server-only MariaDB build: the server, the programs
/// mariadb-install-db runs (`my_print_defaults`, `resolveip`), and everything else the
/// `Server` install component copies (its tools, the Aria and MyISAM checkers, the
/// dynamic plugins left on: BLACKHOLE, file key management, the audit plugin), so the
/// component installs find every file. Not built: the client programs, mariadb-test,
/// mariadb-client-test, the client library's shared objects and plugins, readline, and
/// the test and example plugins.
const MARIADB_GOALS: &[&str] = &[
    "mariadbd",
    "my_print_defaults",
    "resolveip",
    "perror",
    "innochecksum",
    "resolve_stack_dump",
    "mariadbd-safe-helper",
    "replace",
    "mariadb-waitpid",
    "mariadb-upgrade",
    "aria_chk",
    "aria_pack",
    "aria_read_log",
    "aria_dump_log",
    "aria_ftdump",
    "myisamchk",
    "myisampack",
    "myisamlog",
    "myisam_ftdump",
];

/// The dynamic plugins a server-only build keeps, as `(plugin, make goal)`: built unless
/// the variant's configure_args turn them off.
const MARIADB_PLUGIN_GOALS: &[(&str, &str)] = &[
    ("BLACKHOLE", "blackhole"),
    ("FILE_KEY_MANAGEMENT", "file_key_management"),
    ("SERVER_AUDIT", "server_audit"),
];

/// What a server-only build installs, as `(component, cmake_install.cmake)`: the
/// `Server` component (the server, its tools and plugins, error messages, system tables,
/// mariadb-install-db), `Common` (character sets), and `extra/`'s `Client` part, which
/// holds `my_print_defaults` (mariadb-install-db runs it).
const MARIADB_INSTALLS: &[(&str, &str)] = &[
    ("Server", "cmake_install.cmake"),
    ("Common", "cmake_install.cmake"),
    ("Client", "extra/cmake_install.cmake"),
];

/// MariaDB cmake options besides compilers and flags: no tests, no embedded server, no
/// Galera, no mariabackup, nothing downloaded at build time (system PCRE2 and libfmt), and
/// no mysql-test or sql-bench in the install.
const MARIADB_OPTIONS: &[&str] = &[
    "-DWITH_UNIT_TESTS=OFF",
    "-DCONC_WITH_UNIT_TESTS=OFF",
    "-DWITH_EMBEDDED_SERVER=OFF",
    "-DWITH_WSREP=OFF",
    "-DWITH_MARIABACKUP=OFF",
    "-DWITH_SYSTEMD=no",
    "-DWITH_PCRE=system",
    "-DWITH_LIBFMT=system",
    "-DUPDATE_SUBMODULES=OFF",
    "-DINSTALL_MYSQLTESTDIR=",
    "-DINSTALL_SQLBENCHDIR=",
];

impl Recipe {
    /// `name/version`: what the cache key records. Bump a version when that recipe's
    /// commands change, so its builds are redone.
    pub fn id(&self) -> String {
        let (name, version) = match self {
            Recipe::Autotools { .. } => ("autotools", 1),
            Recipe::Redis { .. } => ("redis", 1),
            Recipe::Postgres => ("postgres", 1),
            Recipe::Mariadb => ("mariadb", 2),
            Recipe::Sqlite => ("sqlite", 1),
        };
        format!("{name}/{version}")
    }

    /// The server binary, relative to the build dir (what [`crate::BuildInfo::binary`]
    /// points to).
    pub fn product(&self) -> PathBuf {
        match self {
            Recipe::Autotools { product } => product.clone(),
            Recipe::Redis { product } => product.clone(),
            Recipe::Postgres => Path::new(INSTALL_DIR).join("bin/postgres"),
            Recipe::Mariadb => Path::new(INSTALL_DIR).join("bin/mariadbd"),
            Recipe::Sqlite => PathBuf::from(SQLITE_PRODUCT),
        }
    }

    /// The installed tree, relative to the build dir, for recipes that install.
    pub fn install_dir(&self) -> Option<PathBuf> {
        match self {
            Recipe::Autotools { .. } | Recipe::Redis { .. } | Recipe::Sqlite => None,
            Recipe::Postgres | Recipe::Mariadb => Some(PathBuf::from(INSTALL_DIR)),
        }
    }

    /// Files that must exist (relative to the build dir) for a build to count as finished:
    /// the product first, then what the server needs beside it.
    pub fn required_files(&self) -> Vec<PathBuf> {
        let install = Path::new(INSTALL_DIR);
        let mut files = vec![self.product()];
        match self {
            Recipe::Autotools { .. } | Recipe::Redis { .. } | Recipe::Sqlite => {}
            Recipe::Postgres => files.extend(
                [
                    "bin/initdb",
                    "bin/pg_ctl",
                    "share/postgresql/postgres.bki",
                    "share/postgresql/postgresql.conf.sample",
                    "share/postgresql/timezonesets/Default",
                    "share/postgresql/timezone/UTC",
                    "lib/postgresql/plpgsql.so",
                    "lib/postgresql/dict_snowball.so",
                ]
                .map(|f| install.join(f)),
            ),
            Recipe::Mariadb => files.extend(
                [
                    "scripts/mariadb-install-db",
                    "bin/my_print_defaults",
                    "share/english/errmsg.sys",
                    "share/mysql_system_tables.sql",
                ]
                .map(|f| install.join(f)),
            ),
        }
        files
    }

    /// The layout this recipe builds, or an error naming what the tree lacks.
    pub(crate) fn layout(&self, src: &Path) -> Result<Layout> {
        let need = |file: &str, what: &str| {
            if src.join(file).is_file() {
                Ok(())
            } else {
                Err(BuildError::UnsupportedSource {
                    dir: src.display().to_string(),
                    detail: format!("the {what} recipe needs `{file}` at the top of the tree"),
                })
            }
        };
        match self {
            Recipe::Autotools { .. } | Recipe::Redis { .. } => crate::prepare::layout(src),
            Recipe::Postgres => need("configure", "postgres").map(|_| Layout::Autotools),
            Recipe::Mariadb => need("CMakeLists.txt", "mariadb").map(|_| Layout::Cmake),
            Recipe::Sqlite => need("sqlite3.c", "sqlite").map(|_| Layout::Amalgamation),
        }
    }

    /// Settings of `spec` this recipe cannot honor, as a [`BuildError::BadSpec`] naming the
    /// variant (checked before anything is built).
    pub(crate) fn check(&self, spec: &BuildSpec) -> Result<()> {
        if *self == Recipe::Sqlite && !spec.make_args.is_empty() {
            return Err(BuildError::BadSpec {
                what: "build spec",
                detail: format!(
                    "variant `{}`: the sqlite recipe runs no make, so make_args (`{}`) cannot apply: remove them and put compiler arguments in configure_args (e.g. -DSQLITE_DEFAULT_CACHE_SIZE=-8000) or cflags",
                    spec.variant,
                    spec.make_args.join(" ")
                ),
            });
        }
        Ok(())
    }
}

/// One command of a build, run from the build dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    /// What the log and a [`BuildError::BuildFailed`] call it, e.g. `make -C src/backend`.
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl Step {
    fn new(name: impl Into<String>, program: impl Into<PathBuf>, args: Vec<String>) -> Self {
        Step {
            name: name.into(),
            program: program.into(),
            args,
        }
    }
}

/// Everything the command lines depend on.
#[derive(Debug, Clone)]
pub(crate) struct Plan<'a> {
    pub spec: &'a BuildSpec,
    pub layout: Layout,
    /// The prepared source tree (configure / cmake run from outside it).
    pub src: &'a Path,
    /// The install prefix compiled into the binaries: `<entry>/build/install`.
    pub prefix: &'a Path,
    /// Where `make install` writes (`DESTDIR`).
    pub destdir: &'a Path,
    pub jobs: usize,
    /// `CC` as the build sees it (a name on PATH or an absolute path).
    pub cc: &'a str,
    /// The matching C++ compiler, if any.
    pub cxx: Option<&'a str>,
}

impl Plan<'_> {
    /// The commands of this build, in order.
    pub(crate) fn steps(&self) -> Result<Vec<Step>> {
        match &self.spec.recipe {
            Recipe::Autotools { product } => Ok(self.autotools(product)),
            Recipe::Redis { product } => Ok(self.redis(product)),
            Recipe::Postgres => Ok(self.postgres()),
            Recipe::Mariadb => self.mariadb(),
            Recipe::Sqlite => self.sqlite(),
        }
    }

    fn make(&self, parallel: bool) -> Vec<String> {
        let mut args = Vec::new();
        if parallel {
            args.push(format!("-j{}", self.jobs));
        }
        args.extend(self.spec.make_args.iter().cloned());
        args
    }

    fn destdir_arg(&self) -> String {
        format!("DESTDIR={}", self.destdir.display())
    }

    fn autotools(&self, product: &Path) -> Vec<Step> {
        let mut steps = Vec::new();
        if self.layout == Layout::Autotools {
            let args = self.spec.configure_args.clone();
            steps.push(Step::new("configure", self.src.join("configure"), args));
        }
        let mut make = self.make(true);
        if let Some(goal) = make_goal(self.layout, &self.spec.make_args, product) {
            make.push(goal);
        }
        steps.push(Step::new("make", "make", make));
        steps
    }

    /// What the build log says before the commands: choices the recipe made for the user.
    pub(crate) fn notes(&self) -> Vec<String> {
        match &self.spec.recipe {
            Recipe::Redis { .. } => self
                .system_jemalloc()
                .map(|why| {
                    format!(
                        "redis: make USE_SYSTEM_JEMALLOC=yes (the system's libjemalloc, as Debian's redis-server uses): {why}; choose another allocator with make_args, e.g. MALLOC=libc"
                    )
                })
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    fn system_jemalloc(&self) -> Option<&'static str> {
        redis_system_jemalloc(self.src, &self.spec.make_args, &self.spec.env)
    }

    /// [`Plan::autotools`] for the server (`src/redis-server`), with the system's jemalloc
    /// when the tree needs it.
    fn redis(&self, product: &Path) -> Vec<Step> {
        let mut steps = self.autotools(product);
        if self.system_jemalloc().is_some() {
            if let Some(make) = steps.last_mut() {
                make.args.push("USE_SYSTEM_JEMALLOC=yes".into());
            }
        }
        steps
    }

    fn postgres(&self) -> Vec<Step> {
        let mut configure = postgres_options(self.prefix);
        configure.extend(self.spec.configure_args.iter().cloned());
        let mut steps = vec![Step::new(
            "configure",
            self.src.join("configure"),
            configure,
        )];
        // libpq's check that nothing in it calls exit() trips on the profiling runtime an
        // instrumented build links; PostgreSQL's own coverage builds skip it the same way.
        // Not for src/backend, which builds no libpq: there the setting left the generated
        // headers unbuilt (storage/lwlocknames.h missing) when tried.
        let instrumented = matches!(self.spec.profile, Some(crate::pgo::Profile::Generate));
        let make = |parallel: bool, dir: &str| {
            let mut args = self.make(parallel);
            if instrumented && !dir.starts_with("src/backend") {
                args.push("enable_coverage=yes".into());
            }
            args
        };
        // One make per directory: PostgreSQL's subdirectory makefiles pull in what they
        // depend on (src/port, src/common, libpq, generated headers) themselves. `install`
        // runs separately after `all`, because the backend's install goal is not safe to run
        // in parallel from a clean tree.
        // The generated headers first, alone: `all` asks for them beside the subdirectories
        // it recurses into, and with -j a fresh tree compiled src/backend/access before
        // storage/lwlocknames.h was there.
        let mut headers = make(false, "src/backend");
        headers.extend(["-C", "src/backend", "generated-headers"].map(String::from));
        steps.push(Step::new("make generated-headers", "make", headers));
        for dir in POSTGRES_DIRS {
            let mut args = make(true, dir);
            args.extend(["-C".to_string(), dir.to_string()]);
            steps.push(Step::new(format!("make -C {dir}"), "make", args));
        }
        for dir in POSTGRES_DIRS {
            let mut args = make(false, dir);
            args.extend(["-C".into(), dir.to_string(), "install".into()]);
            args.push(self.destdir_arg());
            steps.push(Step::new(format!("make -C {dir} install"), "make", args));
        }
        steps
    }

    fn mariadb(&self) -> Result<Vec<Step>> {
        let cxx = self
            .spec
            .env
            .get("CXX")
            .map(String::as_str)
            .or(self.cxx)
            .ok_or_else(|| BuildError::BadSpec {
                what: "build spec",
                detail: format!(
                    "variant `{}`: MariaDB is C++ and no C++ compiler matches `{}` (e.g. g++-12 for gcc-12, clang++-16 for clang-16): install it or set CXX in the variant's env",
                    self.spec.variant, self.cc
                ),
            })?;
        let mut args = vec![
            self.src.display().to_string(),
            "-G".into(),
            "Unix Makefiles".into(),
            format!("-DCMAKE_INSTALL_PREFIX={}", self.prefix.display()),
            "-DINSTALL_LAYOUT=STANDALONE".into(),
            format!("-DCMAKE_C_COMPILER={}", self.cc),
            format!("-DCMAKE_CXX_COMPILER={cxx}"),
        ];
        args.extend(cmake_flag_args(&self.spec.cflags, &self.spec.ldflags));
        // cmake takes its archiver from its cache, not from the environment (LTO's
        // gcc-ar or llvm-ar), and reads a bare name there as a file in the build folder:
        // give it the path the name resolves to on PATH.
        for (var, cache_var) in [
            ("AR", "CMAKE_AR"),
            ("RANLIB", "CMAKE_RANLIB"),
            ("NM", "CMAKE_NM"),
        ] {
            if let Some(tool) = self.spec.env.get(var) {
                args.push(format!("-D{cache_var}={}", cmake_tool_path(tool)));
            }
        }
        args.extend(
            MARIADB_PLUGINS_OFF
                .iter()
                .map(|p| format!("-DPLUGIN_{p}=NO")),
        );
        args.extend(MARIADB_OPTIONS.iter().map(|o| o.to_string()));
        args.extend(self.spec.configure_args.iter().cloned());
        let mut steps = vec![Step::new("cmake", "cmake", args)];
        if turns_plugins_on(&self.spec.configure_args) {
            // Which files a plugin adds to the install is the plugin's: build it all.
            let mut install = self.make(false);
            install.extend(["install".to_string(), self.destdir_arg()]);
            steps.push(Step::new("make", "make", self.make(true)));
            steps.push(Step::new("make install", "make", install));
            return Ok(steps);
        }
        let mut make = self.make(true);
        make.extend(MARIADB_GOALS.iter().map(|g| g.to_string()));
        make.extend(
            MARIADB_PLUGIN_GOALS
                .iter()
                .filter(|(plugin, _)| !turns_off(&self.spec.configure_args, plugin))
                .map(|(_, goal)| goal.to_string()),
        );
        steps.push(Step::new("make", "make", make));
        for (component, script) in MARIADB_INSTALLS {
            let args = vec![
                self.destdir_arg(),
                "cmake".into(),
                format!("-DCOMPONENT={component}"),
                "-P".into(),
                script.to_string(),
            ];
            steps.push(Step::new(format!("install {component}"), "env", args));
        }
        Ok(steps)
    }

    /// One compiler command (see the module doc). `CC`, `CFLAGS` and `LDFLAGS` are what the
    /// build environment holds: the variant env's when it sets them, else the compiler and
    /// the spec's flags.
    fn sqlite(&self) -> Result<Vec<Step>> {
        self.spec.recipe.check(self.spec)?;
        let env = |name: &str| self.spec.env.get(name).map(String::as_str);
        let cc = env("CC")
            .filter(|c| !c.trim().is_empty())
            .unwrap_or(self.cc);
        let cflags = env("CFLAGS").unwrap_or(&self.spec.cflags);
        let ldflags = env("LDFLAGS").unwrap_or(&self.spec.ldflags);
        let words =
            |text: &str| -> Vec<String> { text.split_whitespace().map(str::to_string).collect() };
        let cc = words(cc);
        let (program, mut args) = match cc.split_first() {
            Some((program, rest)) => (program.clone(), rest.to_vec()),
            None => (self.cc.to_string(), Vec::new()),
        };
        match words(cflags) {
            flags if flags.is_empty() => args.push("-O2".into()),
            flags => args.extend(flags),
        }
        args.extend(SQLITE_OPTIONS.iter().map(|o| o.to_string()));
        args.extend(self.spec.configure_args.iter().cloned());
        args.extend([
            "-o".to_string(),
            SQLITE_PRODUCT.to_string(),
            self.src.join("sqlite3.c").display().to_string(),
        ]);
        args.extend(words(ldflags));
        args.extend(SQLITE_LIBS.iter().map(|l| l.to_string()));
        Ok(vec![Step::new("compile", program, args)])
    }
}

/// `-DPLUGIN_<NAME>=<HOW>` arguments in configure_args, as `(NAME, whether HOW is NO)`.
fn plugin_settings(configure_args: &[String]) -> impl Iterator<Item = (&str, bool)> {
    configure_args.iter().filter_map(|a| {
        let (name, how) = a.strip_prefix("-DPLUGIN_")?.split_once('=')?;
        let name = name.split(':').next().unwrap_or(name);
        Some((
            name,
            matches!(how.to_ascii_uppercase().as_str(), "NO" | "OFF"),
        ))
    })
}

/// Whether configure_args turn a plugin on (`-DPLUGIN_X=...` other than NO/OFF): its
/// files are then the plugin's to name, so the build is the whole tree's.
fn turns_plugins_on(configure_args: &[String]) -> bool {
    plugin_settings(configure_args).any(|(_, off)| !off)
}

/// Whether configure_args turn `plugin` off.
fn turns_off(configure_args: &[String], plugin: &str) -> bool {
    plugin_settings(configure_args).any(|(name, off)| off && name.eq_ignore_ascii_case(plugin))
}

/// cmake arguments for the variant's flags. With cflags, the build type is `Release` with
/// its flags reduced to `-DNDEBUG`, so the variant's `-O` is the only optimization level
/// (cmake puts the build type's flags after `CMAKE_C_FLAGS`, and RelWithDebInfo's `-O2`
/// would win); C++ gets the same flags. Without cflags, MariaDB's default (RelWithDebInfo:
/// `-O2 -g -DNDEBUG`) applies, as autoconf's default does for the other recipes.
fn cmake_flag_args(cflags: &str, ldflags: &str) -> Vec<String> {
    let mut args = Vec::new();
    if !cflags.is_empty() {
        args.extend([
            "-DCMAKE_BUILD_TYPE=Release".to_string(),
            "-DCMAKE_C_FLAGS_RELEASE=-DNDEBUG".into(),
            "-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG".into(),
            format!("-DCMAKE_C_FLAGS={cflags}"),
            format!("-DCMAKE_CXX_FLAGS={cflags}"),
        ]);
    }
    if !ldflags.is_empty() {
        for kind in ["EXE", "SHARED", "MODULE"] {
            args.push(format!("-DCMAKE_{kind}_LINKER_FLAGS={ldflags}"));
        }
    }
    args
}

/// For autotools builds, `make` builds only the product (e.g. `make memcached`), unless the
/// variant's make_args name a goal themselves (an argument that is neither an option nor a
/// `VAR=value`). Building only the product skips test and debug programs: memcached's default
/// goal also links `memcached-debug` with `-fprofile-arcs`, which fails with clang when its
/// profile runtime is not installed. Plain-make trees keep their default goal.
fn make_goal(layout: Layout, make_args: &[String], product: &Path) -> Option<String> {
    let names_goal = make_args
        .iter()
        .any(|a| !a.starts_with('-') && !a.contains('='));
    (layout == Layout::Autotools && !names_goal).then(|| product.display().to_string())
}

/// A tool named in a variant's environment, as cmake's cache wants it: a bare name is
/// resolved on PATH (cmake would read it as a file in the build folder); a path, or a
/// name that resolves to nothing, is kept as given.
fn cmake_tool_path(tool: &str) -> String {
    if tool.contains('/') {
        return tool.to_string();
    }
    bakeoff_os::path::which(tool)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| tool.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(recipe: Recipe, cflags: &str, ldflags: &str) -> BuildSpec {
        BuildSpec {
            variant: "v".into(),
            compiler: "clang-16".into(),
            cflags: cflags.into(),
            ldflags: ldflags.into(),
            configure_args: vec!["--user-arg".into()],
            make_args: vec!["V=1".into()],
            recipe,
            ..BuildSpec::default()
        }
    }

    fn plan<'a>(spec: &'a BuildSpec, layout: Layout) -> Plan<'a> {
        Plan {
            spec,
            layout,
            src: Path::new("/src"),
            prefix: Path::new("/cache/builds/k/build/install"),
            destdir: Path::new("/cache/builds/k.tmp-1/destdir"),
            jobs: 2,
            cc: "clang-16",
            cxx: Some("clang++-16"),
        }
    }

    /// Each step as one line: `program arg arg ...`.
    fn lines(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| {
                let mut line = s.program.display().to_string();
                for a in &s.args {
                    line.push(' ');
                    line.push_str(a);
                }
                line
            })
            .collect()
    }

    #[test]
    fn kinds_map_to_recipes_and_products() {
        assert_eq!(
            Recipe::autotools("memcached"),
            Recipe::Autotools {
                product: "memcached".into()
            }
        );
        assert_eq!(
            Recipe::autotools("memcached").product(),
            Path::new("memcached")
        );
        assert_eq!(Recipe::Postgres, Recipe::Postgres);
        assert_eq!(
            Recipe::Postgres.product(),
            Path::new("install/bin/postgres")
        );
        assert_eq!(Recipe::Mariadb, Recipe::Mariadb);
        assert_eq!(Recipe::Mariadb.product(), Path::new("install/bin/mariadbd"));
        assert_eq!(Recipe::Sqlite, Recipe::Sqlite);
        assert_eq!(Recipe::Sqlite.product(), Path::new("libsqlite3.so"));
        assert_eq!(Recipe::autotools("memcached").install_dir(), None);
        assert_eq!(Recipe::Sqlite.install_dir(), None);
        assert_eq!(
            Recipe::Postgres.install_dir().as_deref(),
            Some(Path::new("install"))
        );
        let ids = [
            Recipe::default().id(),
            Recipe::Postgres.id(),
            Recipe::Mariadb.id(),
            Recipe::Sqlite.id(),
        ];
        assert_eq!(ids, ["autotools/1", "postgres/1", "mariadb/2", "sqlite/1"]);
    }

    #[test]
    fn required_files_start_with_the_product() {
        for r in [
            Recipe::autotools("memcached"),
            Recipe::redis("src/redis-server"),
            Recipe::Postgres,
            Recipe::Mariadb,
            Recipe::Sqlite,
        ] {
            assert_eq!(r.required_files()[0], r.product());
        }
        assert_eq!(
            Recipe::Sqlite.required_files(),
            [PathBuf::from("libsqlite3.so")]
        );
        let pg = Recipe::Postgres.required_files();
        assert!(pg.contains(&PathBuf::from("install/bin/initdb")), "{pg:?}");
        let mdb = Recipe::Mariadb.required_files();
        assert!(mdb.contains(&PathBuf::from("install/scripts/mariadb-install-db")));
    }

    #[test]
    fn autotools_command_lines() {
        let s = spec(Recipe::autotools("memcached"), "-O2", "");
        let steps = plan(&s, Layout::Autotools).steps().unwrap();
        assert_eq!(
            lines(&steps),
            ["/src/configure --user-arg", "make -j2 V=1 memcached"]
        );
        assert_eq!(steps[0].name, "configure");
        assert_eq!(steps[1].name, "make");
        let steps = plan(&s, Layout::Make).steps().unwrap();
        assert_eq!(lines(&steps), ["make -j2 V=1"]);
    }

    #[test]
    fn goal_is_the_product_unless_make_args_name_one() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let p = Path::new("memcached");
        assert_eq!(
            make_goal(Layout::Autotools, &[], p).as_deref(),
            Some("memcached")
        );
        assert_eq!(
            make_goal(Layout::Autotools, &args(&["V=1", "-k"]), p).as_deref(),
            Some("memcached")
        );
        assert_eq!(make_goal(Layout::Autotools, &args(&["all"]), p), None);
        assert_eq!(make_goal(Layout::Make, &[], p), None);
    }

    #[test]
    fn postgres_command_lines() {
        let s = spec(Recipe::Postgres, "-O2", "");
        let l = lines(&plan(&s, Layout::Autotools).steps().unwrap());
        assert_eq!(
            l[0],
            "/src/configure --prefix=/cache/builds/k/build/install \
             --libdir=/cache/builds/k/build/install/lib/postgresql \
             --without-readline --without-zlib --without-icu --user-arg"
        );
        assert_eq!(l[1], "make V=1 -C src/backend generated-headers");
        assert_eq!(l[2], "make -j2 V=1 -C src/backend");
        assert_eq!(l[7], "make -j2 V=1 -C src/bin/initdb");
        assert_eq!(
            l[9],
            "make V=1 -C src/backend install DESTDIR=/cache/builds/k.tmp-1/destdir"
        );
        assert_eq!(l.len(), 2 + 2 * POSTGRES_DIRS.len());
        assert!(l.iter().any(|c| c.contains("-C src/pl/plpgsql install")));
        assert!(l.iter().any(|c| c.contains("-C src/timezone install")));
    }

    #[test]
    fn redis_takes_the_systems_jemalloc_only_when_its_tree_needs_it() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path();
        std::fs::write(src.join("Makefile"), "").unwrap();
        let mut s = spec(Recipe::redis("src/redis-server"), "-O2", "");
        let make = |s: &BuildSpec| {
            let mut p = plan(s, Layout::Make);
            p.src = src;
            (lines(&p.steps().unwrap()), p.notes())
        };
        // No deps/jemalloc (or an empty one): the system's, and the log says why.
        let (l, notes) = make(&s);
        assert_eq!(l, ["make -j2 V=1 USE_SYSTEM_JEMALLOC=yes"]);
        assert!(notes[0].contains("no bundled jemalloc"), "{notes:?}");
        std::fs::create_dir_all(src.join("deps/jemalloc")).unwrap();
        assert_eq!(make(&s).0, ["make -j2 V=1 USE_SYSTEM_JEMALLOC=yes"]);
        // A bundled one that links (upstream's tree): as asked.
        std::fs::write(src.join("deps/jemalloc/configure"), "").unwrap();
        assert_eq!(make(&s), (vec!["make -j2 V=1".to_string()], vec![]));
        // Debian's tree: its rules pass the flag, its patched source needs it.
        std::fs::create_dir_all(src.join("debian")).unwrap();
        std::fs::write(
            src.join("debian/rules"),
            "\tdh_auto_build -- V=1 USE_SYSTEM_JEMALLOC=yes USE_SYSTEMD=yes\n",
        )
        .unwrap();
        let (l, notes) = make(&s);
        assert_eq!(l, ["make -j2 V=1 USE_SYSTEM_JEMALLOC=yes"]);
        assert!(notes[0].contains("debian/rules"), "{notes:?}");
        // An allocator the user chose, in make_args or the env, is kept as it is.
        for chosen in ["MALLOC=libc", "USE_SYSTEM_JEMALLOC=no", "USE_JEMALLOC=no"] {
            s.make_args = vec![chosen.into()];
            assert_eq!(make(&s), (vec![format!("make -j2 {chosen}")], vec![]));
        }
        s.make_args.clear();
        s.env.insert("MALLOC".into(), "libc".into());
        assert_eq!(make(&s), (vec!["make -j2".to_string()], vec![]));
        let redis = Recipe::redis("src/redis-server");
        assert_eq!(redis.product(), Path::new("src/redis-server"));
        assert_eq!(redis.id(), "redis/1");
        // Redis's product stays out of its cache key (builds made before it was a
        // parameter keep their key); another product is in it.
        assert_eq!(
            serde_json::to_string(&redis).unwrap(),
            r#"{"recipe":"redis"}"#
        );
        let valkey = Recipe::redis("src/valkey-server");
        assert_eq!(
            serde_json::to_string(&valkey).unwrap(),
            r#"{"recipe":"redis","product":"src/valkey-server"}"#
        );
        assert_eq!(
            serde_json::from_str::<Recipe>(r#"{"recipe":"redis"}"#).unwrap(),
            redis
        );
    }

    #[test]
    fn mariadb_command_lines() {
        let s = spec(Recipe::Mariadb, "-O3 -march=native", "-fuse-ld=lld");
        let steps = plan(&s, Layout::Cmake).steps().unwrap();
        let names: Vec<_> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cmake",
                "make",
                "install Server",
                "install Common",
                "install Client"
            ]
        );
        let cmake = &steps[0].args;
        let has = |a: &str| cmake.iter().any(|x| x == a);
        assert_eq!(cmake[0], "/src");
        for want in [
            "-DCMAKE_INSTALL_PREFIX=/cache/builds/k/build/install",
            "-DCMAKE_C_COMPILER=clang-16",
            "-DCMAKE_CXX_COMPILER=clang++-16",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_C_FLAGS_RELEASE=-DNDEBUG",
            "-DCMAKE_C_FLAGS=-O3 -march=native",
            "-DCMAKE_CXX_FLAGS=-O3 -march=native",
            "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld",
            "-DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld",
            "-DPLUGIN_ROCKSDB=NO",
            "-DPLUGIN_COLUMNSTORE=NO",
            "-DPLUGIN_MROONGA=NO",
            "-DPLUGIN_SPIDER=NO",
            "-DWITH_UNIT_TESTS=OFF",
            "-DWITH_EMBEDDED_SERVER=OFF",
            "-DWITH_WSREP=OFF",
            "-DINSTALL_MYSQLTESTDIR=",
        ] {
            assert!(has(want), "missing {want} in {cmake:?}");
        }
        assert_eq!(cmake.last().unwrap(), "--user-arg", "user args come last");
        assert!(!has("-DPLUGIN_INNOBASE=NO"));
        assert!(has("-DPLUGIN_QUERY_RESPONSE_TIME=NO"));
        let l = lines(&steps);
        assert!(
            l[1].starts_with("make -j2 V=1 mariadbd my_print_defaults resolveip "),
            "{}",
            l[1]
        );
        assert_eq!(
            l[2],
            "env DESTDIR=/cache/builds/k.tmp-1/destdir cmake -DCOMPONENT=Server -P cmake_install.cmake"
        );
        assert_eq!(
            l[4],
            "env DESTDIR=/cache/builds/k.tmp-1/destdir cmake -DCOMPONENT=Client -P extra/cmake_install.cmake"
        );
    }

    #[test]
    fn mariadb_with_a_plugin_turned_on_builds_everything() {
        let mut s = spec(Recipe::Mariadb, "-O2", "");
        s.configure_args = vec!["-DPLUGIN_ROCKSDB=DYNAMIC".into()];
        let l = lines(&plan(&s, Layout::Cmake).steps().unwrap());
        assert_eq!(l[1], "make -j2 V=1");
        assert_eq!(
            l[2],
            "make V=1 install DESTDIR=/cache/builds/k.tmp-1/destdir"
        );
        // Turning one more off keeps the server-only build, without that plugin.
        let l = lines(
            &plan(&spec(Recipe::Mariadb, "-O2", ""), Layout::Cmake)
                .steps()
                .unwrap(),
        );
        assert!(
            l[1].ends_with(" blackhole file_key_management server_audit"),
            "{}",
            l[1]
        );
        s.configure_args = vec!["-DPLUGIN_BLACKHOLE=NO".into()];
        let l = lines(&plan(&s, Layout::Cmake).steps().unwrap());
        assert!(l[1].contains(" mariadbd "), "{}", l[1]);
        assert!(!l[1].contains("blackhole"), "{}", l[1]);
    }

    #[test]
    fn mariadb_without_flags_keeps_the_project_default() {
        let s = spec(Recipe::Mariadb, "", "");
        let steps = plan(&s, Layout::Cmake).steps().unwrap();
        assert!(!steps[0]
            .args
            .iter()
            .any(|a| a.starts_with("-DCMAKE_BUILD_TYPE")
                || a.starts_with("-DCMAKE_C_FLAGS")
                || a.contains("LINKER_FLAGS")));
    }

    #[test]
    fn mariadb_needs_a_cxx_compiler() {
        let s = spec(Recipe::Mariadb, "-O2", "");
        let mut p = plan(&s, Layout::Cmake);
        p.cxx = None;
        let err = p.steps().unwrap_err();
        assert!(err.to_string().contains("C++"), "{err}");
        let mut s = s.clone();
        s.env.insert("CXX".into(), "g++-12".into());
        let mut p = plan(&s, Layout::Cmake);
        p.cxx = None;
        let steps = p.steps().unwrap();
        assert!(steps[0]
            .args
            .contains(&"-DCMAKE_CXX_COMPILER=g++-12".to_string()));
    }

    #[test]
    fn layouts_are_checked_per_recipe() {
        let tmp = tempfile::tempdir().unwrap();
        let err = Recipe::Mariadb.layout(tmp.path()).unwrap_err();
        assert!(err.to_string().contains("CMakeLists.txt"), "{err}");
        assert!(Recipe::Postgres.layout(tmp.path()).is_err());
        std::fs::write(tmp.path().join("CMakeLists.txt"), "").unwrap();
        assert_eq!(Recipe::Mariadb.layout(tmp.path()).unwrap(), Layout::Cmake);
        std::fs::write(tmp.path().join("configure"), "").unwrap();
        assert_eq!(
            Recipe::Postgres.layout(tmp.path()).unwrap(),
            Layout::Autotools
        );
        let err = Recipe::Sqlite.layout(tmp.path()).unwrap_err();
        assert!(
            err.to_string()
                .contains("the sqlite recipe needs `sqlite3.c` at the top of the tree"),
            "{err}"
        );
        std::fs::write(tmp.path().join("sqlite3.c"), "").unwrap();
        assert_eq!(
            Recipe::Sqlite.layout(tmp.path()).unwrap(),
            Layout::Amalgamation
        );
    }

    fn sqlite_spec(cflags: &str, ldflags: &str, configure_args: &[&str]) -> BuildSpec {
        BuildSpec {
            variant: "sq".into(),
            compiler: "clang-16".into(),
            cflags: cflags.into(),
            ldflags: ldflags.into(),
            configure_args: configure_args.iter().map(|a| a.to_string()).collect(),
            recipe: Recipe::Sqlite,
            ..BuildSpec::default()
        }
    }

    #[test]
    fn sqlite_command_line_defaults_to_o2() {
        let s = sqlite_spec("", "", &[]);
        let steps = plan(&s, Layout::Amalgamation).steps().unwrap();
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].name, "compile");
        assert_eq!(
            lines(&steps),
            [
                "clang-16 -O2 -fPIC -shared -DSQLITE_THREADSAFE=1 -o libsqlite3.so /src/sqlite3.c \
                 -lpthread -ldl -lm"
            ]
        );
    }

    #[test]
    fn sqlite_command_line_uses_flags_and_appends_configure_args() {
        let s = sqlite_spec(
            "-O3  -march=native",
            "-fuse-ld=lld -flto",
            &[
                "-DSQLITE_DEFAULT_CACHE_SIZE=-8000",
                "-DSQLITE_CASE_SENSITIVE_LIKE",
            ],
        );
        let steps = plan(&s, Layout::Amalgamation).steps().unwrap();
        assert_eq!(steps[0].program, Path::new("clang-16"));
        assert_eq!(
            lines(&steps),
            [
                "clang-16 -O3 -march=native -fPIC -shared -DSQLITE_THREADSAFE=1 \
                 -DSQLITE_DEFAULT_CACHE_SIZE=-8000 -DSQLITE_CASE_SENSITIVE_LIKE \
                 -o libsqlite3.so /src/sqlite3.c -fuse-ld=lld -flto -lpthread -ldl -lm"
            ]
        );
    }

    #[test]
    fn sqlite_command_line_follows_the_variant_env() {
        let mut s = sqlite_spec("-O1", "-s", &[]);
        s.env.insert("CC".into(), "ccache gcc-12".into());
        s.env.insert("CFLAGS".into(), "-Os -g".into());
        s.env.insert("LDFLAGS".into(), String::new());
        let l = lines(&plan(&s, Layout::Amalgamation).steps().unwrap());
        assert_eq!(
            l,
            [
                "ccache gcc-12 -Os -g -fPIC -shared -DSQLITE_THREADSAFE=1 -o libsqlite3.so \
                 /src/sqlite3.c -lpthread -ldl -lm"
            ]
        );
    }

    #[test]
    fn sqlite_rejects_make_args() {
        let mut s = sqlite_spec("-O2", "", &[]);
        s.make_args = vec!["V=1".into()];
        let err = plan(&s, Layout::Amalgamation).steps().unwrap_err();
        assert!(matches!(err, BuildError::BadSpec { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("variant `sq`") && msg.contains("make_args (`V=1`)"),
            "{msg}"
        );
        assert!(Recipe::Sqlite.check(&s).is_err());
        assert!(Recipe::Postgres.check(&s).is_ok());
    }

    #[test]
    fn cmake_gets_the_path_of_a_tool_named_by_its_bare_name() {
        // `sh` is on every PATH; cmake would look for a bare "sh" in the build folder.
        let sh = cmake_tool_path("sh");
        assert!(sh.starts_with('/') && sh.ends_with("/sh"), "{sh}");
        assert_eq!(cmake_tool_path("/opt/x/llvm-ar"), "/opt/x/llvm-ar");
        assert_eq!(cmake_tool_path("no-such-tool-here"), "no-such-tool-here");
    }
}

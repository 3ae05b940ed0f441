//! The server: `Server::bind` loads the library, opens the database once (reporting
//! pragmas that fail) and binds TCP 127.0.0.1:PORT (and a unix socket if asked);
//! `Server::run` accepts clients, each on its own thread with its own connection. A
//! connection thread that fails or panics ends alone; the process goes on.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::database::Database;
use crate::ffi::sqlite::Library;
use crate::session;
use crate::stmtstats::StmtStats;

/// What to serve and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The SQLite shared library to dlopen.
    pub library: PathBuf,
    /// The database file (created if missing).
    pub database: PathBuf,
    /// TCP port on 127.0.0.1; 0 picks a free one (see [`Server::port`]).
    pub port: u16,
    /// Also listen on this unix socket path (a stale socket file is replaced).
    pub socket: Option<PathBuf>,
    /// `PRAGMA name=value` run on every new connection, in order.
    pub pragmas: Vec<(String, String)>,
    /// Keep per-statement counters (`--stmt-stats`; see `stmtstats`).
    pub stmt_stats: bool,
}

/// Why the server could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    /// The library cannot be loaded, lacks a symbol, or is not thread-safe.
    Library(String),
    /// The database cannot be opened.
    Database(String),
    /// A listening socket cannot be bound (the OS error is in the text).
    Bind(String),
}

impl StartError {
    /// The binary's exit status: 2 for the library, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            StartError::Library(_) => 2,
            StartError::Database(_) | StartError::Bind(_) => 1,
        }
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::Library(s) | StartError::Database(s) | StartError::Bind(s) => {
                f.write_str(s)
            }
        }
    }
}

impl std::error::Error for StartError {}

/// A bound server, not yet accepting.
pub struct Server {
    db: Arc<Database>,
    tcp: TcpListener,
    port: u16,
    unix: Option<(UnixListener, PathBuf)>,
}

fn load_library(path: &Path) -> Result<Library, StartError> {
    let lib = Library::load(path).map_err(StartError::Library)?;
    if !lib.threadsafe() {
        return Err(StartError::Library(format!(
            "SQLite library {} was built with SQLITE_THREADSAFE=0; bakeoff-sqlited runs a thread per connection and needs a thread-safe build",
            lib.path()
        )));
    }
    Ok(lib)
}

/// Binds the unix socket at `path`, replacing a stale socket file.
fn bind_unix(path: &Path) -> Result<UnixListener, StartError> {
    let fail = |e: io::Error| StartError::Bind(format!("cannot listen on {}: {e}", path.display()));
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_socket() {
            std::fs::remove_file(path).map_err(fail)?;
        }
    }
    UnixListener::bind(path).map_err(fail)
}

impl Server {
    /// Loads the library, opens the database once (printing a line to stderr for each
    /// pragma that fails there) and binds the listening sockets.
    pub fn bind(config: Config) -> Result<Server, StartError> {
        let library = load_library(&config.library)?;
        let stats = config
            .stmt_stats
            .then(|| StmtStats::new(library.stmt_counters()));
        let db = Database {
            stats,
            library: Arc::new(library),
            path: config.database,
            pragmas: config
                .pragmas
                .iter()
                .map(|(name, value)| format!("PRAGMA {name}={value}"))
                .collect(),
        };
        let (first, failed) = db.open_checked().map_err(|e| {
            StartError::Database(format!(
                "cannot open database {}: {}",
                db.path.display(),
                e.message
            ))
        })?;
        drop(first);
        for f in failed {
            eprintln!("bakeoff-sqlited: {f}");
        }
        let tcp = TcpListener::bind(("127.0.0.1", config.port)).map_err(|e| {
            StartError::Bind(format!("cannot listen on 127.0.0.1:{}: {e}", config.port))
        })?;
        let port = tcp
            .local_addr()
            .map_err(|e| StartError::Bind(e.to_string()))?
            .port();
        let unix = match config.socket {
            Some(path) => Some((bind_unix(&path)?, path)),
            None => None,
        };
        Ok(Server {
            db: Arc::new(db),
            tcp,
            port,
            unix,
        })
    }

    /// The TCP port (the one picked when the config asked for 0).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The unix socket path, if listening on one.
    pub fn socket_path(&self) -> Option<&Path> {
        self.unix.as_ref().map(|(_, p)| p.as_path())
    }

    /// The start-up line: library version and path, database, addresses.
    pub fn banner(&self) -> String {
        let lib = &self.db.library;
        let mut s = format!(
            "bakeoff-sqlited: SQLite {} from {}, database {}, listening on 127.0.0.1:{}",
            lib.version(),
            lib.path(),
            self.db.path.display(),
            self.port
        );
        if let Some(p) = self.socket_path() {
            s.push_str(&format!(" and {}", p.display()));
        }
        s
    }

    /// Accepts clients forever, each on a new thread (unix socket clients through a
    /// second accepting thread).
    pub fn run(self) {
        if let Some((unix, _)) = self.unix {
            let db = self.db.clone();
            let spawned = std::thread::Builder::new()
                .name("sqlited-unix".into())
                .spawn(move || accept_loop(&db, || unix.accept().map(|(s, _)| s)));
            if let Err(e) = spawned {
                eprintln!("bakeoff-sqlited: cannot start the unix socket thread: {e}");
            }
        }
        let tcp = self.tcp;
        accept_loop(&self.db, || {
            let (s, _) = tcp.accept()?;
            let _ = s.set_nodelay(true);
            Ok(s)
        });
    }
}

/// A client socket that can be split into a reading and a writing end.
trait Socket: Read + Write + Send + Sized + 'static {
    fn split(&self) -> io::Result<Self>;
}

impl Socket for TcpStream {
    fn split(&self) -> io::Result<Self> {
        self.try_clone()
    }
}

impl Socket for UnixStream {
    fn split(&self) -> io::Result<Self> {
        self.try_clone()
    }
}

fn accept_loop<S: Socket>(db: &Arc<Database>, mut accept: impl FnMut() -> io::Result<S>) {
    loop {
        match accept() {
            Ok(s) => spawn_session(db, s),
            Err(e) => {
                // Out of descriptors or similar: say so and let clients leave.
                eprintln!("bakeoff-sqlited: accept: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// The BackendKeyData secret of the next client.
fn next_key() -> i32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed) as i32
}

fn spawn_session<S: Socket>(db: &Arc<Database>, socket: S) {
    let db = db.clone();
    let key = next_key();
    let spawned = std::thread::Builder::new()
        .name("sqlited-conn".into())
        .spawn(move || {
            if let Ok(reader) = socket.split() {
                // I/O errors only mean the client is gone.
                let _ = session::serve(&db, key, reader, socket);
            }
        });
    if let Err(e) = spawned {
        eprintln!("bakeoff-sqlited: cannot start a connection thread: {e}");
    }
}

//! bakeoff-sqlited: SQLite served like a database server. One process loads one SQLite
//! shared library with dlopen, opens one database file, and serves clients over loopback
//! (TCP, optionally a unix socket) with the PostgreSQL wire protocol (v3), so bakeoff's
//! PostgreSQL clients drive it unchanged. Each client gets a thread and its own
//! `sqlite3*` on the file.
//!
//! Layout: `cli` (arguments), `server` (bind, accept, a thread per client), `session`
//! (startup and the message loop, simple queries), `extended` (Parse/Bind/Describe/
//! Execute/Close), `exec` (rows out), `params` (Bind values in), `tag` (command tags), `dialect` (PostgreSQL's BEGIN forms),
//! `error` (SQLSTATEs), `wire` (framing), `database` (opening a connection with the
//! pragmas), `stmtstats` (per-statement counters with `--stmt-stats`, read by `SHOW
//! bakeoff.statements`), and `ffi`, which holds every `unsafe` line (SQLite through dlopen, signals).

mod cli;
mod database;
mod dialect;
mod error;
mod exec;
mod extended;
mod ffi;
mod params;
mod server;
mod session;
mod stmtstats;
mod tag;
mod wire;

pub use cli::{parse, Parsed, USAGE};
pub use server::{Config, Server, StartError};

use ffi::signals;

/// The `bakeoff-sqlited` binary: parses the arguments, binds, prints the start-up line,
/// serves until SIGTERM or SIGINT. Returns the exit status: 0 after a signal, 1 if a
/// socket or the database cannot be opened, 2 for bad arguments or an unusable library.
pub fn main() -> i32 {
    let config = match cli::parse(std::env::args_os().skip(1)) {
        Ok(Parsed::Run(config)) => config,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprintln!("bakeoff-sqlited: {e} ({USAGE})");
            return 2;
        }
    };
    // Before any thread exists, so that every thread inherits the mask.
    if let Err(e) = signals::block_termination() {
        eprintln!("bakeoff-sqlited: cannot block SIGTERM/SIGINT: {e}");
        return 1;
    }
    let server = match Server::bind(config) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("bakeoff-sqlited: {e}");
            return e.exit_code();
        }
    };
    eprintln!("{}", server.banner());
    let socket = server.socket_path().map(std::path::Path::to_path_buf);
    let spawned = std::thread::Builder::new()
        .name("sqlited-accept".into())
        .spawn(move || server.run());
    if let Err(e) = spawned {
        eprintln!("bakeoff-sqlited: cannot start the accepting thread: {e}");
        return 1;
    }
    let status = match signals::wait_for_termination() {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("bakeoff-sqlited: waiting for signals: {e}");
            1
        }
    };
    if let Some(path) = socket {
        let _ = std::fs::remove_file(path);
    }
    status
}

//! Every `unsafe` line of the crate: the SQLite C API loaded with dlopen (`sqlite`) and
//! the SIGTERM/SIGINT wait of the binary (`signals`). The rest of the crate only sees
//! their safe wrappers.

pub mod signals;
pub mod sqlite;

//! `bakeoff-sqlited`: one SQLite library and database file served over the PostgreSQL
//! wire protocol on loopback, so bakeoff measures SQLite like its other servers. All of
//! it lives in the `bakeoff-sqlited` crate (crates/sqlited).

fn main() {
    std::process::exit(bakeoff_sqlited::main())
}

//! The SQL each server speaks, behind one interface: [`SqlDialect`], one implementation
//! per server (`postgres.rs`, `sqlite.rs`, and the mysqld family's `mysqld.rs`, written
//! once for MariaDB and MySQL, whose files hold only their [`MysqldFork`] answers),
//! reached from a [`Dialect`] value with [`Dialect::sql`]. The workloads ask it for every piece of SQL text that
//! differs between servers (column types, engine clauses, `ANALYZE`, `DROP INDEX`,
//! SQL-level `PREPARE`, `EXPLAIN`, bulk-load settings and formats, parameter markers,
//! string literals, snapshot transactions) and never match on the server themselves.
//!
//! Adding a SQL server: a variant of [`Dialect`] (and its wire protocol, [`Wire`]), a
//! file here implementing [`SqlDialect`], and one arm in [`Dialect::sql`]; the compiler
//! asks for every method the workloads use. Methods without a default are the ones
//! where the servers bakeoff knows disagree; the defaults are standard SQL.
//!
//! The texts are pinned per server by the tests at the end of this file: the workloads'
//! SQL before this interface existed, byte for byte.

mod mariadb;
mod mysql;
mod mysqld;
mod postgres;
mod sqlite;

pub use mariadb::MariaDb;
pub use mysql::Mysql;
pub use mysqld::MysqldFork;
pub use postgres::Postgres;
pub use sqlite::Sqlite;

use crate::db::{Dialect, Wire};

impl Dialect {
    /// The server's SQL: what every workload asks instead of matching on the dialect.
    pub fn sql(self) -> &'static dyn SqlDialect {
        match self {
            Dialect::Mariadb => &MariaDb,
            Dialect::Mysql => &Mysql,
            Dialect::Postgres => &Postgres,
            Dialect::Sqlite => &Sqlite,
        }
    }

    /// The wire protocol the server speaks (what an external tool's driver must speak).
    pub fn wire(self) -> Wire {
        match self {
            Dialect::Mariadb | Dialect::Mysql => Wire::Mysql,
            Dialect::Postgres | Dialect::Sqlite => Wire::Postgres,
        }
    }
}

/// How a server takes many generated rows fastest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkLoad {
    /// `COPY table (columns) FROM STDIN` over the PostgreSQL protocol, as a text or
    /// binary stream (`Client::copy_in`).
    Copy,
    /// One `INSERT INTO table (columns) VALUES (..), (..), ..` statement per batch.
    MultiRowInsert,
}

/// A session setting a load may ask for; [`SqlDialect::session_setting`] spells it, or
/// says the server has no such setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting<'a> {
    /// Commits return before their log records reach the disk (a load redone after a
    /// crash loses nothing).
    NoCommitFlush,
    /// No per-row unique-key and foreign-key checks (rows unique by construction).
    NoConstraintChecks,
    /// Memory for the sorts of index and key builds in this session, in MB.
    IndexBuildMemoryMb(u32),
    /// Index and key builds in this session's backend only, without parallel workers.
    SerialIndexBuilds,
    /// The statistics target for `ANALYZE` in this session (how many rows it samples).
    StatisticsTarget(u32),
    /// The storage engine `CREATE TABLE` uses when it names none.
    StorageEngine(&'a str),
    /// A statement running longer than this many milliseconds is stopped by the server.
    StatementTimeoutMs(u64),
}

/// Every SQL text difference the workloads need, named for what it means. One
/// implementation per server; `&'static dyn SqlDialect` from [`Dialect::sql`].
pub trait SqlDialect: Sync {
    /// The dialect's short name, as `Dialect::as_str` gives it (`mysql`, `postgres`,
    /// `sqlite`).
    fn name(&self) -> &'static str;

    // ------------------------------------------------------------ statements

    /// `sql` written with `?` parameter markers, as the server's prepared statements
    /// want them: `?` (MariaDB) or `$1, $2, ..` (the PostgreSQL protocol).
    fn placeholders(&self, sql: &str) -> String;

    /// Appends `s` as a string literal (`'...'`) to `out`, escaped as the server reads
    /// it. The default is standard SQL: a quote is doubled, nothing else is special.
    fn push_string_literal(&self, out: &mut Vec<u8>, s: &[u8]) {
        out.push(b'\'');
        for &b in s {
            match b {
                b'\'' => out.extend_from_slice(b"''"),
                _ => out.push(b),
            }
        }
        out.push(b'\'');
    }

    /// [`SqlDialect::push_string_literal`] as a `String`.
    fn string_literal(&self, s: &str) -> String {
        let mut out = Vec::with_capacity(s.len() + 2);
        self.push_string_literal(&mut out, s.as_bytes());
        // Escapes are ASCII: the text stays UTF-8.
        String::from_utf8(out).expect("escaping keeps UTF-8")
    }

    /// Whether one query text may carry several statements separated by `;` (the
    /// PostgreSQL protocol's simple query; bakeoff's MariaDB client does not ask for
    /// multi-statements).
    fn multi_statement_queries(&self) -> bool;

    /// The statements that open a read-only transaction reading one consistent snapshot
    /// (repeatable read), for checks that run several queries over the same data.
    fn begin_read_only_snapshot(&self) -> &'static [&'static str];

    /// A date (`YYYY-MM-DD`) as a literal the server compares with its date columns:
    /// `DATE '..'` in standard SQL.
    fn date_literal(&self, ymd: &str) -> String {
        format!("DATE '{ymd}'")
    }

    /// The statement whose rows show the server's plan for `sql`.
    fn explain(&self, sql: &str) -> String {
        format!("EXPLAIN {sql}")
    }

    /// The query that returns the size in bytes of the largest statement the server
    /// accepts (MariaDB's `max_allowed_packet`), if it has such a limit.
    fn max_statement_bytes_query(&self) -> Option<&'static str> {
        None
    }

    // ------------------------------------------------------------ SQL-level PREPARE

    /// `PREPARE name ...` of `sql` (written with `?` markers, each an integer
    /// parameter), or None where the server has no SQL-level PREPARE (then a caller
    /// sends the statement with the values inlined, or prepares through the protocol).
    fn prepare(&self, name: &str, sql: &str) -> Option<String>;

    /// `EXECUTE name` with integer arguments (None where `prepare` is None).
    fn execute(&self, name: &str, args: &[i64]) -> Option<String>;

    /// Whether BEGIN and COMMIT can be prepared through the protocol (MySQL refuses
    /// them there, error 1295: a load then sends them as text, as sysbench's MySQL driver
    /// falls back to doing).
    fn prepares_transaction_control(&self) -> bool {
        true
    }

    /// Drops a statement made by `prepare` (None where `prepare` is None).
    fn deallocate(&self, name: &str) -> Option<String>;

    // ------------------------------------------------------------ DDL

    /// The column type for a date and time without time zone, holding NULL only when
    /// the column says so (MariaDB's `DATETIME`: a `TIMESTAMP` column there gets an
    /// implicit default and `ON UPDATE`).
    fn datetime_type(&self) -> &'static str;

    /// The column type for text that always has exactly `n` characters. The default is
    /// `char(n)`.
    fn fixed_text_type(&self, n: u32) -> String {
        format!("char({n})")
    }

    /// An integer id column's type and constraints when the server assigns its values
    /// on insert (sysbench's `auto_inc`).
    fn auto_increment_integer(&self) -> &'static str;

    /// An index on `columns` declared inside `CREATE TABLE` (the text after its comma),
    /// or None where `CREATE TABLE` takes no such clause (then the caller creates the
    /// index after the load).
    fn inline_index(&self, name: &str, columns: &str) -> Option<String>;

    /// The clause that puts a table in storage engine `engine`, with its leading space,
    /// appended after `CREATE TABLE ..(..)`; None where the server has no storage
    /// engines.
    fn storage_engine_clause(&self, engine: &str) -> Option<String> {
        let _ = engine;
        None
    }

    /// The storage engine for transactions with row locks, where the server has several
    /// (TPC-C's tables get it unless the experiment names another).
    fn transactional_engine(&self) -> Option<&'static str> {
        None
    }

    /// `DROP INDEX` of `index` on `table`. The default names the index only.
    fn drop_index(&self, index: &str, table: &str) -> String {
        let _ = table;
        format!("DROP INDEX {index}")
    }

    /// `DROP TABLE IF EXISTS` of the tables `names`: one statement for all where the
    /// server takes a list.
    fn drop_tables(&self, names: &[&str]) -> Vec<String> {
        vec![format!("DROP TABLE IF EXISTS {}", names.join(", "))]
    }

    /// The statement that gathers `table`'s optimizer statistics, for the `columns`
    /// queries search, join or group by where the server can limit it to them (empty:
    /// the whole table).
    fn analyze(&self, table: &str, columns: &[&str]) -> String;

    // ------------------------------------------------------------ loads

    /// How this server takes bulk rows fastest.
    fn bulk_load(&self) -> BulkLoad;

    /// Whether a table created in the loading transaction can be filled with rows
    /// written frozen (PostgreSQL's `COPY .. FREEZE`: no hint bits to set later).
    fn copy_freeze(&self) -> bool {
        false
    }

    /// Whether a bulk load is faster into a table without its primary key, the key
    /// added after the data (`ALTER TABLE .. ADD PRIMARY KEY`: one sorted build). Not
    /// where the table is its primary key (InnoDB: adding it rebuilds the table).
    fn primary_key_after_load(&self) -> bool {
        false
    }

    /// Whether freshly loaded tables need an explicit `ANALYZE` before queries plan
    /// well (PostgreSQL has no statistics until autovacuum gets to them; InnoDB samples
    /// its own).
    fn statistics_after_load(&self) -> bool {
        false
    }

    /// The statement that applies `setting` to this session, or None where the server
    /// has no such session setting.
    fn session_setting(&self, setting: Setting<'_>) -> Option<String>;

    // ------------------------------------------------------------ the server's nature

    /// Whether the server is a library run behind a loopback round trip that costs more
    /// than its statements (SQLite in bakeoff-sqlited): a benchmark written for
    /// in-process use sends its independent statements in batches there.
    fn embedded_library(&self) -> bool {
        false
    }
}

/// `?` markers as `$1, $2, ..` (the PostgreSQL protocol's markers).
pub(crate) fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests;

//! PostgreSQL's SQL: `$n` markers, `COPY` for loads (frozen into a table created in the
//! same transaction), keys and statistics after the data, per-session maintenance
//! settings.

use super::{numbered, BulkLoad, Setting, SqlDialect};

/// PostgreSQL (`Dialect::Postgres`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Postgres;

impl SqlDialect for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn placeholders(&self, sql: &str) -> String {
        numbered(sql)
    }

    fn multi_statement_queries(&self) -> bool {
        true
    }

    fn begin_read_only_snapshot(&self) -> &'static [&'static str] {
        &["BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"]
    }

    /// Every parameter is an `int`.
    fn prepare(&self, name: &str, sql: &str) -> Option<String> {
        let n = sql.matches('?').count();
        let types = vec!["int"; n].join(", ");
        Some(format!("PREPARE {name} ({types}) AS {}", numbered(sql)))
    }

    fn execute(&self, name: &str, args: &[i64]) -> Option<String> {
        let args: Vec<String> = args.iter().map(i64::to_string).collect();
        Some(format!("EXECUTE {name} ({})", args.join(", ")))
    }

    fn deallocate(&self, name: &str) -> Option<String> {
        Some(format!("DEALLOCATE {name}"))
    }

    fn datetime_type(&self) -> &'static str {
        "timestamp"
    }

    /// `varchar(n)`: `char(n)` counts the characters of each value it receives (a fifth
    /// of the time a COPY of TPC-C's stock takes, whose rows are ten `char(24)`), and
    /// values of exactly n characters read the same from both.
    fn fixed_text_type(&self, n: u32) -> String {
        format!("varchar({n})")
    }

    fn auto_increment_integer(&self) -> &'static str {
        "SERIAL NOT NULL"
    }

    fn inline_index(&self, name: &str, columns: &str) -> Option<String> {
        let _ = (name, columns);
        None
    }

    /// Only the columns named: sampling and sorting the wide texts nobody searches
    /// would cost most of the time.
    fn analyze(&self, table: &str, columns: &[&str]) -> String {
        match columns {
            [] => format!("ANALYZE {table}"),
            cols => format!("ANALYZE {table} ({})", cols.join(", ")),
        }
    }

    fn bulk_load(&self) -> BulkLoad {
        BulkLoad::Copy
    }

    fn copy_freeze(&self) -> bool {
        true
    }

    fn primary_key_after_load(&self) -> bool {
        true
    }

    fn statistics_after_load(&self) -> bool {
        true
    }

    fn session_setting(&self, setting: Setting<'_>) -> Option<String> {
        match setting {
            Setting::NoCommitFlush => Some("SET synchronous_commit = off".into()),
            Setting::IndexBuildMemoryMb(mb) => Some(format!("SET maintenance_work_mem = '{mb}MB'")),
            // Parallel index builds came with PostgreSQL 11, and SET of a name the server
            // does not know is an error: set it only where pg_settings lists it (9.6, 10).
            Setting::SerialIndexBuilds => Some(
                "SELECT set_config(name, '0', false) FROM pg_settings \
                 WHERE name = 'max_parallel_maintenance_workers'"
                    .into(),
            ),
            Setting::StatisticsTarget(n) => Some(format!("SET default_statistics_target = {n}")),
            Setting::StatementTimeoutMs(ms) => Some(format!("SET statement_timeout = {ms}")),
            // Constraints are checked per row, always; one storage engine (heap).
            Setting::NoConstraintChecks | Setting::StorageEngine(_) => None,
        }
    }
}

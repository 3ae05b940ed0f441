//! The SQL each dialect produces for the trickiest methods, pinned byte for byte: these
//! are the texts the workloads sent before the dialect interface existed.

use super::*;

const ALL: [Dialect; 3] = [Dialect::Mariadb, Dialect::Postgres, Dialect::Sqlite];

#[test]
fn names_and_wires() {
    for d in ALL {
        assert_eq!(d.sql().name(), d.as_str());
    }
    assert_eq!(Dialect::Mariadb.wire(), Wire::Mysql);
    assert_eq!(Dialect::Postgres.wire(), Wire::Postgres);
    assert_eq!(Dialect::Sqlite.wire(), Wire::Postgres);
    assert!(Dialect::Sqlite.pg_wire() && !Dialect::Mariadb.pg_wire());
}

#[test]
fn placeholders_are_numbered_on_the_postgresql_protocol() {
    let sql = "UPDATE t SET c=? WHERE id BETWEEN ? AND ?";
    assert_eq!(Dialect::Mariadb.sql().placeholders(sql), sql);
    for d in [Dialect::Postgres, Dialect::Sqlite] {
        assert_eq!(
            d.sql().placeholders(sql),
            "UPDATE t SET c=$1 WHERE id BETWEEN $2 AND $3"
        );
    }
    let many = ["?"; 12].join(",");
    assert!(Postgres.placeholders(&many).ends_with("$11,$12"));
}

#[test]
fn string_literals_escape_what_the_server_reads_as_special() {
    let s = "it's a \\ back";
    assert_eq!(MariaDb.string_literal(s), "'it''s a \\\\ back'");
    assert_eq!(Postgres.string_literal(s), "'it''s a \\ back'");
    assert_eq!(Sqlite.string_literal(s), "'it''s a \\ back'");
    let mut out = b"(".to_vec();
    MariaDb.push_string_literal(&mut out, b"OE");
    assert_eq!(out, b"('OE'");
}

#[test]
fn sql_level_prepare_execute_deallocate() {
    let sql = "SELECT * FROM sb_bench1 WHERE id = ? AND id2 = ?";
    assert_eq!(
        MariaDb.prepare("sb_ps", sql).unwrap(),
        "PREPARE sb_ps FROM 'SELECT * FROM sb_bench1 WHERE id = ? AND id2 = ?'"
    );
    assert_eq!(
        Postgres.prepare("sb_ps", sql).unwrap(),
        "PREPARE sb_ps (int, int) AS SELECT * FROM sb_bench1 WHERE id = $1 AND id2 = $2"
    );
    assert_eq!(
        MariaDb.execute("sb_ps", &[3, 4]).unwrap(),
        "EXECUTE sb_ps USING 3, 4"
    );
    assert_eq!(
        Postgres.execute("sb_ps", &[3, 4]).unwrap(),
        "EXECUTE sb_ps (3, 4)"
    );
    assert_eq!(
        MariaDb.deallocate("sb_ps").unwrap(),
        "DEALLOCATE PREPARE sb_ps"
    );
    assert_eq!(Postgres.deallocate("sb_ps").unwrap(), "DEALLOCATE sb_ps");
    assert_eq!(Sqlite.prepare("sb_ps", sql), None);
    assert_eq!(Sqlite.execute("sb_ps", &[1]), None);
    assert_eq!(Sqlite.deallocate("sb_ps"), None);
}

#[test]
fn ddl_types_keys_and_engines() {
    assert_eq!(MariaDb.datetime_type(), "DATETIME");
    assert_eq!(Postgres.datetime_type(), "timestamp");
    assert_eq!(Sqlite.datetime_type(), "timestamp");
    assert_eq!(MariaDb.fixed_text_type(24), "char(24)");
    assert_eq!(Postgres.fixed_text_type(24), "varchar(24)");
    assert_eq!(Sqlite.fixed_text_type(2), "char(2)");
    assert_eq!(
        MariaDb.auto_increment_integer(),
        "INTEGER NOT NULL AUTO_INCREMENT"
    );
    assert_eq!(Postgres.auto_increment_integer(), "SERIAL NOT NULL");
    assert_eq!(
        MariaDb.inline_index("xid", "id").as_deref(),
        Some("KEY xid (id)")
    );
    assert_eq!(Postgres.inline_index("xid", "id"), None);
    assert_eq!(
        MariaDb.storage_engine_clause("Aria").as_deref(),
        Some(" ENGINE = Aria")
    );
    assert_eq!(MariaDb.transactional_engine(), Some("InnoDB"));
    for d in [Dialect::Postgres, Dialect::Sqlite] {
        assert_eq!(d.sql().storage_engine_clause("Aria"), None);
        assert_eq!(d.sql().transactional_engine(), None);
    }
}

#[test]
fn drops_analyze_and_explain() {
    assert_eq!(MariaDb.drop_index("i1", "t"), "DROP INDEX i1 ON t");
    assert_eq!(Postgres.drop_index("i1", "t"), "DROP INDEX i1");
    assert_eq!(Sqlite.drop_index("i1", "t"), "DROP INDEX i1");
    assert_eq!(
        MariaDb.drop_tables(&["a", "b"]),
        ["DROP TABLE IF EXISTS a, b"]
    );
    assert_eq!(
        Postgres.drop_tables(&["a", "b"]),
        ["DROP TABLE IF EXISTS a, b"]
    );
    assert_eq!(
        Sqlite.drop_tables(&["a", "b"]),
        ["DROP TABLE IF EXISTS a", "DROP TABLE IF EXISTS b"]
    );
    let cols = ["s_w_id", "s_i_id"];
    assert_eq!(MariaDb.analyze("stock", &cols), "ANALYZE TABLE stock");
    assert_eq!(
        Postgres.analyze("stock", &cols),
        "ANALYZE stock (s_w_id, s_i_id)"
    );
    assert_eq!(Postgres.analyze("warehouse", &[]), "ANALYZE warehouse");
    assert_eq!(Sqlite.analyze("stock", &cols), "ANALYZE stock");
    assert_eq!(MariaDb.explain("SELECT 1"), "EXPLAIN SELECT 1");
    assert_eq!(Postgres.explain("SELECT 1"), "EXPLAIN SELECT 1");
    assert_eq!(Sqlite.explain("SELECT 1"), "EXPLAIN QUERY PLAN SELECT 1");
}

#[test]
fn load_settings_as_the_tpcc_loader_sent_them() {
    let load = [
        Setting::NoCommitFlush,
        Setting::NoConstraintChecks,
        Setting::IndexBuildMemoryMb(256),
        Setting::SerialIndexBuilds,
        Setting::StatisticsTarget(10),
    ];
    let joined = |d: &dyn SqlDialect| {
        let v: Vec<String> = load.iter().filter_map(|s| d.session_setting(*s)).collect();
        v.join("; ")
    };
    assert_eq!(
        joined(&Postgres),
        "SET synchronous_commit = off; SET maintenance_work_mem = '256MB'; \
         SELECT set_config(name, '0', false) FROM pg_settings \
         WHERE name = 'max_parallel_maintenance_workers'; SET default_statistics_target = 10"
    );
    assert_eq!(
        joined(&MariaDb),
        "SET unique_checks = 0, foreign_key_checks = 0"
    );
    assert_eq!(joined(&Sqlite), "");
    assert_eq!(
        MariaDb
            .session_setting(Setting::StorageEngine("MyISAM"))
            .as_deref(),
        Some("SET SESSION default_storage_engine = MyISAM")
    );
    assert_eq!(
        MariaDb.max_statement_bytes_query(),
        Some("SELECT @@max_allowed_packet")
    );
    assert_eq!(Postgres.max_statement_bytes_query(), None);
}

#[test]
fn loads_and_snapshots() {
    assert_eq!(MariaDb.bulk_load(), BulkLoad::MultiRowInsert);
    assert_eq!(Postgres.bulk_load(), BulkLoad::Copy);
    assert_eq!(Sqlite.bulk_load(), BulkLoad::MultiRowInsert);
    assert!(Postgres.copy_freeze() && !MariaDb.copy_freeze() && !Sqlite.copy_freeze());
    assert!(Postgres.primary_key_after_load() && !MariaDb.primary_key_after_load());
    assert!(Postgres.statistics_after_load() && !MariaDb.statistics_after_load());
    assert!(!Sqlite.statistics_after_load());
    assert!(Postgres.multi_statement_queries() && Sqlite.multi_statement_queries());
    assert!(!MariaDb.multi_statement_queries());
    assert!(Sqlite.embedded_library() && !Postgres.embedded_library());
    assert_eq!(
        MariaDb.begin_read_only_snapshot(),
        [
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"
        ]
    );
    assert_eq!(
        Postgres.begin_read_only_snapshot(),
        ["BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"]
    );
}

#[test]
fn date_literals_and_statement_timeouts() {
    assert_eq!(
        Dialect::Postgres.sql().date_literal("1995-03-15"),
        "DATE '1995-03-15'"
    );
    assert_eq!(
        Dialect::Mysql.sql().date_literal("1995-03-15"),
        "DATE '1995-03-15'"
    );
    assert_eq!(
        Dialect::Sqlite.sql().date_literal("1995-03-15"),
        "'1995-03-15'"
    );
    let t = Setting::StatementTimeoutMs(2500);
    let got: Vec<Option<String>> = ALL.iter().map(|d| d.sql().session_setting(t)).collect();
    assert_eq!(
        got,
        ALL.iter()
            .map(|d| match d {
                Dialect::Postgres => Some("SET statement_timeout = 2500".to_string()),
                Dialect::Mariadb => Some("SET SESSION max_statement_time = 2.5".to_string()),
                Dialect::Mysql => Some("SET SESSION max_execution_time = 2500".to_string()),
                Dialect::Sqlite => Some("SET statement_timeout = 2500".to_string()),
            })
            .collect::<Vec<_>>()
    );
}

/// The mysqld family is one implementation: MariaDB and MySQL answer alike everywhere
/// but where their `MysqldFork` items differ (SQL-level PREPARE, prepared transaction
/// control, the read-only snapshot, the statement timeout).
#[test]
fn mariadb_and_mysql_differ_only_where_their_fork_says() {
    fn texts(d: &dyn SqlDialect) -> Vec<String> {
        let settings = [
            Setting::NoCommitFlush,
            Setting::NoConstraintChecks,
            Setting::IndexBuildMemoryMb(64),
            Setting::SerialIndexBuilds,
            Setting::StatisticsTarget(100),
            Setting::StorageEngine("Aria"),
        ];
        let mut t = vec![
            d.name().to_string(),
            d.placeholders("a = ? AND b = ?"),
            d.string_literal("it's \\ x"),
            d.multi_statement_queries().to_string(),
            d.date_literal("1995-03-15"),
            d.explain("SELECT 1"),
            format!("{:?}", d.max_statement_bytes_query()),
            d.datetime_type().to_string(),
            d.fixed_text_type(24),
            d.auto_increment_integer().to_string(),
            format!("{:?}", d.inline_index("k", "a, b")),
            format!("{:?}", d.storage_engine_clause("InnoDB")),
            format!("{:?}", d.transactional_engine()),
            d.drop_index("i", "t"),
            d.drop_tables(&["a", "b"]).join(";"),
            d.analyze("t", &["a"]),
            format!("{:?}", d.bulk_load()),
            d.copy_freeze().to_string(),
            d.primary_key_after_load().to_string(),
            d.statistics_after_load().to_string(),
            d.embedded_library().to_string(),
        ];
        t.extend(settings.map(|s| format!("{:?}", d.session_setting(s))));
        t
    }
    assert_eq!(texts(&MariaDb), texts(&Mysql));
    assert!(MariaDb.prepare("p", "SELECT ?").is_some() && Mysql.prepare("p", "SELECT ?").is_none());
    assert!(Mysql.execute("p", &[1]).is_none() && Mysql.deallocate("p").is_none());
    assert!(MariaDb.prepares_transaction_control() && !Mysql.prepares_transaction_control());
    assert_ne!(
        MariaDb.begin_read_only_snapshot(),
        Mysql.begin_read_only_snapshot()
    );
}

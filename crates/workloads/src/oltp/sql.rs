//! sysbench's OLTP statements (oltp_common.lua of sysbench 1.0.20, as published) and
//! which of them each test runs per transaction.

use super::config::{OltpConfig, OltpTest};
use bakeoff_sqlclient::SqlDialect;

/// A statement kind; its index names it in per-kind statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stmt {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    RandomPoints,
    RandomRanges,
    Begin,
    Commit,
}

impl Stmt {
    pub const ALL: [Stmt; 13] = [
        Stmt::PointSelect,
        Stmt::SimpleRange,
        Stmt::SumRange,
        Stmt::OrderRange,
        Stmt::DistinctRange,
        Stmt::IndexUpdate,
        Stmt::NonIndexUpdate,
        Stmt::Delete,
        Stmt::Insert,
        Stmt::RandomPoints,
        Stmt::RandomRanges,
        Stmt::Begin,
        Stmt::Commit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stmt::PointSelect => "point_select",
            Stmt::SimpleRange => "simple_range",
            Stmt::SumRange => "sum_range",
            Stmt::OrderRange => "order_range",
            Stmt::DistinctRange => "distinct_range",
            Stmt::IndexUpdate => "index_update",
            Stmt::NonIndexUpdate => "non_index_update",
            Stmt::Delete => "delete",
            Stmt::Insert => "insert",
            Stmt::RandomPoints => "random_points",
            Stmt::RandomRanges => "random_ranges",
            Stmt::Begin => "begin",
            Stmt::Commit => "commit",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// The statement text for table `t` with the server's parameter markers (`?` on MariaDB,
/// `$n` on the PostgreSQL protocol: the dialect's `placeholders`).
pub fn text(s: Stmt, t: u32, d: &dyn SqlDialect, points: u32, auto_inc: bool) -> String {
    d.placeholders(&plain(s, t, points, auto_inc))
}

/// The statement text for table `t` with `?` markers (sysbench's, and the form sent with
/// the values inlined when statements are not prepared). `points` is the number of values
/// of the random_points / random_ranges statements.
pub fn plain(s: Stmt, t: u32, points: u32, auto_inc: bool) -> String {
    match s {
        Stmt::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
        Stmt::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
        Stmt::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
        Stmt::OrderRange => {
            format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
        }
        Stmt::DistinctRange => {
            format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
        }
        Stmt::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
        Stmt::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
        Stmt::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
        Stmt::Insert if auto_inc => format!("INSERT INTO sbtest{t} (k, c, pad) VALUES (?, ?, ?)"),
        Stmt::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
        Stmt::RandomPoints => {
            let qs = vec!["?"; points.max(1) as usize].join(", ");
            format!("SELECT id, k, c, pad FROM sbtest{t} WHERE k IN ({qs})")
        }
        Stmt::RandomRanges => {
            let ranges = vec!["k BETWEEN ? AND ?"; points.max(1) as usize].join(" OR ");
            format!("SELECT count(k) FROM sbtest{t} WHERE {ranges}")
        }
        Stmt::Begin => "BEGIN".to_string(),
        Stmt::Commit => "COMMIT".to_string(),
    }
}

/// The statements of one transaction of `cfg.test`, in order (BEGIN/COMMIT included
/// unless skip_trx or the test runs single statements). A delete-insert pair is `Delete`
/// followed by `Insert` of the same id.
pub fn transaction(cfg: &OltpConfig) -> Vec<Stmt> {
    let rep = |s: Stmt, n: u32| std::iter::repeat_n(s, n as usize);
    let reads = |v: &mut Vec<Stmt>| {
        v.extend(rep(Stmt::PointSelect, cfg.point_selects));
        v.extend(rep(Stmt::SimpleRange, cfg.simple_ranges));
        v.extend(rep(Stmt::SumRange, cfg.sum_ranges));
        v.extend(rep(Stmt::OrderRange, cfg.order_ranges));
        v.extend(rep(Stmt::DistinctRange, cfg.distinct_ranges));
    };
    let writes = |v: &mut Vec<Stmt>| {
        v.extend(rep(Stmt::IndexUpdate, cfg.index_updates));
        v.extend(rep(Stmt::NonIndexUpdate, cfg.non_index_updates));
        for _ in 0..cfg.delete_inserts {
            v.push(Stmt::Delete);
            v.push(Stmt::Insert);
        }
    };
    let mut v = Vec::new();
    let wrapped = matches!(
        cfg.test,
        OltpTest::ReadOnly | OltpTest::ReadWrite | OltpTest::WriteOnly
    );
    match cfg.test {
        OltpTest::ReadOnly => reads(&mut v),
        OltpTest::ReadWrite => {
            reads(&mut v);
            writes(&mut v);
        }
        OltpTest::WriteOnly => writes(&mut v),
        OltpTest::PointSelect => v.push(Stmt::PointSelect),
        OltpTest::UpdateIndex => v.extend(rep(Stmt::IndexUpdate, cfg.index_updates)),
        OltpTest::UpdateNonIndex => v.extend(rep(Stmt::NonIndexUpdate, cfg.non_index_updates)),
        OltpTest::Delete => v.push(Stmt::Delete),
        OltpTest::Insert => v.push(Stmt::Insert),
        OltpTest::SelectRandomPoints => v.push(Stmt::RandomPoints),
        OltpTest::SelectRandomRanges => v.push(Stmt::RandomRanges),
    }
    if wrapped && !cfg.skip_trx {
        v.insert(0, Stmt::Begin);
        v.push(Stmt::Commit);
    }
    v
}

/// The CREATE TABLE statement for table `t` (sysbench's schema). With `secondary`, the
/// id index is declared in the table where the server takes that (MariaDB's `KEY xid`);
/// elsewhere the load creates it after the data (`secondary_id_index`).
pub fn create_table(t: u32, d: &dyn SqlDialect, cfg: &OltpConfig) -> String {
    let id = match cfg.auto_inc {
        true => d.auto_increment_integer(),
        false => "INTEGER NOT NULL",
    };
    let key = match cfg.secondary {
        true => d
            .inline_index("xid", "id")
            .map(|k| format!(", {k}"))
            .unwrap_or_default(),
        false => ", PRIMARY KEY (id)".to_string(),
    };
    let engine = (cfg.engine.as_deref())
        .and_then(|e| d.storage_engine_clause(e))
        .unwrap_or_default();
    format!(
        "CREATE TABLE sbtest{t} (id {id}, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL{key}){engine}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sqlclient::Dialect;

    #[test]
    fn read_write_has_sysbench_counts() {
        let cfg = OltpConfig {
            test: OltpTest::ReadWrite,
            ..OltpConfig::default()
        };
        let t = transaction(&cfg);
        assert_eq!(t.len(), 20);
        assert_eq!(t[0], Stmt::Begin);
        assert_eq!(t[19], Stmt::Commit);
        assert_eq!(t.iter().filter(|s| **s == Stmt::PointSelect).count(), 10);
        let ro = OltpConfig {
            test: OltpTest::ReadOnly,
            ..OltpConfig::default()
        };
        assert_eq!(transaction(&ro).len(), 16);
        let ps = OltpConfig {
            test: OltpTest::PointSelect,
            ..OltpConfig::default()
        };
        assert_eq!(transaction(&ps), vec![Stmt::PointSelect]);
        let skip = OltpConfig {
            skip_trx: true,
            ..ro
        };
        assert_eq!(transaction(&skip).len(), 14);
    }

    #[test]
    fn statement_texts() {
        assert_eq!(
            text(Stmt::PointSelect, 3, Dialect::Mariadb.sql(), 10, true),
            "SELECT c FROM sbtest3 WHERE id=?"
        );
        assert_eq!(
            text(Stmt::NonIndexUpdate, 1, Dialect::Postgres.sql(), 10, true),
            "UPDATE sbtest1 SET c=$1 WHERE id=$2"
        );
        assert_eq!(
            text(Stmt::RandomRanges, 1, Dialect::Mariadb.sql(), 2, true),
            "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?"
        );
        let cfg = OltpConfig {
            engine: Some("MyISAM".into()),
            ..OltpConfig::default()
        };
        assert_eq!(
            create_table(2, Dialect::Mariadb.sql(), &cfg),
            "CREATE TABLE sbtest2 (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE = MyISAM"
        );
        assert!(create_table(2, Dialect::Postgres.sql(), &cfg)
            .starts_with("CREATE TABLE sbtest2 (id SERIAL NOT NULL,"));
    }
}

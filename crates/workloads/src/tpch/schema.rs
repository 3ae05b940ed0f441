//! The eight tables of the TPC-H-derived kind as the specification defines them (clause
//! 1.4), their keys and the usual indexes, and their rows: generated in this process by
//! the `tpchgen` crate (checked against the reference generator) and streamed into the
//! server the fastest way it takes: PostgreSQL's `COPY .. FROM STDIN` (two tables at a
//! time, each on its own connection), multi-row `INSERT`s elsewhere (SQLite: each table
//! in one transaction).

use bakeoff_sqlclient::{BulkLoad, Client, Db, DbError, Setting, SqlDialect};
use std::fmt::Write as _;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// A column: its name, its type, whether its values are text (quoted in an INSERT).
type Column = (&'static str, &'static str, bool);

/// One table: its name, columns, primary key and other indexes.
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    pub key: &'static str,
    pub indexes: &'static [(&'static str, &'static str)],
}

const INT: &str = "integer";
const MONEY: &str = "decimal(15,2)";

/// The tables, smallest first (lineitem last).
pub const TABLES: [Table; 8] = [
    Table {
        name: "region",
        columns: &[
            ("r_regionkey", INT, false),
            ("r_name", "char(25)", true),
            ("r_comment", "varchar(152)", true),
        ],
        key: "r_regionkey",
        indexes: &[],
    },
    Table {
        name: "nation",
        columns: &[
            ("n_nationkey", INT, false),
            ("n_name", "char(25)", true),
            ("n_regionkey", INT, false),
            ("n_comment", "varchar(152)", true),
        ],
        key: "n_nationkey",
        indexes: &[("nation_regionkey", "n_regionkey")],
    },
    Table {
        name: "supplier",
        columns: &[
            ("s_suppkey", INT, false),
            ("s_name", "char(25)", true),
            ("s_address", "varchar(40)", true),
            ("s_nationkey", INT, false),
            ("s_phone", "char(15)", true),
            ("s_acctbal", MONEY, false),
            ("s_comment", "varchar(101)", true),
        ],
        key: "s_suppkey",
        indexes: &[("supplier_nationkey", "s_nationkey")],
    },
    Table {
        name: "customer",
        columns: &[
            ("c_custkey", INT, false),
            ("c_name", "varchar(25)", true),
            ("c_address", "varchar(40)", true),
            ("c_nationkey", INT, false),
            ("c_phone", "char(15)", true),
            ("c_acctbal", MONEY, false),
            ("c_mktsegment", "char(10)", true),
            ("c_comment", "varchar(117)", true),
        ],
        key: "c_custkey",
        indexes: &[("customer_nationkey", "c_nationkey")],
    },
    Table {
        name: "part",
        columns: &[
            ("p_partkey", INT, false),
            ("p_name", "varchar(55)", true),
            ("p_mfgr", "char(25)", true),
            ("p_brand", "char(10)", true),
            ("p_type", "varchar(25)", true),
            ("p_size", INT, false),
            ("p_container", "char(10)", true),
            ("p_retailprice", MONEY, false),
            ("p_comment", "varchar(23)", true),
        ],
        key: "p_partkey",
        indexes: &[],
    },
    Table {
        name: "partsupp",
        columns: &[
            ("ps_partkey", INT, false),
            ("ps_suppkey", INT, false),
            ("ps_availqty", INT, false),
            ("ps_supplycost", MONEY, false),
            ("ps_comment", "varchar(199)", true),
        ],
        key: "ps_partkey, ps_suppkey",
        indexes: &[("partsupp_suppkey", "ps_suppkey")],
    },
    Table {
        name: "orders",
        columns: &[
            ("o_orderkey", INT, false),
            ("o_custkey", INT, false),
            ("o_orderstatus", "char(1)", true),
            ("o_totalprice", MONEY, false),
            ("o_orderdate", "date", true),
            ("o_orderpriority", "char(15)", true),
            ("o_clerk", "char(15)", true),
            ("o_shippriority", INT, false),
            ("o_comment", "varchar(79)", true),
        ],
        key: "o_orderkey",
        indexes: &[
            ("orders_custkey", "o_custkey"),
            ("orders_orderdate", "o_orderdate"),
        ],
    },
    Table {
        name: "lineitem",
        columns: &[
            ("l_orderkey", INT, false),
            ("l_partkey", INT, false),
            ("l_suppkey", INT, false),
            ("l_linenumber", INT, false),
            ("l_quantity", MONEY, false),
            ("l_extendedprice", MONEY, false),
            ("l_discount", MONEY, false),
            ("l_tax", MONEY, false),
            ("l_returnflag", "char(1)", true),
            ("l_linestatus", "char(1)", true),
            ("l_shipdate", "date", true),
            ("l_commitdate", "date", true),
            ("l_receiptdate", "date", true),
            ("l_shipinstruct", "char(25)", true),
            ("l_shipmode", "char(10)", true),
            ("l_comment", "varchar(44)", true),
        ],
        key: "l_orderkey, l_linenumber",
        indexes: &[
            ("lineitem_part_supp", "l_partkey, l_suppkey"),
            ("lineitem_shipdate", "l_shipdate"),
        ],
    },
];

/// The rows the specification gives each table at scale `sf` (clause 4.2.5); lineitem's
/// count is generated (about 6,000,000 x SF), so None.
pub fn expected_rows(table: &str, sf: f64) -> Option<u64> {
    let n = |per: f64| (per * sf) as u64;
    Some(match table {
        "region" => 5,
        "nation" => 25,
        "supplier" => n(10_000.0),
        "customer" => n(150_000.0),
        "part" => n(200_000.0),
        "partsupp" => n(800_000.0),
        "orders" => n(1_500_000.0),
        _ => return None,
    })
}

/// `CREATE TABLE` of `t`, with its primary key unless the server builds it after the
/// load (`key_inline`).
pub fn create_table(t: &Table, key_inline: bool) -> String {
    let mut s = format!("CREATE TABLE {} (", t.name);
    for (i, (c, ty, _)) in t.columns.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{c} {ty} NOT NULL");
    }
    if key_inline {
        let _ = write!(s, ", PRIMARY KEY ({})", t.key);
    }
    s.push(')');
    s
}

/// Every row of table `t` at scale `sf` in the generator's TBL form (`a|b|c|`), each
/// given to `f` in turn; stops at `f`'s first error.
pub fn each_row<E>(t: &str, sf: f64, mut f: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    let mut line = String::with_capacity(256);
    macro_rules! rows {
        ($gen:expr) => {
            for r in $gen.iter() {
                line.clear();
                let _ = write!(line, "{r}");
                f(&line)?;
            }
        };
    }
    match t {
        "region" => rows!(RegionGenerator::new(sf, 1, 1)),
        "nation" => rows!(NationGenerator::new(sf, 1, 1)),
        "supplier" => rows!(SupplierGenerator::new(sf, 1, 1)),
        "customer" => rows!(CustomerGenerator::new(sf, 1, 1)),
        "part" => rows!(PartGenerator::new(sf, 1, 1)),
        "partsupp" => rows!(PartSuppGenerator::new(sf, 1, 1)),
        "orders" => rows!(OrderGenerator::new(sf, 1, 1)),
        _ => rows!(LineItemGenerator::new(sf, 1, 1)),
    }
    Ok(())
}

/// Bytes a batch of rows holds before it is sent.
const BATCH_BYTES: usize = 4 << 20;
/// Rows per multi-row INSERT (within every server's statement limits).
const INSERT_ROWS: usize = 500;

/// Drops and creates the eight tables and loads every row at scale `sf`, then the keys,
/// the indexes and the statistics. Returns the rows loaded.
pub fn load(db: &Db, sf: f64) -> Result<u64, String> {
    let rt = bakeoff_sqlclient::driver::runtime().map_err(|e| e.to_string())?;
    let sql = db.dialect.sql();
    let key_after = sql.primary_key_after_load();
    rt.block_on(async {
        let mut c = Client::connect(db, 0, false).await?;
        let names: Vec<&str> = TABLES.iter().rev().map(|t| t.name).collect();
        for s in sql.drop_tables(&names) {
            c.simple(&s).await?;
        }
        for t in &TABLES {
            c.simple(&create_table(t, !key_after)).await?;
        }
        c.close().await;
        Ok::<(), DbError>(())
    })
    .map_err(|e| format!("creating the TPC-H-derived tables failed: {}", e.message))?;
    drop(rt);
    let rows = if sql.bulk_load() == BulkLoad::Copy {
        // lineitem (about 70% of the bytes) beside the other seven.
        let lineitem = std::thread::scope(|s| {
            let other = s.spawn(|| fill_tables(db, sf, &TABLES[..7]));
            let line = fill_tables(db, sf, &TABLES[7..]);
            let other = other
                .join()
                .map_err(|_| "a load thread panicked".to_string())?;
            Ok::<u64, String>(line? + other?)
        });
        lineitem?
    } else {
        fill_tables(db, sf, &TABLES)?
    };
    finish(db, key_after)?;
    Ok(rows)
}

/// The load from files `dir/<table>` the generator wrote (lines as COPY's text format
/// with `|` between values) instead of generating: PostgreSQL only, each file streamed
/// through `COPY .. FROM STDIN` in batches (as psql's `\copy` does), the same two
/// connections, keys, indexes and statistics as [`load`]. For the measurement in
/// bench/RESULTS.md.
pub fn load_files(db: &Db, dir: &std::path::Path) -> Result<u64, String> {
    let rt = bakeoff_sqlclient::driver::runtime().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let mut c = Client::connect(db, 0, false).await?;
        let names: Vec<&str> = TABLES.iter().rev().map(|t| t.name).collect();
        for s in db.dialect.sql().drop_tables(&names) {
            c.simple(&s).await?;
        }
        for t in &TABLES {
            c.simple(&create_table(t, false)).await?;
        }
        c.close().await;
        Ok::<(), DbError>(())
    })
    .map_err(|e| e.message)?;
    drop(rt);
    let copy = |tables: &[Table]| -> Result<u64, String> {
        let rt = bakeoff_sqlclient::driver::runtime().map_err(|e| e.to_string())?;
        rt.block_on(async {
            let mut c = Client::connect(db, 0, false).await.map_err(|e| e.message)?;
            c.simple("SET synchronous_commit = off")
                .await
                .map_err(|e| e.message)?;
            let mut rows = 0;
            for t in tables {
                use std::io::BufRead;
                let names: Vec<&str> = t.columns.iter().map(|c| c.0).collect();
                let head = format!(
                    "COPY {} ({}) FROM STDIN WITH (DELIMITER '|')",
                    t.name,
                    names.join(", ")
                );
                let f = std::fs::File::open(dir.join(t.name)).map_err(|e| e.to_string())?;
                let mut r = std::io::BufReader::with_capacity(1 << 20, f);
                let mut buf = Vec::with_capacity(BATCH_BYTES + 4096);
                loop {
                    let n = r.read_until(b'\n', &mut buf).map_err(|e| e.to_string())?;
                    if n > 0 {
                        rows += 1;
                    }
                    if (n == 0 && !buf.is_empty()) || buf.len() >= BATCH_BYTES {
                        c.copy_in(&head, &buf)
                            .await
                            .expect("a PostgreSQL connection")
                            .map_err(|e| e.message)?;
                        buf.clear();
                    }
                    if n == 0 {
                        break;
                    }
                }
            }
            c.close().await;
            Ok(rows)
        })
    };
    let rows = std::thread::scope(|s| {
        let other = s.spawn(|| copy(&TABLES[..7]));
        let line = copy(&TABLES[7..]);
        let other = other
            .join()
            .map_err(|_| "a load thread panicked".to_string())?;
        Ok::<u64, String>(line? + other?)
    })?;
    finish(db, true)?;
    Ok(rows)
}

/// Loads `tables` over one connection of its own.
fn fill_tables(db: &Db, sf: f64, tables: &[Table]) -> Result<u64, String> {
    let rt = bakeoff_sqlclient::driver::runtime().map_err(|e| e.to_string())?;
    let mut c = rt
        .block_on(Client::connect(db, 0, false))
        .map_err(|e| e.message)?;
    let sql = db.dialect.sql();
    if let Some(s) = sql.session_setting(Setting::NoCommitFlush) {
        rt.block_on(c.simple(&s)).map_err(|e| e.message)?;
    }
    let mut total = 0;
    for t in tables {
        total += fill(&rt, &mut c, sql, t, sf)
            .map_err(|e| format!("loading {} failed: {}", t.name, e.message))?;
    }
    rt.block_on(c.close());
    Ok(total)
}

/// One table's rows, in batches.
fn fill(
    rt: &tokio::runtime::Runtime,
    c: &mut Client,
    sql: &dyn SqlDialect,
    t: &Table,
    sf: f64,
) -> Result<u64, DbError> {
    let names: Vec<&str> = t.columns.iter().map(|c| c.0).collect();
    let copy = sql.bulk_load() == BulkLoad::Copy;
    let head = if copy {
        format!(
            "COPY {} ({}) FROM STDIN WITH (DELIMITER '|')",
            t.name,
            names.join(", ")
        )
    } else {
        format!("INSERT INTO {} ({}) VALUES ", t.name, names.join(", "))
    };
    let one_transaction = sql.embedded_library();
    if one_transaction {
        rt.block_on(c.simple("BEGIN"))?;
    }
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH_BYTES + 4096);
    let (mut rows, mut in_batch) = (0u64, 0usize);
    let mut send = |buf: &mut Vec<u8>, in_batch: &mut usize| -> Result<(), DbError> {
        if *in_batch == 0 {
            return Ok(());
        }
        if copy {
            match rt.block_on(c.copy_in(&head, buf)) {
                Some(r) => r.map(|_| ())?,
                None => unreachable!("COPY is a PostgreSQL-protocol load"),
            }
        } else {
            let text = std::str::from_utf8(buf).expect("generated rows are ASCII");
            rt.block_on(c.simple(text))?;
        }
        buf.clear();
        *in_batch = 0;
        Ok(())
    };
    each_row(t.name, sf, |line| {
        let line = line.strip_suffix('|').unwrap_or(line);
        if copy {
            buf.extend_from_slice(line.as_bytes());
            buf.push(b'\n');
        } else {
            buf.extend_from_slice(if in_batch == 0 { head.as_bytes() } else { b"," });
            buf.push(b'(');
            for (i, (v, col)) in line.split('|').zip(t.columns).enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                if col.2 {
                    sql.push_string_literal(&mut buf, v.as_bytes());
                } else {
                    buf.extend_from_slice(v.as_bytes());
                }
            }
            buf.push(b')');
        }
        rows += 1;
        in_batch += 1;
        if buf.len() >= BATCH_BYTES || (!copy && in_batch >= INSERT_ROWS) {
            send(&mut buf, &mut in_batch)?;
        }
        Ok(())
    })?;
    send(&mut buf, &mut in_batch)?;
    if one_transaction {
        rt.block_on(c.simple("COMMIT"))?;
    }
    Ok(rows)
}

/// Keys built after the load (where the server does so), the indexes, the statistics.
fn finish(db: &Db, key_after: bool) -> Result<(), String> {
    let rt = bakeoff_sqlclient::driver::runtime().map_err(|e| e.to_string())?;
    let sql = db.dialect.sql();
    rt.block_on(async {
        let mut c = Client::connect(db, 0, false).await?;
        if let Some(s) = sql.session_setting(Setting::IndexBuildMemoryMb(256)) {
            c.simple(&s).await?;
        }
        for t in &TABLES {
            if key_after {
                c.simple(&format!(
                    "ALTER TABLE {} ADD PRIMARY KEY ({})",
                    t.name, t.key
                ))
                .await?;
            }
            for (name, cols) in t.indexes {
                c.simple(&format!("CREATE INDEX {name} ON {} ({cols})", t.name))
                    .await?;
            }
        }
        for t in &TABLES {
            c.simple(&sql.analyze(t.name, &[])).await?;
        }
        c.close().await;
        Ok::<(), DbError>(())
    })
    .map_err(|e| format!("indexing the TPC-H-derived tables failed: {}", e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_counts_are_the_specifications() {
        // At 0.01 every table is generated and counted; at 1 the generator's own counts
        // (lineitem's is generated, checked at 0.01 only: 60,175 rows).
        for t in &TABLES {
            let mut n = 0u64;
            each_row(t.name, 0.01, |_| {
                n += 1;
                Ok::<(), ()>(())
            })
            .unwrap();
            let want = expected_rows(t.name, 0.01).unwrap_or(60_175);
            assert_eq!(n, want, "{} at 0.01", t.name);
        }
        assert_eq!(SupplierGenerator::calculate_row_count(1.0, 1, 1), 10_000);
        assert_eq!(CustomerGenerator::calculate_row_count(1.0, 1, 1), 150_000);
        assert_eq!(PartGenerator::calculate_row_count(1.0, 1, 1), 200_000);
        // partsupp's count is of parts, four suppliers each.
        assert_eq!(
            PartSuppGenerator::calculate_row_count(1.0, 1, 1) * 4,
            800_000
        );
        assert_eq!(OrderGenerator::calculate_row_count(1.0, 1, 1), 1_500_000);
        assert_eq!(expected_rows("orders", 1.0), Some(1_500_000));
    }

    #[test]
    fn tables_have_keys_and_their_tbl_rows_their_columns() {
        let ddl = create_table(&TABLES[7], true);
        assert!(ddl.starts_with("CREATE TABLE lineitem (l_orderkey integer NOT NULL"));
        assert!(
            ddl.ends_with("PRIMARY KEY (l_orderkey, l_linenumber))"),
            "{ddl}"
        );
        assert!(!create_table(&TABLES[0], false).contains("PRIMARY"));
        for t in &TABLES {
            each_row(t.name, 0.01, |line| {
                assert_eq!(line.matches('|').count(), t.columns.len(), "{line}");
                Err(())
            })
            .unwrap_err();
        }
    }
}

//! The nine TPC-C tables (clause 1.3) and their indexes, per dialect.
//!
//! Column names, in table order (the loader's COPY / INSERT column order too):
//!
//! - `warehouse`: w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax,
//!   w_ytd. Primary key (w_id).
//! - `district`: d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip,
//!   d_tax, d_ytd, d_next_o_id. Primary key (d_w_id, d_id).
//! - `customer`: c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1,
//!   c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim,
//!   c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data.
//!   Primary key (c_w_id, c_d_id, c_id); index `idx_customer_name` on
//!   (c_w_id, c_d_id, c_last, c_first).
//! - `history`: h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data.
//!   No primary key.
//! - `new_order`: no_o_id, no_d_id, no_w_id. Primary key (no_w_id, no_d_id, no_o_id).
//! - `orders`: o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id (NULL until
//!   delivered), o_ol_cnt, o_all_local. Primary key (o_w_id, o_d_id, o_id); index
//!   `idx_orders_customer` on (o_w_id, o_d_id, o_c_id, o_id).
//! - `order_line`: ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
//!   ol_delivery_d (NULL until delivered), ol_quantity, ol_amount, ol_dist_info.
//!   Primary key (ol_w_id, ol_d_id, ol_o_id, ol_number).
//! - `item`: i_id, i_im_id, i_name, i_price, i_data. Primary key (i_id).
//! - `stock`: s_i_id, s_w_id, s_quantity, s_dist_01 .. s_dist_10, s_ytd, s_order_cnt,
//!   s_remote_cnt, s_data. Primary key (s_w_id, s_i_id).
//!
//! Types: identifiers and counts are `int`; money is `decimal(12,2)` (balances, YTD,
//! credit limit), `decimal(6,2)` (h_amount, ol_amount) or `decimal(5,2)` (i_price);
//! taxes and discounts `decimal(4,4)`; dates `timestamp` on PostgreSQL and `DATETIME` on
//! MariaDB; fixed-length texts `char(n)` on MariaDB and `varchar(n)` on PostgreSQL (see
//! `ty`), variable ones `varchar(n)`.

use bakeoff_sqlclient::SqlDialect;

/// The nine tables, in creation order.
pub const TABLES: [&str; 9] = [
    "item",
    "warehouse",
    "stock",
    "district",
    "customer",
    "history",
    "orders",
    "new_order",
    "order_line",
];

/// Stands for the dialect's date-and-time type in `COLUMNS`.
const TS: &str = "@ts";

/// Each table's columns and types (`TS`: the dialect's timestamp type), and its key.
type TableDef = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

const DEFS: [TableDef; 9] = [
    (
        "item",
        &[
            ("i_id", "int NOT NULL"),
            ("i_im_id", "int NOT NULL"),
            ("i_name", "varchar(24) NOT NULL"),
            ("i_price", "decimal(5,2) NOT NULL"),
            ("i_data", "varchar(50) NOT NULL"),
        ],
        "i_id",
    ),
    (
        "warehouse",
        &[
            ("w_id", "int NOT NULL"),
            ("w_name", "varchar(10) NOT NULL"),
            ("w_street_1", "varchar(20) NOT NULL"),
            ("w_street_2", "varchar(20) NOT NULL"),
            ("w_city", "varchar(20) NOT NULL"),
            ("w_state", "char(2) NOT NULL"),
            ("w_zip", "char(9) NOT NULL"),
            ("w_tax", "decimal(4,4) NOT NULL"),
            ("w_ytd", "decimal(12,2) NOT NULL"),
        ],
        "w_id",
    ),
    (
        "stock",
        &[
            ("s_i_id", "int NOT NULL"),
            ("s_w_id", "int NOT NULL"),
            ("s_quantity", "int NOT NULL"),
            ("s_dist_01", "char(24) NOT NULL"),
            ("s_dist_02", "char(24) NOT NULL"),
            ("s_dist_03", "char(24) NOT NULL"),
            ("s_dist_04", "char(24) NOT NULL"),
            ("s_dist_05", "char(24) NOT NULL"),
            ("s_dist_06", "char(24) NOT NULL"),
            ("s_dist_07", "char(24) NOT NULL"),
            ("s_dist_08", "char(24) NOT NULL"),
            ("s_dist_09", "char(24) NOT NULL"),
            ("s_dist_10", "char(24) NOT NULL"),
            ("s_ytd", "int NOT NULL"),
            ("s_order_cnt", "int NOT NULL"),
            ("s_remote_cnt", "int NOT NULL"),
            ("s_data", "varchar(50) NOT NULL"),
        ],
        "s_w_id, s_i_id",
    ),
    (
        "district",
        &[
            ("d_id", "int NOT NULL"),
            ("d_w_id", "int NOT NULL"),
            ("d_name", "varchar(10) NOT NULL"),
            ("d_street_1", "varchar(20) NOT NULL"),
            ("d_street_2", "varchar(20) NOT NULL"),
            ("d_city", "varchar(20) NOT NULL"),
            ("d_state", "char(2) NOT NULL"),
            ("d_zip", "char(9) NOT NULL"),
            ("d_tax", "decimal(4,4) NOT NULL"),
            ("d_ytd", "decimal(12,2) NOT NULL"),
            ("d_next_o_id", "int NOT NULL"),
        ],
        "d_w_id, d_id",
    ),
    (
        "customer",
        &[
            ("c_id", "int NOT NULL"),
            ("c_d_id", "int NOT NULL"),
            ("c_w_id", "int NOT NULL"),
            ("c_first", "varchar(16) NOT NULL"),
            ("c_middle", "char(2) NOT NULL"),
            ("c_last", "varchar(16) NOT NULL"),
            ("c_street_1", "varchar(20) NOT NULL"),
            ("c_street_2", "varchar(20) NOT NULL"),
            ("c_city", "varchar(20) NOT NULL"),
            ("c_state", "char(2) NOT NULL"),
            ("c_zip", "char(9) NOT NULL"),
            ("c_phone", "char(16) NOT NULL"),
            ("c_since", TS),
            ("c_credit", "char(2) NOT NULL"),
            ("c_credit_lim", "decimal(12,2) NOT NULL"),
            ("c_discount", "decimal(4,4) NOT NULL"),
            ("c_balance", "decimal(12,2) NOT NULL"),
            ("c_ytd_payment", "decimal(12,2) NOT NULL"),
            ("c_payment_cnt", "int NOT NULL"),
            ("c_delivery_cnt", "int NOT NULL"),
            ("c_data", "varchar(500) NOT NULL"),
        ],
        "c_w_id, c_d_id, c_id",
    ),
    (
        "history",
        &[
            ("h_c_id", "int NOT NULL"),
            ("h_c_d_id", "int NOT NULL"),
            ("h_c_w_id", "int NOT NULL"),
            ("h_d_id", "int NOT NULL"),
            ("h_w_id", "int NOT NULL"),
            ("h_date", TS),
            ("h_amount", "decimal(6,2) NOT NULL"),
            ("h_data", "varchar(24) NOT NULL"),
        ],
        "",
    ),
    (
        "orders",
        &[
            ("o_id", "int NOT NULL"),
            ("o_d_id", "int NOT NULL"),
            ("o_w_id", "int NOT NULL"),
            ("o_c_id", "int NOT NULL"),
            ("o_entry_d", TS),
            ("o_carrier_id", "int NULL"),
            ("o_ol_cnt", "int NOT NULL"),
            ("o_all_local", "int NOT NULL"),
        ],
        "o_w_id, o_d_id, o_id",
    ),
    (
        "new_order",
        &[
            ("no_o_id", "int NOT NULL"),
            ("no_d_id", "int NOT NULL"),
            ("no_w_id", "int NOT NULL"),
        ],
        "no_w_id, no_d_id, no_o_id",
    ),
    (
        "order_line",
        &[
            ("ol_o_id", "int NOT NULL"),
            ("ol_d_id", "int NOT NULL"),
            ("ol_w_id", "int NOT NULL"),
            ("ol_number", "int NOT NULL"),
            ("ol_i_id", "int NOT NULL"),
            ("ol_supply_w_id", "int NOT NULL"),
            // NULL until delivered: the date type is spliced in with " NULL" (see `ty`).
            ("ol_delivery_d", "@ts NULL"),
            ("ol_quantity", "int NOT NULL"),
            ("ol_amount", "decimal(6,2) NOT NULL"),
            ("ol_dist_info", "char(24) NOT NULL"),
        ],
        "ol_w_id, ol_d_id, ol_o_id, ol_number",
    ),
];

/// The dialect's spelling of a column type from `DEFS`: `char(n)` is text of exactly n
/// characters (the dialect's `fixed_text_type`: PostgreSQL gets `varchar(n)`), `TS` the
/// date-and-time type, NULL spelled out (a MariaDB TIMESTAMP column would get an
/// implicit default and ON UPDATE; DATETIME has neither).
fn ty(sql: &dyn SqlDialect, t: &str) -> String {
    if let Some(n) = t.strip_prefix("char(") {
        let (n, rest) = n.split_once(')').expect("char(n) closes");
        let n: u32 = n.parse().expect("char(n) has a length");
        return format!("{}{rest}", sql.fixed_text_type(n));
    }
    let ts = sql.datetime_type();
    if t == TS {
        format!("{ts} NOT NULL")
    } else {
        t.replace(TS, ts)
    }
}

fn def(table: &str) -> &'static TableDef {
    DEFS.iter()
        .find(|d| d.0 == table)
        .unwrap_or_else(|| panic!("no tpcc table {table}"))
}

/// A table's column names in order (panics on an unknown table: a programming error).
pub fn columns(table: &str) -> Vec<&'static str> {
    def(table).1.iter().map(|c| c.0).collect()
}

/// `CREATE TABLE` for one table, with its primary key; where the server has storage
/// engines (MariaDB) the table gets `engine`, or the transactional one (InnoDB) if None.
pub fn create_table(d: &dyn SqlDialect, engine: Option<&str>, table: &str) -> String {
    create_table_keyed(d, engine, table, true)
}

/// `CREATE TABLE` with or without the primary key (a bulk load adds it afterwards with
/// `add_primary_key`: one sorted build instead of an index insertion per row).
pub fn create_table_keyed(
    d: &dyn SqlDialect,
    engine: Option<&str>,
    table: &str,
    key: bool,
) -> String {
    let (name, cols, pk) = def(table);
    let mut s = format!("CREATE TABLE {name} (");
    for (i, (c, t)) in cols.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(c);
        s.push(' ');
        s.push_str(&ty(d, t));
    }
    if key && !pk.is_empty() {
        s.push_str(", PRIMARY KEY (");
        s.push_str(pk);
        s.push(')');
    }
    s.push(')');
    if let Some(clause) = engine
        .or(d.transactional_engine())
        .and_then(|e| d.storage_engine_clause(e))
    {
        s.push_str(&clause);
    }
    s
}

/// `ALTER TABLE .. ADD PRIMARY KEY` for a table made by `create_table_keyed(.., false)`
/// (None for history, which has no key).
pub fn add_primary_key(table: &str) -> Option<String> {
    let (name, _, pk) = def(table);
    (!pk.is_empty()).then(|| format!("ALTER TABLE {name} ADD PRIMARY KEY ({pk})"))
}

/// `CREATE TABLE` for all nine tables, in `TABLES` order.
pub fn create_tables(d: &dyn SqlDialect, engine: Option<&str>) -> Vec<String> {
    TABLES.iter().map(|t| create_table(d, engine, t)).collect()
}

/// The secondary indexes, created after the load (customer by last name for Payment and
/// Order-Status; orders by customer for Order-Status's latest order).
pub fn create_indexes() -> Vec<String> {
    TABLES.iter().filter_map(|t| secondary_index(t)).collect()
}

/// A table's secondary index, if it has one (the same text in every dialect).
pub fn secondary_index(table: &str) -> Option<String> {
    let sql = match table {
        "customer" => {
            "CREATE INDEX idx_customer_name ON customer (c_w_id, c_d_id, c_last, c_first)"
        }
        "orders" => "CREATE INDEX idx_orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
        _ => return None,
    };
    Some(sql.to_string())
}

/// The statement gathering a table's optimizer statistics. Where the server can limit it
/// (PostgreSQL), only for the columns the transactions search, join or group by: the
/// wide random texts (S_DIST_xx, C_DATA, ...) would cost most of the sampling and
/// sorting and steer no plan.
pub fn analyze(d: &dyn SqlDialect, table: &str) -> String {
    let searched: &[&str] = match table {
        "item" => &["i_id"],
        "stock" => &["s_w_id", "s_i_id", "s_quantity"],
        "customer" => &["c_w_id", "c_d_id", "c_id", "c_last", "c_first"],
        "history" => &["h_w_id", "h_d_id"],
        "orders" => &["o_w_id", "o_d_id", "o_id", "o_c_id", "o_carrier_id"],
        "order_line" => &["ol_w_id", "ol_d_id", "ol_o_id", "ol_i_id"],
        _ => &[],
    };
    d.analyze(table, searched)
}

/// `DROP TABLE IF EXISTS` for each table (their indexes go with them).
pub fn drop_tables() -> Vec<String> {
    TABLES
        .iter()
        .map(|t| format!("DROP TABLE IF EXISTS {t}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sqlclient::Dialect;

    #[test]
    fn every_table_has_a_definition() {
        for t in TABLES {
            assert!(!columns(t).is_empty());
        }
        assert_eq!(columns("stock").len(), 17);
        assert_eq!(columns("customer").len(), 21);
    }

    #[test]
    fn dialects_differ_in_dates_and_engine() {
        let my = create_table(Dialect::Mariadb.sql(), Some("Aria"), "orders");
        assert!(my.contains("o_entry_d DATETIME NOT NULL"), "{my}");
        assert!(my.ends_with("ENGINE = Aria"), "{my}");
        let pg = create_table(Dialect::Postgres.sql(), None, "order_line");
        assert!(pg.contains("ol_delivery_d timestamp NULL"), "{pg}");
        assert!(pg.contains("ol_dist_info varchar(24) NOT NULL"), "{pg}");
        let my = create_table(Dialect::Mariadb.sql(), None, "order_line");
        assert!(my.contains("ol_dist_info char(24) NOT NULL"), "{my}");
        assert!(pg.contains("PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)"));
        assert!(!create_table(Dialect::Postgres.sql(), None, "history").contains("PRIMARY"));
    }
}

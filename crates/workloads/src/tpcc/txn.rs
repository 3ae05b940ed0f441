//! The five transactions (clauses 2.4 to 2.8): their inputs, drawn by a terminal with the
//! specification's random rules (`Input::draw`), and their execution as one server-side
//! transaction of text statements (values inlined) that reads only what the profile
//! reads and writes only what it writes. The SQL is the same on MariaDB and PostgreSQL.
//!
//! A deadlock, serialization failure or lock wait timeout rolls the attempt back and runs
//! the transaction again with the same inputs (`execute`), up to `max_retries` times.
//!
//! Delivery runs inline, not queued (clause 2.7.2.1 allows a deferred execution; we do
//! not defer): its response time is that of the whole batch of ten districts, one
//! database transaction.

use super::random::{last_name, uniform, Constants};
use super::Kind;
use bakeoff_engine::rng::Rng;
use bakeoff_sqlclient::{Client, DbError, Rows};

/// An item id that no item has (ids are 1..=100000): the 1% of New-Orders that roll back.
pub(crate) const UNUSED_ITEM: u32 = 100_001;

/// Where a terminal works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Home {
    /// Warehouses in the database (W).
    pub warehouses: u32,
    pub w_id: u32,
    /// Stock-Level's fixed district.
    pub d_id: u32,
}

/// A customer picked by last name (60%) or by id (40%).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Customer {
    Id(u32),
    Last(String),
}

/// One order line's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Line {
    pub i_id: u32,
    pub supply_w_id: u32,
    pub quantity: u32,
}

/// A transaction's inputs, as a terminal's operator keys them in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    NewOrder {
        w_id: u32,
        d_id: u32,
        c_id: u32,
        /// In item-id order (the last one `UNUSED_ITEM` for a planned rollback).
        lines: Vec<Line>,
    },
    Payment {
        w_id: u32,
        d_id: u32,
        c_w_id: u32,
        c_d_id: u32,
        customer: Customer,
        /// h_amount in cents.
        cents: i64,
    },
    OrderStatus {
        w_id: u32,
        d_id: u32,
        customer: Customer,
    },
    Delivery {
        w_id: u32,
        carrier: u32,
    },
    StockLevel {
        w_id: u32,
        d_id: u32,
        threshold: u32,
    },
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Committed,
    /// New-Order's planned rollback (an unused item id).
    RolledBack,
}

/// What one business transaction did, retries included.
#[derive(Debug)]
pub(crate) struct Report {
    /// The final outcome, or the error it was given up on.
    pub result: Result<Outcome, DbError>,
    /// Attempts repeated after a deadlock, serialization failure or lock wait timeout.
    pub retries: u32,
    /// The error kind of every failed attempt (retried or not), in order.
    pub failures: Vec<&'static str>,
    /// Delivery: districts that had no undelivered order (or lost it to another terminal).
    pub skipped: u32,
}

/// A connection and the number of statements sent on it.
pub(crate) struct Session {
    pub client: Client,
    pub statements: u64,
}

impl Session {
    pub fn new(client: Client) -> Session {
        Session {
            client,
            statements: 0,
        }
    }

    async fn q(&mut self, sql: &str) -> Result<Rows, DbError> {
        self.statements += 1;
        self.client.rows(sql).await
    }
}

fn uniform32(rng: &mut Rng, x: u32, y: u32) -> u32 {
    uniform(rng, u64::from(x), u64::from(y)) as u32
}

/// A warehouse other than `home`, uniform over the others (W > 1).
fn other_warehouse(rng: &mut Rng, home: u32, warehouses: u32) -> u32 {
    let w = uniform32(rng, 1, warehouses - 1);
    if w >= home {
        w + 1
    } else {
        w
    }
}

/// 60% by last name (NURand(255, 0, 999)), 40% by id (NURand(1023, 1, 3000)).
fn customer(rng: &mut Rng, k: &Constants) -> Customer {
    if rng.below(100) < 60 {
        Customer::Last(last_name(k.last_name_number(rng)))
    } else {
        Customer::Id(k.customer_id(rng) as u32)
    }
}

impl Input {
    /// Draws the inputs of a transaction of `kind` for a terminal at `home`.
    pub fn draw(kind: Kind, rng: &mut Rng, home: &Home, k: &Constants) -> Input {
        let w_id = home.w_id;
        match kind {
            Kind::NewOrder => new_order_input(rng, home, k),
            Kind::Payment => {
                let d_id = uniform32(rng, 1, 10);
                let (c_w_id, c_d_id) = if home.warehouses > 1 && rng.below(100) < 15 {
                    let w = other_warehouse(rng, w_id, home.warehouses);
                    (w, uniform32(rng, 1, 10))
                } else {
                    (w_id, d_id)
                };
                Input::Payment {
                    w_id,
                    d_id,
                    c_w_id,
                    c_d_id,
                    customer: customer(rng, k),
                    cents: uniform(rng, 100, 500_000) as i64,
                }
            }
            Kind::OrderStatus => Input::OrderStatus {
                w_id,
                d_id: uniform32(rng, 1, 10),
                customer: customer(rng, k),
            },
            Kind::Delivery => Input::Delivery {
                w_id,
                carrier: uniform32(rng, 1, 10),
            },
            Kind::StockLevel => Input::StockLevel {
                w_id,
                d_id: home.d_id,
                threshold: uniform32(rng, 10, 20),
            },
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Input::NewOrder { .. } => Kind::NewOrder,
            Input::Payment { .. } => Kind::Payment,
            Input::OrderStatus { .. } => Kind::OrderStatus,
            Input::Delivery { .. } => Kind::Delivery,
            Input::StockLevel { .. } => Kind::StockLevel,
        }
    }
}

/// New-Order's inputs (clause 2.4.1): 5..15 lines, 1% remote supply per line when W > 1,
/// 1% of orders with an unused item id on the last line.
fn new_order_input(rng: &mut Rng, home: &Home, k: &Constants) -> Input {
    let w_id = home.w_id;
    let d_id = uniform32(rng, 1, 10);
    let c_id = k.customer_id(rng) as u32;
    let ol_cnt = uniform32(rng, 5, 15);
    let rollback = rng.below(100) == 0;
    let mut lines: Vec<Line> = (0..ol_cnt)
        .map(|n| {
            let i_id = if rollback && n == ol_cnt - 1 {
                UNUSED_ITEM
            } else {
                k.item_id(rng) as u32
            };
            let supply_w_id = if home.warehouses > 1 && rng.below(100) == 0 {
                other_warehouse(rng, w_id, home.warehouses)
            } else {
                w_id
            };
            Line {
                i_id,
                supply_w_id,
                quantity: uniform32(rng, 1, 10),
            }
        })
        .collect();
    // Concurrent New-Orders then lock stock rows in the same order (no deadlocks between
    // them); the unused item id, the largest, stays last.
    lines.sort_unstable();
    Input::NewOrder {
        w_id,
        d_id,
        c_id,
        lines,
    }
}

fn retryable(kind: &str) -> bool {
    matches!(kind, "deadlock" | "serialization" | "lock_wait_timeout")
}

/// Runs the transaction of `input`: attempts until it commits (or rolls back as planned),
/// fails with an error that is not retried, or has been retried `max_retries` times. A
/// lost connection ends it at once (no ROLLBACK can be sent).
pub(crate) async fn execute(s: &mut Session, input: &Input, max_retries: u32) -> Report {
    let mut report = Report {
        result: Ok(Outcome::Committed),
        retries: 0,
        failures: Vec::new(),
        skipped: 0,
    };
    loop {
        report.skipped = 0;
        let e = match attempt(s, input, &mut report.skipped).await {
            Ok(outcome) => {
                report.result = Ok(outcome);
                return report;
            }
            Err(e) => e,
        };
        report.failures.push(e.kind);
        if e.kind == "lost_connection" {
            report.result = Err(e);
            return report;
        }
        if let Err(lost) = s.q("ROLLBACK").await {
            if lost.kind == "lost_connection" {
                report.failures.push(lost.kind);
                report.result = Err(lost);
                return report;
            }
        }
        if !retryable(e.kind) || report.retries >= max_retries {
            report.result = Err(e);
            return report;
        }
        report.retries += 1;
    }
}

async fn attempt(s: &mut Session, input: &Input, skipped: &mut u32) -> Result<Outcome, DbError> {
    match input {
        Input::NewOrder {
            w_id,
            d_id,
            c_id,
            lines,
        } => new_order(s, *w_id, *d_id, *c_id, lines).await,
        Input::Payment { .. } => payment(s, input).await.map(|()| Outcome::Committed),
        Input::OrderStatus {
            w_id,
            d_id,
            customer,
        } => order_status(s, *w_id, *d_id, customer)
            .await
            .map(|()| Outcome::Committed),
        Input::Delivery { w_id, carrier } => {
            *skipped = delivery(s, *w_id, *carrier).await?;
            Ok(Outcome::Committed)
        }
        Input::StockLevel {
            w_id,
            d_id,
            threshold,
        } => stock_level(s, *w_id, *d_id, *threshold)
            .await
            .map(|_| Outcome::Committed),
    }
}

/// A row the transaction needs was not there: the database does not hold a TPC-C load.
fn missing(what: String) -> DbError {
    DbError {
        kind: "missing_row",
        message: format!("{what} not found; is the tpcc data loaded?"),
    }
}

/// A value the server returned that is not what the schema says.
fn bad_value(what: &str, rows: &Rows) -> DbError {
    DbError {
        kind: "bad_value",
        message: format!("unexpected {what} in {:?}", rows.rows.first()),
    }
}

/// The first row's column `i` as text (None if there is no row or it is NULL).
fn text(rows: &Rows, i: usize) -> Option<&str> {
    rows.rows.first()?.get(i)?.as_deref()
}

fn int(rows: &Rows, i: usize, what: &str) -> Result<i64, DbError> {
    rows.int(i).ok_or_else(|| bad_value(what, rows))
}

fn money_at(rows: &Rows, i: usize, what: &str) -> Result<i64, DbError> {
    text(rows, i)
        .and_then(cents)
        .ok_or_else(|| bad_value(what, rows))
}

/// A decimal's text ("12.34", "-0.5", "7") in cents; None if it is not a decimal.
/// Digits past the second decimal are dropped (money columns have two).
pub(crate) fn cents(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int_part, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac.is_empty()) || !digits(int_part) || !digits(frac) {
        return None;
    }
    let whole: i64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    let mut f = frac.bytes().chain(std::iter::repeat(b'0')).take(2);
    let tenths = i64::from(f.next()? - b'0');
    let hundredths = i64::from(f.next()? - b'0');
    let v = whole.checked_mul(100)? + tenths * 10 + hundredths;
    Some(if neg { -v } else { v })
}

/// Cents as a decimal literal with two places: 1234 -> "12.34", -5 -> "-0.05".
pub(crate) fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let a = cents.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

/// A string literal: single quotes, embedded quotes doubled.
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// New-Order (clause 2.4.2). Rolls back (as planned) when an item is not found.
async fn new_order(
    s: &mut Session,
    w: u32,
    d: u32,
    c: u32,
    lines: &[Line],
) -> Result<Outcome, DbError> {
    s.q("BEGIN").await?;
    let r = s
        .q(&format!("SELECT w_tax FROM warehouse WHERE w_id = {w}"))
        .await?;
    if r.rows.is_empty() {
        return Err(missing(format!("warehouse {w}")));
    }
    let r = s
        .q(&format!(
            "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = {w} AND d_id = {d} FOR UPDATE"
        ))
        .await?;
    if r.rows.is_empty() {
        return Err(missing(format!("district {w}/{d}")));
    }
    let o_id = int(&r, 1, "d_next_o_id")?;
    s.q(&format!(
        "UPDATE district SET d_next_o_id = {} WHERE d_w_id = {w} AND d_id = {d}",
        o_id + 1
    ))
    .await?;
    let r = s
        .q(&format!(
            "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c}"
        ))
        .await?;
    if r.rows.is_empty() {
        return Err(missing(format!("customer {w}/{d}/{c}")));
    }
    let all_local = i32::from(lines.iter().all(|l| l.supply_w_id == w));
    s.q(&format!(
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) \
         VALUES ({o_id}, {d}, {w}, {c}, NOW(), NULL, {}, {all_local})",
        lines.len()
    ))
    .await?;
    s.q(&format!(
        "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ({o_id}, {d}, {w})"
    ))
    .await?;
    for (n, line) in lines.iter().enumerate() {
        if !order_line(s, w, d, o_id, n as u32 + 1, line).await? {
            s.q("ROLLBACK").await?;
            return Ok(Outcome::RolledBack);
        }
    }
    s.q("COMMIT").await?;
    Ok(Outcome::Committed)
}

/// One line of New-Order: the item, its stock (locked, then updated), the order line.
/// False when the item does not exist (the planned rollback); any other missing row is
/// an error.
async fn order_line(
    s: &mut Session,
    w: u32,
    d: u32,
    o_id: i64,
    number: u32,
    l: &Line,
) -> Result<bool, DbError> {
    let (i, sw, q) = (l.i_id, l.supply_w_id, l.quantity);
    let r = s
        .q(&format!(
            "SELECT i_price, i_name, i_data FROM item WHERE i_id = {i}"
        ))
        .await?;
    if r.rows.is_empty() {
        if i == UNUSED_ITEM {
            return Ok(false);
        }
        return Err(missing(format!("item {i}")));
    }
    let price = money_at(&r, 0, "i_price")?;
    let r = s
        .q(&format!(
            "SELECT s_quantity, s_dist_{d:02}, s_data FROM stock WHERE s_w_id = {sw} AND s_i_id = {i} FOR UPDATE"
        ))
        .await?;
    if r.rows.is_empty() {
        return Err(missing(format!("stock {sw}/{i}")));
    }
    let have = int(&r, 0, "s_quantity")?;
    let dist_info = text(&r, 1).unwrap_or_default().to_string();
    let q64 = i64::from(q);
    let left = if have >= q64 + 10 {
        have - q64
    } else {
        have - q64 + 91
    };
    let remote = i32::from(sw != w);
    s.q(&format!(
        "UPDATE stock SET s_quantity = {left}, s_ytd = s_ytd + {q}, s_order_cnt = s_order_cnt + 1, \
         s_remote_cnt = s_remote_cnt + {remote} WHERE s_w_id = {sw} AND s_i_id = {i}"
    ))
    .await?;
    s.q(&format!(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
         ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
         VALUES ({o_id}, {d}, {w}, {number}, {i}, {sw}, NULL, {q}, {}, {})",
        money(q64 * price),
        quote(&dist_info)
    ))
    .await?;
    Ok(true)
}

/// The customer's id: given, or the one at position ceil(n/2) of the n customers with
/// that last name in the district, ordered by first name (clause 2.5.2.2).
async fn customer_id(s: &mut Session, w: u32, d: u32, c: &Customer) -> Result<i64, DbError> {
    let last = match c {
        Customer::Id(id) => return Ok(i64::from(*id)),
        Customer::Last(last) => last,
    };
    let r = s
        .q(&format!(
            "SELECT c_id FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = {} ORDER BY c_first",
            quote(last)
        ))
        .await?;
    let n = r.rows.len();
    if n == 0 {
        return Err(missing(format!("customer named {last} in {w}/{d}")));
    }
    let row = &r.rows[n.div_ceil(2) - 1];
    row.first()
        .and_then(|v| v.as_deref())
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| bad_value("c_id", &r))
}

/// Payment (clause 2.5.2).
async fn payment(s: &mut Session, input: &Input) -> Result<(), DbError> {
    let Input::Payment {
        w_id: w,
        d_id: d,
        c_w_id: cw,
        c_d_id: cd,
        customer,
        cents,
    } = input
    else {
        unreachable!("payment() is called with a Payment input");
    };
    let h = money(*cents);
    s.q("BEGIN").await?;
    s.q(&format!(
        "UPDATE warehouse SET w_ytd = w_ytd + {h} WHERE w_id = {w}"
    ))
    .await?;
    let wr = s
        .q(&format!(
            "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = {w}"
        ))
        .await?;
    s.q(&format!(
        "UPDATE district SET d_ytd = d_ytd + {h} WHERE d_w_id = {w} AND d_id = {d}"
    ))
    .await?;
    let dr = s
        .q(&format!(
            "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = {w} AND d_id = {d}"
        ))
        .await?;
    let (Some(w_name), Some(d_name)) = (text(&wr, 0), text(&dr, 0)) else {
        return Err(missing(format!("warehouse {w} or district {w}/{d}")));
    };
    let h_data = format!("{w_name}    {d_name}");
    let c = customer_id(s, *cw, *cd, customer).await?;
    pay_customer(s, (*cw, *cd, c), (*w, *d), &h).await?;
    s.q(&format!(
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
         VALUES ({c}, {cd}, {cw}, {d}, {w}, NOW(), {h}, {})",
        quote(&h_data)
    ))
    .await?;
    s.q("COMMIT").await?;
    Ok(())
}

/// Payment's customer part: read (and lock) the customer `(cw, cd, c)`, then charge the
/// amount `h` paid at `(w, d)`; a bad-credit customer's C_DATA gets the payment's ids
/// and amount in front, 500 characters at most (clause 2.5.2.2).
async fn pay_customer(
    s: &mut Session,
    (cw, cd, c): (u32, u32, i64),
    (w, d): (u32, u32),
    h: &str,
) -> Result<(), DbError> {
    let key = format!("WHERE c_w_id = {cw} AND c_d_id = {cd} AND c_id = {c}");
    let r = s
        .q(&format!(
            "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, \
             c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer {key} FOR UPDATE"
        ))
        .await?;
    if r.rows.is_empty() {
        return Err(missing(format!("customer {cw}/{cd}/{c}")));
    }
    let set = format!(
        "c_balance = c_balance - {h}, c_ytd_payment = c_ytd_payment + {h}, c_payment_cnt = c_payment_cnt + 1"
    );
    if text(&r, 10).map(str::trim) == Some("BC") {
        let prefix = quote(&format!("{c} {cd} {cw} {d} {w} {h} "));
        s.q(&format!(
            "UPDATE customer SET {set}, c_data = SUBSTR(CONCAT({prefix}, c_data), 1, 500) {key}"
        ))
        .await?;
    } else {
        s.q(&format!("UPDATE customer SET {set} {key}")).await?;
    }
    Ok(())
}

/// Order-Status (clause 2.6.2): the customer, their newest order and its lines. Read-only.
async fn order_status(s: &mut Session, w: u32, d: u32, c: &Customer) -> Result<(), DbError> {
    s.q("START TRANSACTION READ ONLY").await?;
    let c = customer_id(s, w, d, c).await?;
    let r = s
        .q(&format!(
            "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c}"
        ))
        .await?;
    if r.rows.is_empty() {
        return Err(missing(format!("customer {w}/{d}/{c}")));
    }
    let r = s
        .q(&format!(
            "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_c_id = {c} \
             ORDER BY o_id DESC LIMIT 1"
        ))
        .await?;
    // A customer without orders is possible after a load of fewer orders; nothing to list.
    if !r.rows.is_empty() {
        let o = int(&r, 0, "o_id")?;
        s.q(&format!(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
             WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o}"
        ))
        .await?;
    }
    s.q("COMMIT").await?;
    Ok(())
}

/// Delivery (clause 2.7.4): the oldest undelivered order of each of the ten districts, in
/// one transaction. The districts skipped (none undelivered, or taken by another
/// terminal's Delivery meanwhile).
async fn delivery(s: &mut Session, w: u32, carrier: u32) -> Result<u32, DbError> {
    s.q("BEGIN").await?;
    let mut skipped = 0;
    for d in 1..=10 {
        if !deliver_district(s, w, d, carrier).await? {
            skipped += 1;
        }
    }
    s.q("COMMIT").await?;
    Ok(skipped)
}

/// Delivers one district's oldest new order; false if it had none to deliver.
async fn deliver_district(s: &mut Session, w: u32, d: u32, carrier: u32) -> Result<bool, DbError> {
    let r = s
        .q(&format!(
            "SELECT no_o_id FROM new_order WHERE no_w_id = {w} AND no_d_id = {d} ORDER BY no_o_id LIMIT 1"
        ))
        .await?;
    if r.rows.is_empty() {
        return Ok(false);
    }
    let o = int(&r, 0, "no_o_id")?;
    let r = s
        .q(&format!(
            "DELETE FROM new_order WHERE no_w_id = {w} AND no_d_id = {d} AND no_o_id = {o}"
        ))
        .await?;
    if r.affected == 0 {
        return Ok(false);
    }
    let r = s
        .q(&format!(
            "SELECT o_c_id FROM orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_id = {o}"
        ))
        .await?;
    if r.rows.is_empty() {
        return Err(missing(format!("order {w}/{d}/{o}")));
    }
    let c = int(&r, 0, "o_c_id")?;
    s.q(&format!(
        "UPDATE orders SET o_carrier_id = {carrier} WHERE o_w_id = {w} AND o_d_id = {d} AND o_id = {o}"
    ))
    .await?;
    s.q(&format!(
        "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o}"
    ))
    .await?;
    let r = s
        .q(&format!(
            "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o}"
        ))
        .await?;
    let total = match text(&r, 0) {
        Some(t) => cents(t).ok_or_else(|| bad_value("SUM(ol_amount)", &r))?,
        None => return Err(missing(format!("order lines of {w}/{d}/{o}"))),
    };
    s.q(&format!(
        "UPDATE customer SET c_balance = c_balance + {}, c_delivery_cnt = c_delivery_cnt + 1 \
         WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c}",
        money(total)
    ))
    .await?;
    Ok(true)
}

/// Stock-Level (clause 2.8.2): distinct items of the district's last 20 orders whose
/// stock is below `threshold`. Read-only.
async fn stock_level(s: &mut Session, w: u32, d: u32, threshold: u32) -> Result<i64, DbError> {
    s.q("START TRANSACTION READ ONLY").await?;
    let r = s
        .q(&format!(
            "SELECT d_next_o_id FROM district WHERE d_w_id = {w} AND d_id = {d}"
        ))
        .await?;
    if r.rows.is_empty() {
        return Err(missing(format!("district {w}/{d}")));
    }
    let next = int(&r, 0, "d_next_o_id")?;
    let r = s
        .q(&format!(
            "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_i_id = ol_i_id \
             WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id < {next} AND ol_o_id >= {} \
             AND s_w_id = {w} AND s_quantity < {threshold}",
            next - 20
        ))
        .await?;
    let low = int(&r, 0, "COUNT(DISTINCT s_i_id)")?;
    s.q("COMMIT").await?;
    Ok(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_round_trips() {
        assert_eq!(cents("12.34"), Some(1234));
        assert_eq!(cents("-0.5"), Some(-50));
        assert_eq!(cents("7"), Some(700));
        assert_eq!(cents(" 1000.00 "), Some(100_000));
        assert_eq!(cents("3.456"), Some(345));
        assert_eq!(cents("x"), None);
        assert_eq!(cents("."), None);
        assert_eq!(cents("1.2.3"), None);
        assert_eq!(money(1234), "12.34");
        assert_eq!(money(-5), "-0.05");
        assert_eq!(money(500_000), "5000.00");
        assert_eq!(quote("it's"), "'it''s'");
    }

    fn home(warehouses: u32) -> Home {
        Home {
            warehouses,
            w_id: 1,
            d_id: 3,
        }
    }

    #[test]
    fn new_order_inputs_follow_the_profile() {
        let k = Constants::for_run(1);
        let mut rng = Rng::new(9);
        let (mut rollbacks, mut remote, mut lines_total) = (0, 0, 0);
        for _ in 0..10_000 {
            let Input::NewOrder {
                lines, d_id, c_id, ..
            } = Input::draw(Kind::NewOrder, &mut rng, &home(4), &k)
            else {
                panic!("not a New-Order");
            };
            assert!((5..=15).contains(&lines.len()));
            assert!((1..=10).contains(&d_id) && (1..=3000).contains(&c_id));
            assert!(lines.windows(2).all(|p| p[0] <= p[1]), "sorted by item");
            if lines.iter().any(|l| l.i_id == UNUSED_ITEM) {
                rollbacks += 1;
                assert_eq!(lines.last().map(|l| l.i_id), Some(UNUSED_ITEM));
            }
            for l in &lines {
                assert!((1..=10).contains(&l.quantity) && (1..=4).contains(&l.supply_w_id));
                remote += usize::from(l.supply_w_id != 1);
                lines_total += 1;
            }
        }
        assert!((50..=150).contains(&rollbacks), "{rollbacks} rollbacks");
        let share = remote as f64 / lines_total as f64;
        assert!((0.005..0.015).contains(&share), "remote share {share}");
    }

    #[test]
    fn payment_inputs_follow_the_profile() {
        let k = Constants::for_run(2);
        let mut rng = Rng::new(4);
        let (mut by_name, mut remote) = (0, 0);
        for _ in 0..10_000 {
            let Input::Payment {
                c_w_id,
                customer,
                cents,
                d_id,
                c_d_id,
                ..
            } = Input::draw(Kind::Payment, &mut rng, &home(3), &k)
            else {
                panic!("not a Payment");
            };
            assert!((100..=500_000).contains(&cents));
            if c_w_id == 1 {
                assert_eq!(d_id, c_d_id);
            } else {
                remote += 1;
            }
            if let Customer::Last(n) = customer {
                by_name += 1;
                assert!(n.len() >= 9);
            }
        }
        assert!((5_700..6_300).contains(&by_name), "{by_name} by name");
        assert!((1_300..1_700).contains(&remote), "{remote} remote");
        // One warehouse: never remote.
        for _ in 0..1000 {
            let i = Input::draw(Kind::Payment, &mut rng, &home(1), &k);
            assert!(matches!(i, Input::Payment { c_w_id: 1, .. }));
        }
    }

    #[test]
    fn other_warehouse_is_never_home() {
        let mut rng = Rng::new(5);
        for _ in 0..1000 {
            let w = other_warehouse(&mut rng, 2, 3);
            assert!(w == 1 || w == 3);
        }
    }
}

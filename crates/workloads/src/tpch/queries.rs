//! The 22 queries, each a file in `queries/` a reader can open (`qNN.sql`, standard SQL
//! that PostgreSQL, MariaDB and MySQL read alike; `queries/sqlite/qNN.sql` where SQLite
//! needs other words: the year by `strftime`, `substr`), with `:NAME` substitution
//! parameters. The parameters are the specification's (clause 2.4): drawn per run from
//! a seed (`params = "random"`) or its validation values (`"validation"`), and every
//! date is computed here and written as the server's date literal, so no query needs
//! date arithmetic in SQL. Where the specification's ORDER BY leaves ties (Q3, Q10, Q11,
//! Q18), a key breaks them, so every server returns one order.

use bakeoff_engine::rng::Rng;
use bakeoff_sqlclient::SqlDialect;

/// Each query's file: standard SQL, and SQLite's own where it differs.
const FILES: [(&str, Option<&str>); 22] = [
    (include_str!("queries/q01.sql"), None),
    (include_str!("queries/q02.sql"), None),
    (include_str!("queries/q03.sql"), None),
    (include_str!("queries/q04.sql"), None),
    (include_str!("queries/q05.sql"), None),
    (include_str!("queries/q06.sql"), None),
    (
        include_str!("queries/q07.sql"),
        Some(include_str!("queries/sqlite/q07.sql")),
    ),
    (
        include_str!("queries/q08.sql"),
        Some(include_str!("queries/sqlite/q08.sql")),
    ),
    (
        include_str!("queries/q09.sql"),
        Some(include_str!("queries/sqlite/q09.sql")),
    ),
    (include_str!("queries/q10.sql"), None),
    (include_str!("queries/q11.sql"), None),
    (include_str!("queries/q12.sql"), None),
    (include_str!("queries/q13.sql"), None),
    (include_str!("queries/q14.sql"), None),
    (include_str!("queries/q15.sql"), None),
    (include_str!("queries/q16.sql"), None),
    (include_str!("queries/q17.sql"), None),
    (include_str!("queries/q18.sql"), None),
    (include_str!("queries/q19.sql"), None),
    (include_str!("queries/q20.sql"), None),
    (include_str!("queries/q21.sql"), None),
    (
        include_str!("queries/q22.sql"),
        Some(include_str!("queries/sqlite/q22.sql")),
    ),
];

/// The file of query `q` (1..=22) as the server of `dialect` reads it.
pub fn text(q: u8, dialect: &dyn SqlDialect) -> &'static str {
    let (base, sqlite) = FILES[usize::from(q) - 1];
    match sqlite {
        Some(s) if dialect.name() == "sqlite" => s,
        _ => base,
    }
}

/// The power run's order, the specification's stream 00 (appendix A).
pub const POWER_ORDER: [u8; 22] = STREAM_ORDERS[0];

/// The order of the 22 queries in query streams 00 to 40: the table in TPC-H's
/// specification, appendix A ("Ordering of queries"), also the reference `qgen`'s
/// permutation table. Row 0 is the power run; a throughput run's stream `s` takes row
/// `s mod 41`.
pub const STREAM_ORDERS: [[u8; 22]; 41] = [
    /* 00 */
    [
        14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12,
    ],
    /* 01 */
    [
        21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4,
    ],
    /* 02 */
    [
        6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21,
    ],
    /* 03 */
    [
        8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3,
    ],
    /* 04 */
    [
        5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20,
    ],
    /* 05 */
    [
        21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9,
    ],
    /* 06 */
    [
        10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21,
    ],
    /* 07 */
    [
        18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12,
    ],
    /* 08 */
    [
        19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11,
    ],
    /* 09 */
    [
        8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16,
    ],
    /* 10 */
    [
        6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5,
    ],
    /* 11 */
    [
        15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7,
    ],
    /* 12 */
    [
        1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15,
    ],
    /* 13 */
    [
        21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19,
    ],
    /* 14 */
    [
        2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6,
    ],
    /* 15 */
    [
        16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18,
    ],
    /* 16 */
    [
        1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21,
    ],
    /* 17 */
    [
        3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12,
    ],
    /* 18 */
    [
        14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16,
    ],
    /* 19 */
    [
        4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1,
    ],
    /* 20 */
    [
        16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8,
    ],
    /* 21 */
    [
        20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2,
    ],
    /* 22 */
    [
        16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17,
    ],
    /* 23 */
    [
        18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7,
    ],
    /* 24 */
    [
        7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16,
    ],
    /* 25 */
    [
        18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9,
    ],
    /* 26 */
    [
        13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16,
    ],
    /* 27 */
    [
        14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19,
    ],
    /* 28 */
    [
        10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11,
    ],
    /* 29 */
    [
        10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4,
    ],
    /* 30 */
    [
        7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2,
    ],
    /* 31 */
    [
        2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22,
    ],
    /* 32 */
    [
        15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2,
    ],
    /* 33 */
    [
        15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1,
    ],
    /* 34 */
    [
        1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2,
    ],
    /* 35 */
    [
        14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11,
    ],
    /* 36 */
    [
        9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19,
    ],
    /* 37 */
    [
        13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20,
    ],
    /* 38 */
    [
        20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9,
    ],
    /* 39 */
    [
        3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2,
    ],
    /* 40 */
    [
        13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19,
    ],
];

/// A substitution value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number, written as it is.
    Num(String),
    /// Text, written as a string literal.
    Text(String),
    /// A date `YYYY-MM-DD`, written as the server's date literal.
    Date(String),
}

/// One query's parameters, by name.
pub type Params = Vec<(&'static str, Value)>;

/// Query `q`'s SQL for `dialect`: its file with the comment lines dropped and every
/// `:NAME` replaced (longest names first, so `:DATE_END` is not read as `:DATE`).
pub fn render(q: u8, params: &Params, dialect: &dyn SqlDialect) -> String {
    let body: Vec<&str> = text(q, dialect)
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect();
    let mut sql = body.join("\n");
    let mut sorted: Vec<&(&str, Value)> = params.iter().collect();
    sorted.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    for (name, v) in sorted {
        let lit = match v {
            Value::Num(n) => n.clone(),
            Value::Text(t) => dialect.string_literal(t),
            Value::Date(d) => dialect.date_literal(d),
        };
        sql = sql.replace(&format!(":{name}"), &lit);
    }
    sql.trim().to_string()
}

/// Days since 1970-01-01 of a date (the civil calendar).
fn days(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `n` days after 1970-01-01, as `YYYY-MM-DD`.
fn ymd(n: i64) -> String {
    let z = n + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The first of a month `months` after January of `year`.
fn month(year: i64, months: i64) -> (i64, i64) {
    (year + months / 12, months % 12 + 1)
}

fn date(y: i64, m: i64, d: i64) -> Value {
    Value::Date(ymd(days(y, m, d)))
}

/// `(y, m)` plus `add` months, first of the month.
fn plus_months(y: i64, m: i64, add: i64) -> Value {
    let (y2, m2) = month(y, m - 1 + add);
    date(y2, m2, 1)
}

const NATIONS: [(&str, usize); 25] = [
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
];
const REGIONS: [&str; 5] = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"];
const TYPE1: [&str; 6] = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"];
const TYPE2: [&str; 5] = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"];
const TYPE3: [&str; 5] = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"];
const CONTAINER1: [&str; 5] = ["SM", "LG", "MED", "JUMBO", "WRAP"];
const CONTAINER2: [&str; 8] = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"];
const SEGMENTS: [&str; 5] = [
    "AUTOMOBILE",
    "BUILDING",
    "FURNITURE",
    "MACHINERY",
    "HOUSEHOLD",
];
const SHIPMODES: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];
const WORDS1: [&str; 4] = ["special", "pending", "unusual", "express"];
const WORDS2: [&str; 4] = ["packages", "requests", "accounts", "deposits"];

/// The parameters of every query: the specification's validation values, or drawn from
/// `seed`. `sf` sets Q11's fraction.
pub fn params(q: u8, sf: f64, validation: bool, seed: u64) -> Params {
    let mut rng = Rng::new(seed ^ (u64::from(q) << 56) ^ 0x7063_6874);
    let r = &mut rng;
    let pick = |r: &mut Rng, xs: &[&'static str]| xs[r.below(xs.len() as u64) as usize];
    let int = |r: &mut Rng, lo: i64, hi: i64| lo + r.below((hi - lo + 1) as u64) as i64;
    let num = |x: i64| Value::Num(x.to_string());
    let text = |s: &str| Value::Text(s.to_string());
    let colors = tpchgen::distribution::Distributions::static_default()
        .part_colors()
        .get_values();
    let color = |r: &mut Rng| colors[r.below(colors.len() as u64) as usize].to_string();
    let nation = |r: &mut Rng| NATIONS[r.below(25) as usize];
    let brand = |r: &mut Rng| format!("Brand#{}{}", int(r, 1, 5), int(r, 1, 5));
    let year = |r: &mut Rng| int(r, 1993, 1997);
    let v = validation;
    match q {
        1 => {
            let delta = if v { 90 } else { int(r, 60, 120) };
            vec![("SHIPDATE", Value::Date(ymd(days(1998, 12, 1) - delta)))]
        }
        2 => {
            let (size, ty, region) = if v {
                (15, "BRASS", "EUROPE")
            } else {
                (int(r, 1, 50), pick(r, &TYPE3), pick(r, &REGIONS))
            };
            vec![
                ("SIZE", num(size)),
                ("TYPE_SUFFIX", text(&format!("%{ty}"))),
                ("REGION", text(region)),
            ]
        }
        3 => {
            let (seg, day) = if v {
                ("BUILDING", 15)
            } else {
                (pick(r, &SEGMENTS), int(r, 1, 31))
            };
            vec![("SEGMENT", text(seg)), ("DATE", date(1995, 3, day))]
        }
        4 | 10 | 15 => {
            let (y, m) = match (v, q) {
                (true, 4) => (1993, 7),
                (true, 10) => (1993, 10),
                (true, _) => (1996, 1),
                // Q10: February 1993 to January 1995; Q4, Q15: January 1993 to October 1997.
                (false, 10) => month(1993, int(r, 1, 24)),
                (false, _) => month(1993, int(r, 0, 57)),
            };
            vec![("DATE", date(y, m, 1)), ("DATE_END", plus_months(y, m, 3))]
        }
        5 => {
            let (region, y) = if v {
                ("ASIA", 1994)
            } else {
                (pick(r, &REGIONS), year(r))
            };
            vec![
                ("REGION", text(region)),
                ("DATE", date(y, 1, 1)),
                ("DATE_END", date(y + 1, 1, 1)),
            ]
        }
        6 => {
            let (y, disc, qty) = if v {
                (1994, 6, 24)
            } else {
                (year(r), int(r, 2, 9), int(r, 24, 25))
            };
            vec![
                ("DATE", date(y, 1, 1)),
                ("DATE_END", date(y + 1, 1, 1)),
                ("DISCOUNT_LO", Value::Num(format!("0.0{}", disc - 1))),
                ("DISCOUNT_HI", Value::Num(format!("0.{:02}", disc + 1))),
                ("QUANTITY", num(qty)),
            ]
        }
        7 => {
            let (a, b) = if v {
                ("FRANCE", "GERMANY")
            } else {
                let a = nation(r).0;
                let mut b = nation(r).0;
                while b == a {
                    b = nation(r).0;
                }
                (a, b)
            };
            vec![
                ("NATION1", text(a)),
                ("NATION2", text(b)),
                ("FIRST_DAY", date(1995, 1, 1)),
                ("LAST_DAY", date(1996, 12, 31)),
            ]
        }
        8 => {
            let (n, ty) = if v {
                (("BRAZIL", 1), "ECONOMY ANODIZED STEEL".to_string())
            } else {
                let n = nation(r);
                let ty = format!(
                    "{} {} {}",
                    pick(r, &TYPE1),
                    pick(r, &TYPE2),
                    pick(r, &TYPE3)
                );
                (n, ty)
            };
            vec![
                ("NATION", text(n.0)),
                ("REGION", text(REGIONS[n.1])),
                ("TYPE", text(&ty)),
                ("FIRST_DAY", date(1995, 1, 1)),
                ("LAST_DAY", date(1996, 12, 31)),
            ]
        }
        9 => {
            let c = if v { "green".to_string() } else { color(r) };
            vec![("COLOR_ANYWHERE", text(&format!("%{c}%")))]
        }
        11 => {
            let n = if v { "GERMANY" } else { nation(r).0 };
            vec![
                ("NATION", text(n)),
                ("FRACTION", Value::Num(format!("{}", 0.0001 / sf))),
            ]
        }
        12 => {
            let (a, b, y) = if v {
                ("MAIL", "SHIP", 1994)
            } else {
                let a = pick(r, &SHIPMODES);
                let mut b = pick(r, &SHIPMODES);
                while b == a {
                    b = pick(r, &SHIPMODES);
                }
                (a, b, year(r))
            };
            vec![
                ("SHIPMODE1", text(a)),
                ("SHIPMODE2", text(b)),
                ("DATE", date(y, 1, 1)),
                ("DATE_END", date(y + 1, 1, 1)),
            ]
        }
        13 => {
            let (a, b) = if v {
                ("special", "requests")
            } else {
                (pick(r, &WORDS1), pick(r, &WORDS2))
            };
            vec![("WORDS", text(&format!("%{a}%{b}%")))]
        }
        14 => {
            let (y, m) = if v {
                (1995, 9)
            } else {
                month(1993, int(r, 0, 59))
            };
            vec![("DATE", date(y, m, 1)), ("DATE_END", plus_months(y, m, 1))]
        }
        16 => {
            let (b, ty, sizes) = if v {
                (
                    "Brand#45".to_string(),
                    "MEDIUM POLISHED".to_string(),
                    vec![49, 14, 23, 45, 19, 3, 36, 9],
                )
            } else {
                let b = brand(r);
                let ty = format!("{} {}", pick(r, &TYPE1), pick(r, &TYPE2));
                let mut sizes: Vec<i64> = Vec::new();
                while sizes.len() < 8 {
                    let s = int(r, 1, 50);
                    if !sizes.contains(&s) {
                        sizes.push(s);
                    }
                }
                (b, ty, sizes)
            };
            let mut p = vec![
                ("BRAND", text(&b)),
                ("TYPE_PREFIX", text(&format!("{ty}%"))),
            ];
            const NAMES: [&str; 8] = [
                "SIZE1", "SIZE2", "SIZE3", "SIZE4", "SIZE5", "SIZE6", "SIZE7", "SIZE8",
            ];
            p.extend(NAMES.iter().zip(sizes).map(|(n, s)| (*n, num(s))));
            p
        }
        17 => {
            let (b, c) = if v {
                ("Brand#23".to_string(), "MED BOX".to_string())
            } else {
                (
                    brand(r),
                    format!("{} {}", pick(r, &CONTAINER1), pick(r, &CONTAINER2)),
                )
            };
            vec![("BRAND", text(&b)), ("CONTAINER", text(&c))]
        }
        18 => {
            let qty = if v { 300 } else { int(r, 312, 315) };
            vec![("QUANTITY", num(qty))]
        }
        19 => {
            let (q1, q2, q3, b) = if v {
                (
                    1,
                    10,
                    20,
                    ["Brand#12".into(), "Brand#23".into(), "Brand#34".into()],
                )
            } else {
                (
                    int(r, 1, 10),
                    int(r, 10, 20),
                    int(r, 20, 30),
                    [brand(r), brand(r), brand(r)],
                )
            };
            vec![
                ("QUANTITY1", num(q1)),
                ("QUANTITY1_HI", num(q1 + 10)),
                ("QUANTITY2", num(q2)),
                ("QUANTITY2_HI", num(q2 + 10)),
                ("QUANTITY3", num(q3)),
                ("QUANTITY3_HI", num(q3 + 10)),
                ("BRAND1", text(&b[0])),
                ("BRAND2", text(&b[1])),
                ("BRAND3", text(&b[2])),
            ]
        }
        20 => {
            let (c, y, n) = if v {
                ("forest".to_string(), 1994, "CANADA")
            } else {
                (color(r), year(r), nation(r).0)
            };
            vec![
                ("COLOR_PREFIX", text(&format!("{c}%"))),
                ("DATE", date(y, 1, 1)),
                ("DATE_END", date(y + 1, 1, 1)),
                ("NATION", text(n)),
            ]
        }
        21 => {
            let n = if v { "SAUDI ARABIA" } else { nation(r).0 };
            vec![("NATION", text(n))]
        }
        _ => {
            let codes: Vec<i64> = if v {
                vec![13, 31, 23, 29, 30, 18, 17]
            } else {
                let mut c = Vec::new();
                while c.len() < 7 {
                    let x = int(r, 10, 34);
                    if !c.contains(&x) {
                        c.push(x);
                    }
                }
                c
            };
            const NAMES: [&str; 7] = ["I1", "I2", "I3", "I4", "I5", "I6", "I7"];
            NAMES
                .iter()
                .zip(codes)
                .map(|(n, c)| (*n, text(&c.to_string())))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sqlclient::Dialect;

    #[test]
    fn dates_round_trip_and_months_roll_over() {
        assert_eq!(ymd(days(1998, 12, 1) - 90), "1998-09-02");
        assert_eq!(ymd(days(1996, 2, 28) + 1), "1996-02-29");
        assert_eq!(plus_months(1997, 11, 3), Value::Date("1998-02-01".into()));
        assert_eq!(month(1993, 57), (1997, 10));
    }

    #[test]
    fn every_query_renders_with_no_parameter_left() {
        for d in [
            Dialect::Postgres,
            Dialect::Mariadb,
            Dialect::Mysql,
            Dialect::Sqlite,
        ] {
            for q in 1..=22u8 {
                for (validation, seed) in [(true, 0), (false, 1), (false, 99)] {
                    let sql = render(q, &params(q, 0.1, validation, seed), d.sql());
                    assert!(!sql.contains(':'), "Q{q} {d:?}: {sql}");
                    assert!(
                        sql.starts_with("select") || sql.starts_with("with"),
                        "{sql}"
                    );
                }
            }
        }
        let pg = render(1, &params(1, 1.0, true, 0), Dialect::Postgres.sql());
        assert!(pg.contains("l_shipdate <= DATE '1998-09-02'"), "{pg}");
        let lite = render(1, &params(1, 1.0, true, 0), Dialect::Sqlite.sql());
        assert!(lite.contains("l_shipdate <= '1998-09-02'"), "{lite}");
        assert!(render(7, &params(7, 1.0, true, 0), Dialect::Sqlite.sql()).contains("strftime"));
        let q6 = render(6, &params(6, 1.0, true, 0), Dialect::Postgres.sql());
        assert!(
            q6.contains("between 0.05 and 0.07") && q6.contains("< 24"),
            "{q6}"
        );
        let q16 = render(16, &params(16, 1.0, true, 0), Dialect::Postgres.sql());
        assert!(q16.contains("in (49, 14, 23, 45, 19, 3, 36, 9)"), "{q16}");
        // Drawn parameters follow the seed.
        assert_eq!(params(2, 1.0, false, 5), params(2, 1.0, false, 5));
        let drawn: std::collections::HashSet<String> = (0..20)
            .map(|s| format!("{:?}", params(3, 1.0, false, s)))
            .collect();
        assert!(drawn.len() > 5);
        let mut order = POWER_ORDER.to_vec();
        order.sort_unstable();
        assert_eq!(order, (1..=22).collect::<Vec<u8>>());
    }
}

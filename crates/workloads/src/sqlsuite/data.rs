//! The suite's seeded data: the Wisconsin benchmark's relations (Bitton, DeWitt and
//! Turbyfill, 1983) and a small ATIS-like airline schema, with a loader that sends
//! multi-row INSERTs (MariaDB) or COPY (PostgreSQL).
//!
//! Wisconsin rows follow the published rules: `unique2` is the row's position
//! (0..n-1, the load order), `unique1` a seeded random permutation of 0..n-1, `two`,
//! `four`, `ten`, `twenty` are `unique1` modulo 2, 4, 10, 20, `onePercent` modulo 100,
//! `tenPercent` modulo 10, `twentyPercent` modulo 5, `fiftyPercent` modulo 2, `unique3`
//! equals `unique1`, `evenOnePercent` is `onePercent * 2` and `oddOnePercent`
//! `onePercent * 2 + 1`. The 52-character strings `stringu1` and `stringu2` carry
//! `unique1` and `unique2` as 7 significant letters (base 26, A = 0, the least
//! significant letter first, as in PostgreSQL's regression copy of the relations) then
//! 45 `x`; `string4` cycles through `AAAA`, `HHHH`, `OOOO`, `VVVV` (followed by 48 `x`).

use super::Ctx;
use bakeoff_engine::rng::{mix, Rng};
use bakeoff_engine::LoadError;
use bakeoff_sqlclient::{BulkLoad, SqlDialect};

/// A value to load: an integer or a string (without quotes, tabs, newlines or
/// backslashes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    I(i64),
    S(String),
}

/// One row of a Wisconsin relation (column names lowercase, as both servers keep them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WisconsinRow {
    pub unique1: i64,
    pub unique2: i64,
    pub two: i64,
    pub four: i64,
    pub ten: i64,
    pub twenty: i64,
    pub one_percent: i64,
    pub ten_percent: i64,
    pub twenty_percent: i64,
    pub fifty_percent: i64,
    pub unique3: i64,
    pub even_one_percent: i64,
    pub odd_one_percent: i64,
    pub stringu1: String,
    pub stringu2: String,
    pub string4: String,
}

/// The columns of a Wisconsin relation, for `CREATE TABLE`.
pub const WISCONSIN_COLUMNS: &str = "unique1 int NOT NULL, unique2 int NOT NULL, \
     two int NOT NULL, four int NOT NULL, ten int NOT NULL, twenty int NOT NULL, \
     onepercent int NOT NULL, tenpercent int NOT NULL, twentypercent int NOT NULL, \
     fiftypercent int NOT NULL, unique3 int NOT NULL, evenonepercent int NOT NULL, \
     oddonepercent int NOT NULL, stringu1 char(52) NOT NULL, \
     stringu2 char(52) NOT NULL, string4 char(52) NOT NULL";

/// `v` as the benchmark's unique string: 7 letters (base 26, least significant first)
/// and 45 `x`, 52 characters in all.
pub fn wisconsin_string(v: u64) -> String {
    let mut s = String::with_capacity(52);
    let mut rest = v;
    for _ in 0..7 {
        s.push((b'A' + (rest % 26) as u8) as char);
        rest /= 26;
    }
    s.push_str(&"x".repeat(45));
    s
}

fn string4(i: u64) -> String {
    let c = [b'A', b'H', b'O', b'V'][(i % 4) as usize] as char;
    let mut s = c.to_string().repeat(4);
    s.push_str(&"x".repeat(48));
    s
}

/// A seeded permutation of 0..n (Fisher-Yates).
pub fn permutation(n: u64, seed: u64) -> Vec<u64> {
    let mut p: Vec<u64> = (0..n).collect();
    let mut rng = Rng::new(seed);
    for i in (1..p.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// The `n` rows of a Wisconsin relation, in `unique2` order.
pub fn wisconsin_rows(n: u64, seed: u64) -> Vec<WisconsinRow> {
    let perm = permutation(n, seed);
    perm.iter()
        .enumerate()
        .map(|(i, &u1)| {
            let u1i = u1 as i64;
            WisconsinRow {
                unique1: u1i,
                unique2: i as i64,
                two: u1i % 2,
                four: u1i % 4,
                ten: u1i % 10,
                twenty: u1i % 20,
                one_percent: u1i % 100,
                ten_percent: u1i % 10,
                twenty_percent: u1i % 5,
                fifty_percent: u1i % 2,
                unique3: u1i,
                even_one_percent: (u1i % 100) * 2,
                odd_one_percent: (u1i % 100) * 2 + 1,
                stringu1: wisconsin_string(u1),
                stringu2: wisconsin_string(i as u64),
                string4: string4(i as u64),
            }
        })
        .collect()
}

impl WisconsinRow {
    /// The row's values in column order.
    pub fn vals(&self) -> Vec<Val> {
        let ints = [
            self.unique1,
            self.unique2,
            self.two,
            self.four,
            self.ten,
            self.twenty,
            self.one_percent,
            self.ten_percent,
            self.twenty_percent,
            self.fifty_percent,
            self.unique3,
            self.even_one_percent,
            self.odd_one_percent,
        ];
        let mut v: Vec<Val> = ints.iter().map(|&i| Val::I(i)).collect();
        v.push(Val::S(self.stringu1.clone()));
        v.push(Val::S(self.stringu2.clone()));
        v.push(Val::S(self.string4.clone()));
        v
    }
}

/// A row's values as SQL literals in the server's spelling: `(1, 'a', ...)`.
pub fn sql_tuple(sql: &dyn SqlDialect, vals: &[Val]) -> String {
    let mut s = String::from("(");
    for (i, v) in vals.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match v {
            Val::I(n) => s.push_str(&n.to_string()),
            Val::S(t) => s.push_str(&sql.string_literal(t)),
        }
    }
    s.push(')');
    s
}

fn copy_line(vals: &[Val], out: &mut String) {
    for (i, v) in vals.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        match v {
            Val::I(n) => out.push_str(&n.to_string()),
            Val::S(t) => out.push_str(t),
        }
    }
    out.push('\n');
}

/// Bytes of SQL or COPY text sent per statement while loading.
const CHUNK: usize = 256 * 1024;

/// Loads `rows` (all columns, in order) into `table`; returns how many.
pub(crate) fn load<I>(ctx: &mut Ctx, table: &str, rows: I) -> Result<u64, LoadError>
where
    I: IntoIterator<Item = Vec<Val>>,
{
    let sql = ctx.sql;
    let pg = sql.bulk_load() == BulkLoad::Copy;
    let (head, copy) = if pg {
        (String::new(), format!("COPY {table} FROM STDIN"))
    } else {
        (format!("INSERT INTO {table} VALUES "), String::new())
    };
    let mut buf = head.clone();
    let mut count = 0u64;
    for r in rows {
        if pg {
            copy_line(&r, &mut buf);
        } else {
            if buf.len() > head.len() {
                buf.push_str(", ");
            }
            buf.push_str(&sql_tuple(sql, &r));
        }
        count += 1;
        if buf.len() >= CHUNK {
            flush(ctx, &copy, &mut buf, &head)?;
        }
    }
    if buf.len() > head.len() {
        flush(ctx, &copy, &mut buf, &head)?;
    }
    Ok(count)
}

fn flush(ctx: &mut Ctx, copy: &str, buf: &mut String, head: &str) -> Result<(), LoadError> {
    if copy.is_empty() {
        ctx.exec(buf)?;
    } else {
        ctx.copy(copy, buf.as_bytes())?;
    }
    buf.clear();
    buf.push_str(head);
    Ok(())
}

/// A table of the ATIS-like schema: its name, columns, secondary indexes (column
/// lists) and rows.
pub(crate) struct Table {
    pub name: &'static str,
    pub columns: &'static str,
    pub indexes: &'static [&'static str],
    pub rows: Vec<Vec<Val>>,
}

pub const ATIS_STATES: u64 = 20;
pub const ATIS_CITIES: u64 = 40;
pub const ATIS_AIRPORTS: u64 = 50;
pub const ATIS_AIRLINES: u64 = 20;
pub const ATIS_AIRCRAFT: u64 = 15;

/// Letters spelling `v` in base 26 (most significant first), `len` of them.
fn letters(v: u64, len: usize) -> String {
    let mut b = vec![b'A'; len];
    let mut rest = v;
    for c in b.iter_mut().rev() {
        *c = b'A' + (rest % 26) as u8;
        rest /= 26;
    }
    String::from_utf8(b).expect("ascii")
}

pub fn airport_code(i: u64) -> String {
    letters(i * 37 + 100, 3)
}

pub fn airline_code(i: u64) -> String {
    letters(i * 29 + 30, 2)
}

pub fn city_name(i: u64) -> String {
    format!("City {i:02}")
}

/// The cities an airport serves: its own and a neighbour.
pub fn airport_cities(airport: u64) -> [u64; 2] {
    [airport % ATIS_CITIES, (airport + 7) % ATIS_CITIES]
}

/// The routes (from airport, to airport) of an ATIS data set of `flights` flights.
pub fn atis_routes(flights: u64) -> Vec<(u64, u64)> {
    let count = (flights / 3).max(30);
    let mut rng = Rng::new(mix(0xa715_0001));
    (0..count)
        .map(|_| {
            let from = rng.below(ATIS_AIRPORTS);
            let to = (from + 1 + rng.below(ATIS_AIRPORTS - 1)) % ATIS_AIRPORTS;
            (from, to)
        })
        .collect()
}

/// The ATIS-like tables with `flights` flights: state, city, airport, airport_service,
/// airline, aircraft, flight, fare (two classes per route) and flight_fare.
pub(crate) fn atis_tables(flights: u64) -> Vec<Table> {
    let mut rng = Rng::new(mix(0xa715_0002));
    let routes = atis_routes(flights);
    vec![
        Table {
            name: "sb_state",
            columns: "state_code char(2) NOT NULL PRIMARY KEY, state_name varchar(30) NOT NULL",
            indexes: &[],
            rows: (0..ATIS_STATES)
                .map(|i| vec![Val::S(letters(i + 26, 2)), Val::S(format!("State {i}"))])
                .collect(),
        },
        Table {
            name: "sb_city",
            columns: "city_code char(4) NOT NULL PRIMARY KEY, city_name varchar(30) NOT NULL, \
                      state_code char(2) NOT NULL, population int NOT NULL",
            indexes: &["city_name"],
            rows: (0..ATIS_CITIES)
                .map(|i| {
                    let state = letters(i % ATIS_STATES + 26, 2);
                    let pop = 10_000 + rng.below(2_000_000) as i64;
                    vec![
                        Val::S(format!("C{i:03}")),
                        Val::S(city_name(i)),
                        Val::S(state),
                        Val::I(pop),
                    ]
                })
                .collect(),
        },
        airports(),
        airport_service(&mut rng),
        airlines(),
        aircraft(),
        flight_table(flights, &routes, &mut rng),
        fare_table(&routes, &mut rng),
        flight_fare_table(flights, &routes),
    ]
}

fn airports() -> Table {
    Table {
        name: "sb_airport",
        columns: "airport_code char(3) NOT NULL PRIMARY KEY, airport_name varchar(40) NOT NULL, \
                  state_code char(2) NOT NULL, time_zone char(3) NOT NULL",
        indexes: &["state_code"],
        rows: (0..ATIS_AIRPORTS)
            .map(|i| {
                let tz = ["EST", "CST", "MST", "PST"][(i % 4) as usize];
                vec![
                    Val::S(airport_code(i)),
                    Val::S(format!("Airport {i:02}")),
                    Val::S(letters(i % ATIS_STATES + 26, 2)),
                    Val::S(tz.into()),
                ]
            })
            .collect(),
    }
}

fn airport_service(rng: &mut Rng) -> Table {
    let mut rows = Vec::new();
    for a in 0..ATIS_AIRPORTS {
        for (k, c) in airport_cities(a).into_iter().enumerate() {
            let miles = if k == 0 {
                rng.below(20)
            } else {
                20 + rng.below(60)
            };
            let dir = ["N", "E", "S", "W"][rng.below(4) as usize];
            rows.push(vec![
                Val::S(format!("C{c:03}")),
                Val::S(airport_code(a)),
                Val::I(miles as i64),
                Val::S(dir.into()),
            ]);
        }
    }
    Table {
        name: "sb_airport_service",
        columns: "city_code char(4) NOT NULL, airport_code char(3) NOT NULL, \
                  miles_distant int NOT NULL, direction char(1) NOT NULL, \
                  PRIMARY KEY (city_code, airport_code)",
        indexes: &["airport_code"],
        rows,
    }
}

fn airlines() -> Table {
    Table {
        name: "sb_airline",
        columns: "airline_code char(2) NOT NULL PRIMARY KEY, airline_name varchar(40) NOT NULL",
        indexes: &[],
        rows: (0..ATIS_AIRLINES)
            .map(|i| vec![Val::S(airline_code(i)), Val::S(format!("Airline {i:02}"))])
            .collect(),
    }
}

fn aircraft() -> Table {
    Table {
        name: "sb_aircraft",
        columns: "aircraft_code char(3) NOT NULL PRIMARY KEY, aircraft_type varchar(30) NOT NULL, \
                  capacity int NOT NULL, range_miles int NOT NULL",
        indexes: &[],
        rows: (0..ATIS_AIRCRAFT)
            .map(|i| {
                vec![
                    Val::S(format!("7{i:02}")),
                    Val::S(format!("Type {i}")),
                    Val::I(50 + 25 * i as i64),
                    Val::I(800 + 400 * i as i64),
                ]
            })
            .collect(),
    }
}

/// The route of flight `i` (seeded, independent of everything else).
pub fn flight_route(i: u64, routes: usize) -> usize {
    (mix(0xa715_0003 ^ i) % routes as u64) as usize
}

fn flight_table(flights: u64, routes: &[(u64, u64)], rng: &mut Rng) -> Table {
    let rows = (0..flights)
        .map(|i| {
            let (from, to) = routes[flight_route(i, routes.len())];
            let dep = rng.below(1440) as i64;
            let arr = (dep + 60 + rng.below(340) as i64) % 1440;
            vec![
                Val::I(i as i64),
                Val::S(airline_code(rng.below(ATIS_AIRLINES))),
                Val::I(100 + i as i64),
                Val::S(airport_code(from)),
                Val::S(airport_code(to)),
                Val::I(dep),
                Val::I(arr),
                Val::S(format!("7{:02}", rng.below(ATIS_AIRCRAFT))),
                Val::I(rng.below(3) as i64),
            ]
        })
        .collect();
    Table {
        name: "sb_flight",
        columns: "flight_id int NOT NULL PRIMARY KEY, airline_code char(2) NOT NULL, \
                  flight_number int NOT NULL, from_airport char(3) NOT NULL, \
                  to_airport char(3) NOT NULL, departure_time int NOT NULL, \
                  arrival_time int NOT NULL, aircraft_code char(3) NOT NULL, \
                  stops int NOT NULL",
        indexes: &["from_airport, to_airport", "airline_code"],
        rows,
    }
}

fn fare_table(routes: &[(u64, u64)], rng: &mut Rng) -> Table {
    let mut rows = Vec::new();
    for (r, &(from, to)) in routes.iter().enumerate() {
        let base = 80 + rng.below(600) as i64;
        for (k, class) in ["Y", "F"].iter().enumerate() {
            let one_way = base * (1 + 2 * k as i64);
            rows.push(vec![
                Val::I((2 * r + k) as i64),
                Val::S(airport_code(from)),
                Val::S(airport_code(to)),
                Val::S((*class).into()),
                Val::I(one_way),
                Val::I(one_way * 2 - 20),
                Val::S(format!("R{}", rng.below(5))),
            ]);
        }
    }
    Table {
        name: "sb_fare",
        columns: "fare_id int NOT NULL PRIMARY KEY, from_airport char(3) NOT NULL, \
                  to_airport char(3) NOT NULL, fare_class char(1) NOT NULL, \
                  one_way_cost int NOT NULL, round_trip_cost int NOT NULL, \
                  restriction_code char(2) NOT NULL",
        indexes: &["from_airport, to_airport"],
        rows,
    }
}

fn flight_fare_table(flights: u64, routes: &[(u64, u64)]) -> Table {
    let rows = (0..flights)
        .flat_map(|i| {
            let r = flight_route(i, routes.len()) as i64;
            [0, 1].map(|k| vec![Val::I(i as i64), Val::I(2 * r + k)])
        })
        .collect();
    Table {
        name: "sb_flight_fare",
        columns: "flight_id int NOT NULL, fare_id int NOT NULL, PRIMARY KEY (flight_id, fare_id)",
        indexes: &["fare_id"],
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sqlclient::Dialect;

    #[test]
    fn unique1_is_a_permutation_and_unique2_sequential() {
        let rows = wisconsin_rows(1000, 7);
        let mut u1: Vec<i64> = rows.iter().map(|r| r.unique1).collect();
        assert_ne!(u1, (0..1000).collect::<Vec<_>>(), "shuffled");
        u1.sort();
        assert_eq!(u1, (0..1000).collect::<Vec<_>>());
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.unique2, i as i64);
        }
        assert_eq!(rows, wisconsin_rows(1000, 7), "seeded");
        assert_ne!(rows, wisconsin_rows(1000, 8));
    }

    #[test]
    fn modulo_columns_follow_unique1() {
        for r in wisconsin_rows(500, 1) {
            let u = r.unique1;
            assert_eq!(
                [r.two, r.four, r.ten, r.twenty, r.one_percent],
                [u % 2, u % 4, u % 10, u % 20, u % 100]
            );
            assert_eq!(
                [r.ten_percent, r.twenty_percent, r.fifty_percent, r.unique3],
                [u % 10, u % 5, u % 2, u]
            );
            assert_eq!(r.even_one_percent, (u % 100) * 2);
            assert_eq!(r.odd_one_percent, (u % 100) * 2 + 1);
        }
    }

    #[test]
    fn string_rules() {
        assert_eq!(wisconsin_string(0), format!("AAAAAAA{}", "x".repeat(45)));
        assert!(wisconsin_string(1).starts_with("BAAAAAAx"));
        assert!(wisconsin_string(26).starts_with("ABAAAAAx"));
        // 998 = 10 + 12 * 26 + 1 * 676: K, M, B (PostgreSQL's onek has "KMBAAA").
        assert!(wisconsin_string(998).starts_with("KMBAAAA"));
        let rows = wisconsin_rows(300, 3);
        let mut seen = std::collections::HashSet::new();
        for r in &rows {
            for s in [&r.stringu1, &r.stringu2, &r.string4] {
                assert_eq!(s.len(), 52);
                assert!(s[7..].bytes().all(|b| b == b'x') || s[4..].bytes().all(|b| b == b'x'));
            }
            assert_eq!(r.stringu1, wisconsin_string(r.unique1 as u64));
            assert_eq!(r.stringu2, wisconsin_string(r.unique2 as u64));
            assert!(seen.insert(r.stringu1.clone()), "stringu1 unique");
        }
        let cycle: Vec<&str> = rows[..5].iter().map(|r| &r.string4[..4]).collect();
        assert_eq!(cycle, ["AAAA", "HHHH", "OOOO", "VVVV", "AAAA"]);
        assert!(rows[0].string4[4..].bytes().all(|b| b == b'x'));
    }

    #[test]
    fn atis_is_seeded_and_consistent() {
        let t = atis_tables(300);
        let names: Vec<&str> = t.iter().map(|t| t.name).collect();
        assert!(names.contains(&"sb_flight") && names.contains(&"sb_fare"));
        let flights = t.iter().find(|t| t.name == "sb_flight").unwrap();
        assert_eq!(flights.rows.len(), 300);
        let codes: std::collections::HashSet<String> =
            (0..ATIS_AIRPORTS).map(airport_code).collect();
        assert_eq!(codes.len() as u64, ATIS_AIRPORTS);
        assert_eq!(atis_tables(300)[6].rows, flights.rows);
    }

    #[test]
    fn sql_and_copy_text() {
        let v = [Val::I(3), Val::S("a'b".into())];
        for d in [Dialect::Mariadb, Dialect::Postgres, Dialect::Sqlite] {
            assert_eq!(sql_tuple(d.sql(), &v), "(3, 'a''b')");
        }
        let mut s = String::new();
        copy_line(&v, &mut s);
        assert_eq!(s, "3\ta'b\n");
    }
}

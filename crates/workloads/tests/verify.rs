//! Result-equivalence verification against real servers: two MariaDB servers with the
//! same settings return the same results for a query set; a third with
//! `div_precision_increment = 2` returns fewer decimals for a division and an average,
//! and `compare` names those statements and shows both rows. On PostgreSQL, one honest
//! pair agrees. Servers run one at a time.

mod common;

use bakeoff_sandbox::TargetKind;
use bakeoff_workloads::replay::{self, Statement};
use bakeoff_workloads::verify::{self, Outcome, AFTER_THE_SET};

const MARIADB_SET: &str = "
CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(20), x DECIMAL(10,2));
INSERT INTO people VALUES (1, 'alice', 1.50), (2, 'Alice', 2.25), (3, 'BOB', -0.00),
  (4, 'carol', NULL), (5, 'dave', 10.10);
SELECT * FROM people;
SELECT AVG(x) FROM people;
SELECT name FROM people WHERE name = 'alice';
SELECT name, x FROM people ORDER BY id DESC;
UPDATE people SET x = x * 2 WHERE name = 'bob';
DELETE FROM people WHERE x IS NULL;
SELECT * FROM missing_table;
SELECT 1/3;
";

const POSTGRES_SET: &str = "
CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(20), x NUMERIC(10,2));
INSERT INTO people VALUES (1, 'alice', 1.50), (2, 'Alice', 2.25), (3, 'BOB', -0.00),
  (4, 'carol', NULL), (5, 'dave', 10.10);
SELECT * FROM people;
SELECT AVG(x), 1.0 / 3, -0.0::float8 FROM people;
SELECT name FROM people WHERE lower(name) = 'alice';
SELECT name, x FROM people ORDER BY id DESC;
UPDATE people SET x = x * 2 WHERE name = 'BOB';
DELETE FROM people WHERE x IS NULL;
SELECT * FROM missing_table;
";

fn statements(text: &str) -> Vec<Statement> {
    replay::parse_auto(text).expect("the set parses").1
}

/// Starts a server, runs the set on it and stops it.
fn run(kind: TargetKind, options: &[(&str, &str)], set: &[Statement]) -> Vec<Outcome> {
    let server = common::start(kind, options);
    verify::run_set(&server.db, set).expect("the set runs")
}

fn check_honest_run(outcomes: &[Outcome], set: &[Statement]) {
    assert_eq!(outcomes.len(), set.len() + 1, "{outcomes:#?}");
    let after = outcomes.last().unwrap();
    assert_eq!(after.query, format!("{AFTER_THE_SET}SELECT * FROM people"));
    assert_eq!((after.line, after.rows), (0, 4));
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.error.is_some())
        .map(|o| o.query.as_str())
        .collect();
    assert_eq!(failed, ["SELECT * FROM missing_table"], "{outcomes:#?}");
}

#[test]
fn mariadb_variants_agree_unless_an_option_changes_results() {
    let set = statements(MARIADB_SET);
    let baseline = run(TargetKind::Mariadb, &[], &set);
    check_honest_run(&baseline, &set);
    let insert = &baseline[1];
    assert_eq!((insert.line, insert.rows, insert.columns), (3, 5, 0));
    let same = run(TargetKind::Mariadb, &[], &set);
    assert_eq!(verify::compare(&baseline, &same), []);

    let changed = run(
        TargetKind::Mariadb,
        &[("div_precision_increment", "2")],
        &set,
    );
    let diffs = verify::compare(&baseline, &changed);
    let queries: Vec<&str> = diffs.iter().map(|d| d.query.as_str()).collect();
    assert_eq!(
        queries,
        ["SELECT AVG(x) FROM people", "SELECT 1/3"],
        "{diffs:#?}"
    );
    let avg = &diffs[0];
    assert_eq!(avg.line, 6);
    assert_eq!(
        (avg.baseline_rows.as_slice(), avg.rows.as_slice()),
        (&["3.462500".to_string()][..], &["3.4625".to_string()][..])
    );
    let third = &diffs[1];
    assert_eq!(
        (third.baseline_rows.as_slice(), third.rows.as_slice()),
        (&["0.3333".to_string()][..], &["0.33".to_string()][..])
    );
    assert_ne!(third.hash, third.baseline_hash);
    assert_eq!(
        (third.error.as_ref(), third.baseline_error.as_ref()),
        (None, None)
    );
}

#[test]
fn postgres_variants_agree() {
    let set = statements(POSTGRES_SET);
    let baseline = run(TargetKind::Postgres, &[], &set);
    check_honest_run(&baseline, &set);
    assert_eq!(
        baseline[3].sample,
        ["3.4625000000000000\x1f0.33333333333333333333\x1f0"]
    );
    let same = run(TargetKind::Postgres, &[], &set);
    assert_eq!(verify::compare(&baseline, &same), []);
}

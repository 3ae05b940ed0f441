//! End-to-end: the servers' own statistics per run (issue 54). Short runs on this
//! machine's installed servers, several checks each: the deltas agree with the load
//! (memcached's `cmd_get` and Redis's `cmdstat_get.calls` with the gets sent,
//! PostgreSQL's `xact_commit` with the transactions counted), bakeoff's own reads leave
//! no trace in them, "full" adds what the server counts only when asked, a statistic the
//! version lacks or a command the server refuses is unavailable with the reason while
//! the run stays valid, "off" reads nothing, and a variant given a smaller buffer pool
//! shows its reads among the comparison's top server changes. With "full": PostgreSQL's
//! pg_stat_statements (loaded by bakeoff) counts the point selects the load sent and the
//! statement is matched across the variants in the report; MariaDB's performance_schema
//! (turned on) gives wait counters and the load's prepared point selects (from
//! prepared_statements_instances, which its digests lack) as many as the load sent, and
//! a variant's own `performance_schema = OFF` wins with its reason. A variant's own
//! `server_stats = "off"` reads nothing while the plan's "full" reads in the same rounds.
//! PostgreSQL's wait events are sampled through the window at the sampler's rate.

mod common;

use bakeoff_testkit::paths::{MARIADBD, MEMCACHED, POSTGRES, SYSTEM_SQLITE};
use common::{sql_scratch, Scratch};
use serde_json::Value;

/// One round of two seconds, no warmup: every assertion is about what one run read.
const SHORT: &str = "[plan]\nrepetitions = 1\nwarmup = \"0s\"\nduration = \"2s\"\n";
/// Gets only, on keys the preload wrote.
const GETS: &str = "\n[[workload]]\nkind = \"kv\"\nname = \"kv\"\nconnections = [2]\nkeys = 200\nmix = { get = 100 }\n";

/// The server's statement in `run` whose text starts with `text`.
fn statement<'a>(run: &'a Value, text: &str) -> &'a Value {
    run["server_statements"]
        .as_array()
        .unwrap_or_else(|| panic!("no server_statements: {run}"))
        .iter()
        .find(|s| s["text"].as_str().is_some_and(|t| t.starts_with(text)))
        .unwrap_or_else(|| panic!("no {text} in {}", run["server_statements"]))
}

/// The one run of `variant`, which must be valid.
fn run_of<'a>(r: &'a Value, variant: &str) -> &'a Value {
    let c = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["variant"] == variant)
        .unwrap_or_else(|| panic!("no cell of {variant}"));
    let run = &c["runs"][0];
    assert_eq!(run["valid"], true, "{run}");
    run
}

fn stat(run: &Value, name: &str) -> f64 {
    run["server_stats"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {}", run["server_stats"]))
}

/// The load's operations over the span the server's counters cover.
fn ops_in_span(run: &Value) -> f64 {
    let ops = run["ops"].as_f64().unwrap();
    let span = run["server_stats_s"].as_f64().expect("server_stats_s");
    let elapsed = run["elapsed_s"].as_f64().unwrap();
    assert!(
        span >= elapsed * 0.99 && span < elapsed + 1.0,
        "{span} {elapsed}"
    );
    ops / elapsed * span
}

/// `counted` agrees with the load's `ops` within 1%, and never falls short of them by
/// more than the requests in flight at the window's edges (2 connections).
fn agrees(what: &str, counted: f64, run: &Value) {
    let ops = run["ops"].as_f64().unwrap();
    let sent = ops_in_span(run);
    eprintln!(
        "{what}: {counted} counted by the server, {ops} by bakeoff ({sent:.0} over the span)"
    );
    assert!(counted + 2.0 >= ops, "{what}: {counted} < {ops}");
    assert!(
        (counted / sent - 1.0).abs() < 0.01,
        "{what}: {counted} against {sent}"
    );
}

#[test]
fn memcached_cmd_get_is_the_gets_sent_and_full_adds_slab_counters() {
    let s = Scratch::new();
    // A variant's own `server_stats = "off"` over the plan's "full": that variant's runs
    // read nothing, in the same rounds.
    let text = format!(
        "name = \"mc-stats\"\n[target]\nkind = \"memcached\"\n\
         [[variant]]\nname = \"mc\"\nbinary = \"{MEMCACHED}\"\nargs = [\"-t\", \"1\"]\n\
         [[variant]]\nname = \"mc-off\"\nbinary = \"{MEMCACHED}\"\nargs = [\"-t\", \"1\"]\nserver_stats = \"off\"\n\
         {GETS}{SHORT}server_stats = \"full\"\n"
    );
    let r = s.run_clean("mc.toml", &text, "memcached");
    let run = run_of(&r, "mc");
    agrees("memcached cmd_get", stat(run, "cmd_get"), run);
    assert_eq!(
        stat(run, "cmd_get"),
        stat(run, "get_hits"),
        "every key preloaded"
    );
    assert!(
        run["server_stats"].get("cmd_set").is_none(),
        "no set in the window"
    );
    assert!(
        run["server_stats"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("slab.") && k.ends_with(":get_hits")),
        "full reads stats slabs: {}",
        run["server_stats"]
    );
    for gauge in ["curr_items", "curr_connections", "uptime", "pid"] {
        assert!(
            run["server_stats"].get(gauge).is_none(),
            "{gauge} is no counter"
        );
    }
    let cell = &r["cells"][0]["server_stats"]["cmd_get"];
    let per_op = cell["per_op"].as_f64().unwrap();
    assert!((per_op - 1.0).abs() < 0.01, "{cell}");

    // The variant at "off": nothing read, nothing recorded; its level is on its record
    // and in the settings diff, asked by it.
    let run = run_of(&r, "mc-off");
    assert!(
        run.get("server_stats").is_none() && run.get("server_stats_s").is_none(),
        "{run}"
    );
    assert_eq!(r["variants"][1]["server_stats"], "off");
    assert!(r["variants"][0].get("server_stats").is_none());
    let row = r["settings_diff"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "server_stats")
        .unwrap_or_else(|| panic!("no server_stats row: {}", r["settings_diff"]));
    assert_eq!(row["values"]["mc"], "full", "{row}");
    assert_eq!(row["values"]["mc-off"], "off", "{row}");
    assert_eq!(row["asked_by"], serde_json::json!(["mc-off"]), "{row}");
}

#[test]
fn redis_calls_for_get_are_the_gets_sent_and_a_refused_info_is_unavailable() {
    let s = Scratch::new();
    let text = format!(
        "name = \"redis-stats\"\n[target]\nkind = \"redis\"\n\
         [[variant]]\nname = \"plain\"\nbinary = \"/usr/bin/redis-server\"\n\
         [[variant]]\nname = \"no-info\"\nbinary = \"/usr/bin/redis-server\"\n\
         args = [\"--user\", \"default\", \"on\", \"nopass\", \"~*\", \"&*\", \"+@all\", \"-info\"]\n\
         {GETS}{SHORT}"
    );
    let r = s.run_clean("redis.toml", &text, "redis-server");
    let run = run_of(&r, "plain");
    agrees(
        "redis cmdstat_get.calls",
        stat(run, "cmdstat_get.calls"),
        run,
    );
    assert_eq!(stat(run, "keyspace_hits"), stat(run, "cmdstat_get.calls"));
    assert!(stat(run, "cmdstat_get.usec") > 0.0);
    assert!(
        run["server_stats"].get("cmdstat_info.calls").is_none(),
        "bakeoff's own INFO is taken off: {}",
        run["server_stats"]
    );
    let refused = run_of(&r, "no-info");
    let why = refused["server_stats_unavailable"].to_string();
    assert!(why.contains("NOPERM"), "{refused}");
    assert!(refused.get("server_stats").is_none(), "{refused}");
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("Why, from the servers' side"), "{md}");
    assert!(md.contains("NOPERM"), "the reason is in the report");
}

/// A one-table point-select load whose table (about 4 MB) fits PostgreSQL's default
/// shared buffers but not 128 kB of them.
const PS: &str = "\n[[workload]]\nkind = \"oltp\"\nname = \"ps\"\ntest = \"oltp_point_select\"\ntables = 1\ntable_size = 20000\nconnections = [2]\n";

#[test]
fn postgres_xact_commit_is_the_transactions_and_small_shared_buffers_show_reads() {
    let s = sql_scratch();
    let text = format!(
        "name = \"pg-stats\"\n[target]\nkind = \"postgres\"\n\
         [[variant]]\nname = \"big\"\nbinary = \"{POSTGRES}\"\n\
         [[variant]]\nname = \"small\"\nbinary = \"{POSTGRES}\"\noptions = {{ shared_buffers = \"128kB\" }}\n\
         {PS}{SHORT}server_stats = \"full\"\n"
    );
    let r = s.run_clean("pg.toml", &text, "postgres");
    for v in ["big", "small"] {
        let run = run_of(&r, v);
        let xact = stat(run, "pg_stat_database.xact_commit");
        // PostgreSQL reports a backend's counters at most once a second, so the read
        // before the window can miss up to a second of the warmup's transactions, which the
        // read after it (once the counters settled) then holds: the server counts every
        // transaction bakeoff counted, and at most a second's worth more
        // (docs/experiment-file.md, "The servers' own statistics"). Within 1% is what a
        // quiet machine usually shows, not what the mechanism promises.
        let ops = run["ops"].as_f64().unwrap();
        let per_s = ops / run["elapsed_s"].as_f64().unwrap();
        let sent = ops_in_span(run);
        eprintln!("{v}: xact_commit {xact} for {ops} transactions ({sent:.0} over the span)");
        assert!(xact + 2.0 >= ops, "{v}: {xact} < {ops}");
        assert!(
            xact <= sent + per_s * 1.0 + 2.0,
            "{v}: {xact} is more than a second's transactions over {sent:.0}"
        );
        // PostgreSQL 15 has no pg_stat_io: "full" says so and the run stands.
        let why = run["server_stats_unavailable"]["pg_stat_io"].to_string();
        assert!(why.contains("pg_stat_io"), "{run}");
        // "full" loads pg_stat_statements: the point select is the statement called
        // once an operation, timed per call; bakeoff's own reads are not among them.
        let st = statement(run, "SELECT c FROM sbtest1 WHERE id");
        let calls = st["calls"].as_f64().unwrap();
        eprintln!("{v}: {calls} point selects by pg_stat_statements ({sent:.0} sent)");
        assert!(calls + 2.0 >= ops && calls <= sent + per_s + 2.0, "{st}");
        assert!(st["mean_us"].as_f64().unwrap() > 0.0, "{st}");
        assert!(
            !run["server_statements"].to_string().contains("pg_stat"),
            "{run}"
        );
    }
    // The wait-event sampler looked at the sampler's rate through the window; a point
    // select keeps a backend busy a small part of its round trip, so a look may see
    // none (`postgres_waits_...` checks the counts under a load that commits).
    for v in ["big", "small"] {
        looks_at_the_rate(run_of(&r, v), v);
    }
    let ch = &r["comparisons"][0]["statement_changes"];
    assert!(
        ch[0]["text"].as_str().unwrap().contains("sbtest1"),
        "matched across the variants: {ch}"
    );
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(
        md.contains("statements (server): small against big"),
        "{md}"
    );
    let k = &r["comparisons"][0];
    let names = top_changes(k, 3);
    assert!(names.contains(&"pg_stat_database.blks_read"), "{names:?}");
    let blks = &r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["variant"] == "small")
        .unwrap()["server_stats"]["pg_stat_database.blks_read"];
    assert!(blks["per_op"].as_f64().unwrap() > 0.1, "{blks}");
}

/// The sampled waits of `run`: (name, samples), and the sum of them.
fn waits(run: &Value) -> (Vec<(String, f64)>, f64) {
    let w: Vec<(String, f64)> = run["server_stats"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("waits.") && k.ends_with(".samples"))
        .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
        .collect();
    let sum = w.iter().map(|(_, v)| v).sum();
    (w, sum)
}

/// The names of comparison `k`'s first `n` server changes.
fn top_changes(k: &Value, n: usize) -> Vec<&str> {
    k["server_changes"]
        .as_array()
        .unwrap_or_else(|| panic!("no server_changes: {k}"))
        .iter()
        .take(n)
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

/// The sampler's looks in `run` (`label` names it in the output), checked against its
/// rate over the window and the 2 connections a look can see at most: (looks, each wait
/// event's samples, the samples in all). Ten looks a second at most; a look more than
/// 100 ms late skips its turn (a fixed rate) and the login takes the first ones, so a
/// loaded machine sees fewer: at least 3 a second, or at least 2 in all when other
/// programs took over a quarter of the machine (beside two CPU-bound programs, a 1 s
/// window got 3 looks).
fn looks_at_the_rate(run: &Value, label: &str) -> (f64, Vec<(String, f64)>, f64) {
    let window = run["elapsed_s"].as_f64().unwrap();
    let ticks = stat(run, "waits.ticks");
    let (w, samples) = waits(run);
    eprintln!("{label}: {ticks} looks in {window:.2} s, {samples} backends active: {w:?}");
    let others = run["others_cpu_pct"].as_f64().unwrap_or(0.0);
    let least = if others > 25.0 {
        2.0
    } else {
        window / 0.1 * 0.3
    };
    assert!(
        ticks <= window / 0.1 + 2.0 && ticks >= least,
        "{ticks} looks in {window} s, others took {others}% of the machine"
    );
    assert!(samples <= 2.0 * ticks, "{w:?}");
    (ticks, w, samples)
}

/// Under a load that commits (each commit waits for its WAL flush), the wait-event
/// sampler sees the load's backends active at most looks, by what they wait on: never
/// more than the connections at a look, and its looks at the sampler's rate over the
/// window. At "basic".
#[test]
fn postgres_waits_are_sampled_through_the_window_at_basic() {
    // On disk: the waits counted are mostly a commit's flush, which tmpfs makes free.
    let s = Scratch::on_disk();
    let text = format!(
        "name = \"pg-waits\"\n[target]\nkind = \"postgres\"\n\
         [[variant]]\nname = \"pg\"\nbinary = \"{POSTGRES}\"\n\
         [[workload]]\nkind = \"oltp\"\nname = \"upd\"\ntest = \"oltp_update_non_index\"\n\
         tables = 1\ntable_size = 1000\nconnections = [2]\n{}",
        SHORT.replace("2s", "1s")
    );
    let r = s.run_clean("waits.toml", &text, "postgres");
    let run = run_of(&r, "pg");
    let (ticks, w, samples) = looks_at_the_rate(run, "pg");
    // Each backend is active for most of a commit's flush: at 2 connections, a look
    // that sees none is the exception (a quarter of the looks is far below it).
    assert!(samples >= ticks * 0.25, "{samples} in {ticks} looks: {w:?}");
    assert!(
        run["server_stats_unavailable"].get("waits").is_none(),
        "{run}"
    );
    // The sampler's own looks are in the postgres database, not the load's.
    let xact = stat(run, "pg_stat_database.xact_commit");
    let ops = run["ops"].as_f64().unwrap();
    let per_s = ops / run["elapsed_s"].as_f64().unwrap();
    assert!(xact <= ops_in_span(run) + per_s + 2.0, "{xact} for {ops}");
}

#[test]
fn mariadb_small_buffer_pool_shows_its_reads_among_the_top_changes() {
    let s = sql_scratch();
    let text = format!(
        "name = \"maria-stats\"\n[target]\nkind = \"mariadb\"\n\
         [[variant]]\nname = \"big\"\nbinary = \"{MARIADBD}\"\n\
         [[variant]]\nname = \"small\"\nbinary = \"{MARIADBD}\"\noptions = {{ innodb_buffer_pool_size = \"6M\", performance_schema = \"OFF\" }}\n\
         {}{SHORT}server_stats = \"full\"\n",
        PS.replace("20000", "50000")
    );
    let r = s.run_clean("maria.toml", &text, "mariadbd");
    let big = run_of(&r, "big");
    assert!(stat(big, "Com_select") + 2.0 >= big["ops"].as_f64().unwrap());
    for gauge in [
        "Uptime",
        "Threads_connected",
        "Innodb_buffer_pool_pages_free",
        "Prepared_stmt_count",
    ] {
        assert!(
            big["server_stats"].get(gauge).is_none(),
            "{gauge} is no counter"
        );
        assert!(
            big["server_stats_unavailable"].get(gauge).is_none(),
            "{gauge}"
        );
    }
    // "full" turned performance_schema on: its wait summaries as counters. MariaDB
    // digests no prepared statement (the load's): they are read from
    // prepared_statements_instances while the load's connections are open, summed over
    // the connections: the point select's executions are the selects the load sent (at
    // most the requests in flight at the window's edges apart, and the load's rate over
    // the before-read's few milliseconds more), and bakeoff's own reads are not among them.
    assert!(
        big["server_stats_unavailable"]
            .get("events_statements_summary_by_digest")
            .is_none(),
        "{big}"
    );
    let st = statement(big, "SELECT c FROM sbtest1 WHERE id");
    let calls = st["calls"].as_f64().unwrap();
    let ops = big["ops"].as_f64().unwrap();
    let sent = ops_in_span(big);
    eprintln!("mariadb: {calls} point selects by prepared_statements_instances, {ops} by bakeoff ({sent:.0} over the span)");
    assert!(calls + 2.0 >= ops && calls <= sent * 1.05 + 2.0, "{st}");
    assert!(st["mean_us"].as_f64().unwrap() > 0.0, "{st}");
    assert!(
        st["digest"].as_str().unwrap().starts_with("prepared:"),
        "{st}"
    );
    assert!(
        !big["server_statements"]
            .to_string()
            .contains("performance_schema"),
        "{big}"
    );
    assert!(
        big["server_stats"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("waits.")),
        "{big}"
    );
    // An experiment's own performance_schema = OFF wins: unavailable with the reason.
    let small = run_of(&r, "small");
    let why = small["server_stats_unavailable"]["events_statements_summary_by_digest"].to_string();
    assert!(why.contains("performance_schema is OFF"), "{small}");
    assert!(small.get("server_statements").is_none(), "{small}");
    let k = &r["comparisons"][0];
    let changes = k["server_changes"]
        .as_array()
        .unwrap_or_else(|| panic!("{k}"));
    let top: Vec<&str> = changes
        .iter()
        .take(5)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // The reads the small pool forced, counted by any of InnoDB's read counters (which of
    // these alike counters ranks first varies run to run).
    let reads = [
        "Innodb_buffer_pool_reads",
        "Innodb_data_reads",
        "Innodb_data_read",
        "Innodb_pages_read",
    ];
    assert!(top.iter().any(|t| reads.contains(t)), "{top:?}");
}

/// Two tables joined on a column no index covers: SQLite builds an automatic index for
/// the join unless told not to, and then scans the inner table once per outer row.
const JOIN_SETUP: &str = "CREATE TABLE a (id INTEGER PRIMARY KEY, k INT);\n\
     CREATE TABLE b (id INTEGER PRIMARY KEY, k INT);\n\
     WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300) \
     INSERT INTO a SELECT x, x % 100 FROM c;\n\
     WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300) \
     INSERT INTO b SELECT x, x % 100 FROM c;\n";
const JOIN_QUERIES: &str = "SELECT count(*) FROM a JOIN b ON a.k = b.k;\n\
     SELECT k FROM a WHERE id = 7;\n";

/// SQLite through bakeoff-sqlited at "full" (the host's counters cost it instructions,
/// so "basic" leaves them out): the host's statement counters agree with
/// the replayed statements (each ran once per statement sent), each statement text is
/// timed inside the host, and a variant with `automatic_index = off` shows its full
/// scans among the comparison's top changes.
#[test]
fn sqlite_statement_counters_agree_with_the_load_and_a_missing_index_shows_full_scans() {
    let s = sql_scratch();
    s.write("setup.sql", JOIN_SETUP);
    s.write("queries.sql", JOIN_QUERIES);
    let text = format!(
        "name = \"sqlite-stats\"\n[target]\nkind = \"sqlite\"\n\
         [[variant]]\nname = \"auto\"\nbinary = \"{SYSTEM_SQLITE}\"\n\
         [[variant]]\nname = \"noauto\"\nbinary = \"{SYSTEM_SQLITE}\"\n\
         options = {{ automatic_index = \"off\" }}\n\
         [[workload]]\nkind = \"replay\"\nname = \"join\"\nfile = \"queries.sql\"\n\
         setup = \"setup.sql\"\nconcurrency = [1]\niterations = 20\n\
         [plan]\nrepetitions = 1\nwarmup = \"0s\"\nserver_stats = \"full\"\n"
    );
    let r = s.run_clean("sqlite.toml", &text, "bakeoff-sqlited");
    for v in ["auto", "noauto"] {
        let run = run_of(&r, v);
        let ops = run["ops"].as_f64().unwrap();
        let calls = stat(run, "stmt.calls");
        eprintln!(
            "{v}: {calls} calls, {ops} statements sent: {}",
            run["server_stats"]
        );
        // A replay is fixed work: every statement sent ran once, and nothing else did
        // (the reads are answered by the host, not run).
        assert_eq!(calls, ops, "{run}");
        assert_eq!(stat(run, "stmt.run"), ops, "{run}");
        assert!(stat(run, "stmt.vm_step") > 0.0 && stat(run, "stmt.us") > 0.0);
        let join = statement(run, "SELECT count(*) FROM a JOIN b");
        assert_eq!(join["calls"].as_f64().unwrap(), 20.0, "{join}");
        assert!(join["mean_us"].as_f64().unwrap() > 0.0, "{join}");
    }
    assert!(stat(run_of(&r, "auto"), "stmt.autoindex") > 0.0);
    let k = &r["comparisons"][0];
    let top = top_changes(k, 3);
    assert!(top.contains(&"stmt.fullscan_step"), "{top:?}");
    let ch = &k["statement_changes"];
    assert!(
        ch.to_string().contains("JOIN b"),
        "the join matched across the variants: {ch}"
    );
}

//! End-to-end: the settings each variant's server ran with (issue 51, items 2 and 3). One
//! run of every target kind on this machine's installed servers records non-empty
//! settings under the names the server itself uses; two variants that differ in one
//! setting that moves performance show it in `settings_diff` (Redis `appendonly`,
//! PostgreSQL `synchronous_commit`), and one the experiment did not ask for (a SQLite
//! build's compile-time cache size) is a warning; a secret given to a server never reaches
//! results.json or a report; what changes from start to start (port, folder, a server's
//! id) is never a difference; a server that refuses `CONFIG` (its default user's ACL
//! without it) records why its settings are missing and its run is valid.

mod common;

use bakeoff_testkit::paths::{MARIADBD, POSTGRES};
use common::{no_server_left, sql_scratch as scratch, strs, Scratch};
use serde_json::Value;

/// One round of one second: every assertion is about what a run read.
const SHORT: &str = "[plan]\nrepetitions = 1\nwarmup = \"0s\"\nduration = \"1s\"\n";
const KV: &str = "\n[[workload]]\nkind = \"kv\"\nname = \"kv\"\nconnections = [2]\nkeys = 200\n";
const SECRET: &str = "hunter2-never-shown";

fn variant<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name}"))
}

/// Every run valid, the settings of `name` read and holding `known` names; its
/// settings.
fn settings_of<'a>(r: &'a Value, name: &str, known: &[&str]) -> &'a Value {
    for c in r["cells"].as_array().unwrap() {
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true, "{run}");
        }
    }
    let v = variant(r, name);
    assert_eq!(v["tls"], false, "bakeoff's clients never negotiate TLS");
    assert!(v["settings_read_ms"].as_f64().unwrap() > 0.0, "{v}");
    let s = &v["settings"];
    assert!(s.as_object().is_some_and(|o| o.len() > 10), "{v}");
    for k in known {
        assert!(s.get(*k).is_some(), "{name}: no setting {k} in {s}");
    }
    eprintln!(
        "{name}: {} settings read in {:.1} ms",
        s.as_object().unwrap().len(),
        v["settings_read_ms"].as_f64().unwrap()
    );
    s
}

/// The `settings_diff` entry for `name`.
fn diff_of<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["settings_diff"]
        .as_array()
        .unwrap_or_else(|| panic!("no settings_diff: {r}"))
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in settings_diff: {}", r["settings_diff"]))
}

/// Nothing in the results folder's own files holds `secret`.
fn nowhere(s: &Scratch, secret: &str) {
    for f in ["results.json", "report.md", "report.html"] {
        let text = std::fs::read_to_string(s.out().join(f)).unwrap();
        assert!(!text.contains(secret), "{f} holds the secret");
    }
}

#[test]
fn redis_appendonly_on_one_side_is_in_the_diff_and_a_secret_is_masked() {
    let s = Scratch::new();
    let text = format!(
        "name = \"redis-settings\"\n[target]\nkind = \"redis\"\noptions = {{ masterauth = \"{SECRET}\" }}\n\
         [[variant]]\nname = \"plain\"\nbinary = \"/usr/bin/redis-server\"\n\
         [[variant]]\nname = \"aof\"\nbinary = \"/usr/bin/redis-server\"\noptions = {{ appendonly = \"yes\" }}\n\
         {KV}{SHORT}"
    );
    let r = s.run_clean("redis.toml", &text, "redis-server");
    let plain = settings_of(
        &r,
        "plain",
        &["maxmemory", "appendonly", "io-threads", "save"],
    );
    assert_eq!(plain["appendonly"], "no");
    assert_eq!(plain["masterauth"], "(masked)");
    assert_eq!(
        plain["port"], "<port>",
        "the sandbox's own port is a placeholder"
    );
    assert_eq!(settings_of(&r, "aof", &["appendonly"])["appendonly"], "yes");
    let d = diff_of(&r, "appendonly");
    assert_eq!(d["values"]["plain"], "no");
    assert_eq!(d["values"]["aof"], "yes");
    assert_eq!(d["topic"], "durability");
    assert_eq!(d["asked_by"][0], "aof");
    // Asked for: no warning about it; and the two runs' folders and ports are not a
    // difference.
    let diffs = strs(&r["settings_diff"], "name");
    assert!(
        !diffs.contains(&"port") && !diffs.contains(&"dir"),
        "{diffs:?}"
    );
    // (The suite's scratch folders may be on tmpfs: the warning that a durability
    // difference compares nothing there names appendonly, and is not the diff's.)
    let codes = r["warning_codes"].as_array().expect("warning_codes");
    let warnings: Vec<&serde_json::Value> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .zip(codes)
        .filter(|(_, code)| *code != "durability-on-tmpfs")
        .map(|(w, _)| w)
        .collect();
    assert!(
        !warnings
            .iter()
            .any(|w| w.to_string().contains("appendonly")),
        "{warnings:?}"
    );
    nowhere(&s, SECRET);
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("## Settings that differ"), "{md}");
    assert!(
        md.contains("| `appendonly` | durability | no | yes | aof |"),
        "{md}"
    );
}

#[test]
fn redis_that_refuses_config_records_why_and_runs_on() {
    let s = Scratch::new();
    let text = format!(
        "name = \"redis-no-config\"\n[target]\nkind = \"redis\"\nargs = [\"--user\", \"default\", \"on\", \"nopass\", \"~*\", \"&*\", \"+@all\", \"-config\"]\n\
         [[variant]]\nname = \"refused\"\nbinary = \"/usr/bin/redis-server\"\n{KV}{SHORT}"
    );
    let r = s.run_clean("refused.toml", &text, "redis-server");
    let v = variant(&r, "refused");
    let why = v["settings_error"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"));
    assert!(why.contains("CONFIG GET * refused: NOPERM"), "{why}");
    assert!(v.get("settings").is_none(), "{v}");
    for c in r["cells"].as_array().unwrap() {
        assert_eq!(c["runs"][0]["valid"], true, "{c}");
    }
    assert!(r["warnings"]
        .to_string()
        .contains("settings could not be read"));
}

#[test]
fn memcached_records_its_stats_settings() {
    let s = Scratch::new();
    let text = format!(
        "name = \"mc-settings\"\n[target]\nkind = \"memcached\"\n\
         [[variant]]\nname = \"small\"\nbinary = \"/usr/bin/memcached\"\nargs = [\"-m\", \"32\", \"-t\", \"1\"]\n\
         [[variant]]\nname = \"big\"\nbinary = \"/usr/bin/memcached\"\nargs = [\"-m\", \"64\", \"-t\", \"1\"]\n\
         {KV}{SHORT}"
    );
    let r = s.run_clean("mc.toml", &text, "memcached");
    let small = settings_of(&r, "small", &["maxbytes", "num_threads", "item_size_max"]);
    assert_eq!(small["maxbytes"], (32u64 << 20).to_string());
    assert_eq!(small["num_threads"], "1");
    let d = diff_of(&r, "maxbytes");
    assert_eq!(d["topic"], "memory");
    assert_eq!(d["asked_by"].as_array().unwrap().len(), 2, "{d}");
}

/// A one-table oltp point-select load, small enough to load in a second.
const OLTP: &str = "\n[[workload]]\nkind = \"oltp\"\nname = \"ps\"\ntest = \"oltp_point_select\"\ntables = 1\ntable_size = 200\nconnections = [2]\n";

#[test]
fn postgres_synchronous_commit_off_against_on_is_in_the_diff() {
    let s = scratch();
    let text = format!(
        "name = \"pg-settings\"\n[target]\nkind = \"postgres\"\noptions = {{ shared_buffers = \"32MB\" }}\n\
         [[variant]]\nname = \"on\"\nbinary = \"{POSTGRES}\"\n\
         [[variant]]\nname = \"off\"\nbinary = \"{POSTGRES}\"\noptions = {{ synchronous_commit = \"off\" }}\n\
         {OLTP}{SHORT}"
    );
    let r = s.run_clean("pg.toml", &text, "postgres");
    let on = settings_of(
        &r,
        "on",
        &["shared_buffers", "fsync", "max_wal_size", "jit"],
    );
    assert_eq!(
        on["shared_buffers"], "32MB",
        "with its unit, as SHOW shows it"
    );
    assert_eq!(on["synchronous_commit"], "on");
    let d = diff_of(&r, "synchronous_commit");
    assert_eq!(d["values"]["off"], "off");
    assert_eq!(d["topic"], "durability");
    assert_eq!(d["asked_by"][0], "off");
    let names = strs(&r["settings_diff"], "name");
    assert_eq!(
        names,
        ["synchronous_commit"],
        "nothing per run is a difference"
    );
    no_server_left("postgres", &s);
}

/// Two rounds of two variants of one binary: what differs from start to start (the
/// port, the sandbox's folder, MariaDB's `server_uid`) is no difference.
const TWICE: &str = "[plan]\nrepetitions = 2\nwarmup = \"0s\"\nduration = \"1s\"\n";

#[test]
fn mariadb_records_its_global_variables_with_the_redo_capacity() {
    let s = scratch();
    let text = format!(
        "name = \"maria-settings\"\n[target]\nkind = \"mariadb\"\noptions = {{ innodb_buffer_pool_size = \"64M\" }}\n\
         [[variant]]\nname = \"maria\"\nbinary = \"{MARIADBD}\"\n\
         [[variant]]\nname = \"again\"\nbinary = \"{MARIADBD}\"\n{OLTP}{TWICE}"
    );
    let r = s.run_clean("maria.toml", &text, "mariadbd");
    let v = settings_of(
        &r,
        "maria",
        &[
            "innodb_buffer_pool_size",
            "log_bin",
            "innodb_flush_log_at_trx_commit",
            "character_set_server",
            "innodb_redo_capacity_bytes (computed)",
        ],
    );
    assert_eq!(v["innodb_buffer_pool_size"], (64u64 << 20).to_string());
    assert_eq!(
        v["innodb_redo_capacity_bytes (computed)"], v["innodb_log_file_size"],
        "MariaDB 10.11 keeps one redo file"
    );
    assert_eq!(v["port"], "<port>");
    assert_eq!(v["server_uid"], "<identity>");
    assert!(r.get("settings_diff").is_none(), "{}", r["settings_diff"]);
    for name in ["maria", "again"] {
        let changed = &variant(&r, name)["settings_changed"];
        assert!(changed.is_null(), "{name}: {changed}");
    }
    assert!(
        v["datadir"].as_str().unwrap().starts_with("<sandbox>"),
        "{}",
        v["datadir"]
    );
}

#[test]
fn sqlite_records_its_pragmas_and_compile_options() {
    let s = scratch();
    let text = format!(
        "name = \"sqlite-settings\"\n[target]\nkind = \"sqlite\"\noptions = {{ synchronous = \"off\" }}\n\
         [[variant]]\nname = \"debian\"\nbinary = \"/usr/lib/x86_64-linux-gnu/libsqlite3.so.0\"\n\
         [[workload]]\nkind = \"sqlsuite\"\nscale = 0.01\ngroups = [\"select\"]\n{SHORT}"
    );
    let r = s.run_clean("sqlite.toml", &text, "bakeoff-sqlited");
    let v = settings_of(
        &r,
        "debian",
        &[
            "synchronous",
            "journal_mode",
            "cache_size",
            "compile_option.THREADSAFE",
            "sqlite_version",
        ],
    );
    assert_eq!(
        v["synchronous"], "0",
        "the experiment's pragma, as a connection has it"
    );
}

/// A build whose compile-time default the experiment never set as a setting: SQLite's
/// amalgamation built with a small `SQLITE_DEFAULT_CACHE_SIZE` against Debian's library.
/// The diff leads with `cache_size` and, nobody having asked for it in `options`, the
/// results warn that the comparison includes it.
#[test]
fn sqlite_a_default_nobody_asked_for_is_a_warning() {
    let s = scratch();
    let text = format!(
        "name = \"sqlite-unasked\"\n[target]\nkind = \"sqlite\"\n\
         [[variant]]\nname = \"debian\"\nbinary = \"/usr/lib/x86_64-linux-gnu/libsqlite3.so.0\"\n\
         [[variant]]\nname = \"small\"\ncompiler = \"gcc-12\"\ncflags = \"-O0\"\nconfigure_args = [\"-DSQLITE_DEFAULT_CACHE_SIZE=-500\"]\n\
         [[workload]]\nkind = \"sqlsuite\"\nscale = 0.01\ngroups = [\"select\"]\n{SHORT}"
    );
    let r = s.run_clean("unasked.toml", &text, "bakeoff-sqlited");
    settings_of(
        &r,
        "small",
        &["cache_size", "compile_option.DEFAULT_CACHE_SIZE"],
    );
    let d = diff_of(&r, "cache_size");
    assert_eq!(d["values"]["small"], "-500");
    assert_eq!(d["topic"], "memory");
    assert!(d.get("asked_by").is_none(), "{d}");
    assert!(
        r["settings_diff"][0]["topic"].is_string(),
        "the settings that move performance lead: {}",
        r["settings_diff"]
    );
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("cache_size"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", r["warnings"]);
    assert!(
        warnings[0].contains("ran with cache_size = ")
            && warnings[0].contains("set cache_size on every variant to compare the servers alone"),
        "{}",
        warnings[0]
    );
}

//! `[[variant]] kind` at `bakeoff check`, with no server started: servers of different
//! kinds in one experiment pass, and each wrong pairing is one located line, exit 2
//! (issue 51, item 1).

mod common;

use assert_cmd::Command;

fn bakeoff() -> Command {
    Command::cargo_bin("bakeoff").expect("binary")
}

/// `bakeoff check FILE`, which must exit 2 with one line; that line.
fn check_exit_2(f: &std::path::Path) -> String {
    let out = bakeoff().arg("check").arg(f).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// The head of the experiments whose first variant (the baseline) is MariaDB.
const MARIADB_FIRST: &str =
    "name = \"kinds\"\n[target]\nkind = \"mariadb\"\n[[variant]]\nname = \"maria\"\nbinary = \"/usr/sbin/mariadbd\"\n";

/// [`check_exit_2`] on `f`, its line holding each of `says`; the line.
fn refused_saying(f: &std::path::Path, says: &[&str]) -> String {
    let err = check_exit_2(f);
    for said in says {
        assert!(err.contains(said), "no {said:?} in: {err}");
    }
    err
}

/// A Redis baseline against a memcached variant, with `extra` at the end of the
/// memcached variant's table and `workloads` as the workload tables.
fn redis_and_memcached(extra: &str, workloads: &str) -> String {
    format!(
        "name = \"kinds\"\n\
         [target]\n\
         kind = \"redis\"\n\
         [[variant]]\n\
         name = \"redis\"\n\
         binary = \"/usr/bin/redis-server\"\n\
         [[variant]]\n\
         name = \"mc\"\n\
         kind = \"memcached\"\n\
         binary = \"/usr/bin/memcached\"\n\
         {extra}\
         {workloads}\
         [plan]\nrepetitions = 2\nwarmup = \"0s\"\nduration = \"1s\"\n"
    )
}

const KV: &str = "[[workload]]\nkind = \"kv\"\nconnections = 4\n";

#[test]
fn redis_and_memcached_on_kv_and_ycsb_pass_check() {
    let s = common::Scratch::new();
    let f = s.write(
        "ok.toml",
        &redis_and_memcached(
            "",
            &format!("{KV}[[workload]]\nkind = \"ycsb\"\nconnections = 4\n"),
        ),
    );
    let out = bakeoff().arg("check").arg(&f).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("ok"), "{text}");
}

#[test]
fn a_variant_kind_the_registry_does_not_know_is_one_located_line() {
    let s = common::Scratch::new();
    let text = redis_and_memcached("", KV).replace("kind = \"memcached\"", "kind = \"keydb\"");
    let f = s.write("unknown.toml", &text);
    refused_saying(&f, &["unknown.toml:9:8:", "keydb", "valkey"]);
}

#[test]
fn tpcc_on_a_memcached_variant_is_refused_naming_variant_workload_and_kinds() {
    let s = common::Scratch::new();
    // A SQL baseline (MariaDB) and a memcached variant: tpcc cannot run on the second.
    let text = MARIADB_FIRST.to_string()
        + "[[variant]]\n\
                name = \"mc\"\n\
                kind = \"memcached\"\n\
                binary = \"/usr/bin/memcached\"\n\
                [[workload]]\n\
                kind = \"tpcc\"\n\
                warehouses = 1\n";
    let f = s.write("tpcc.toml", &text);
    let err = refused_saying(
        &f,
        &[
            "tpcc.toml:12:8:",
            "variant mc",
            "workload tpcc",
            "memcached",
        ],
    );
    assert!(
        err.contains("mariadb") && err.contains("postgres"),
        "names the kinds tpcc takes: {err}"
    );
}

#[test]
fn an_owned_setting_in_a_variants_options_is_refused_as_in_target_options() {
    let s = common::Scratch::new();
    // A MariaDB baseline and a PostgreSQL variant whose own options set its port.
    for (name, spelled) in [("port", "port"), ("dir", "data_directory")] {
        let text = format!(
            "{MARIADB_FIRST}[[variant]]\n\
             name = \"pg\"\n\
             kind = \"postgres\"\n\
             binary = \"/usr/lib/postgresql/15/bin/postgres\"\n\
             options = {{ {spelled} = \"5999\" }}\n\
             [[workload]]\n\
             kind = \"oltp\"\n\
             test = \"oltp_point_select\"\n"
        );
        let f = s.write(&format!("{name}.toml"), &text);
        let err = refused_saying(&f, &[&format!("{name}.toml:11:"), "sandbox"]);
        // The same option under [target] options is refused the same way.
        let target = text
            .replace(&format!("options = {{ {spelled} = \"5999\" }}\n"), "")
            .replace(
                "kind = \"mariadb\"\n",
                &format!("kind = \"postgres\"\noptions = {{ {spelled} = \"5999\" }}\n"),
            );
        let g = s.write(&format!("{name}-target.toml"), &target);
        let err_t = check_exit_2(&g);
        let tail = |e: &str| {
            e.split_once(".toml:")
                .and_then(|(_, rest)| rest.split_once(": "))
                .map(|x| x.1.to_string())
                .unwrap_or_default()
        };
        assert_eq!(tail(&err), tail(&err_t), "{err} / {err_t}");
    }
    // MariaDB's spelling of its port in a MariaDB variant's own options, under a
    // PostgreSQL [target]: checked against that variant's kind.
    let text = "name = \"kinds\"\n\
                [target]\n\
                kind = \"postgres\"\n\
                [[variant]]\n\
                name = \"pg\"\n\
                binary = \"/usr/lib/postgresql/15/bin/postgres\"\n\
                [[variant]]\n\
                name = \"maria\"\n\
                kind = \"mariadb\"\n\
                binary = \"/usr/sbin/mariadbd\"\n\
                options = { socket = \"/tmp/x.sock\" }\n\
                [[workload]]\n\
                kind = \"oltp\"\n\
                test = \"oltp_point_select\"\n";
    let f = s.write("socket.toml", text);
    refused_saying(&f, &["socket.toml:11:"]);
}

#[test]
fn options_on_a_memcached_variant_are_refused() {
    let s = common::Scratch::new();
    let f = s.write(
        "mcopts.toml",
        &redis_and_memcached("options = { maxmemory = \"64mb\" }\n", KV),
    );
    refused_saying(&f, &["mcopts.toml:11:", "variant mc", "memcached"]);
}

#[test]
fn target_options_go_only_to_the_variants_that_take_them() {
    let s = common::Scratch::new();
    // [target] options of Redis, and a memcached variant: it takes none, and gets none.
    let text = redis_and_memcached("", KV).replace(
        "kind = \"redis\"\n",
        "kind = \"redis\"\noptions = { maxmemory = \"64mb\" }\n",
    );
    let f = s.write("topts.toml", &text);
    bakeoff().arg("check").arg(&f).assert().success();
}

#[test]
fn a_build_from_source_of_another_kind_is_refused() {
    let s = common::Scratch::new();
    let text = redis_and_memcached("", KV)
        .replace("binary = \"/usr/bin/memcached\"\n", "compiler = \"gcc\"\n")
        .replace(
            "kind = \"redis\"\n",
            "kind = \"redis\"\nsource = { debian = \"redis\" }\n",
        );
    let f = s.write("build.toml", &text);
    refused_saying(&f, &["build.toml:10:", "binary or a dist"]);
}

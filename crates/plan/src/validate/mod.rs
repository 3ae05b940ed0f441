//! The rules between keys that types alone cannot say: unique names, one source kind,
//! a binary excludes build keys, ranges, a baseline that exists. Checked before anything runs.

mod dist;
mod hosts;
mod system;
mod tune;
mod workload;

use crate::experiment::{BuildOn, Experiment, Loaded, Mode, Sanitizer, Source, Variant, Workload};
use crate::key;
use crate::located::{Check, Key, PlanError};
use bakeoff_os::name::{valid_name, NAME_RULE};
use bakeoff_sandbox::{target_for, Ask, TargetKind};
use std::collections::BTreeSet;

pub(crate) fn check(l: &Loaded) -> Check {
    let e = &l.experiment;
    if e.name.trim().is_empty() || !valid_name(&e.name) {
        return Err(l.error_at(
            &key!["name"],
            format!(
                "name {:?} must be {NAME_RULE}",
                e.name.chars().take(80).collect::<String>()
            ),
        ));
    }
    check_source(l, e)?;
    check_variants(l, e)?;
    check_workloads(l, e)?;
    check_owned(l, e)?;
    check_options(l, e)?;
    check_plan(l, e)?;
    check_verify(l, e)?;
    check_hosts(l, e)?;
    tune::check(l)?;
    check_measure(l, e)
}

/// `[[host]]` tables, and every place that names one.
fn check_hosts(l: &Loaded, e: &Experiment) -> Check {
    let mut names = std::collections::BTreeSet::new();
    for (i, h) in e.hosts.iter().enumerate() {
        if !valid_name(&h.name) {
            return Err(l.error_at(
                &key!["host", i, "name"],
                format!("host name must be {NAME_RULE}"),
            ));
        }
        if !names.insert(h.name.as_str()) {
            return Err(l.error_at(
                &key!["host", i, "name"],
                format!("host name {:?} is used twice", h.name),
            ));
        }
        if let Some((k, m)) = hosts::destination_problem(h) {
            return Err(l.error_at(&key!["host", i, k], m));
        }
        if let Some((at, m)) = hosts::ssh_problem(l, i, h) {
            return Err(l.error_at(&at, m));
        }
    }
    let known = |n: &str| e.hosts.iter().any(|h| h.name == n);
    let unknown = |at: &[Key], n: &str| {
        let list: Vec<&str> = e.hosts.iter().map(|h| h.name.as_str()).collect();
        l.error_at(
            at,
            if list.is_empty() {
                format!("no [[host]] named {n:?}: declare it with name and ssh")
            } else {
                format!("no [[host]] named {n:?}; the hosts are {}", list.join(", "))
            },
        )
    };
    if let Some(h) = e.target.host.as_deref().filter(|h| !known(h)) {
        return Err(unknown(&key!["target", "host"], h));
    }
    for (i, w) in e.workloads.iter().enumerate() {
        if let Some(h) = w.clients.iter().find(|h| !known(h)) {
            return Err(unknown(&key!["workload", i, "clients"], h));
        }
    }
    for (i, v) in e.variants.iter().enumerate() {
        if let Some(h) = v.host.as_deref().filter(|h| !known(h)) {
            return Err(unknown(&key!["variant", i, "host"], h));
        }
        if let Some(h) = v.clients.iter().find(|h| !known(h)) {
            return Err(unknown(&key!["variant", i, "clients"], h));
        }
    }
    check_placement(l, e)?;
    check_variant_placement(l, e)
}

/// Machines as variants (`[[variant]] host`, `clients`): what can run on a variant's own
/// host, and whether each variant's load reaches its server.
fn check_variant_placement(l: &Loaded, e: &Experiment) -> Check {
    if !e
        .variants
        .iter()
        .any(|v| v.host.is_some() || !v.clients.is_empty())
    {
        return Ok(());
    }
    let servers: BTreeSet<Option<&str>> = e
        .variants
        .iter()
        .map(|v| v.host.as_deref().or(e.target.host.as_deref()))
        .collect();
    for (i, v) in e.variants.iter().enumerate() {
        let at = key!["variant", i, "host"];
        if v.host.is_some() {
            if let Some(why) = target_for(e.kind_of(v)).refuses(Ask::OtherHost) {
                return Err(l.error_at(&at, why));
            }
            let refused = [
                (
                    e.plan.mode == Mode::Instructions,
                    "mode = \"instructions\" counts the same binary's instructions under valgrind, which no machine changes; compare machines with mode = \"time\" (or \"both\")",
                ),
                (
                    e.target.build_on == Some(BuildOn::Host)
                        && v.host.as_deref() != e.target.host.as_deref(),
                    "build_on = \"host\" builds on [target] host only; remove build_on (builds are made here and copied to each variant's host)",
                ),
                (
                    e.variant_kinds().iter().any(|k| k.is_sql()) && servers.len() > 1,
                    "a SQL target's data is prepared in one place, and these variants serve from more than one machine; serve them all from one host ([target] host), one experiment per machine, and compare the results folders with bakeoff compare",
                ),
            ];
            if let Some((_, why)) = refused.into_iter().find(|(on, _)| *on) {
                return Err(l.error_at(&at, why));
            }
        }
        let cat = key!["variant", i, "clients"];
        if v.clients
            .iter()
            .enumerate()
            .any(|(j, c)| v.clients[..j].contains(c))
        {
            return Err(l.error_at(&cat, "a host is named twice in clients"));
        }
        let server = v.host.as_deref().or(e.target.host.as_deref());
        for (wi, w) in e.workloads.iter().enumerate() {
            if w.train_only {
                continue;
            }
            let load = e.load_hosts(&v.name, &w.display_name());
            // Where the load's hosts came from: the variant's clients or its host.
            let from = if !v.clients.is_empty() { &cat } else { &at };
            if load.is_empty() {
                if server.is_some() && v.host.is_some() {
                    let h = e.hosts.iter().position(|h| Some(h.name.as_str()) == server);
                    if let Some(h) = h.filter(|h| e.hosts[*h].listen.is_none()) {
                        return Err(l.error_at(
                            &key!["host", h, "listen"],
                            format!("the server on host {} listens on 127.0.0.1 only, so the load from this machine cannot reach it: set listen = \"0.0.0.0\" (or that host's address) here", e.hosts[h].name),
                        ));
                    }
                }
                continue;
            }
            if !w.kind.loads_from_hosts() {
                let able = kinds_loading_from_hosts(l);
                return Err(l.error_at(
                    from,
                    format!(
                        "workload {} ({}) loads only from this machine, and this variant's load would come from host {}; only kinds {} load from other hosts: serve this variant here, or drop that workload",
                        w.display_name(),
                        w.kind.name(),
                        load.join(", "),
                        able.join(" and ")
                    ),
                ));
            }
            let server = remote_server(l, from, "give the variant a host too", server, wi, w)?;
            let h = e.hosts.iter().position(|h| h.name == server).unwrap_or(0);
            if let Some(c) = load.iter().find(|c| *c != server) {
                if e.hosts[h].listen.is_none() {
                    return Err(l.error_at(
                        &key!["host", h, "listen"],
                        format!(
                            "the server on host {server} listens on 127.0.0.1 only, so the load from host {c} cannot reach it: set listen = \"0.0.0.0\" (or that host's address) here, or load from {server} itself (clients = [\"{server}\"] or no clients)"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `build_on = "host"`: what the host can build from (a source it fetches itself, no
/// files of this machine) and what needs this machine (training runs, layouts).
fn check_build_on_host(l: &Loaded, e: &Experiment, served_there: bool) -> Check {
    let at = key!["target", "build_on"];
    if !served_there {
        return Err(l.error_at(
            &at,
            "build_on = \"host\" builds on the server's host: set [target] host too",
        ));
    }
    if let Some(s) = &e.target.source {
        let local = s.path.is_some()
            || s.tarball.as_deref().is_some_and(|t| !t.contains("://"))
            || s.git
                .as_deref()
                .is_some_and(|g| !g.contains("://") && !g.contains('@'));
        if local {
            return Err(l.error_at(
                &key!["target", "source"],
                "with build_on = \"host\" the host fetches the source itself: use debian, a tarball URL or a git URL, not a path on this machine",
            ));
        }
    }
    if e.plan.layouts > 1 {
        return Err(l.error_at(
            &key!["plan", "layouts"],
            "layouts are built here: remove build_on = \"host\" or layouts",
        ));
    }
    for (i, v) in e.variants.iter().enumerate() {
        let here = [
            (
                !v.patches.is_empty(),
                "patches",
                "patch files are on this machine",
            ),
            (v.pgo.is_some(), "pgo", "PGO trains on this machine"),
            (v.bolt.is_some(), "bolt", "BOLT trains on this machine"),
        ];
        if let Some((_, k, why)) = here.into_iter().find(|(on, _, _)| *on) {
            return Err(l.error_at(
                &key!["variant", i, k],
                format!("{why}: with build_on = \"host\" remove it, or build here (build_on = \"local\")"),
            ));
        }
    }
    Ok(())
}

/// The kinds whose load may come from other hosts, in the registry's order.
fn kinds_loading_from_hosts(l: &Loaded) -> Vec<&'static str> {
    let kinds = l.kinds();
    kinds
        .names()
        .into_iter()
        .filter(|k| kinds.find(k).is_some_and(|k| k.loads_from_hosts()))
        .collect()
}

/// The host that serves workload `i`, whose load comes from other hosts and so reaches
/// the server over the network: an error at `at` (ending in `fix`) when the server is on
/// this machine, on loopback, and at the workload's `transport` when that is a Unix
/// socket.
fn remote_server<'a>(
    l: &Loaded,
    at: &[Key],
    fix: &str,
    server: Option<&'a str>,
    i: usize,
    w: &Workload,
) -> Result<&'a str, PlanError> {
    let Some(server) = server else {
        return Err(l.error_at(
            at,
            format!("the load is on other hosts but the server is on this machine, listening on loopback: {fix}"),
        ));
    };
    if w.keys.transport() == Some(crate::Transport::Unix) {
        return Err(l.error_at(
            &key!["workload", i, "transport"],
            "transport = \"unix\" needs the load on this machine with the server",
        ));
    }
    Ok(server)
}

/// `[target] name` and each variant's `name`, with their key paths and the kind of server
/// each is checked against: a variant's own against its kind; `[target]`'s against
/// `[target] kind` and again against every other kind of variant (options go to every
/// variant that takes them, so each must pass as that server reads it).
fn owned_tables<'a, T>(
    e: &'a Experiment,
    name: &'static str,
    of_target: &'a T,
    of_variant: fn(&'a Variant) -> &'a T,
) -> Vec<(Vec<Key>, &'a T, TargetKind)> {
    let mut out = vec![(key!["target", name].to_vec(), of_target, e.target.kind)];
    if name == "options" {
        for k in e.variant_kinds() {
            if k != e.target.kind && k.takes_options() {
                out.push((key!["target", name].to_vec(), of_target, k));
            }
        }
    }
    for (i, v) in e.variants.iter().enumerate() {
        out.push((
            key!["variant", i, name].to_vec(),
            of_variant(v),
            e.kind_of(v),
        ));
    }
    out
}

/// What can run on another host today, and whether the load can reach the server.
fn check_placement(l: &Loaded, e: &Experiment) -> Check {
    let server = e.target.host.as_deref();
    if e.target.build_on == Some(BuildOn::Host) {
        check_build_on_host(l, e, server.is_some())?;
    }
    if server.is_some() {
        for kind in e.variant_kinds() {
            if let Some(why) = target_for(kind).refuses(Ask::OtherHost) {
                return Err(l.error_at(&key!["target", "host"], why));
            }
        }
    }
    for (i, w) in e.workloads.iter().enumerate() {
        let at = key!["workload", i, "clients"];
        if w.clients.is_empty() && server.is_none() {
            continue;
        }
        if !w.clients.is_empty() && !w.kind.loads_from_hosts() {
            let able = kinds_loading_from_hosts(l);
            return Err(l.error_at(
                &at,
                format!(
                    "only kinds {} load from other hosts today, not {}: remove clients",
                    able.join(" and "),
                    w.kind.name()
                ),
            ));
        }
        if w.clients
            .iter()
            .enumerate()
            .any(|(j, c)| w.clients[..j].contains(c))
        {
            return Err(l.error_at(&at, "a host is named twice in clients"));
        }
        if e.hosts_as_variants() {
            // Each variant's server and load: `check_variant_placement`.
            continue;
        }
        let fix = "put the server on a [[host]] too ([target] host)";
        let server = remote_server(l, &at, fix, server, i, w)?;
        let host = e.hosts.iter().position(|h| h.name == server).unwrap_or(0);
        let elsewhere = w.clients.is_empty() || w.clients.iter().any(|c| c != server);
        if elsewhere && e.hosts[host].listen.is_none() {
            let from = match w.clients.iter().find(|c| *c != server) {
                Some(c) => format!("host {c}"),
                None => "this machine".to_string(),
            };
            return Err(l.error_at(
                &key!["host", host, "listen"],
                format!(
                    "the server on host {server} listens on 127.0.0.1 only, so the load from {from} cannot reach it: set listen = \"0.0.0.0\" (or that host's address) here, or load from {server} itself with clients = [\"{server}\"]"
                ),
            ));
        }
    }
    Ok(())
}

/// The `[measure]` table, the instructions mode, and the checkers variants ask for.
fn check_measure(l: &Loaded, e: &Experiment) -> Check {
    let at = key!["measure", "interval"];
    let d = crate::parse_duration(&e.measure.interval).map_err(|m| l.error_at(&at, m))?;
    if d < std::time::Duration::from_millis(10) || d > std::time::Duration::from_secs(60) {
        return Err(l.error_at(
            &at,
            format!(
                "interval must be between 10ms and 60s, got {}",
                e.measure.interval
            ),
        ));
    }
    if e.plan.mode == Mode::Instructions && e.plan.ops.is_none() {
        return Err(l.error_at(
            &key!["plan", "mode"],
            "mode = \"instructions\" counts a fixed amount of work: set [plan] ops = N (e.g. 20000) instead of duration",
        ));
    }
    if e.plan.mode == Mode::Both && e.plan.ops.is_none() {
        return Err(l.error_at(
            &key!["plan", "mode"],
            "mode = \"both\" counts instructions over a fixed amount of work: set [plan] ops = N (e.g. 5000) for the instruction runs (duration stays the wall-clock runs' window)",
        ));
    }
    let mode = if e.plan.mode == Mode::Both {
        "mode = \"both\""
    } else {
        "mode = \"instructions\""
    };
    if e.plan.mode.counts_instructions() && e.measure.profile {
        return Err(l.error_at(
            &key!["measure", "profile"],
            format!("profile and {mode} do not go together (the server runs under valgrind); the instruction counts already come per function"),
        ));
    }
    for (i, v) in e.variants.iter().enumerate() {
        if !v.sanitize.is_empty() && !v.is_build() {
            return Err(l.error_at(
                &key!["variant", i, "sanitize"],
                format!("variant {:?} is a binary: sanitize needs a build (remove binary, or remove sanitize)", v.name),
            ));
        }
        if v.sanitize.contains(&Sanitizer::Thread) && v.sanitize.contains(&Sanitizer::Address) {
            return Err(l.error_at(
                &key!["variant", i, "sanitize"],
                format!("variant {:?} asks for both thread and address sanitizers, which cannot be built together; use one per variant", v.name),
            ));
        }
        if v.run_under.is_some() && !v.sanitize.is_empty() {
            return Err(l.error_at(
                &key!["variant", i, "run_under"],
                format!("variant {:?} sets both sanitize and run_under: valgrind and sanitizers do not run together; use one", v.name),
            ));
        }
        if v.run_under.is_some() && e.plan.mode.counts_instructions() {
            return Err(l.error_at(
                &key!["variant", i, "run_under"],
                format!("run_under and {mode} both run the server under valgrind; use one"),
            ));
        }
    }
    Ok(())
}

/// Server options belong to SQL and Redis targets; max_connections must cover the sweep.
fn check_options(l: &Loaded, e: &Experiment) -> Check {
    let kind = e.target.kind;
    // `[target] options` go to every variant that takes them: refused only when none does.
    let none_takes = e.variant_kinds().iter().all(|k| !k.takes_options());
    if !kind.takes_options() && none_takes && !e.target.options.is_empty() {
        return Err(l.error_at(
            &key!["target", "options"],
            format!(
                "options are server settings of {} targets; for {} use args",
                targets_that(|k| k.takes_options(), "and"),
                kind.as_str()
            ),
        ));
    }
    if let Some((i, v)) = e
        .variants
        .iter()
        .enumerate()
        .find(|(_, v)| !v.options.is_empty() && !e.kind_of(v).takes_options())
    {
        return Err(l.error_at(
            &key!["variant", i, "options"],
            format!(
                "options are server settings of {} targets; variant {} is {} {} server, which takes none: use args",
                targets_that(|k| k.takes_options(), "and"),
                v.name,
                crate::workload::article(e.kind_of(v).as_str()),
                e.kind_of(v).as_str()
            ),
        ));
    }
    for (i, v) in e.variants.iter().enumerate() {
        if v.engine.is_some() && !target_for(e.kind_of(v)).has_storage_engines() {
            return Err(l.error_at(
                &key!["variant", i, "engine"],
                "engine (a storage engine) is for mariadb targets only; remove it",
            ));
        }
    }
    check_connection_cap(l, e)
}

/// The server's connection cap, where the experiment sets it (options or arguments), must
/// cover the sweep: a run at the top of it would otherwise be refused connections.
fn check_connection_cap(l: &Loaded, e: &Experiment) -> Check {
    let swept = e.max_connections_swept();
    for (i, v) in e.variants.iter().enumerate() {
        let kind = e.kind_of(v);
        let target = bakeoff_sandbox::target_for(kind);
        let Some(limit) = target.connection_limit() else {
            continue;
        };
        let name = limit.name();
        // PostgreSQL keeps superuser_reserved_connections of them from ordinary users.
        let reserved = target.reserved_connections();
        let need = swept + reserved + 1;
        // Where the cap is set, the last spelling winning as it does for the server: the
        // variant's args, the target's args, the variant's options, the target's options.
        let v_args = limit.in_args(&v.args);
        let t_args = limit.in_args(e.target_args_for(v));
        let (at, raw) = if let Some((j, raw)) = v_args {
            (key!["variant", i, "args", j].to_vec(), raw)
        } else if let Some((j, raw)) = t_args {
            (key!["target", "args", j].to_vec(), raw)
        } else if let Some((k, raw)) = option_named(&v.options, name) {
            (key!["variant", i, "options", k.to_string()].to_vec(), raw)
        } else if let Some((k, raw)) = e.target_options_for(v).and_then(|o| option_named(o, name)) {
            (key!["target", "options", k.to_string()].to_vec(), raw)
        } else {
            continue;
        };
        let Ok(max) = raw.trim().parse::<usize>() else {
            return Err(l.error_at(&at, format!("{name} must be a number, got {raw:?}")));
        };
        if max < need {
            return Err(l.error_at(
                &at,
                format!(
                    "{name} = {max} is lower than the sweep needs ({swept} connections{} + 1 for bakeoff); raise it to at least {need} or remove it (bakeoff then sets {})",
                    if reserved > 0 { format!(" + {reserved} the server reserves") } else { String::new() },
                    e.connection_cap_of(kind)
                ),
            ));
        }
    }
    Ok(())
}

/// The option `name` (any case) and its value as written.
fn option_named<'a>(o: &'a crate::ServerOptions, name: &str) -> Option<(&'a str, String)> {
    o.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(k, val)| (k.as_str(), val.to_string()))
}

/// Args and options may not take over what the sandbox owns (port, listen address, data
/// directory, sockets, pid file, daemon mode) under any spelling the server accepts, nor
/// write lines of their own into its config file.
fn check_owned(l: &Loaded, e: &Experiment) -> Check {
    let said = |what: &str| {
        format!("{what}, which is the sandbox's (it picks a free loopback port and a private directory for every run); remove it")
    };
    for (at, args, kind) in owned_tables(e, "args", &e.target.args, |v| &v.args) {
        let target = bakeoff_sandbox::target_for(kind);
        for (i, a) in args.iter().enumerate() {
            let mut at = at.clone();
            at.push(Key::Index(i));
            if let Some(c) = a.chars().find(|c| c.is_control()) {
                return Err(l.error_at(
                    &at,
                    format!("argument {a:?} holds the control character {c:?}; a server argument is one line of printable text"),
                ));
            }
            if a == "--" {
                return Err(l.error_at(
                    &at,
                    "\"--\" ends the server's options, so the sandbox's own after it would be ignored; remove it",
                ));
            }
        }
        if let Some((a, what)) = target.owned_arg(args) {
            return Err(l.error_at(&at, format!("{a:?} sets {}", said(what))));
        }
        if let Some((a, why)) = target.refused_arg(args) {
            return Err(l.error_at(&at, format!("{a:?} {why}")));
        }
    }
    for (at, options, kind) in owned_tables(e, "options", &e.target.options, |v| &v.options) {
        let target = bakeoff_sandbox::target_for(kind);
        for (k, v) in options {
            let mut at = at.clone();
            at.push(Key::Name(k.clone().into()));
            if let Some(problem) = option_key_problem(k) {
                return Err(l.error_at(
                    &at,
                    format!("option name {k:?} {problem}; a server setting's name is letters, digits, '_', '-' and '.', as in innodb_buffer_pool_size"),
                ));
            }
            if let Some(what) = target.owned_option(k) {
                return Err(l.error_at(&at, format!("option {k} sets {}", said(what))));
            }
            let text = v.to_string();
            if let Some(why) = target.refused_setting(k, &text) {
                return Err(l.error_at(&at, format!("option {k} {why}")));
            }
            if let Some(c) = text.chars().find(|c| c.is_control()) {
                return Err(l.error_at(
                    &at,
                    format!("the value of option {k} holds the control character {c:?}; a setting's value is one line of printable text"),
                ));
            }
        }
    }
    Ok(())
}

/// What is wrong with an `options` key, if anything: it becomes a line of the server's
/// config file (`key = value`) or a `-c key=value`, so it must be one plain word.
fn option_key_problem(k: &str) -> Option<&'static str> {
    let Some(first) = k.chars().next() else {
        return Some("is empty");
    };
    if k.len() > 128 {
        Some("is longer than 128 characters")
    } else if !(first.is_ascii_alphanumeric() || first == '_') {
        Some("must start with a letter, a digit or '_'")
    } else if !k
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        Some("holds a character other than a letter, digit, '_', '-' or '.'")
    } else {
        None
    }
}

fn check_source(l: &Loaded, e: &Experiment) -> Check {
    let Some(s) = &e.target.source else {
        return Ok(());
    };
    let at = key!["target", "source"];
    let kinds = [
        s.bundled,
        s.debian.is_some(),
        s.tarball.is_some(),
        s.git.is_some(),
        s.path.is_some(),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(l.error_at(
            &at,
            "source needs exactly one of debian, tarball, git, path or (sqlite) bundled, e.g. source = { debian = \"memcached\" }",
        ));
    }
    if s.bundled {
        if let Some(why) = target_for(e.target.kind).refuses(Ask::BundledSource) {
            return Err(l.error_at(&key!["target", "source", "bundled"], why));
        }
    }
    check_source_pairs(l, s, &at)?;
    if let Some(d) = s
        .debian
        .as_deref()
        .filter(|d| !bakeoff_build::is_debian_package_name(d))
    {
        return Err(l.error_at(
            &key!["target", "source", "debian"],
            format!(
                "debian {:?} is not a Debian source package name (lowercase letters, digits, '+', '-', '.', starting with a letter or digit), e.g. debian = \"memcached\"",
                d.chars().take(80).collect::<String>()
            ),
        ));
    }
    check_source_inputs(l, s)?;
    if let Some(p) = &s.path {
        if !l.resolve(p).is_dir() {
            return Err(l.error_at(
                &key!["target", "source", "path"],
                format!(
                    "source path {} is not a directory; give a source tree",
                    l.resolve(p).display()
                ),
            ));
        }
    }
    Ok(())
}

fn check_source_pairs(l: &Loaded, s: &Source, at: &[Key]) -> Check {
    match (&s.tarball, &s.sha256) {
        (Some(_), None) => {
            return Err(l.error_at(
                at,
                "a tarball source needs sha256 = \"<64 hex digits>\" (run sha256sum on it)",
            ))
        }
        (None, Some(_)) => {
            return Err(l.error_at(at, "sha256 belongs to a tarball source; remove it"))
        }
        (Some(_), Some(h)) if h.len() != 64 || !h.chars().all(|c| c.is_ascii_hexdigit()) => {
            return Err(l.error_at(
                &key!["target", "source", "sha256"],
                "sha256 must be 64 hex digits",
            ))
        }
        _ => {}
    }
    match (&s.git, &s.rev) {
        (Some(_), None) => {
            Err(l.error_at(at, "a git source needs rev = \"<commit, tag or branch>\""))
        }
        (None, Some(_)) => Err(l.error_at(at, "rev belongs to a git source; remove it")),
        _ => Ok(()),
    }
}

/// URL schemes a tarball source may use (the rest of bakeoff fetches nothing else).
const TARBALL_SCHEMES: [&str; 3] = ["http://", "https://", "file://"];

/// What a tarball, git url or rev names, checked before anything is fetched: a tarball
/// is a supported URL or a regular file here (a FIFO or device would hang or never end
/// the copy), and neither a git url nor a rev may start with `-` (git would read it as
/// an option).
fn check_source_inputs(l: &Loaded, s: &Source) -> Check {
    if let Some(t) = &s.tarball {
        let at = key!["target", "source", "tarball"];
        let local = match t.split_once("://") {
            Some(_) if t.starts_with("file://") => Some(&t["file://".len()..]),
            Some(_) if TARBALL_SCHEMES.iter().any(|p| t.starts_with(p)) => None,
            Some((scheme, _)) => {
                return Err(l.error_at(
                    &at,
                    format!("tarball URL scheme {scheme}:// is not supported; use http://, https://, file:// or a local path"),
                ))
            }
            None => Some(t.as_str()),
        };
        if let Some(p) = local {
            // stat, never open: opening a FIFO blocks until a writer comes.
            let path = l.resolve(std::path::Path::new(p));
            let why = match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => None,
                Ok(m) if m.is_dir() => Some("is a directory".to_string()),
                Ok(_) => Some("is not a regular file (a FIFO, socket or device)".to_string()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Some("does not exist".to_string())
                }
                Err(e) => Some(format!("cannot be read: {e}")),
            };
            if let Some(why) = why {
                return Err(l.error_at(
                    &at,
                    format!(
                        "tarball {} {why}; give a tar archive file or an http(s) URL",
                        path.display()
                    ),
                ));
            }
        }
    }
    if s.git
        .as_deref()
        .is_some_and(|g| g.trim_start().starts_with('-'))
    {
        return Err(l.error_at(
            &key!["target", "source", "git"],
            "a git url must not start with `-`; give a URL or a repository path",
        ));
    }
    if s.rev
        .as_deref()
        .is_some_and(|r| r.trim().is_empty() || r.trim_start().starts_with('-'))
    {
        return Err(l.error_at(
            &key!["target", "source", "rev"],
            "rev must name a commit, tag or branch (not start with `-`)",
        ));
    }
    Ok(())
}

/// A SQLite build is one compiler call and its library is loaded into bakeoff-sqlited.
/// A variant's build keys the target cannot do (a sqlite build runs no make and cannot
/// be sanitized), asked of the target.
fn check_variant_asks(l: &Loaded, e: &Experiment, i: usize, v: &Variant) -> Check {
    let target = target_for(e.kind_of(v));
    for (asked, ask, k) in [
        (!v.make_args.is_empty(), Ask::MakeArgs, "make_args"),
        (!v.sanitize.is_empty(), Ask::Sanitize, "sanitize"),
    ] {
        if let Some(why) = asked.then(|| target.refuses(ask)).flatten() {
            return Err(l.error_at(&key!["variant", i, k], why));
        }
    }
    Ok(())
}

fn check_variants(l: &Loaded, e: &Experiment) -> Check {
    if e.variants.is_empty() {
        return Err(l.error_at(&key!["variant"], "no [[variant]]: add at least one"));
    }
    let mut names = BTreeSet::new();
    for (i, v) in e.variants.iter().enumerate() {
        if !valid_name(&v.name) {
            return Err(l.error_at(
                &key!["variant", i, "name"],
                format!(
                    "variant name {:?} must be {NAME_RULE}",
                    v.name.chars().take(80).collect::<String>()
                ),
            ));
        }
        if !names.insert(v.name.as_str()) {
            return Err(l.error_at(
                &key!["variant", i, "name"],
                format!(
                    "variant name {:?} is used twice; names must be unique",
                    v.name
                ),
            ));
        }
        check_variant(l, e, i, v)?;
    }
    let names: Vec<(Vec<Key>, String)> = e
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| (key!["variant", i, "name"].to_vec(), v.name.clone()))
        .collect();
    distinct_file_names(l, "variant", &names)
}

/// Names become file names in the results folder (logs, histograms, series, profiles,
/// data dirs) through [`bakeoff_os::path::safe_name`]; two names it maps to one file name
/// would overwrite each other's files, so the pair is refused, both named.
fn distinct_file_names(l: &Loaded, what: &str, names: &[(Vec<Key>, String)]) -> Check {
    let mut seen: std::collections::BTreeMap<String, &str> = std::collections::BTreeMap::new();
    for (at, name) in names {
        let file = bakeoff_os::path::safe_name(name);
        match seen.get(file.as_str()) {
            Some(first) if *first != name.as_str() => {
                return Err(l.error_at(
                    at,
                    format!(
                        "{what} names {first:?} and {name:?} both become the file name {file:?} in the results folder; rename one (letters, digits, '-', '_' and '.' are kept, anything else becomes '_')"
                    ),
                ))
            }
            _ => {
                seen.insert(file, name);
            }
        }
    }
    Ok(())
}

fn check_variant(l: &Loaded, e: &Experiment, i: usize, v: &Variant) -> Check {
    check_variant_asks(l, e, i, v)?;
    system::check(l, e, i, v)?;
    if v.dist.is_some() {
        return dist::check(l, e, i, v);
    }
    if let Some(b) = &v.binary {
        if let Some((k, _)) = v.build_keys().iter().find(|(_, set)| *set) {
            return Err(l.error_at(
                &key!["variant", i, *k],
                format!("variant {:?} has both binary and {k}: a binary variant is not built; remove one", v.name),
            ));
        }
        if let Some(host) = v.host.as_ref().or(e.target.host.as_ref()) {
            // It is looked up there, before anything is built.
            if !std::path::Path::new(b).is_absolute() {
                return Err(l.error_at(
                    &key!["variant", i, "binary"],
                    format!("the server runs on host {host}: name its binary by its absolute path there"),
                ));
            }
            return Ok(());
        }
        let p = l.resolve(b);
        if !p.is_file() {
            let what = if p.is_dir() {
                "is a directory; name the server's executable in it"
            } else if p.exists() {
                "is not a regular file; name the server's executable"
            } else {
                "does not exist; install the server or fix the path"
            };
            return Err(l.error_at(
                &key!["variant", i, "binary"],
                format!("binary {} {what}", p.display()),
            ));
        }
        return Ok(());
    }
    if let Some(lto) = v.lto {
        if let Some(why) = target_for(e.kind_of(v)).refuses(Ask::Lto) {
            return Err(l.error_at(&key!["variant", i, "lto"], why));
        }
        if let Err(m) = bakeoff_build::lto::settings(v.compiler_or_default(), lto) {
            return Err(l.error_at(&key!["variant", i, "lto"], m));
        }
    }
    for (what, t) in [("pgo", &v.pgo), ("bolt", &v.bolt)] {
        let Some(t) = t else { continue };
        let at = |k: &'static str| key!["variant", i, what, k];
        let ask = if what == "bolt" { Ask::Bolt } else { Ask::Pgo };
        if let Some(why) = target_for(e.kind_of(v)).refuses(ask) {
            return Err(l.error_at(&key!["variant", i, what], why));
        }
        if let Err(m) = bakeoff_build::pgo::flags(
            v.compiler_or_default(),
            &bakeoff_build::pgo::Profile::Generate,
        ) {
            return Err(l.error_at(&key!["variant", i, what], m.replace("pgo", what)));
        }
        let Some(w) = e.workloads.iter().find(|w| w.display_name() == t.workload) else {
            let names: Vec<String> = e.workloads.iter().map(|w| w.display_name()).collect();
            return Err(l.error_at(
                &at("workload"),
                format!(
                    "no workload {:?} to train on; the experiment has {}",
                    t.workload,
                    names.join(", ")
                ),
            ));
        };
        if let Some(c) = t.connections {
            if !w.connections_swept().contains(&c) {
                return Err(l.error_at(
                    &at("connections"),
                    format!(
                        "{} runs at {:?} connections, not {c}",
                        t.workload,
                        w.connections_swept()
                    ),
                ));
            }
        }
        match crate::parse_duration(&t.duration) {
            Ok(d) if d.as_secs_f64() >= 0.1 && d.as_secs() <= 3600 => {}
            _ => {
                return Err(l.error_at(
                    &at("duration"),
                    format!(
                        "pgo duration {:?}: give 100ms to 1h, e.g. \"30s\"",
                        t.duration
                    ),
                ))
            }
        }
    }
    let git = e.target.source.as_ref().is_some_and(|s| s.git.is_some());
    if let Some(r) = &v.rev {
        if !git {
            return Err(l.error_at(
                &key!["variant", i, "rev"],
                "rev picks a revision of a git source; [target] source has no git (use source = { git = \"...\", rev = \"...\" })",
            ));
        }
        if r.trim().is_empty() || r.starts_with('-') {
            return Err(l.error_at(
                &key!["variant", i, "rev"],
                "rev must name a commit, tag or branch",
            ));
        }
    }
    if e.kind_of(v) != e.target.kind {
        return Err(l.error_at(
            &key!["variant", i, "kind"],
            format!(
                "variant {:?} is a {} server built from source, but [target] source is {}'s; give it a binary or a dist (a build from source is for variants of [target] kind)",
                v.name,
                e.kind_of(v).as_str(),
                e.target.kind.as_str()
            ),
        ));
    }
    if e.target.source.is_none() {
        return Err(l.error_at(
            &key!["variant", i],
            format!(
                "variant {:?} is built from source but [target] has no source; add source = {{ debian = \"{}\" }} or give the variant a binary",
                v.name,
                e.target.kind.as_str()
            ),
        ));
    }
    for (j, p) in v.patches.iter().enumerate() {
        if !l.resolve(p).is_file() {
            return Err(l.error_at(
                &key!["variant", i, "patches", j],
                format!(
                    "patch {} not found (paths are relative to the experiment file)",
                    l.resolve(p).display()
                ),
            ));
        }
    }
    Ok(())
}

fn check_workloads(l: &Loaded, e: &Experiment) -> Check {
    if e.workloads.is_empty() {
        return Err(l.error_at(
            &[],
            "no [[workload]]: add at least one, e.g. [[workload]] kind = \"kv\"",
        ));
    }
    check_cell_names(l, e)?;
    let mut names = BTreeSet::new();
    for (i, w) in e.workloads.iter().enumerate() {
        let name = w.display_name();
        if !valid_name(&name) {
            return Err(l.error_at(
                &key!["workload", i, "name"],
                format!("workload name must be {NAME_RULE}"),
            ));
        }
        if !names.insert(name.clone()) {
            return Err(l.error_at(
                &key!["workload", i],
                format!("workload name {name:?} is used twice; give each workload a distinct name"),
            ));
        }
        workload::check(l, e, i, w)?;
        if w.train_only {
            let trains = e.variants.iter().any(|v| {
                [&v.pgo, &v.bolt]
                    .into_iter()
                    .flatten()
                    .any(|t| t.workload == name)
            }) || e.tune.as_ref().and_then(|t| t.train.as_ref()) == Some(&name);
            if !trains {
                return Err(l.error_at(
                    &key!["workload", i, "train_only"],
                    format!("workload {name:?} is only for training, but no variant's pgo or bolt trains on it; name it there or drop train_only"),
                ));
            }
        }
    }
    let cells: Vec<(Vec<Key>, String)> = e
        .workloads
        .iter()
        .enumerate()
        .flat_map(|(i, w)| {
            w.keys
                .cell_names(&w.display_name())
                .into_iter()
                .map(move |n| (key!["workload", i, "name"].to_vec(), n))
        })
        .collect();
    distinct_file_names(l, "workload", &cells)?;
    if !e.workloads.is_empty() && e.workloads.iter().all(|w| w.train_only) {
        return Err(l.error_at(
            &key!["workload", 0, "train_only"],
            "every workload is train_only: nothing would be measured; add a workload without it",
        ));
    }
    Ok(())
}

fn check_verify(l: &Loaded, e: &Experiment) -> Check {
    let Some(q) = &e.verify.queries else {
        return Ok(());
    };
    if !e.variant_kinds().iter().all(|k| k.is_sql()) {
        return Err(l.error_at(
            &key!["verify", "queries"],
            format!(
                "verify queries are SQL; they need a {} target",
                targets_that(TargetKind::is_sql, "or")
            ),
        ));
    }
    let path = l.resolve(q);
    if !path.is_file() {
        return Err(l.error_at(
            &key!["verify", "queries"],
            format!(
                "{} does not exist or is not a file; give a path relative to the experiment file",
                path.display()
            ),
        ));
    }
    Ok(())
}

fn check_plan(l: &Loaded, e: &Experiment) -> Check {
    let p = &e.plan;
    if let Some(n) = p.repetitions {
        range(
            l,
            &key!["plan", "repetitions"],
            n,
            1.0,
            bakeoff_stats::MAX_ROUNDS as f64,
            "repetitions",
        )?;
    }
    if let Some(b) = &p.budget {
        let at = key!["plan", "budget"];
        let d = crate::parse_duration(b).map_err(|m| l.error_at(&at, m))?;
        if d < std::time::Duration::from_secs(1) || d > std::time::Duration::from_secs(7 * 86_400) {
            return Err(l.error_at(&at, format!("budget must be between 1s and 7d, got {b:?}")));
        }
    }
    if let Some(x) = p.precision {
        range(l, &key!["plan", "precision"], x, 1e-4, 0.5, "precision")?;
    }
    if let Some(x) = p.equivalence {
        range(l, &key!["plan", "equivalence"], x, 1e-4, 0.5, "equivalence")?;
    }
    if let Some(n) = p.min_repetitions {
        let most = p.repetitions.unwrap_or(1000).max(2) as f64;
        let at = key!["plan", "min_repetitions"];
        range(l, &at, n, 2.0, most, "min_repetitions")?;
    }
    if let Some(w) = &p.warmup {
        crate::parse_duration(w).map_err(|m| l.error_at(&key!["plan", "warmup"], m))?;
    }
    if p.duration.is_some() && p.ops.is_some() && p.mode != Mode::Both {
        return Err(l.error_at(&key!["plan", "ops"], "give duration or ops, not both"));
    }
    if let Some(d) = &p.duration {
        let d = crate::parse_duration(d).map_err(|m| l.error_at(&key!["plan", "duration"], m))?;
        if d < std::time::Duration::from_millis(10) {
            return Err(l.error_at(
                &key!["plan", "duration"],
                format!("duration {d:?} is too short: at least 10ms (a shorter window measures the clock, not the server)"),
            ));
        }
    }
    if p.ops == Some(0) {
        return Err(l.error_at(&key!["plan", "ops"], "ops must be at least 1"));
    }
    check_lengths(l, e)?;
    check_layouts(l, e)?;
    check_cpus(l, e)?;
    if p.sandbox_dir
        .as_deref()
        .is_some_and(|d| d.trim().is_empty())
    {
        return Err(l.error_at(
            &key!["plan", "sandbox_dir"],
            "sandbox_dir is empty; name a folder (a disk-backed one measures what users run on)",
        ));
    }
    if let Some(b) = &p.baseline {
        if !e.variants.iter().any(|v| &v.name == b) {
            let names: Vec<_> = e.variants.iter().map(|v| v.name.as_str()).collect();
            return Err(l.error_at(
                &key!["plan", "baseline"],
                format!(
                    "baseline {b:?} is not a variant; use one of {}",
                    names.join(", ")
                ),
            ));
        }
    }
    check_aa(l, e)
}

/// The longest warmup or measured window one run may have: a day. Longer is a unit typed
/// wrong far more often than a plan (a run's phases are seconds to minutes), and its cost
/// is a week of the machine.
pub const LONGEST_PHASE: std::time::Duration = std::time::Duration::from_secs(86_400);

/// `warmup` and `duration`: each at most [`LONGEST_PHASE`], and together within the
/// `budget` the file sets (else not one run fits in it).
fn check_lengths(l: &Loaded, e: &Experiment) -> Check {
    let p = &e.plan;
    let parse = |t: &Option<String>| t.as_deref().and_then(|t| crate::parse_duration(t).ok());
    let phases = [
        ("warmup", parse(&p.warmup)),
        ("duration", parse(&p.duration)),
    ];
    for (name, d) in phases {
        if let Some(d) = d.filter(|d| *d > LONGEST_PHASE) {
            return Err(l.error_at(
                &key!["plan", name],
                format!(
                    "{name} {} is longer than a day, the most one run's {name} may take; runs are seconds to minutes (e.g. \"30s\"): did you mean another unit?",
                    humantime::format_duration(d)
                ),
            ));
        }
    }
    let (Some(budget), crate::MeasureFor::Time(window)) = (parse(&p.budget), e.measure()) else {
        return Ok(());
    };
    let run = e.warmup() + window;
    if run > budget {
        let at = if p.warmup.is_some() && e.warmup() >= window {
            "warmup"
        } else if p.duration.is_some() {
            "duration"
        } else {
            "budget"
        };
        return Err(l.error_at(
            &key!["plan", at],
            format!(
                "warmup {} plus duration {} is longer than the budget {}: not one run fits; shorten them or raise budget",
                humantime::format_duration(e.warmup()),
                humantime::format_duration(window),
                humantime::format_duration(budget)
            ),
        ));
    }
    Ok(())
}

/// `aa`: the A/A variant's name (and the file name it becomes) must be free.
fn check_aa(l: &Loaded, e: &Experiment) -> Check {
    let Some(aa) = e.aa_variant() else {
        return Ok(());
    };
    let file = bakeoff_os::path::safe_name(&aa);
    if let Some(v) = e
        .variants
        .iter()
        .find(|v| v.name == aa || bakeoff_os::path::safe_name(&v.name) == file)
    {
        return Err(l.error_at(
            &key!["plan", "aa"],
            format!(
                "aa = true runs the baseline again as the variant {aa:?} (files {file:?}), and variant {:?} already takes that name; rename that variant",
                v.name
            ),
        ));
    }
    Ok(())
}

/// `cpus`: CPU lists that parse, for a server on this machine. Whether the CPUs exist is
/// the runner's check (it needs the machine).
fn check_cpus(l: &Loaded, e: &Experiment) -> Check {
    let Some(c) = &e.plan.cpus else {
        return Ok(());
    };
    if e.target.host.is_some() || e.hosts_as_variants() {
        return Err(l.error_at(
            &key!["plan", "cpus"],
            "cpus pins the server and the load on this machine, and this server runs on a [[host]]; remove cpus",
        ));
    }
    for (side, list) in [("server", &c.server), ("load", &c.load)] {
        if let Some(text) = list {
            bakeoff_os::cpus::CpuSet::parse(text)
                .map_err(|m| l.error_at(&key!["plan", "cpus", side], m))?;
        }
    }
    if c.server.is_none() && c.load.is_none() {
        return Err(l.error_at(
            &key!["plan", "cpus"],
            "cpus names no CPU list; give server = \"...\" and/or load = \"...\" (as taskset -c takes them), or remove it",
        ));
    }
    Ok(())
}

/// `layouts`: a count from 1 to 16, on targets whose builds link one server binary
/// (memcached, redis), with compilers whose linkers can shuffle code.
fn check_layouts(l: &Loaded, e: &Experiment) -> Check {
    let n = e.plan.layouts;
    let at = key!["plan", "layouts"];
    range(l, &at, n, 1.0, 16.0, "layouts")?;
    if n == 1 {
        return Ok(());
    }
    for kind in e.variant_kinds() {
        if let Some(why) = target_for(kind).refuses(Ask::Layouts) {
            return Err(l.error_at(&at, why));
        }
    }
    for (i, v) in e.variants.iter().enumerate().filter(|(_, v)| v.is_build()) {
        if let Err(m) = bakeoff_build::layout::settings(v.compiler_or_default(), 1) {
            return Err(l.error_at(&key!["variant", i, "compiler"], m));
        }
    }
    Ok(())
}

pub fn range(l: &Loaded, at: &[Key], v: impl Figure, lo: f64, hi: f64, name: &str) -> Check {
    let x = v.value();
    if x.is_finite() && x >= lo && x <= hi {
        Ok(())
    } else {
        Err(l.error_at(
            at,
            format!("{name} must be between {lo} and {hi}, got {}", v.shown()),
        ))
    }
}

/// A number a range check takes: whole numbers are shown as the file wrote them, never
/// through a float (`got 9223372036854775807`, not `got 9223372036854776000`).
pub trait Figure: Copy {
    fn value(self) -> f64;
    fn shown(self) -> String;
}

impl Figure for f64 {
    fn value(self) -> f64 {
        self
    }
    fn shown(self) -> String {
        self.to_string()
    }
}

macro_rules! whole_figure {
    ($($t:ty),*) => {$(
        impl Figure for $t {
            fn value(self) -> f64 {
                self as f64
            }
            fn shown(self) -> String {
                self.to_string()
            }
        }
    )*};
}
whole_figure!(u8, u16, u32, u64, usize, i32, i64);

/// A workload whose cells have names of their own (a tpcc warehouse sweep: one per W,
/// `<name>-w<W>`): none may equal another workload's name or cell name.
fn check_cell_names(l: &Loaded, e: &Experiment) -> Check {
    let swept = |w: &Workload| -> Vec<String> {
        let name = w.display_name();
        let cells = w.keys.cell_names(&name);
        cells.into_iter().filter(|c| *c != name).collect()
    };
    for (i, w) in e.workloads.iter().enumerate() {
        for (j, other) in e.workloads.iter().enumerate().filter(|(j, _)| *j != i) {
            let theirs = swept(other);
            if theirs.contains(&w.display_name()) {
                return Err(l.error_at(
                    &key!["workload", i, "name"],
                    format!(
                        "workload name {:?} is also a cell of workload {} ({:?})'s warehouse sweep; rename one",
                        w.display_name(),
                        j + 1,
                        other.display_name()
                    ),
                ));
            }
            if let Some(c) = swept(w).iter().find(|c| theirs.contains(c)) {
                return Err(l.error_at(
                    &key!["workload", i],
                    format!("two warehouse sweeps both make the cell {c:?}; rename one workload"),
                ));
            }
        }
    }
    Ok(())
}

/// The most points one sweep may have (each point is a cell per variant).
pub(crate) const MAX_SWEEP_POINTS: usize = 64;

/// The names of the targets `which` accepts, in the registry's order: "a, b and c".
fn targets_that(which: impl Fn(TargetKind) -> bool, and: &str) -> String {
    let names: Vec<&str> = TargetKind::all()
        .filter(|k| which(*k))
        .map(TargetKind::as_str)
        .collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} {and} {last}", init.join(", ")),
    }
}

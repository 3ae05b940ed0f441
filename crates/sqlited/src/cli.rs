//! The command line: `--library LIB --database FILE --port PORT [--socket PATH]
//! [--pragma NAME=VALUE]... [--stmt-stats]`, each flag with a value also as
//! `--flag=value`.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::server::Config;

pub const USAGE: &str = "usage: bakeoff-sqlited --library LIB --database FILE --port PORT [--socket PATH] [--pragma NAME=VALUE]... [--stmt-stats]";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    Run(Config),
    Help,
}

/// Parses the arguments (without the program name); the error is one line.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Parsed, String> {
    let mut args = args.into_iter();
    let (mut library, mut database, mut port, mut socket) = (None, None, None, None);
    let mut pragmas = Vec::new();
    let mut stmt_stats = false;
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| format!("unexpected argument {}", a.to_string_lossy()))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(OsString::from(v))),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag {
            "--library" => library = Some(PathBuf::from(value()?)),
            "--database" => database = Some(PathBuf::from(value()?)),
            "--socket" => socket = Some(PathBuf::from(value()?)),
            "--port" => port = Some(parse_port(value()?)?),
            "--pragma" => pragmas.push(parse_pragma(value()?)?),
            "--stmt-stats" if inline.is_none() => stmt_stats = true,
            "-h" | "--help" => return Ok(Parsed::Help),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    Ok(Parsed::Run(Config {
        library: library.ok_or("missing --library")?,
        database: database.ok_or("missing --database")?,
        port: port.ok_or("missing --port")?,
        socket,
        pragmas,
        stmt_stats,
    }))
}

fn parse_port(v: OsString) -> Result<u16, String> {
    let v = v.to_string_lossy();
    v.parse()
        .map_err(|_| format!("--port {v}: expected a port number (0-65535)"))
}

/// `NAME=VALUE`, NAME a (schema-qualified) pragma name and VALUE one token of SQL.
fn parse_pragma(v: OsString) -> Result<(String, String), String> {
    let v = v.to_string_lossy();
    let bad = || format!("--pragma {v}: expected NAME=VALUE, e.g. synchronous=off");
    let (name, value) = v.split_once('=').ok_or_else(bad)?;
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    let value_ok = !value.trim().is_empty() && !value.contains(';');
    if !(name_ok && value_ok) {
        return Err(bad());
    }
    Ok((name.to_string(), value.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Parsed, String> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn flags_parse_in_both_forms() {
        let p = run(&[
            "--library=/l.so",
            "--database",
            "/d.db",
            "--port",
            "5433",
            "--pragma",
            "synchronous=off",
            "--pragma=cache_size=-64000",
            "--socket",
            "/s",
            "--stmt-stats",
        ])
        .unwrap();
        let Parsed::Run(c) = p else { panic!("{p:?}") };
        assert_eq!(c.library, PathBuf::from("/l.so"));
        assert_eq!(c.database, PathBuf::from("/d.db"));
        assert_eq!(c.port, 5433);
        assert_eq!(c.socket, Some(PathBuf::from("/s")));
        assert!(c.stmt_stats);
        assert_eq!(
            c.pragmas,
            vec![
                ("synchronous".to_string(), "off".to_string()),
                ("cache_size".to_string(), "-64000".to_string())
            ]
        );
    }

    #[test]
    fn bad_arguments_are_one_line() {
        let base = ["--library", "l", "--database", "d"];
        assert_eq!(run(&base).unwrap_err(), "missing --port");
        assert!(run(&["--port", "x"]).unwrap_err().starts_with("--port x:"));
        assert_eq!(run(&["--port"]).unwrap_err(), "--port needs a value");
        assert_eq!(run(&["--nope"]).unwrap_err(), "unexpected argument --nope");
        assert!(run(&["--pragma", "x; DROP TABLE t"]).is_err());
        assert!(run(&["--pragma", "synchronous"]).is_err());
        assert_eq!(run(&["-h"]).unwrap(), Parsed::Help);
    }
}

//! The extended query protocol of one connection: prepared statements by name (Parse,
//! Close), portals (Bind, Execute with a row limit, Close) and Describe.
//!
//! A portal is its statement's one `sqlite3_stmt` in a bound state, so each Bind of a
//! statement supersedes the portals bound from it before (Execute on those is an error).
//! Outside an explicit transaction, Sync closes every portal, as PostgreSQL's implicit
//! transaction ends there.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;

use crate::dialect;
use crate::error::PgError;
use crate::exec::send_rows;
use crate::ffi::sqlite::{Connection, Statement};
use crate::params;
use crate::stmtstats::{OwnedKey, StmtStats};
use crate::tag::{self, command_tag, Verb};
use crate::wire::{Backend, Body, TEXT_OID};

/// A Parse'd statement.
struct Prepared {
    /// None for an empty query.
    stmt: Option<Statement>,
    verb: Verb,
    /// Each PostgreSQL parameter's type: declared in Parse, or 0 until a Describe reported
    /// it as text (25).
    types: Vec<u32>,
    /// Each PostgreSQL parameter's SQLite index (see `params::slots`).
    slots: Vec<usize>,
    columns: Vec<String>,
    /// Its text as the host's statement counters know it (when they are kept).
    key: Option<OwnedKey>,
    /// Bumped by every Bind; a portal is valid while it matches.
    generation: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ready,
    Suspended,
    Done,
}

struct Portal {
    prepared: Rc<RefCell<Prepared>>,
    generation: u64,
    /// Result format per column (0 text, 1 binary: the same bytes for text columns).
    formats: Vec<i16>,
    state: State,
}

impl Portal {
    /// Rewinds the statement if this portal left it mid-way (releasing SQLite's locks).
    fn release(&self) {
        if self.state != State::Suspended {
            return;
        }
        if let Ok(mut p) = self.prepared.try_borrow_mut() {
            if p.generation == self.generation {
                if let Some(stmt) = p.stmt.as_mut() {
                    stmt.reset();
                }
            }
        }
    }
}

#[derive(Default)]
pub struct Extended {
    statements: HashMap<String, Rc<RefCell<Prepared>>>,
    portals: HashMap<String, Portal>,
    /// Whether statements are counted (their keys made at Parse).
    counting: bool,
}

fn result_formats(codes: &[i16], columns: usize) -> Result<Vec<i16>, PgError> {
    if let Some(bad) = codes.iter().find(|c| !matches!(c, 0 | 1)) {
        return Err(PgError::new(
            "08P01",
            format!("unsupported format code: {bad}"),
        ));
    }
    match codes.len() {
        0 => Ok(vec![0; columns]),
        1 => Ok(vec![codes[0]; columns]),
        n if n == columns => Ok(codes.to_vec()),
        n => Err(PgError::new(
            "08P01",
            format!("bind message has {n} result formats but query has {columns} columns"),
        )),
    }
}

/// RowDescription for `columns`, or NoData if there are none.
fn describe_rows<W: Write>(out: &mut Backend<W>, columns: &[String], formats: &[i16]) {
    if columns.is_empty() {
        out.empty(b'n');
    } else {
        out.row_description(columns, formats);
    }
}

impl Extended {
    /// A connection's extended protocol; `counting`: the host keeps statement counters.
    pub fn new(counting: bool) -> Extended {
        Extended {
            counting,
            ..Extended::default()
        }
    }

    fn statement(&self, name: &str) -> Result<Rc<RefCell<Prepared>>, PgError> {
        self.statements.get(name).cloned().ok_or_else(|| {
            PgError::new(
                "26000",
                format!("prepared statement \"{name}\" does not exist"),
            )
        })
    }

    fn portal(&mut self, name: &str) -> Result<&mut Portal, PgError> {
        self.portals
            .get_mut(name)
            .ok_or_else(|| PgError::new("34000", format!("portal \"{name}\" does not exist")))
    }

    fn close_portal(&mut self, name: &str) {
        if let Some(p) = self.portals.remove(name) {
            p.release();
        }
    }

    /// Closes the unnamed portal (a simple Query does, as in PostgreSQL).
    pub fn close_unnamed_portal(&mut self) {
        self.close_portal("");
    }

    /// At Sync: outside an explicit transaction every portal ends.
    pub fn sync(&mut self, db: &Connection) {
        if db.autocommit() {
            for (_, p) in self.portals.drain() {
                p.release();
            }
        }
    }

    /// Parse: compiles exactly one statement and keeps it by name.
    pub fn parse<W: Write>(
        &mut self,
        db: &Connection,
        out: &mut Backend<W>,
        body: &[u8],
    ) -> Result<(), PgError> {
        let mut b = Body::new(body);
        let name = b.cstr()?;
        let query = b.cstr()?;
        let mut types = (0..b.count()?)
            .map(|_| b.i32().map(|t| t as u32))
            .collect::<Result<Vec<_>, _>>()?;
        if !name.is_empty() && self.statements.contains_key(name) {
            return Err(PgError::new(
                "42P05",
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let (stmt, rest) = dialect::prepare(db, query)?;
        if !tag::is_blank(&query[rest..]) {
            return Err(PgError::new(
                "42601",
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let slots = match &stmt {
            Some(s) => params::slots(s, types.len()),
            None => vec![0; types.len()],
        };
        types.resize(slots.len(), 0);
        let prepared = Prepared {
            columns: stmt
                .as_ref()
                .map(Statement::column_names)
                .unwrap_or_default(),
            stmt,
            verb: tag::verb(query),
            key: self.counting.then(|| OwnedKey::of(query)),
            types,
            slots,
            generation: 0,
        };
        self.statements
            .insert(name.to_string(), Rc::new(RefCell::new(prepared)));
        out.empty(b'1');
        Ok(())
    }

    /// Bind: binds the values to the statement and makes the portal.
    pub fn bind<W: Write>(&mut self, out: &mut Backend<W>, body: &[u8]) -> Result<(), PgError> {
        let mut b = Body::new(body);
        let portal = b.cstr()?;
        let name = b.cstr()?;
        let formats = (0..b.count()?)
            .map(|_| b.i16())
            .collect::<Result<Vec<_>, _>>()?;
        let values = (0..b.count()?)
            .map(|_| b.value())
            .collect::<Result<Vec<_>, _>>()?;
        let results = (0..b.count()?)
            .map(|_| b.i16())
            .collect::<Result<Vec<_>, _>>()?;
        let prepared = self.statement(name)?;
        if !portal.is_empty() && self.portals.contains_key(portal) {
            return Err(PgError::new(
                "42P03",
                format!("portal \"{portal}\" already exists"),
            ));
        }
        self.close_portal(portal);
        let (generation, formats) = {
            let mut p = prepared.borrow_mut();
            let results = result_formats(&results, p.columns.len())?;
            bind_values(&mut p, name, &formats, &values)?;
            (p.generation, results)
        };
        self.portals.insert(
            portal.to_string(),
            Portal {
                prepared,
                generation,
                formats,
                state: State::Ready,
            },
        );
        out.empty(b'2');
        Ok(())
    }

    /// Describe: a statement's ParameterDescription and RowDescription/NoData, or a
    /// portal's RowDescription/NoData.
    pub fn describe<W: Write>(&mut self, out: &mut Backend<W>, body: &[u8]) -> Result<(), PgError> {
        match named(body, "Describe")? {
            Named::Statement(name) => {
                let prepared = self.statement(name)?;
                let mut p = prepared.borrow_mut();
                for t in p.types.iter_mut().filter(|t| **t == 0) {
                    *t = TEXT_OID;
                }
                out.parameter_description(&p.types);
                describe_rows(out, &p.columns, &[]);
            }
            Named::Portal(name) => {
                let portal = self.portal(name)?;
                describe_rows(out, &portal.prepared.borrow().columns, &portal.formats);
            }
        }
        Ok(())
    }

    /// Execute: the portal's rows (at most `max rows` if nonzero, then PortalSuspended),
    /// then CommandComplete.
    pub fn execute<W: Write>(
        &mut self,
        db: &Connection,
        out: &mut Backend<W>,
        body: &[u8],
        stats: Option<&StmtStats>,
    ) -> Result<(), PgError> {
        let mut b = Body::new(body);
        let name = b.cstr()?;
        let limit = u64::try_from(b.i32()?).unwrap_or(0);
        let portal = self.portal(name)?;
        let mut guard = portal.prepared.borrow_mut();
        let p = &mut *guard;
        if p.generation != portal.generation {
            return Err(PgError::new(
                "55000",
                format!("portal \"{name}\" was superseded by a later Bind of its statement"),
            ));
        }
        let Some(stmt) = p.stmt.as_mut() else {
            out.empty(b'I');
            return Ok(());
        };
        let has_columns = !p.columns.is_empty();
        if portal.state == State::Done {
            out.command_complete(&command_tag(&p.verb, has_columns, 0, 0));
            return Ok(());
        }
        let started = stats.map(|_| std::time::Instant::now());
        let sent = send_rows(stmt, out, limit);
        if let (Some(stats), Some(t), Some(key)) = (stats, started, p.key.as_ref()) {
            let done = !matches!(sent, Ok((_, false)));
            stats.record(key.key(), stmt, t.elapsed(), done);
        }
        match sent {
            Err(e) => {
                stmt.reset();
                portal.state = State::Done;
                Err(e.into())
            }
            Ok((rows, true)) => {
                let tag = command_tag(&p.verb, has_columns, rows, db.changes());
                stmt.reset();
                portal.state = State::Done;
                out.command_complete(&tag);
                Ok(())
            }
            Ok((_, false)) => {
                portal.state = State::Suspended;
                out.empty(b's');
                Ok(())
            }
        }
    }

    /// Close: forgets a statement or a portal (no error if there is none).
    pub fn close<W: Write>(&mut self, out: &mut Backend<W>, body: &[u8]) -> Result<(), PgError> {
        match named(body, "Close")? {
            Named::Statement(name) => {
                self.statements.remove(name);
            }
            Named::Portal(name) => self.close_portal(name),
        }
        out.empty(b'3');
        Ok(())
    }
}

/// What a Describe or Close message names: a prepared statement or a portal.
enum Named<'a> {
    Statement(&'a str),
    Portal(&'a str),
}

/// Reads the kind byte (`S` or `P`) and the name of a Describe or Close (`message`, for
/// the error) message's `body`.
fn named<'a>(body: &'a [u8], message: &str) -> Result<Named<'a>, PgError> {
    let mut b = Body::new(body);
    let kind = b.u8()?;
    let name = b.cstr()?;
    match kind {
        b'S' => Ok(Named::Statement(name)),
        b'P' => Ok(Named::Portal(name)),
        k => Err(PgError::protocol(format!("invalid {message} kind {k}"))),
    }
}

/// Rewinds the statement, binds `values` (with their `formats`: none, one for all, or one
/// each) and starts a new generation.
fn bind_values(
    p: &mut Prepared,
    name: &str,
    formats: &[i16],
    values: &[Option<&[u8]>],
) -> Result<(), PgError> {
    if values.len() != p.slots.len() {
        return Err(PgError::new(
            "08P01",
            format!(
                "bind message supplies {} parameters, but prepared statement \"{name}\" requires {}",
                values.len(),
                p.slots.len()
            ),
        ));
    }
    if formats.len() > 1 && formats.len() != values.len() {
        return Err(PgError::new(
            "08P01",
            format!(
                "bind message has {} parameter formats but {} parameters",
                formats.len(),
                values.len()
            ),
        ));
    }
    p.generation += 1;
    let Some(stmt) = p.stmt.as_mut() else {
        return Ok(());
    };
    stmt.reset();
    stmt.clear_bindings();
    for (i, raw) in values.iter().enumerate() {
        let slot = p.slots[i];
        if slot == 0 {
            continue;
        }
        let format = formats.get(i).or(formats.first()).copied().unwrap_or(0);
        let value = params::decode(format, p.types[i], *raw)?;
        params::bind(stmt, slot, value)?;
    }
    Ok(())
}

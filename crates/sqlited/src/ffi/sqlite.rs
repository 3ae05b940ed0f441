//! The SQLite C API loaded at run time: `Library` (dlopen of one libsqlite3 and its
//! function pointers, shared by every connection thread), `Connection` (one `sqlite3*`,
//! used by one thread) and `Statement` (one `sqlite3_stmt*`). Every call into SQLite in
//! the crate goes through the safe methods here.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The opaque `sqlite3` type.
#[repr(C)]
pub struct RawDb {
    _opaque: [u8; 0],
}

/// The opaque `sqlite3_stmt` type.
#[repr(C)]
pub struct RawStmt {
    _opaque: [u8; 0],
}

const SQLITE_OK: c_int = 0;
const SQLITE_ROW: c_int = 100;
const SQLITE_DONE: c_int = 101;
const SQLITE_NULL: c_int = 5;
const SQLITE_OPEN_READWRITE: c_int = 0x2;
const SQLITE_OPEN_CREATE: c_int = 0x4;
const SQLITE_OPEN_NOMUTEX: c_int = 0x8000;
/// `SQLITE_TRANSIENT`: SQLite copies bound text before `bind_text` returns. The C type is
/// a function pointer; -1 passed as a pointer-sized integer is the same bits in the ABI.
const SQLITE_TRANSIENT: isize = -1;
/// Result code 1 (SQLITE_ERROR), for errors found on this side of the API.
pub const SQLITE_ERROR: i32 = 1;

/// A failed SQLite call: its extended result code and `sqlite3_errmsg` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    pub code: i32,
    pub message: String,
}

type StmtFn = unsafe extern "C" fn(*mut RawStmt) -> c_int;
type ColumnPtrFn<T> = unsafe extern "C" fn(*mut RawStmt, c_int) -> *const T;
type ColumnIntFn = unsafe extern "C" fn(*mut RawStmt, c_int) -> c_int;
type DbIntFn = unsafe extern "C" fn(*mut RawDb) -> c_int;

/// The function pointers bakeoff-sqlited uses.
struct Api {
    libversion: unsafe extern "C" fn() -> *const c_char,
    threadsafe: Option<unsafe extern "C" fn() -> c_int>,
    open_v2: unsafe extern "C" fn(*const c_char, *mut *mut RawDb, c_int, *const c_char) -> c_int,
    close_v2: DbIntFn,
    prepare_v2: unsafe extern "C" fn(
        *mut RawDb,
        *const c_char,
        c_int,
        *mut *mut RawStmt,
        *mut *const c_char,
    ) -> c_int,
    step: StmtFn,
    reset: StmtFn,
    clear_bindings: StmtFn,
    finalize: StmtFn,
    column_count: StmtFn,
    column_name: ColumnPtrFn<c_char>,
    column_type: ColumnIntFn,
    column_text: ColumnPtrFn<u8>,
    column_bytes: ColumnIntFn,
    bind_parameter_count: StmtFn,
    bind_parameter_index: unsafe extern "C" fn(*mut RawStmt, *const c_char) -> c_int,
    bind_parameter_name: ColumnPtrFn<c_char>,
    bind_text: unsafe extern "C" fn(*mut RawStmt, c_int, *const c_char, c_int, isize) -> c_int,
    bind_int64: unsafe extern "C" fn(*mut RawStmt, c_int, i64) -> c_int,
    bind_double: unsafe extern "C" fn(*mut RawStmt, c_int, f64) -> c_int,
    bind_null: ColumnIntFn,
    changes: DbIntFn,
    errmsg: unsafe extern "C" fn(*mut RawDb) -> *const c_char,
    extended_errcode: DbIntFn,
    busy_timeout: unsafe extern "C" fn(*mut RawDb, c_int) -> c_int,
    get_autocommit: DbIntFn,
    set_authorizer: unsafe extern "C" fn(*mut RawDb, Option<AuthorizerFn>, *mut c_void) -> c_int,
    progress_handler: unsafe extern "C" fn(*mut RawDb, c_int, Option<ProgressFn>, *mut c_void),
    /// `sqlite3_stmt_status` (3.6.4 and later).
    stmt_status: Option<unsafe extern "C" fn(*mut RawStmt, c_int, c_int) -> c_int>,
}

/// `sqlite3_progress_handler`'s callback: (user data) -> non-zero to interrupt.
type ProgressFn = unsafe extern "C" fn(*mut c_void) -> c_int;

/// How many virtual-machine instructions run between two deadline checks: a check is a
/// clock read (tens of nanoseconds), a thousand instructions some microseconds.
const PROGRESS_EVERY: c_int = 1000;

/// The progress handler of a connection with a statement timeout: interrupts the running
/// statement (SQLITE_INTERRUPT) once its deadline has passed.
unsafe extern "C" fn past_deadline(user: *mut c_void) -> c_int {
    // SAFETY: user is the address of the deadline cell of the Handle that installed this
    // handler; the Handle owns it (boxed, so it does not move) and outlives every call,
    // made on the connection's own thread during a step.
    let deadline = unsafe { &*(user as *const Cell<Option<Instant>>) };
    c_int::from(deadline.get().is_some_and(|d| Instant::now() >= d))
}

/// `sqlite3_set_authorizer`'s callback: (user data, action, four texts) -> verdict.
type AuthorizerFn = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    *const c_char,
    *const c_char,
    *const c_char,
    *const c_char,
) -> c_int;

/// The authorizer's action codes and verdicts bakeoff-sqlited uses.
const SQLITE_ATTACH: c_int = 24;
const SQLITE_PRAGMA: c_int = 19;
const SQLITE_FUNCTION: c_int = 31;
const SQLITE_DENY: c_int = 1;

/// What a client's SQL may not do, because it reaches files outside the sandbox or
/// loads code: `ATTACH` of a file and `VACUUM INTO` (both are an attach of the named
/// file, or of an expression; the temporary `""` attach of a plain `VACUUM` and
/// `:memory:` stay allowed),
/// `load_extension()`, and the pragmas that move temporary files elsewhere. Action and
/// texts as SQLite's authorizer gives them.
pub fn refused_action(action: i32, arg1: Option<&[u8]>, arg2: Option<&[u8]>) -> bool {
    match action {
        // A file name that is not a plain string literal reaches the authorizer as NULL.
        SQLITE_ATTACH => !matches!(arg1, Some(b"") | Some(b":memory:")),
        SQLITE_FUNCTION => arg2.is_some_and(|f| f.eq_ignore_ascii_case(b"load_extension")),
        SQLITE_PRAGMA => arg1.is_some_and(|p| {
            p.eq_ignore_ascii_case(b"temp_store_directory")
                || p.eq_ignore_ascii_case(b"data_store_directory")
        }),
        _ => false,
    }
}

/// The authorizer installed on every connection after its pragmas: [`refused_action`].
unsafe extern "C" fn confine(
    _user: *mut c_void,
    action: c_int,
    arg1: *const c_char,
    arg2: *const c_char,
    _db: *const c_char,
    _trigger: *const c_char,
) -> c_int {
    // SAFETY: SQLite passes NULL or NUL-terminated strings valid for this call.
    let text = |p: *const c_char| (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes());
    if refused_action(action, text(arg1), text(arg2)) {
        SQLITE_DENY
    } else {
        SQLITE_OK
    }
}

/// One loaded libsqlite3. It is never unloaded: connection threads may outlive any owner.
pub struct Library {
    api: Api,
    path: String,
    version: String,
    /// [`Library::stmt_counters`].
    counters: Vec<(i32, &'static str)>,
}

/// The text of the last `dlerror()`.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc, valid until
    // the next dl* call on this thread; it is copied at once.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".to_string()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

/// The address of `name` in `handle`, as the function pointer type `T`.
///
/// # Safety
/// `T` must be the `unsafe extern "C" fn` type matching the C prototype of `name`.
unsafe fn symbol<T: Copy>(handle: *mut c_void, name: &str) -> Option<T> {
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
    let cname = CString::new(name).ok()?;
    // SAFETY: handle comes from a successful dlopen; cname is NUL-terminated.
    let p = unsafe { libc::dlsym(handle, cname.as_ptr()) };
    // SAFETY: a non-null dlsym result is the function's address; the caller guarantees T
    // is its prototype, and T is pointer-sized (asserted above).
    (!p.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
}

impl Library {
    /// dlopens `path` (RTLD_NOW | RTLD_LOCAL) and resolves every function; the error is
    /// one line naming the library and, if one is missing, the symbol.
    pub fn load(path: &Path) -> Result<Library, String> {
        let shown = path.display().to_string();
        let cpath = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("cannot load SQLite library {shown}: NUL in the path"))?;
        // SAFETY: cpath is NUL-terminated; loading runs the library's initialisers, which
        // for libsqlite3 is the point.
        let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            let why = dl_error().replace('\n', " ");
            return Err(format!("cannot load SQLite library {shown}: {why}"));
        }
        let missing = |name: &str| format!("SQLite library {shown} lacks the symbol {name}");
        macro_rules! required {
            ($name:literal) => {
                // SAFETY: the field's type is the prototype of this sqlite3 function.
                unsafe { symbol(handle, $name) }.ok_or_else(|| missing($name))?
            };
        }
        let api = Api {
            libversion: required!("sqlite3_libversion"),
            // SAFETY: sqlite3_threadsafe is `int sqlite3_threadsafe(void)`.
            threadsafe: unsafe { symbol(handle, "sqlite3_threadsafe") },
            open_v2: required!("sqlite3_open_v2"),
            close_v2: required!("sqlite3_close_v2"),
            prepare_v2: required!("sqlite3_prepare_v2"),
            step: required!("sqlite3_step"),
            reset: required!("sqlite3_reset"),
            clear_bindings: required!("sqlite3_clear_bindings"),
            finalize: required!("sqlite3_finalize"),
            column_count: required!("sqlite3_column_count"),
            column_name: required!("sqlite3_column_name"),
            column_type: required!("sqlite3_column_type"),
            column_text: required!("sqlite3_column_text"),
            column_bytes: required!("sqlite3_column_bytes"),
            bind_parameter_count: required!("sqlite3_bind_parameter_count"),
            bind_parameter_index: required!("sqlite3_bind_parameter_index"),
            bind_parameter_name: required!("sqlite3_bind_parameter_name"),
            bind_text: required!("sqlite3_bind_text"),
            bind_int64: required!("sqlite3_bind_int64"),
            bind_double: required!("sqlite3_bind_double"),
            bind_null: required!("sqlite3_bind_null"),
            changes: required!("sqlite3_changes"),
            errmsg: required!("sqlite3_errmsg"),
            extended_errcode: required!("sqlite3_extended_errcode"),
            busy_timeout: required!("sqlite3_busy_timeout"),
            get_autocommit: required!("sqlite3_get_autocommit"),
            set_authorizer: required!("sqlite3_set_authorizer"),
            progress_handler: required!("sqlite3_progress_handler"),
            // SAFETY: `int sqlite3_stmt_status(sqlite3_stmt*, int op, int resetFlg)`.
            stmt_status: unsafe { symbol(handle, "sqlite3_stmt_status") },
        };
        // SAFETY: sqlite3_libversion returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr((api.libversion)()) }
            .to_string_lossy()
            .into_owned();
        let number = version_number(&version);
        let counters = STMT_COUNTERS
            .iter()
            .filter(|(_, _, since)| api.stmt_status.is_some() && number >= *since)
            .map(|(op, name, _)| (*op, *name))
            .collect();
        Ok(Library {
            api,
            path: shown,
            version,
            counters,
        })
    }

    /// The library's `sqlite3_libversion()`, e.g. "3.45.1".
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The `sqlite3_stmt_status` counters this library keeps, as (op, name): each one
    /// only from the version that added it, since an older library would read (and, to
    /// reset it, write) past the end of its statement's counter array.
    pub fn stmt_counters(&self) -> &[(i32, &'static str)] {
        &self.counters
    }

    /// The path it was loaded from, as given.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Whether SQLite was built with its mutexes (SQLITE_THREADSAFE 1 or 2), which
    /// connections on several threads need. Unknown (no symbol) counts as yes.
    pub fn threadsafe(&self) -> bool {
        // SAFETY: `int sqlite3_threadsafe(void)` has no preconditions.
        self.api.threadsafe.is_none_or(|f| unsafe { f() } != 0)
    }
}

/// `sqlite3_stmt_status`'s counters bakeoff-sqlited reads, in the order SQLite added
/// them: (op, name, the first version with it, as 3XXXYYY). VM_STEP is from 3.8 and
/// FILTER_HIT/MISS from 3.38, but bakeoff reads each only from a version whose
/// statement status it has seen (3.20.0's header, 3.40.1's).
const STMT_COUNTERS: &[(i32, &str, u32)] = &[
    (1, "fullscan_step", 3_006_004),
    (2, "sort", 3_006_004),
    (3, "autoindex", 3_007_000),
    (4, "vm_step", 3_020_000),
    (5, "reprepare", 3_020_000),
    (6, "run", 3_020_000),
    (7, "filter_miss", 3_040_000),
    (8, "filter_hit", 3_040_000),
];
/// "3.40.1" as 3040001 (SQLite's `SQLITE_VERSION_NUMBER`); 0 if it is not one.
pub fn version_number(v: &str) -> u32 {
    let mut parts = v.trim().split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => {
            let patch = parts.next().flatten().unwrap_or(0);
            major * 1_000_000 + minor.min(999) * 1000 + patch.min(999)
        }
        _ => 0,
    }
}

/// An open `sqlite3*`, closed when the last of its connection and statements is dropped.
struct Handle {
    lib: Arc<Library>,
    db: *mut RawDb,
    /// When the running statement must stop (the progress handler reads it); boxed so
    /// that its address, given to SQLite, stays put. Dropped after `close_v2`.
    deadline: Box<Cell<Option<Instant>>>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: db came from sqlite3_open_v2 and is closed exactly once, here; every
        // statement holds an Rc of this handle, so all were finalized before.
        unsafe { (self.lib.api.close_v2)(self.db) };
    }
}

impl Handle {
    /// The connection's last error, for the result code `rc` that reported it.
    fn error(&self, rc: c_int) -> SqlError {
        // SAFETY: db is open; errmsg returns a NUL-terminated string owned by SQLite,
        // valid until the next call on this connection, and copied at once.
        let (ext, message) = unsafe {
            let ext = (self.lib.api.extended_errcode)(self.db);
            let msg = (self.lib.api.errmsg)(self.db);
            let text = if msg.is_null() {
                "unknown error".to_string()
            } else {
                CStr::from_ptr(msg).to_string_lossy().into_owned()
            };
            (ext, text)
        };
        let code = if ext & 0xff == rc & 0xff { ext } else { rc };
        SqlError { code, message }
    }
}

/// One SQLite connection; not Send: it lives and dies on its client's thread.
pub struct Connection {
    handle: Rc<Handle>,
    /// The session's statement timeout (None: statements run as long as they take).
    timeout: Cell<Option<Duration>>,
}

impl Connection {
    /// Opens `path` read-write (created if missing, no SQLite mutex) with a busy timeout.
    pub fn open(lib: &Arc<Library>, path: &Path, busy_ms: i32) -> Result<Connection, SqlError> {
        let cpath = CString::new(path.as_os_str().as_bytes()).map_err(|_| SqlError {
            code: SQLITE_ERROR,
            message: "NUL in the database path".into(),
        })?;
        let mut db = std::ptr::null_mut();
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
        // SAFETY: cpath is NUL-terminated, db is a valid out-pointer, NULL picks the
        // default VFS.
        let rc = unsafe { (lib.api.open_v2)(cpath.as_ptr(), &mut db, flags, std::ptr::null()) };
        if db.is_null() {
            return Err(SqlError {
                code: rc,
                message: "out of memory opening the database".into(),
            });
        }
        // From here the Handle owns db and closes it, also on error.
        let handle = Rc::new(Handle {
            lib: lib.clone(),
            db,
            deadline: Box::new(Cell::new(None)),
        });
        if rc != SQLITE_OK {
            return Err(handle.error(rc));
        }
        // SAFETY: db is open.
        unsafe { (lib.api.busy_timeout)(db, busy_ms) };
        Ok(Connection {
            handle,
            timeout: Cell::new(None),
        })
    }

    /// Sets the statement timeout (None or zero: none). With one, a progress handler
    /// stops a statement running past the deadline [`Connection::start_statement`] set,
    /// with SQLITE_INTERRUPT; without, no handler is installed and nothing is checked.
    pub fn set_statement_timeout(&self, timeout: Option<Duration>) {
        let timeout = timeout.filter(|t| !t.is_zero());
        self.timeout.set(timeout);
        let h = &self.handle;
        let user: *const Cell<Option<Instant>> = &*h.deadline;
        // SAFETY: db is open; `past_deadline` matches the callback's prototype and its
        // user data is the handle's boxed deadline, which lives as long as db.
        unsafe {
            match timeout {
                Some(_) => (h.lib.api.progress_handler)(
                    h.db,
                    PROGRESS_EVERY,
                    Some(past_deadline),
                    user.cast_mut().cast(),
                ),
                None => (h.lib.api.progress_handler)(h.db, 0, None, std::ptr::null_mut()),
            }
        }
    }

    /// A client's statement starts: its deadline is now plus the timeout, if any.
    pub fn start_statement(&self) {
        let deadline = self.timeout.get().map(|t| Instant::now() + t);
        self.handle.deadline.set(deadline);
    }

    /// The client's statement is over: no deadline until the next one starts.
    pub fn end_statement(&self) {
        self.handle.deadline.set(None);
    }

    /// Compiles the first statement of `sql`: the statement (None if `sql` holds no SQL
    /// before the end, e.g. only comments) and the byte offset where the rest begins.
    pub fn prepare(&self, sql: &str) -> Result<(Option<Statement>, usize), SqlError> {
        let len = c_int::try_from(sql.len()).map_err(|_| SqlError {
            code: 18,
            message: "statement too long".into(),
        })?;
        let h = &self.handle;
        let mut raw = std::ptr::null_mut();
        let mut tail: *const c_char = std::ptr::null();
        // SAFETY: sql is valid for len bytes (nByte bounds the read, no NUL needed); raw
        // and tail are valid out-pointers; db is open.
        let rc =
            unsafe { (h.lib.api.prepare_v2)(h.db, sql.as_ptr().cast(), len, &mut raw, &mut tail) };
        if rc != SQLITE_OK {
            return Err(h.error(rc));
        }
        let rest = if tail.is_null() {
            sql.len()
        } else {
            // Tail points into sql (at most one past its end).
            (tail as usize)
                .saturating_sub(sql.as_ptr() as usize)
                .min(sql.len())
        };
        let stmt = (!raw.is_null()).then(|| Statement { db: h.clone(), raw });
        Ok((stmt, rest))
    }

    /// From now on, statements that reach files outside the database or load code
    /// fail to prepare with SQLite's "not authorized" ([`refused_action`]).
    pub fn confine(&self) -> Result<(), SqlError> {
        let h = &self.handle;
        // SAFETY: db is open; `confine` matches the callback's prototype and reads no
        // user data (NULL).
        let rc = unsafe { (h.lib.api.set_authorizer)(h.db, Some(confine), std::ptr::null_mut()) };
        if rc != SQLITE_OK {
            return Err(h.error(rc));
        }
        Ok(())
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE (`sqlite3_changes`).
    pub fn changes(&self) -> u64 {
        // SAFETY: db is open.
        let n = unsafe { (self.handle.lib.api.changes)(self.handle.db) };
        u64::try_from(n).unwrap_or(0)
    }

    /// Whether no explicit transaction is open (`sqlite3_get_autocommit`).
    pub fn autocommit(&self) -> bool {
        // SAFETY: db is open.
        unsafe { (self.handle.lib.api.get_autocommit)(self.handle.db) != 0 }
    }
}

/// One prepared statement, finalized on drop. Methods that step, reset or bind take
/// `&mut self`, so column text borrowed from it cannot outlive the row it belongs to.
pub struct Statement {
    db: Rc<Handle>,
    raw: *mut RawStmt,
}

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: raw came from prepare_v2 on db (kept open by the Rc) and is finalized
        // exactly once, here.
        unsafe { (self.db.lib.api.finalize)(self.raw) };
    }
}

impl Statement {
    fn api(&self) -> &Api {
        &self.db.lib.api
    }

    /// Maps a bind call's result code.
    fn bound(&self, rc: c_int) -> Result<(), SqlError> {
        if rc == SQLITE_OK {
            Ok(())
        } else {
            Err(self.db.error(rc))
        }
    }

    pub fn column_count(&self) -> usize {
        // SAFETY: raw is a live statement.
        let n = unsafe { (self.api().column_count)(self.raw) };
        usize::try_from(n).unwrap_or(0)
    }

    /// Column `i`'s name (0-based); "?column?" if SQLite has none.
    pub fn column_name(&self, i: usize) -> String {
        // SAFETY: raw is live; the returned string (or NULL) is copied before any other
        // call on the statement.
        unsafe {
            let p = (self.api().column_name)(self.raw, i as c_int);
            if p.is_null() {
                "?column?".to_string()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        }
    }

    /// Every column's name.
    pub fn column_names(&self) -> Vec<String> {
        (0..self.column_count())
            .map(|i| self.column_name(i))
            .collect()
    }

    /// Advances to the next row: true for a row, false when done.
    pub fn step(&mut self) -> Result<bool, SqlError> {
        // SAFETY: raw is a live statement used by this thread only.
        match unsafe { (self.api().step)(self.raw) } {
            SQLITE_ROW => Ok(true),
            SQLITE_DONE => Ok(false),
            rc => Err(self.db.error(rc)),
        }
    }

    /// The current row's column `i` as text, None for NULL.
    pub fn text(&self, i: usize) -> Option<&[u8]> {
        let i = i as c_int;
        // SAFETY: raw is on a row (callers read columns after step() returned true).
        // column_text before column_bytes, as SQLite documents; the bytes stay valid
        // until the next step/reset/finalize, which all need `&mut self` and so end this
        // borrow first.
        unsafe {
            if (self.api().column_type)(self.raw, i) == SQLITE_NULL {
                return None;
            }
            let p = (self.api().column_text)(self.raw, i);
            let n = usize::try_from((self.api().column_bytes)(self.raw, i)).unwrap_or(0);
            if p.is_null() {
                Some(&[])
            } else {
                Some(std::slice::from_raw_parts(p, n))
            }
        }
    }

    /// Rewinds the statement (bindings stay); its result code is the last step's and is
    /// not wanted here.
    pub fn reset(&mut self) {
        // SAFETY: raw is live.
        unsafe { (self.api().reset)(self.raw) };
    }

    /// Adds each of `ops`' counters ([`Library::stmt_counters`]) to `into` (index for
    /// index) and zeroes them in the statement, so that the next call counts from here.
    pub fn take_status(&mut self, ops: &[(i32, &str)], into: &mut [u64]) {
        let Some(f) = self.api().stmt_status else {
            return;
        };
        for ((op, _), n) in ops.iter().zip(into.iter_mut()) {
            // SAFETY: raw is live; `ops` holds only counters this library's version has
            // (Library::stmt_counters), so the read and the reset stay in its array.
            let v = unsafe { f(self.raw, *op, 1) };
            *n += u64::from(v as u32);
        }
    }

    pub fn clear_bindings(&mut self) {
        // SAFETY: raw is live.
        unsafe { (self.api().clear_bindings)(self.raw) };
    }

    /// The largest parameter index (`sqlite3_bind_parameter_count`).
    pub fn param_count(&self) -> usize {
        // SAFETY: raw is live.
        let n = unsafe { (self.api().bind_parameter_count)(self.raw) };
        usize::try_from(n).unwrap_or(0)
    }

    /// The index of the parameter named `name` ("$1", ":x"), 0 if there is none.
    pub fn param_index(&self, name: &str) -> usize {
        let Ok(cname) = CString::new(name) else {
            return 0;
        };
        // SAFETY: raw is live; cname is NUL-terminated.
        let n = unsafe { (self.api().bind_parameter_index)(self.raw, cname.as_ptr()) };
        usize::try_from(n).unwrap_or(0)
    }

    /// Parameter `i`'s name (1-based) such as "$2" or "?3"; None for a bare `?`.
    pub fn param_name(&self, i: usize) -> Option<String> {
        // SAFETY: raw is live; the name (or NULL) is copied at once.
        unsafe {
            let p = (self.api().bind_parameter_name)(self.raw, i as c_int);
            (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
        }
    }

    /// Binds text (copied by SQLite) to parameter `i` (1-based).
    pub fn bind_text(&mut self, i: usize, text: &[u8]) -> Result<(), SqlError> {
        let len = c_int::try_from(text.len()).map_err(|_| SqlError {
            code: 18,
            message: "parameter too long".into(),
        })?;
        // A null pointer would bind NULL, so empty text points at a static byte.
        let ptr: *const c_char = if text.is_empty() {
            c"".as_ptr()
        } else {
            text.as_ptr().cast()
        };
        // SAFETY: ptr is valid for len bytes; SQLITE_TRANSIENT makes SQLite copy them
        // before returning.
        let rc =
            unsafe { (self.api().bind_text)(self.raw, i as c_int, ptr, len, SQLITE_TRANSIENT) };
        self.bound(rc)
    }

    pub fn bind_int(&mut self, i: usize, v: i64) -> Result<(), SqlError> {
        // SAFETY: raw is live; out-of-range indexes come back as SQLITE_RANGE.
        let rc = unsafe { (self.api().bind_int64)(self.raw, i as c_int, v) };
        self.bound(rc)
    }

    pub fn bind_double(&mut self, i: usize, v: f64) -> Result<(), SqlError> {
        // SAFETY: as bind_int.
        let rc = unsafe { (self.api().bind_double)(self.raw, i as c_int, v) };
        self.bound(rc)
    }

    pub fn bind_null(&mut self, i: usize) -> Result<(), SqlError> {
        // SAFETY: as bind_int.
        let rc = unsafe { (self.api().bind_null)(self.raw, i as c_int) };
        self.bound(rc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const SYSTEM_SQLITE: &str = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";

    #[test]
    fn a_missing_library_is_one_clear_line() {
        let e = Library::load(Path::new("/nonexistent/libsqlite3.so"))
            .err()
            .expect("no such library");
        assert!(
            e.starts_with("cannot load SQLite library /nonexistent/libsqlite3.so: "),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_library_without_sqlite_names_the_symbol() {
        let e = Library::load(Path::new("libc.so.6"))
            .err()
            .expect("not sqlite");
        assert_eq!(
            e,
            "SQLite library libc.so.6 lacks the symbol sqlite3_libversion"
        );
    }

    #[test]
    fn statements_step_bind_and_report_errors() {
        let lib = Arc::new(Library::load(Path::new(SYSTEM_SQLITE)).unwrap());
        assert!(lib.version().starts_with("3."), "{}", lib.version());
        assert!(lib.threadsafe());
        let dir = tempfile::tempdir().unwrap();
        let db = Connection::open(&lib, &dir.path().join("t.db"), 1000).unwrap();
        let sql = "SELECT $2 || $1, NULL; SELECT 2";
        let (stmt, rest) = db.prepare(sql).unwrap();
        let mut stmt = stmt.unwrap();
        assert_eq!(&sql[rest..], " SELECT 2");
        assert_eq!(stmt.param_count(), 2);
        assert_eq!(stmt.param_index("$2"), 1);
        assert_eq!(stmt.param_name(2).as_deref(), Some("$1"));
        stmt.bind_text(1, b"a").unwrap();
        stmt.bind_int(2, 7).unwrap();
        assert!(stmt.step().unwrap());
        assert_eq!(stmt.text(0), Some(&b"a7"[..]));
        assert_eq!(stmt.text(1), None);
        assert!(!stmt.step().unwrap());
        let e = db.prepare("SELEC 1").err().unwrap();
        assert_eq!(e.code, 1);
        assert!(e.message.contains("syntax error"), "{e:?}");
        assert!(db.autocommit());
    }

    /// Issue 50: a client's SQL reaches no file but the database: ATTACH and VACUUM INTO
    /// of any path, load_extension and the temp-directory pragmas are refused in every
    /// spelling the parser takes; a plain VACUUM and an in-memory attach still work.
    #[test]
    fn sql_file_writers_stay_in_the_sandbox() {
        let lib = Arc::new(Library::load(Path::new(SYSTEM_SQLITE)).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let db = Connection::open(&lib, &dir.path().join("t.db"), 1000).unwrap();
        db.confine().unwrap();
        let run = |sql: &str| -> Result<(), SqlError> {
            let (stmt, _) = db.prepare(sql)?;
            if let Some(mut stmt) = stmt {
                while stmt.step()? {}
            }
            Ok(())
        };
        run("CREATE TABLE t(a); INSERT INTO t VALUES (1)").unwrap();
        let target = outside.path().join("x.db").display().to_string();
        let mut hostile = Vec::new();
        for (i, path) in [target.as_str(), "x.db", "file:x.db?mode=rwc", "../x.db"]
            .iter()
            .enumerate()
        {
            for attach in ["ATTACH", "attach", "AtTaCh DATABASE", "ATTACH database"] {
                hostile.push(format!("{attach} '{path}' AS a{i}"));
                hostile.push(format!("{attach} '{path}' || '' AS a{i}"));
            }
            for vacuum in ["VACUUM INTO", "vacuum main into", "VACUUM \"main\" INTO"] {
                hostile.push(format!("{vacuum} '{path}'"));
            }
        }
        for f in ["load_extension", "LOAD_EXTENSION", "Load_Extension"] {
            hostile.push(format!("SELECT {f}('/tmp/evil.so')"));
            hostile.push(format!("SELECT {f}('/tmp/evil.so', 'init')"));
        }
        for p in [
            "temp_store_directory",
            "TEMP_STORE_DIRECTORY",
            "data_store_directory",
        ] {
            hostile.push(format!("PRAGMA {p} = '{}'", outside.path().display()));
        }
        for sql in &hostile {
            let e = run(sql).expect_err(sql);
            assert!(
                e.message.contains("not authorized")
                    || e.message.contains("authorization denied")
                    || e.message.contains("no such function"),
                "{sql}: {e:?}"
            );
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        let inside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(!inside.iter().any(|n| n == "x.db"), "{inside:?}");
        run("VACUUM").unwrap();
        run("ATTACH ':memory:' AS m").unwrap();
        run("CREATE TABLE m.u(b)").unwrap();
        run("SELECT count(*) FROM t").unwrap();
    }
}

//! Stepping a statement into DataRow messages, for simple queries and Execute alike.

use std::io::Write;

use crate::ffi::sqlite::{SqlError, Statement};
use crate::wire::Backend;

/// Steps `stmt` and sends each row, at most `limit` rows (0: all). Returns the rows sent
/// and whether the statement is done (false: stopped at the limit, or the client is gone).
pub fn send_rows<W: Write>(
    stmt: &mut Statement,
    out: &mut Backend<W>,
    limit: u64,
) -> Result<(u64, bool), SqlError> {
    let mut rows = 0;
    while limit == 0 || rows < limit {
        if !stmt.step()? {
            return Ok((rows, true));
        }
        data_row(stmt, out);
        rows += 1;
        if out.is_broken() {
            break;
        }
    }
    Ok((rows, false))
}

/// The current row as a DataRow: every column as text, NULL as length -1.
fn data_row<W: Write>(stmt: &Statement, out: &mut Backend<W>) {
    let n = stmt.column_count();
    out.begin(b'D');
    out.i16(n as i16);
    for i in 0..n {
        out.value(stmt.text(i));
    }
    out.end();
}

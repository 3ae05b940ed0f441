//! The one-time initialization of a SQL target's pristine data directory: a fresh
//! login, the target's own `init_data`, the login stored beside the data, all given to
//! the server's user. Runs copy what it makes ([`crate::DataSource::Copy`]).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::error::SandboxError;
use crate::kind::TargetKind;
use crate::sqldata::{check_reachable, give_to_server_user, random_password, Login, LOGIN_FILE};
use crate::targets::target_for;

/// Creates a pristine data directory for `kind` at `dest` (which must not exist), with
/// user `bakeoff`, a random password and database `bakeoff`; returns the login, which is
/// also stored in the directory. Once per variant: runs copy it.
pub fn init_data(kind: TargetKind, binary: &Path, dest: &Path) -> Result<Login, SandboxError> {
    let fail = |message: String| SandboxError::Init {
        target: kind,
        dir: dest.to_path_buf(),
        message,
    };
    if dest.exists() {
        return Err(fail("the destination already exists".into()));
    }
    let parent = dest.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent).map_err(|e| fail(format!("cannot create parent: {e}")))?;
    check_reachable(dest).map_err(&fail)?;
    let login = Login {
        user: "bakeoff".into(),
        password: random_password(),
        database: "bakeoff".into(),
    };
    let made = target_for(kind).init_data(binary, dest, &login);
    if let Err(m) = made {
        let _ = std::fs::remove_dir_all(dest);
        return Err(fail(m));
    }
    let text = serde_json::to_string_pretty(&login).unwrap_or_default();
    let file = dest.join(LOGIN_FILE);
    std::fs::write(&file, text).map_err(|e| fail(format!("cannot write the login: {e}")))?;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| fail(format!("cannot protect the login file: {e}")))?;
    give_to_server_user(dest).map_err(&fail)?;
    Ok(login)
}

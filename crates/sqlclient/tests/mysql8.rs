//! By hand, against a MySQL 8 server whose users authenticate with caching_sha2_password
//! (its default): the fast path, the full authentication over TCP (RSA with the server's
//! public key) and over the unix socket (the password in clear), and a wrong password.
//! MySQL is no target of bakeoff's yet, so nothing here starts it:
//!
//! ```text
//! BAKEOFF_MYSQL8="127.0.0.1:13306 /path/to/mysqld.sock user password database" \
//!   cargo test -p bakeoff-sqlclient --test mysql8 -- --ignored
//! ```

use bakeoff_sqlclient::{Client, Db, Dialect};

fn server() -> Db {
    let spec = std::env::var("BAKEOFF_MYSQL8").expect("BAKEOFF_MYSQL8 (see the module doc)");
    let f: Vec<&str> = spec.split_whitespace().collect();
    Db {
        dialect: Dialect::Mariadb,
        addr: f[0].parse().expect("host:port"),
        socket: Some(f[1].into()),
        user: f[2].into(),
        password: f[3].into(),
        database: f[4].into(),
        via_socket: false,
    }
}

fn connect(db: &Db) -> Result<String, String> {
    let rt = bakeoff_sqlclient::driver::runtime().unwrap();
    rt.block_on(async {
        let mut c = Client::connect(db, 0, false).await.map_err(|e| e.message)?;
        let rows = c
            .rows("SELECT CURRENT_USER()")
            .await
            .map_err(|e| e.message)?;
        Ok(format!("{:?}", rows.rows))
    })
}

#[test]
#[ignore = "needs a MySQL 8 server, see the module doc"]
fn caching_sha2_password_full_fast_socket_and_wrong() {
    let db = server();
    // First over TCP: the server has no cached entry yet after a restart, so this is the
    // full authentication with RSA; the second is the fast path.
    for _ in 0..2 {
        let who = connect(&db).expect("TCP");
        assert!(who.contains(&db.user), "{who}");
    }
    let sock = Db {
        via_socket: true,
        ..db.clone()
    };
    assert!(connect(&sock).expect("socket").contains(&db.user));
    let wrong = Db {
        password: format!("{}x", db.password),
        ..db.clone()
    };
    let e = connect(&wrong).unwrap_err();
    assert!(e.contains("Access denied"), "{e}");
}

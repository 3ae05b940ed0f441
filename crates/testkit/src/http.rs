//! A loopback HTTP server for tests of downloads (the `url` dist): it answers GET `/NAME`
//! with a body (404 otherwise) and counts every request, so a test can tell a cached
//! fetch from a second download.

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A running server: the URL of its one file and how many requests it has had.
pub struct Served {
    pub url: String,
    pub hits: Arc<AtomicUsize>,
}

impl Served {
    /// The requests answered so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Serves `body` as `/name` on 127.0.0.1 from a thread that lives as long as the test.
pub fn serve(name: &str, body: Vec<u8>) -> Served {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/{name}", listener.local_addr().unwrap());
    let path = format!("/{name}");
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            counted.fetch_add(1, Ordering::SeqCst);
            let found = request.split_whitespace().nth(1) == Some(path.as_str());
            let head = if found {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
            } else {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into()
            };
            let _ = conn.write_all(head.as_bytes());
            if found {
                let _ = conn.write_all(&body);
            }
        }
    });
    Served { url, hits }
}

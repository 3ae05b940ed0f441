//! A connection's socket, in one of two modes. `Async` is a tokio stream: connections are
//! tasks that share their thread's event loop. `Blocking` is the same socket switched to
//! blocking calls, for a thread that owns exactly one connection: a statement is then one
//! `send` and one `recv` that sleeps until the reply, with no event loop in between.
//!
//! Why both: on a small machine the server's cost per transaction depends on how the
//! client waits. A thread blocked in `recv` is woken by the server's reply and usually
//! preempts the server thread on the same core; the server thread then finds its next
//! request already there and never sleeps. One event loop serving several connections
//! cannot hand off like that, so at low connection counts every server thread sleeps and
//! wakes per statement and the server burns more CPU per transaction (measured in
//! bench/RESULTS.md). At high counts one event loop is cheaper for everyone.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Where a server listens: its loopback TCP port or its unix socket file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

pub enum Stream {
    Async(tokio::net::TcpStream),
    Blocking(std::net::TcpStream),
    AsyncUnix(tokio::net::UnixStream),
    BlockingUnix(std::os::unix::net::UnixStream),
    /// Only while switching modes.
    Gone,
}

impl Stream {
    /// Connects (TCP with Nagle off, so a statement leaves at once).
    pub async fn connect(to: &Endpoint, timeout: Duration) -> io::Result<Stream> {
        let timed_out = || io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
        match to {
            Endpoint::Tcp(addr) => {
                let s = tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr))
                    .await
                    .map_err(|_| timed_out())??;
                let _ = s.set_nodelay(true);
                Ok(Stream::Async(s))
            }
            Endpoint::Unix(path) => {
                let s = tokio::time::timeout(timeout, tokio::net::UnixStream::connect(path))
                    .await
                    .map_err(|_| timed_out())??;
                Ok(Stream::AsyncUnix(s))
            }
        }
    }

    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Async(s) => s.read(buf).await,
            Stream::Blocking(s) => s.read(buf),
            Stream::AsyncUnix(s) => s.read(buf).await,
            Stream::BlockingUnix(s) => s.read(buf),
            Stream::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    pub async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Async(s) => s.write_all(buf).await,
            Stream::Blocking(s) => s.write_all(buf),
            Stream::AsyncUnix(s) => s.write_all(buf).await,
            Stream::BlockingUnix(s) => s.write_all(buf),
            Stream::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    /// Switches to blocking calls. Call it only from a thread whose event loop runs
    /// nothing else that must make progress while a reply is awaited.
    pub fn make_blocking(&mut self) -> io::Result<()> {
        *self = match std::mem::replace(self, Stream::Gone) {
            Stream::Async(s) => {
                let s = s.into_std()?;
                s.set_nonblocking(false)?;
                Stream::Blocking(s)
            }
            Stream::AsyncUnix(s) => {
                let s = s.into_std()?;
                s.set_nonblocking(false)?;
                Stream::BlockingUnix(s)
            }
            other => other,
        };
        Ok(())
    }
}

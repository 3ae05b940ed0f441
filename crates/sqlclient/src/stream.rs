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

/// The receive side of a connection: one reused buffer that frames are cut from in
/// place. Both protocols frame the same way (a header that tells the frame's length),
/// so the reading, compacting and growing happen here once.
pub(crate) struct Inbox {
    pub buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Inbox {
    pub fn new() -> Inbox {
        Inbox {
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
        }
    }

    /// The next whole frame, as a range of `buf`. `header` bytes tell the frame's total
    /// length through `frame_len` (given those bytes).
    pub async fn frame(
        &mut self,
        stream: &mut Stream,
        header: usize,
        frame_len: fn(&[u8]) -> usize,
    ) -> io::Result<std::ops::Range<usize>> {
        loop {
            let have = self.end - self.start;
            if have >= header {
                let len = frame_len(&self.buf[self.start..self.start + header]);
                if have >= len {
                    let r = self.start..self.start + len;
                    self.start += len;
                    return Ok(r);
                }
                if len > self.buf.len() {
                    self.buf.resize(len, 0);
                }
            }
            if self.start > 0 && (self.end == self.buf.len() || self.start == self.end) {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                let n = self.buf.len() * 2;
                self.buf.resize(n, 0);
            }
            let n = stream.read(&mut self.buf[self.end..]).await?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.end += n;
        }
    }
}

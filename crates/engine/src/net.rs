//! Thin, allocation-free wrappers over the syscalls the engine makes: a level-triggered
//! epoll set, nonblocking TCP or unix-socket connections with retries, one read or one
//! write per call,
//! the open-file limit, and per-thread CPU time.

use crate::Endpoint;
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Whether the engine's connections are encrypted: they are plain TCP or unix-socket
/// streams (memcached's text protocol and RESP written as is), never TLS.
pub const ENCRYPTED: bool = false;

pub struct Epoll {
    fd: RawFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    pub fn new(capacity: usize) -> io::Result<Epoll> {
        // SAFETY: plain syscall; the fd is owned by Epoll and closed in Drop.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Epoll {
            fd,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.max(16)],
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, token: u64, write: bool) -> io::Result<()> {
        let mut flags = libc::EPOLLIN | libc::EPOLLRDHUP;
        if write {
            flags |= libc::EPOLLOUT;
        }
        let mut ev = libc::epoll_event {
            events: flags as u32,
            u64: token,
        };
        // SAFETY: ev is a valid epoll_event for the duration of the call.
        if unsafe { libc::epoll_ctl(self.fd, op, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, false)
    }

    /// Turns interest in writability on or off (only while a write was partial).
    pub fn want_write(&self, fd: RawFd, token: u64, on: bool) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, on)
    }

    /// Waits up to `timeout_ns`; returns the ready (token, readable|hup, writable) events.
    pub fn wait(&mut self, timeout_ns: u64) -> io::Result<&[libc::epoll_event]> {
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as i64,
            tv_nsec: (timeout_ns % 1_000_000_000) as i64,
        };
        // SAFETY: events has capacity len; the kernel writes at most that many.
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.fd,
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        let n = if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
            let ms = timeout_ns.div_ceil(1_000_000).min(i32::MAX as u64) as i32;
            // SAFETY: as above.
            unsafe {
                libc::epoll_wait(
                    self.fd,
                    self.events.as_mut_ptr(),
                    self.events.len() as libc::c_int,
                    ms,
                ) as i64
            }
        } else {
            n
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(&self.events[..0]);
            }
            return Err(e);
        }
        Ok(&self.events[..n as usize])
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        unsafe { libc::close(self.fd) };
    }
}

/// Connects with a few retries (a busy listen backlog refuses briefly), then makes the
/// socket nonblocking (TCP: with Nagle off).
pub fn connect(to: &Endpoint) -> io::Result<OwnedFd> {
    let once = || -> io::Result<OwnedFd> {
        match to {
            Endpoint::Tcp(addr) => {
                let s = TcpStream::connect_timeout(addr, Duration::from_secs(5))?;
                s.set_nodelay(true)?;
                s.set_nonblocking(true)?;
                Ok(s.into())
            }
            Endpoint::Unix(path) => {
                let s = UnixStream::connect(path)?;
                s.set_nonblocking(true)?;
                Ok(s.into())
            }
        }
    };
    let mut last = None;
    for attempt in 0..20u64 {
        match once() {
            Ok(s) => return Ok(s),
            Err(e) => {
                let retry = matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                ) || e.raw_os_error() == Some(libc::EAGAIN);
                if !retry {
                    return Err(e);
                }
                last = Some(e);
                std::thread::sleep(Duration::from_millis(5 * (attempt + 1)));
            }
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("connect failed")))
}

/// One read; Ok(0) means the peer closed, WouldBlock is mapped to Ok(None).
pub fn read_once(s: &impl AsRawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: buf is valid for writes of buf.len() bytes.
    let n = unsafe { libc::read(s.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n >= 0 {
        return Ok(Some(n as usize));
    }
    let e = io::Error::last_os_error();
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
        _ => Err(e),
    }
}

/// One write; returns bytes written (0 when the socket buffer is full).
pub fn write_once(s: &impl AsRawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for reads of buf.len() bytes. MSG_NOSIGNAL: no SIGPIPE.
    let n = unsafe {
        libc::send(
            s.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if n >= 0 {
        return Ok(n as usize);
    }
    let e = io::Error::last_os_error();
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
        _ => Err(e),
    }
}

/// Raises the soft open-file limit to the hard limit (1024 connections need more than
/// the usual soft 1024).
pub fn raise_nofile() {
    raise_nofile_to(0);
}

/// Raises the soft open-file limit to the hard limit, and the hard limit to `need` when it
/// is lower and this process may (root); returns the soft limit it ends with.
pub fn raise_nofile_to(need: u64) -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid rlimit for getrlimit and setrlimit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 0;
        }
        if r.rlim_max < need {
            let more = libc::rlimit {
                rlim_cur: need,
                rlim_max: need,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &more) == 0 {
                return need;
            }
        }
        if r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
            }
        }
    }
    r.rlim_cur
}

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: u is valid for writes.
    unsafe { libc::getrusage(who, &mut u) };
    u
}

/// CPU seconds (user + system) of the calling thread.
pub fn thread_cpu_s() -> f64 {
    let u = rusage(libc::RUSAGE_THREAD);
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// What the calling thread has had of the machine so far: its CPU time, and the time it
/// was ready to run but waited for a CPU (the scheduler's run-queue delay). A load thread
/// that waits for a CPU is starved, not waiting for the server.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadTime {
    pub cpu_s: f64,
    pub wait_s: f64,
}

impl ThreadTime {
    /// Now, for the calling thread.
    pub fn now() -> ThreadTime {
        ThreadTime {
            cpu_s: thread_cpu_s(),
            wait_s: run_queue_wait_s().unwrap_or(0.0),
        }
    }

    /// What the thread had from `earlier` to now.
    pub fn since(earlier: ThreadTime) -> ThreadTime {
        let n = ThreadTime::now();
        ThreadTime {
            cpu_s: (n.cpu_s - earlier.cpu_s).max(0.0),
            wait_s: (n.wait_s - earlier.wait_s).max(0.0),
        }
    }
}

/// The second field of /proc/thread-self/schedstat: nanoseconds spent runnable on a run
/// queue (None where the kernel does not keep it).
fn run_queue_wait_s() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Whether the load set the pace: its threads ran for at least 90% of the window
/// (saturated by their own work). A load that only waited for a CPU did not: behind
/// another process that is the machine's doing (the runner calls it machine-busy, from
/// the other processes' CPU), behind a saturated server the server's. A thread that is
/// busy 86% of the time and waits 6% for a CPU it shares with a saturated server is
/// neither (measured: memcached -t 1 at 100% of its CPU on 2 cores).
pub fn load_set_the_pace(cpu_s: f64, threads: usize, elapsed_s: f64) -> bool {
    let window = threads.max(1) as f64 * elapsed_s;
    cpu_s >= SATURATED * window
}

/// Share of the window a load thread ran that makes it saturated.
pub const SATURATED: f64 = 0.9;

/// Peak resident memory of this process, KiB.
pub fn peak_rss_kib() -> u64 {
    rusage(libc::RUSAGE_SELF).ru_maxrss.max(0) as u64
}

#[cfg(test)]
mod pace_tests {
    use super::*;

    #[test]
    fn only_a_saturated_load_set_the_pace() {
        // Busy on its own: 0.95 s of CPU in 1 s.
        assert!(load_set_the_pace(0.95, 1, 1.0));
        // Half running, half waiting for a CPU a hog holds: the machine's doing.
        assert!(!load_set_the_pace(0.5, 1, 1.0));
        // Busy beside a saturated server on 2 cores: not the load.
        assert!(!load_set_the_pace(0.86, 1, 1.0));
        // Waiting for the server most of the time.
        assert!(!load_set_the_pace(0.6, 1, 1.0));
        // Per thread: two threads at 0.6 s of CPU each are not saturated.
        assert!(!load_set_the_pace(1.2, 2, 1.0));
        assert!(thread_wait_is_read_or_zero() >= 0.0);
    }

    fn thread_wait_is_read_or_zero() -> f64 {
        ThreadTime::now().wait_s
    }
}

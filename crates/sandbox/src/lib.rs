//! bakeoff-sandbox: the lifecycle of one server instance ("sandbox") per target kind.
//!
//! A sandbox is a server process in its own process group, listening on a free
//! 127.0.0.1 port, with a private work dir (logs, record file) under a sandbox root.
//! [`Sandbox::start`] spawns it and waits for readiness, [`Sandbox::usage`] sums CPU and
//! memory over its processes from /proc, [`Sandbox::stop`] ends it (SIGTERM, grace,
//! SIGKILL) and cleans up. Nothing outlives bakeoff: servers get PR_SET_PDEATHSIG(SIGKILL)
//! from a long-lived spawner thread, [`install_signal_handler`] kills them on
//! SIGINT/SIGTERM, `Drop` kills unstopped ones, and [`reap_stale`] cleans up after a run
//! that was itself killed. Server kinds plug in through the [`Target`] trait.

mod dirs;
mod error;
mod memcached;
mod meta;
mod process;
mod procfs;
mod registry;
mod sandbox;
mod signals;
mod spawner;
mod stale;
mod target;

pub use dirs::default_root;
pub use error::SandboxError;
pub use memcached::Memcached;
pub use procfs::Usage;
pub use sandbox::{Sandbox, SandboxSpec, StopOutcome, StopReport};
pub use signals::{install_signal_handler, try_install_signal_handler};
pub use stale::{reap_stale, StaleReport};
pub use target::{target_for, Target, TargetKind, UnknownTarget};

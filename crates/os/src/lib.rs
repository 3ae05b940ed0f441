//! bakeoff-os: the few operating-system helpers every other crate needs, once.
//!
//! - [`file`]: writing a file so that a reader (or a crash) sees the old content or the
//!   new, never a part ([`file::write_atomic`]), and making a directory's entries
//!   durable ([`file::sync_dir`]).
//! - [`path`]: finding a program the way a shell does ([`path::which`]), whether a file
//!   may be executed ([`path::is_executable`]), and a name made safe for a path
//!   ([`path::safe_name`]).
//! - [`name`]: what a name may be wherever it is read ([`name::valid_name`]), and text
//!   made safe for a terminal ([`name::printable`]).
//!
//! - [`own`]: folders bakeoff owns, marked when claimed ([`own::claim`],
//!   [`own::claim_fresh`]), so a cleanup never touches a folder bakeoff did not make.
//!
//! - [`child`]: child processes killed with bakeoff ([`child::die_with_parent`]).
//!
//! - [`cpus`]: CPU lists as taskset takes them ([`cpus::CpuSet`]), pinning threads and
//!   processes, the default split of a machine between a server and its load, and the
//!   load's CPUs when nothing pinned it ([`cpus::unpinned_load_cpus`]).
//!
//! - [`system`]: the machine's settings a variant may ask for (transparent huge pages,
//!   kernel settings, SMT), journalled before they change and put back, also after a kill.
//!
//! A leaf: it depends on nothing but std and libc, so any crate of the workspace can use it.

pub mod child;
pub mod cpus;
pub mod file;
pub mod name;
pub mod own;
pub mod path;
pub mod system;

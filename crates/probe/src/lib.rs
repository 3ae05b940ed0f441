//! Why a variant is faster: what bakeoff measures beside throughput and latency.
//!
//! - `sampler`: always on; every interval during a measured run, system CPU modes, the
//!   server's CPU and RSS over all its processes, context switches, disk and loopback
//!   traffic, from /proc. A time series per run and its summary.
//! - `perfstat`: CPU counters (perf stat) attached to the server's processes for the
//!   measured window; detects what the CPU and kernel allow.
//! - `profile`: hotspots (perf record -g) of the server for one run: top functions, the
//!   split between server binary, kernel and libraries, a flamegraph SVG, and a
//!   per-operation diff of two profiles.
//! - `hotlines`: the hottest source lines (or instructions) of a profile's top functions
//!   (addr2line, objdump) and their diff against another profile's.
//! - `callgrind`: instruction counts (valgrind callgrind) of the server over the
//!   measured window, in total and per function.
//! - `findings`: memory errors reported by AddressSanitizer, UndefinedBehaviorSanitizer
//!   and valgrind memcheck in a server's log.
//! - `machine`: the machine itself, once per host: CPU, caches, memory, NUMA, the disks
//!   and filesystem behind the data folder, kernel, OS, governor, huge pages,
//!   virtualization.
//! - `others`: who else ran during a measured window: the CPU the machine's other
//!   processes took (by name), steal, and how busy the server's busiest thread was.
//!
//! Probes never fail a run: what cannot be measured is reported as unsupported, once.

pub mod callgrind;
pub mod findings;
pub mod hotlines;
mod hotspots;
pub mod machine;
pub mod others;
pub mod perfstat;
pub mod profile;
pub mod sampler;

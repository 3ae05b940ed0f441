//! The load services every kind may use, below the kind folders (a kind folder imports
//! this, never another kind folder): [`keys`], the seeded key chooser (uniform,
//! scrambled zipfian, sysbench's special hot spot) and the `key:` names it writes;
//! [`value`], the self-checking values (a header naming the key and generation, a body
//! that is the header's checksum) and the pattern other kinds build their own checked
//! values from; [`suite`], a timed-operations run's record (sqlsuite and sqlbench);
//! [`section`], what the kinds' report sections share. The other shared services are modules of their own beside the kind
//! folders (`workload.rs`, `verify.rs`, `tool.rs`, `redis_info.rs`) or crates below this
//! one: the wire codecs (`bakeoff-proto`), the thread rules (`bakeoff_engine::
//! event_loops_for`, `bakeoff_sqlclient::driver::client_threads_for`) and the load's CPUs
//! (`bakeoff_os::cpus::unpinned_load_cpus`).

pub mod keys;
pub mod section;
pub mod suite;
pub mod value;

/// A current-thread tokio runtime with IO and timers, for a load or a check that drives
/// its own connections.
pub fn runtime() -> Result<tokio::runtime::Runtime, bakeoff_engine::LoadError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(bakeoff_engine::LoadError::Io)
}

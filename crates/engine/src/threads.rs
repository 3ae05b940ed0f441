//! How many client threads a load gets: the one rule for the engine's event loops. The
//! SQL driver's rule for connection threads (`bakeoff_sqlclient::driver::client_threads_for`)
//! shares [`AUTO_THREADS`]; the load's CPUs come from `bakeoff_os::cpus`.

/// `client_threads` when the experiment leaves it out: every kind chooses by its rule.
pub const AUTO_THREADS: usize = 0;

/// How many event loops drive `connections` with `load_cpus` CPUs for the load: `asked`
/// if given, else one per load CPU (at most one per connection). The engine scales with
/// its loops (0.36, 0.75 and 1.2 million ops/s at 2, 4 and 8 on 16 cores), so a load with
/// as many loops as CPUs keeps ahead of a server with as many CPUs. Unpinned on 2 cores:
/// one load CPU, one loop.
pub fn event_loops_for(asked: usize, connections: usize, load_cpus: usize) -> usize {
    let connections = connections.max(1);
    if asked != AUTO_THREADS {
        return asked.min(connections);
    }
    load_cpus.clamp(1, connections)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_per_load_cpu_unless_asked_never_more_than_connections() {
        assert_eq!(event_loops_for(AUTO_THREADS, 16, 1), 1);
        assert_eq!(event_loops_for(AUTO_THREADS, 16, 8), 8);
        assert_eq!(event_loops_for(AUTO_THREADS, 4, 8), 4);
        assert_eq!(event_loops_for(AUTO_THREADS, 4, 0), 1);
        assert_eq!(event_loops_for(3, 16, 1), 3);
        assert_eq!(event_loops_for(8, 4, 1), 4);
    }
}

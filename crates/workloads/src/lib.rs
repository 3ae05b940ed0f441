//! bakeoff-workloads (stub)

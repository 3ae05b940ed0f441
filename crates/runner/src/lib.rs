//! bakeoff-runner (stub)

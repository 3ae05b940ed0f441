//! bakeoff-stats (stub)

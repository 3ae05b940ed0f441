//! bakeoff-load (stub)

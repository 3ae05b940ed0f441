//! bakeoff-build (stub)

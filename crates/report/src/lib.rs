//! bakeoff-report (stub)

//! bakeoff-plan (stub)

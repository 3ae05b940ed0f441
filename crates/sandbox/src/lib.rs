//! bakeoff-sandbox (stub)

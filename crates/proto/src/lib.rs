//! bakeoff-proto: the wire codecs of the cache servers, once for every crate: [`resp`]
//! (Redis's RESP2, also Valkey's) and [`memcache`] (memcached's text protocol), with
//! [`decimal`] numbers for both. Writers append to an output buffer; readers parse in
//! place from a receive buffer, `None` while a reply is incomplete. No allocation on
//! either side, and every function `#[inline]`: the load engine calls them per request.
//!
//! A leaf on std alone: the workloads (kv, ycsb, the INFO reader) and the sandbox
//! (readiness, stop) both use it without depending on each other.

pub mod decimal;
mod line;
pub mod memcache;
pub mod resp;

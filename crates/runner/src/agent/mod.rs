//! The agent: what runs on another host. bakeoff copies itself there and starts
//! `bakeoff agent` over ssh; the two speak the line-delimited JSON of `protocol.rs`, and
//! `serve.rs` is the agent's side. The controller's side is `crate::remote`.

pub mod protocol;
mod serve;

pub use serve::serve;

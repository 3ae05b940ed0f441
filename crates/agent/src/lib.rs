//! bakeoff-agent: what runs on another host. bakeoff copies itself there and starts
//! `bakeoff agent` over ssh; the two speak the line-delimited JSON of [`protocol`], and
//! [`serve`] is the agent's side. The controller's side is `bakeoff_runner::remote`,
//! which depends on this crate for the protocol; this crate knows nothing of the runner.

pub mod protocol;
mod serve;

pub use serve::serve;

//! The Valkey target: Redis's fork, run exactly as Redis is (`redis.rs`: a config file of
//! its own, RESP, `SHUTDOWN NOSAVE`), built by the same recipe with its own product
//! (`src/valkey-server`). What differs is what it is called: its kind, its build product,
//! and the messages that name it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::kind::TargetKind;
use crate::redis::Redis;
use crate::target::{ConnectionLimit, Launch, Made, Target};
use bakeoff_build::Recipe;

/// Valkey `valkey-server` (RESP; readiness: PING).
#[derive(Debug, Clone, Default)]
pub struct Valkey(Redis);

impl From<Made> for Valkey {
    fn from(m: Made) -> Self {
        Valkey(Redis::from(m))
    }
}

impl Target for Valkey {
    fn kind(&self) -> TargetKind {
        TargetKind::Valkey
    }

    fn recipe(&self) -> Recipe {
        Recipe::redis("src/valkey-server")
    }

    fn dist_layout(&self) -> bakeoff_build::dist::Layout {
        crate::target::layout(&["valkey-server"], &[], &["--version"])
    }

    fn takes_options(&self) -> bool {
        self.0.takes_options()
    }

    fn protocol(&self) -> crate::Protocol {
        self.0.protocol()
    }

    fn owned_arg(&self, args: &[String]) -> Option<(String, &'static str)> {
        self.0.owned_arg(args)
    }

    fn owned_option(&self, key: &str) -> Option<&'static str> {
        self.0.owned_option(key)
    }

    fn refused_setting(&self, key: &str, value: &str) -> Option<String> {
        self.0.refused_setting(key, value)
    }

    fn refused_arg(&self, args: &[String]) -> Option<(String, String)> {
        self.0.refused_arg(args)
    }

    fn start_stop_guess_s(&self) -> f64 {
        self.0.start_stop_guess_s()
    }

    fn connection_limit(&self) -> Option<ConnectionLimit> {
        self.0.connection_limit()
    }

    fn connection_default(&self) -> Option<usize> {
        self.0.connection_default()
    }

    fn init(&self, binary: &Path, workdir: &Path) -> Result<(), String> {
        self.0.init(binary, workdir)
    }

    fn command(&self, launch: &Launch<'_>) -> Command {
        self.0.command(launch)
    }

    fn probe(&self, addr: SocketAddr) -> std::io::Result<bool> {
        self.0.probe(addr)
    }

    fn socket(&self, workdir: &Path) -> Option<PathBuf> {
        self.0.socket(workdir)
    }

    fn request_stop(&self, addr: SocketAddr) -> bool {
        self.0.request_stop(addr)
    }

    fn is_port_clash(&self, log_tail: &str) -> bool {
        self.0.is_port_clash(log_tail)
    }

    fn read_settings(
        &self,
        addr: SocketAddr,
    ) -> Result<std::collections::BTreeMap<String, String>, String> {
        self.0.read_settings(addr)
    }

    fn knobs(&self) -> &'static [crate::settings::Knob] {
        self.0.knobs()
    }

    fn read_stats(
        &self,
        addr: SocketAddr,
        level: crate::stats::StatsLevel,
    ) -> crate::stats::Snapshot {
        self.0.read_stats(addr, level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valkey_is_redis_under_its_own_name() {
        let v = crate::target_for(TargetKind::Valkey);
        assert_eq!(v.kind().as_str(), "valkey");
        assert_eq!(v.protocol(), crate::Protocol::Resp);
        assert!(TargetKind::Valkey.takes_options() && !TargetKind::Valkey.is_sql());
        assert_eq!(v.recipe().product(), Path::new("src/valkey-server"));
        assert!(v.owned_option("port").is_some() && v.owned_option("maxmemory").is_none());
        assert!(v.refused_setting("loadmodule", "/x.so").is_some());
    }
}

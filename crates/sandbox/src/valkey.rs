//! The Valkey target: Redis's fork, run exactly as Redis is (`redis.rs`: a config file of
//! its own, RESP, `SHUTDOWN NOSAVE`), built by the same recipe with its own product
//! (`src/valkey-server`). What differs is what it is called: its kind and its server
//! program, this file's one [`Fork`] line; the registry makes it with
//! [`crate::redis::Redis::fork_of`], so every method of Redis's is Valkey's without a
//! line forwarding it.

use crate::kind::TargetKind;
use crate::redis::Fork;

/// Valkey `valkey-server` (RESP; readiness: PING).
pub const VALKEY: Fork = Fork {
    kind: TargetKind::Valkey,
    server: &["valkey-server"],
    product: "src/valkey-server",
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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

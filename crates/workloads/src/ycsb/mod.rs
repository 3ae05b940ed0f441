//! YCSB's core workloads A to F (Cooper et al., "Benchmarking Cloud Serving Systems with
//! YCSB", and the YCSB repository's `CoreWorkload`): reads, updates, inserts, scans and
//! read-modify-writes over a table of `records` records of `fields` fields, keys chosen
//! zipfian (YCSB's scrambled zipfian), uniform or latest (YCSB's skewed latest).
//!
//! - `keys.rs`: the experiment file's keys and their checks; `kind.rs`: ycsb in the
//!   registry (what the plan and the run ask of a kind).
//! - `gen.rs`: key numbers and key names (YCSB's FNV-1a hashed `user<N>`), the zipfian
//!   generator of Gray et al. as YCSB's `ZipfianGenerator` has it, the scrambled and
//!   latest choosers, the insert counter the client threads share, the operation mix.
//! - `value.rs`: self-checking field values: any read is checked, whatever update it saw.
//! - `kvs.rs`: memcached (a record is one value) and Redis (a hash per record and a
//!   sorted-set index for scans, as YCSB's redis binding) over the load engine.
//! - `sql.rs`: the `usertable` on MariaDB, PostgreSQL and SQLite over bakeoff's SQL
//!   driver, loaded once per variant and copied per run.
//! - `workload.rs`: [`Ycsb`], the [`crate::Workload`].

mod gen;
mod keys;
mod kind;
mod kvs;
mod sql;
mod value;
mod workload;

pub use gen::{fnv64, key_name, Chooser, Inserts, KeyName, Zipfian};
pub use keys::{check, CoreWorkload, RequestDistribution, YcsbKeys};
pub use kind::YcsbKind;
pub use value::{check_field, write_field, HEADER};
pub use workload::Ycsb;

/// What a ycsb workload speaks: the target's protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// memcached's text protocol: a record is one value, no scans.
    Memcached,
    /// Redis's RESP2: a hash per record, a sorted set as the scan index.
    Resp,
    /// SQL over bakeoff's own clients: the `usertable`.
    Sql,
}

impl Protocol {
    /// The protocol the target speaks.
    pub fn for_target(t: bakeoff_sandbox::Protocol) -> Protocol {
        match t {
            bakeoff_sandbox::Protocol::Resp => Protocol::Resp,
            bakeoff_sandbox::Protocol::Memcached => Protocol::Memcached,
            bakeoff_sandbox::Protocol::Sql => Protocol::Sql,
        }
    }

    /// Whether records can be scanned in key order (workload E).
    pub fn scans(self) -> bool {
        self != Protocol::Memcached
    }
}

/// Operation indices as `by_command` and the SQL kinds name them. `scan_index` is
/// Redis's first step of a scan (ZRANGEBYSCORE on the index); its `scan` is the HGETALLs.
pub const COMMANDS: [&str; 6] = [
    "read",
    "update",
    "insert",
    "scan",
    "read_modify_write",
    "scan_index",
];
pub const READ: u8 = 0;
pub const UPDATE: u8 = 1;
pub const INSERT: u8 = 2;
pub const SCAN: u8 = 3;
pub const RMW: u8 = 4;
pub const SCAN_INDEX: u8 = 5;

/// The proportions of one run, per mille: read, update, insert, scan, read-modify-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix(pub [u32; 5]);

impl Mix {
    /// YCSB's workload files (workloads/workloada .. workloadf).
    pub fn of(w: CoreWorkload) -> Mix {
        Mix(match w {
            CoreWorkload::A => [500, 500, 0, 0, 0],
            CoreWorkload::B => [950, 50, 0, 0, 0],
            CoreWorkload::C => [1000, 0, 0, 0, 0],
            CoreWorkload::D => [950, 0, 50, 0, 0],
            CoreWorkload::E => [0, 0, 50, 950, 0],
            CoreWorkload::F => [500, 0, 0, 0, 500],
        })
    }

    /// One operation, drawn with `r` uniform in 0..1000.
    #[inline]
    pub fn pick(&self, r: u64) -> u8 {
        let mut acc = 0u64;
        for (i, w) in self.0.iter().enumerate() {
            acc += u64::from(*w);
            if r < acc {
                return i as u8;
            }
        }
        READ
    }
}

/// Everything a run needs from the keys, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub workload: CoreWorkload,
    pub mix: Mix,
    pub distribution: RequestDistribution,
    pub records: u64,
    pub fields: usize,
    pub field_length: usize,
    pub max_scan_length: u64,
}

impl Config {
    pub fn from_keys(k: &YcsbKeys) -> Config {
        Config {
            workload: k.workload,
            mix: Mix::of(k.workload),
            distribution: k.distribution.unwrap_or_else(|| k.workload.distribution()),
            records: k.records.max(1),
            fields: k.fields.max(1),
            field_length: k.field_length.max(HEADER),
            max_scan_length: k.max_scan_length.max(1),
        }
    }

    /// Bytes of one record's values.
    pub fn record_bytes(&self) -> usize {
        self.fields * self.field_length
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_add_up_and_pick_by_weight() {
        for w in [
            CoreWorkload::A,
            CoreWorkload::B,
            CoreWorkload::C,
            CoreWorkload::D,
            CoreWorkload::E,
            CoreWorkload::F,
        ] {
            assert_eq!(Mix::of(w).0.iter().sum::<u32>(), 1000, "{w:?}");
        }
        let d = Mix::of(CoreWorkload::D);
        assert_eq!(
            (d.pick(0), d.pick(949), d.pick(950), d.pick(999)),
            (READ, READ, INSERT, INSERT)
        );
        let e = Mix::of(CoreWorkload::E);
        assert_eq!((e.pick(0), e.pick(49), e.pick(50)), (INSERT, INSERT, SCAN));
        let c = Config::from_keys(&YcsbKeys::default());
        assert_eq!(c.distribution, RequestDistribution::Zipfian);
        let k = YcsbKeys {
            workload: CoreWorkload::D,
            ..YcsbKeys::default()
        };
        assert_eq!(
            Config::from_keys(&k).distribution,
            RequestDistribution::Latest
        );
        let k = YcsbKeys {
            distribution: Some(RequestDistribution::Uniform),
            ..k
        };
        assert_eq!(
            Config::from_keys(&k).distribution,
            RequestDistribution::Uniform
        );
    }
}

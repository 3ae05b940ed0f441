//! ycsb's keys in an experiment file, their defaults (beside the fields) and their checks.
//! The names are YCSB's where YCSB has one (`records` for recordcount, `fields` for
//! fieldcount, `field_length`, `max_scan_length`, `distribution` for
//! requestdistribution) and kv's for what every kind has (`connections`,
//! `client_threads`). Time or an operation count is the plan's (`[plan] duration`, `ops`),
//! as for every kind.

use bakeoff_plan::{OneOrMany, MAX_CONNECTIONS};
use serde::{Deserialize, Serialize};

/// YCSB's core workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoreWorkload {
    /// Update heavy: read 0.5, update 0.5.
    #[serde(alias = "A")]
    A,
    /// Read mostly: read 0.95, update 0.05.
    #[serde(alias = "B")]
    B,
    /// Read only.
    #[serde(alias = "C")]
    C,
    /// Read latest: read 0.95, insert 0.05, latest.
    #[serde(alias = "D")]
    D,
    /// Short ranges: scan 0.95, insert 0.05.
    #[serde(alias = "E")]
    E,
    /// Read-modify-write: read 0.5, read-modify-write 0.5.
    #[serde(alias = "F")]
    F,
}

impl CoreWorkload {
    /// The request distribution of YCSB's workload file.
    pub fn distribution(self) -> RequestDistribution {
        match self {
            CoreWorkload::D => RequestDistribution::Latest,
            _ => RequestDistribution::Zipfian,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CoreWorkload::A => "a",
            CoreWorkload::B => "b",
            CoreWorkload::C => "c",
            CoreWorkload::D => "d",
            CoreWorkload::E => "e",
            CoreWorkload::F => "f",
        }
    }
}

/// YCSB's requestdistribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestDistribution {
    /// YCSB's scrambled zipfian (constant 0.99), hot records spread over the key space.
    Zipfian,
    Uniform,
    /// YCSB's skewed latest: the newest record minus a zipfian draw.
    Latest,
}

/// A ycsb workload's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct YcsbKeys {
    /// Which core workload: "a" to "f".
    #[serde(default = "default_workload")]
    pub workload: CoreWorkload,
    /// Records loaded before the runs (YCSB's recordcount).
    #[serde(default = "default_records")]
    pub records: u64,
    /// Fields per record (YCSB's fieldcount).
    #[serde(default = "default_fields")]
    pub fields: usize,
    /// Bytes per field (YCSB's fieldlength).
    #[serde(default = "default_field_length")]
    pub field_length: usize,
    /// Overrides the workload's request distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<RequestDistribution>,
    /// Workload E: a scan reads 1..=max_scan_length records, uniform.
    #[serde(default = "default_max_scan_length")]
    pub max_scan_length: u64,
    /// One count or a sweep, as kv's.
    #[serde(default = "default_connections")]
    pub connections: OneOrMany,
    /// None: one client thread per load CPU, as kv's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<usize>,
}

fn default_workload() -> CoreWorkload {
    CoreWorkload::A
}
/// 10000 records of 10 x 100 bytes: 10 MB of values, which memcached's default 64 MB
/// holds with room to spare (100000 would not: evicted records read back as misses),
/// and which a SQL server loads in about a second.
fn default_records() -> u64 {
    10_000
}
fn default_fields() -> usize {
    10
}
fn default_field_length() -> usize {
    100
}
fn default_max_scan_length() -> u64 {
    100
}
fn default_connections() -> OneOrMany {
    OneOrMany::Many(vec![16])
}

impl Default for YcsbKeys {
    fn default() -> Self {
        YcsbKeys {
            workload: default_workload(),
            records: default_records(),
            fields: default_fields(),
            field_length: default_field_length(),
            distribution: None,
            max_scan_length: default_max_scan_length(),
            connections: default_connections(),
            client_threads: None,
        }
    }
}

/// The most records (the latest chooser's zeta sum is computed over them once per run).
pub const MAX_RECORDS: u64 = 100_000_000;
/// The most fields (a field's header names its index in two hex digits).
pub const MAX_FIELDS: usize = 100;
/// The largest record: memcached's default item size limit is 1 MB.
pub const MAX_RECORD_BYTES: usize = 1_000_000;

/// Checks `k` for a target that can (`scans`) or cannot scan. Err: the key at fault and
/// one line saying what is wrong and what to do.
pub fn check(k: &YcsbKeys, scans: bool) -> Result<(), (&'static str, String)> {
    if k.workload == CoreWorkload::E && !scans {
        return Err((
            "workload",
            "workload \"e\" scans records in key order, which this target cannot (memcached has no ordered index); pick a, b, c, d or f, or a redis or SQL target".into(),
        ));
    }
    if !(1..=MAX_RECORDS).contains(&k.records) {
        return Err((
            "records",
            format!("records must be 1..={MAX_RECORDS}, got {}", k.records),
        ));
    }
    if !(1..=MAX_FIELDS).contains(&k.fields) {
        return Err((
            "fields",
            format!("fields must be 1..={MAX_FIELDS}, got {}", k.fields),
        ));
    }
    if !(super::HEADER..=MAX_RECORD_BYTES).contains(&k.field_length) {
        return Err((
            "field_length",
            format!(
                "field_length must be {}..={MAX_RECORD_BYTES} bytes (each field starts with a {}-byte self-check header), got {}",
                super::HEADER,
                super::HEADER,
                k.field_length
            ),
        ));
    }
    if k.fields * k.field_length > MAX_RECORD_BYTES {
        return Err((
            "field_length",
            format!(
                "a record of fields x field_length = {} bytes is over {MAX_RECORD_BYTES} (memcached's item limit); use fewer or shorter fields",
                k.fields * k.field_length
            ),
        ));
    }
    if !(1..=10_000).contains(&k.max_scan_length) {
        return Err((
            "max_scan_length",
            format!(
                "max_scan_length must be 1..=10000 records, got {}",
                k.max_scan_length
            ),
        ));
    }
    let connections = k.connections.to_vec();
    if connections.is_empty() {
        return Err((
            "connections",
            "connections is an empty list; give a count or a list such as [1, 16, 64]".into(),
        ));
    }
    if let Some(c) = connections
        .iter()
        .find(|c| !(1..=MAX_CONNECTIONS).contains(*c))
    {
        return Err((
            "connections",
            format!("connections must be 1..={MAX_CONNECTIONS}, got {c}"),
        ));
    }
    if let Some(t) = k.client_threads {
        let fewest = connections.iter().copied().min().unwrap_or(1);
        if !(1..=fewest).contains(&t) {
            return Err((
                "client_threads",
                format!("client_threads must be 1..={fewest} (the fewest connections swept), got {t}; or leave it out for one per load CPU"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(toml: &str) -> YcsbKeys {
        serde_json::from_value(serde_json::to_value(toml_like(toml)).unwrap()).unwrap()
    }

    /// A tiny `key = value` reader, enough for these tests (the plan reads real TOML).
    fn toml_like(s: &str) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for line in s.lines().filter(|l| !l.trim().is_empty()) {
            let (k, v) = line.split_once('=').unwrap();
            let v = v.trim();
            let v = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::from(v));
            m.insert(k.trim().to_string(), v);
        }
        serde_json::Value::Object(m)
    }

    #[test]
    fn defaults_and_round_trip() {
        let k = keys("");
        assert_eq!(k, YcsbKeys::default());
        assert_eq!(k.workload, CoreWorkload::A);
        assert_eq!((k.records, k.fields, k.field_length), (10_000, 10, 100));
        assert_eq!(k.max_scan_length, 100);
        assert_eq!(k.connections.to_vec(), vec![16]);
        assert!(check(&k, false).is_ok());
        let back: YcsbKeys = serde_json::from_value(serde_json::to_value(&k).unwrap()).unwrap();
        assert_eq!(back, k);
        let k = keys("workload = \"D\"\ndistribution = \"uniform\"\nconnections = [1, 4]");
        assert_eq!(k.workload, CoreWorkload::D);
        assert_eq!(k.distribution, Some(RequestDistribution::Uniform));
        assert_eq!(k.connections.to_vec(), vec![1, 4]);
        assert!(check(&k, false).is_ok());
    }

    #[test]
    fn checks_name_the_key_at_fault() {
        let at = |s: &str, scans: bool| check(&keys(s), scans).unwrap_err().0;
        assert_eq!(at("workload = \"e\"", false), "workload");
        assert!(check(&keys("workload = \"e\""), true).is_ok());
        assert_eq!(at("records = 0", true), "records");
        assert_eq!(at("fields = 0", true), "fields");
        assert_eq!(at("fields = 101", true), "fields");
        assert_eq!(at("field_length = 8", true), "field_length");
        assert_eq!(
            at("fields = 100\nfield_length = 20000", true),
            "field_length"
        );
        assert_eq!(at("max_scan_length = 0", true), "max_scan_length");
        assert_eq!(at("connections = [4, 0]", true), "connections");
        assert_eq!(
            at("connections = [4, 8]\nclient_threads = 5", true),
            "client_threads"
        );
        let (_, m) = check(&keys("workload = \"e\""), false).unwrap_err();
        assert!(m.contains("pick a, b, c, d or f"), "{m}");
    }
}

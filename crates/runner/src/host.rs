//! Host facts recorded in every results folder, so two folders can be compared offline.

use bakeoff_report::model::Host;

pub fn facts() -> Host {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory_bytes = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<u64>().ok())
        .map_or(0, |k| k * 1024);
    let os = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|s| s.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    Host {
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        kernel: read("/proc/sys/kernel/osrelease"),
        os,
        hostname: read("/proc/sys/kernel/hostname"),
        ..Host::default()
    }
}

//! The /proc sampler against this machine, with the test process as the "server".

use bakeoff_probe::sampler::{Sample, Sampler, ServerUsage, Summary, THREAD_NAME};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// CPU seconds (utime + stime) of this process from /proc/self/stat.
fn self_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 11 and 12 after the ')'.
    let ticks: u64 = fields
        .get(11..13)
        .map(|f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / if hz > 0 { hz as f64 } else { 100.0 }
}

/// VmRSS of this process in KiB.
fn self_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_ascii_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn self_usage() -> ServerUsage {
    Box::new(|| (self_cpu_seconds(), self_rss_kib()))
}

fn burn_cpu(d: Duration) {
    let t = Instant::now();
    let mut x = 1u64;
    while t.elapsed() < d {
        for _ in 0..10_000 {
            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    black_box(x);
}

fn mode_sum(s: &Sample) -> f64 {
    s.cpu_user_pct
        + s.cpu_nice_pct
        + s.cpu_system_pct
        + s.cpu_idle_pct
        + s.cpu_iowait_pct
        + s.cpu_irq_pct
        + s.cpu_softirq_pct
        + s.cpu_steal_pct
}

/// This process sampled every `interval` while it burns CPU for `burn`; stopping the
/// sampler must take under 100 ms.
fn sample_burning(interval: Duration, burn: Duration) -> (Vec<Sample>, Summary) {
    let sampler = Sampler::start(self_usage(), interval);
    burn_cpu(burn);
    let asked = Instant::now();
    let stopped = sampler.stop();
    let took = asked.elapsed();
    assert!(took < Duration::from_millis(100), "stop took {took:?}");
    stopped
}

#[test]
fn busy_process_sampled_every_200ms() {
    // What this process really got of a CPU while it burned, measured beside the sampler:
    // on a loaded machine the burn gets less than a whole CPU, and the sampler must say
    // what it got, not a fixed figure.
    let (cpu0, wall0) = (self_cpu_seconds(), Instant::now());
    let (samples, summary) =
        sample_burning(Duration::from_millis(200), Duration::from_millis(1200));
    let got_pct = 100.0 * (self_cpu_seconds() - cpu0) / wall0.elapsed().as_secs_f64();
    assert!(
        (5..=7).contains(&samples.len()),
        "{} samples",
        samples.len()
    );
    for (i, s) in samples.iter().enumerate() {
        let sum = mode_sum(s);
        assert!((sum - 100.0).abs() <= 1.0, "sample {i}: modes sum to {sum}");
        assert!(s.server_rss_kib > 0);
        assert!(s.t_s > 0.0);
    }
    for w in samples.windows(2) {
        assert!(w[1].t_s > w[0].t_s);
    }
    // /proc's CPU times tick at 100 Hz: 20 points of slack over a 1.2 s window.
    assert!(
        (summary.server_cpu_pct_mean - got_pct).abs() < 20.0,
        "sampled mean {:.1}% against {got_pct:.1}% measured: {summary:?}",
        summary.server_cpu_pct_mean
    );
    assert!(
        summary.server_cpu_pct_max >= summary.server_cpu_pct_mean,
        "{summary:?}"
    );
    assert!(
        summary.server_cpu_pct_mean > 10.0 || got_pct < 20.0,
        "{summary:?}"
    );
    assert!((1.15..1.4).contains(&summary.seconds), "{summary:?}");
    assert!(summary.server_rss_kib_max > 0);
    let whole = summary.cpu_user_pct
        + summary.cpu_system_pct
        + summary.cpu_idle_pct
        + summary.cpu_iowait_pct
        + summary.cpu_softirq_pct
        + summary.cpu_steal_pct;
    assert!(whole > 0.0 && whole <= 100.0 + 1e-6, "{summary:?}");
}

#[test]
fn window_shorter_than_an_interval_still_has_a_summary() {
    let (samples, summary) = sample_burning(Duration::from_secs(1), Duration::from_millis(150));
    assert!(samples.is_empty());
    assert!((0.14..0.5).contains(&summary.seconds), "{summary:?}");
    assert!(summary.server_rss_kib_max > 0);
    assert!(summary.server_cpu_pct_max >= summary.server_cpu_pct_mean);
}

#[test]
fn immediate_stop_does_not_panic() {
    let (samples, summary) = Sampler::start(Box::new(|| (0.0, 0)), Duration::ZERO).stop();
    assert!(samples.len() < 1000);
    assert!(summary.seconds >= 0.0);
    assert!(summary.server_cpu_pct_mean.is_finite());
}

/// Nanoseconds the named thread of this process has run (schedstat), if found.
fn thread_cpu_ns(name: &str) -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let sched = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            return sched.split_ascii_whitespace().next()?.parse().ok();
        }
    }
    None
}

/// The sampler's own cost: CPU time of its thread per sample and as a share of one
/// core. `cargo test -p bakeoff-probe --test sampler -- --ignored --nocapture`;
/// SAMPLER_COST_SECS sets the length of each run (default 20).
#[test]
#[ignore]
fn sampler_cost() {
    let secs: u64 = std::env::var("SAMPLER_COST_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    type MakeUsage = fn() -> ServerUsage;
    let closures: [(&str, MakeUsage); 2] = [
        ("no-op server closure", || Box::new(|| (0.0, 0))),
        ("closure reading /proc/self/stat and status", self_usage),
    ];
    for (what, usage) in closures {
        for interval_ms in [1000u64, 100] {
            let sampler = Sampler::start(usage(), Duration::from_millis(interval_ms));
            std::thread::sleep(Duration::from_secs(secs));
            let ns = thread_cpu_ns(THREAD_NAME);
            let (samples, summary) = sampler.stop();
            let Some(ns) = ns else {
                println!("no schedstat for the sampler thread; cannot measure");
                return;
            };
            let n = samples.len().max(1) as f64;
            println!(
                "{what}, interval {interval_ms} ms: {} samples in {:.1} s, sampler thread \
                 CPU {:.0} us total, {:.1} us per sample, {:.4} % of one core",
                samples.len(),
                summary.seconds,
                ns as f64 / 1e3,
                ns as f64 / 1e3 / n,
                ns as f64 / 1e9 / summary.seconds * 100.0,
            );
        }
    }
}

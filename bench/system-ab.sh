#!/usr/bin/env bash
# The machine as a variant (issue 55): Redis 7.0 from Debian's source built with glibc's
# malloc (MALLOC=libc), run as it is, with jemalloc preloaded, and with transparent huge
# pages `always` and `never` for its runs only; one experiment, interleaved rounds, a kv
# load of 90% GET / 10% SET over 100k keys of 256-768 bytes at 16 connections. Prints
# every comparison against glibc (THP as the machine had it), then re-decides the same
# folder against thp-never (`bakeoff report --baseline`) for THP always against never.
# Machine-wide: run as root; bakeoff puts THP back after every run.
#
#   sudo bash bench/system-ab.sh [BUDGET=4m]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
budget="${1:-4m}"
bench_bakeoff
bench_work

build='compiler = "gcc-12"
cflags = "-O2"
make_args = ["MALLOC=libc"]'
cat > "$work/system-ab.toml" <<TOML
name = "system-ab"
[target]
kind = "redis"
source = { debian = "redis" }
options = { save = "", appendonly = "no" }
[[variant]]
name = "glibc"
$build
[[variant]]
name = "jemalloc"
$build
preload = "jemalloc"
[[variant]]
name = "thp-always"
$build
thp = "always"
[[variant]]
name = "thp-never"
$build
thp = "never"
[[workload]]
kind = "kv"
name = "get90"
connections = [16]
keys = 100000
value_size = { mean = 512 }
mix = { get = 90, set = 10 }
[plan]
budget = "$budget"
baseline = "glibc"
TOML
echo "THP before: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
"$bakeoff" run "$work/system-ab.toml" --allow-system-changes --out "$work/out" --quiet >/dev/null
echo "THP after:  $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
"$bakeoff" report "$work/out" --baseline thp-never >/dev/null
python3 - "$work/out" <<'PY'
import json, sys, glob
folder = sys.argv[1]
for path in [folder + "/results.json"] + sorted(glob.glob(folder + "/results.baseline-*.json")):
    r = json.load(open(path))
    for c in r["comparisons"]:
        if c.get("metric", "throughput") != "throughput":
            continue
        lo, hi = c["ci"]
        print(f'{c["variant"]:>10} vs {c["baseline"]:<9} ratio {c["ratio"]:.3f} '
              f'CI [{lo:.3f}, {hi:.3f}] {c["verdict"]} ({c["rounds"]} rounds)')
runs = [x for c in r["cells"] for x in c["runs"]]
bad = [x.get("invalid_reason") for x in runs if not x["valid"]]
print(f"runs: {len(runs)}, invalid: {len(bad)} {bad[:2]}")
busy = sum(1 for x in runs if (x.get("others_cpu_pct") or 0) > 10)
others = sorted(x.get("others_cpu_pct") or 0 for x in runs)
print(f"runs where other processes took over 10% of the machine: {busy} "
      f"(median {others[len(others) // 2]:.0f}% of the machine's CPUs)")
for c in r["cells"]:
    ops = sorted(x["ops_per_s"] for x in c["runs"] if x["valid"])
    if ops:
        print(f'{c["variant"]:>10}: median {ops[len(ops) // 2]:,.0f} ops/s over {len(ops)} runs')
for c in r["cells"]:
    if c["runs"]:
        print(c["variant"], "system_applied:", c["runs"][0].get("system_applied"))
PY

#!/usr/bin/env bash
# The ycsb kind against the kv kind at the same shape, in one experiment per server (the
# two workloads' cells alternate within every round, on a fresh server each run):
# read-only (YCSB workload c against a kv mix of gets only), 10,000 records of one
# 1,000-byte field (kv: 10,000 keys of 1,000-byte values, every key preloaded), uniform
# key choice, 16 connections, one client thread, closed loop, pipeline 1; Debian's
# memcached and redis-server. Prints per workload the median ops/s and the median client
# CPU per op (the load's thread during the measured window) over the valid runs.
#
#   bash bench/ycsb-vs-kv.sh [SECONDS=2] [REPS=8]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs="${1:-2}"
reps="${2:-8}"
bakeoff="${BAKEOFF:-$here/target/release/bakeoff}"
[ -x "$bakeoff" ] || (cd "$here" && cargo build --release -q -p bakeoff)
bench_work

for target in memcached redis; do
  binary=/usr/bin/memcached
  [ "$target" = redis ] && binary=/usr/bin/redis-server
  args='args = ["-t", "1"]'
  [ "$target" = redis ] && args='options = { save = "", appendonly = "no" }'
  cat > "$work/$target.toml" <<TOML
name = "ycsb-vs-kv-$target"
[target]
kind = "$target"
$args
[[variant]]
name = "debian"
binary = "$binary"
[[workload]]
kind = "kv"
name = "kv-get"
connections = 16
client_threads = 1
keys = 10000
value_size = 1000
mix = { get = 100 }
[[workload]]
kind = "ycsb"
name = "ycsb-c"
workload = "c"
records = 10000
fields = 1
field_length = 1000
distribution = "uniform"
connections = 16
client_threads = 1
[plan]
repetitions = $reps
warmup = "500ms"
duration = "${secs}s"
TOML
  "$bakeoff" run "$work/$target.toml" --out "$work/out-$target" --no-history > "$work/$target.log" 2>&1 || {
    tail -20 "$work/$target.log" >&2
    exit 1
  }
  python3 - "$work/out-$target" "$target" <<'PY'
import json, pathlib, statistics, sys
folder, target = pathlib.Path(sys.argv[1]), sys.argv[2]
path = next(folder.rglob("results.json"))
r = json.loads(path.read_text())
rows = {}
for c in r["cells"]:
    runs = [x for x in c["runs"] if x.get("valid")]
    ops = [x["ops_per_s"] for x in runs]
    cpu = [x["client_cpu_us_per_op"] for x in runs]
    fails = sum(x.get("verify_failures", 0) for x in runs)
    rows[c["workload"]] = (statistics.median(ops), statistics.median(cpu), len(runs), fails)
for w, (ops, cpu, n, fails) in rows.items():
    print(f"{target:9s} {w:7s} {ops:10.0f} ops/s  {cpu:6.2f} us/op client  ({n} runs, {fails} verify failures)")
kv, y = rows["kv-get"], rows["ycsb-c"]
print(f"{target:9s} ycsb/kv  ops/s {y[0] / kv[0]:.3f}  client CPU/op {y[1] / kv[1]:.3f}")
PY
done

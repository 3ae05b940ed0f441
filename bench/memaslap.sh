#!/usr/bin/env bash
# bakeoff's load engine against memaslap (Debian libmemcached-tools: memcaslap), in one run,
# on one memcached, at the same shape: 1 client thread, 16 connections, 90% get / 10% set,
# 100-byte values, SECONDS per run, REPS alternating repetitions each.
# Prints per run and median: ops/s and client CPU microseconds per op, then the ratios.
#
#   bash bench/memaslap.sh [SECONDS=10] [REPS=3]
#
# Client CPU: memaslap's whole process (getrusage of the child); bakeoff's client thread
# during the measured window (getrusage RUSAGE_THREAD), which is what results.json reports.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
secs="${1:-10}"
reps="${2:-3}"
port=$((20000 + RANDOM % 20000))
work="$(mktemp -d)"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v memcaslap >/dev/null || { echo "memcaslap missing: apt-get install libmemcached-tools" >&2; exit 2; }
(cd "$here" && cargo build --release -q -p bakeoff-workloads --example kvload)
kvload="${CARGO_TARGET_DIR:-$here/target}/release/examples/kvload"

user=(); [ "$(id -u)" -eq 0 ] && user=(-u root)
/usr/bin/memcached -t 1 -U 0 -l 127.0.0.1 -p "$port" -m 1024 "${user[@]}" &
server=$!
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done

printf 'key\n16 16 1\nvalue\n100 100 1\ncmd\n0 0.1\n1 0.9\n' > "$work/memaslap.cfg"

run_memaslap() {
  python3 - "$port" "$secs" "$work/memaslap.cfg" <<'PY'
import re, resource, subprocess, sys
port, secs, cfg = sys.argv[1:4]
out = subprocess.run(["memcaslap", "-s", f"127.0.0.1:{port}", "-T", "1", "-c", "16",
                      "-t", f"{secs}s", "-F", cfg], capture_output=True, text=True).stdout
u = resource.getrusage(resource.RUSAGE_CHILDREN)
m = re.search(r"Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", out)
if not m:
    sys.exit("memaslap printed no summary:\n" + out)
ops = int(m.group(2))
print(f"{int(m.group(3))} {(u.ru_utime + u.ru_stime) * 1e6 / ops:.3f}")
PY
}

run_bakeoff() {
  "$kvload" "127.0.0.1:$port" 16 "$secs" | sed -E 's/ops_per_s=([0-9.]+) client_cpu_us_per_op=([0-9.]+).*/\1 \2/'
}

: > "$work/m"; : > "$work/b"
for r in $(seq "$reps"); do
  m=$(run_memaslap); echo "run $r memaslap: ops/s ${m% *}  client us/op ${m#* }"; echo "$m" >> "$work/m"
  b=$(run_bakeoff); echo "run $r bakeoff:  ops/s ${b% *}  client us/op ${b#* }"; echo "$b" >> "$work/b"
done

python3 - "$work/m" "$work/b" <<'PY'
import statistics, sys
def load(p):
    rows = [tuple(map(float, l.split())) for l in open(p) if l.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
m_ops, m_cpu = load(sys.argv[1]); b_ops, b_cpu = load(sys.argv[2])
print(f"median memaslap: {m_ops:,.0f} ops/s, {m_cpu:.2f} client us/op")
print(f"median bakeoff:  {b_ops:,.0f} ops/s, {b_cpu:.2f} client us/op")
ops_ratio, cpu_ratio = b_ops / m_ops, b_cpu / m_cpu
print(f"bakeoff/memaslap: ops/s x{ops_ratio:.3f}, client CPU per op x{cpu_ratio:.3f}")
ok = ops_ratio >= 1.0 and cpu_ratio <= 0.5
print("bar (ops/s >= memaslap's and CPU/op <= half of memaslap's):", "PASS" if ok else "FAIL")
PY

#!/usr/bin/env bash
# bakeoff's load engine against memaslap (Debian libmemcached-tools: memcaslap), in one run,
# on one memcached, at the same shape: THREADS client threads, CONNS connections, 90% get /
# 10% set, 100-byte values, SECONDS per run, REPS alternating repetitions each.
# Prints per run and median: ops/s and client CPU microseconds per op, then the ratios.
#
#   bash bench/memaslap.sh [SECONDS=10] [REPS=3] [THREADS=1] [CONNS=16]
#
# Environment: MC_THREADS (memcached's -t, default 1); SERVER_CPUS and LOAD_CPUS (CPU
# lists for taskset: memcached on one, both clients on the other; default unpinned);
# CPU_BAR (the client CPU per op ratio the bar allows, default 0.5).
#
# Client CPU: memaslap's whole process (getrusage of the child); bakeoff's client thread
# during the measured window (getrusage RUSAGE_THREAD), which is what results.json reports.
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs="${1:-10}"
reps="${2:-3}"
threads="${3:-1}"
conns="${4:-16}"
server_pin=(); [ -n "${SERVER_CPUS:-}" ] && server_pin=(taskset -c "$SERVER_CPUS")
load_pin=(); [ -n "${LOAD_CPUS:-}" ] && load_pin=(taskset -c "$LOAD_CPUS")
port=$((20000 + RANDOM % 20000))
bench_work

command -v memcaslap >/dev/null || { echo "memcaslap missing: apt-get install libmemcached-tools" >&2; exit 2; }
kvload_build

user=(); [ "$(id -u)" -eq 0 ] && user=(-u root)
"${server_pin[@]}" /usr/bin/memcached -t "${MC_THREADS:-1}" -c 4096 -U 0 -l 127.0.0.1 -p "$port" -m 1024 "${user[@]}" &
server=$!
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done

printf 'key\n16 16 1\nvalue\n100 100 1\ncmd\n0 0.1\n1 0.9\n' > "$work/memaslap.cfg"

run_memaslap() {
  python3 - "$port" "$secs" "$work/memaslap.cfg" "$threads" "$conns" "${LOAD_CPUS:-}" <<'PY'
import re, resource, subprocess, sys
port, secs, cfg, threads, conns, pin = sys.argv[1:7]
cmd = ["memcaslap", "-s", f"127.0.0.1:{port}", "-T", threads, "-c", conns,
       "-t", f"{secs}s", "-F", cfg]
if pin:
    cmd = ["taskset", "-c", pin] + cmd
out = subprocess.run(cmd, capture_output=True, text=True).stdout
u = resource.getrusage(resource.RUSAGE_CHILDREN)
m = re.search(r"Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", out)
if not m:
    sys.exit("memaslap printed no summary:\n" + out)
ops = int(m.group(2))
print(f"{int(m.group(3))} {(u.ru_utime + u.ru_stime) * 1e6 / ops:.3f}")
PY
}

run_bakeoff() {
  "${load_pin[@]}" "$kvload" "127.0.0.1:$port" "$conns" "$secs" "$threads" | sed -E 's/ops_per_s=([0-9.]+) client_cpu_us_per_op=([0-9.]+).*/\1 \2/'
}

: > "$work/m"; : > "$work/b"
for r in $(seq "$reps"); do
  m=$(run_memaslap); echo "run $r memaslap: ops/s ${m% *}  client us/op ${m#* }"; echo "$m" >> "$work/m"
  b=$(run_bakeoff); echo "run $r bakeoff:  ops/s ${b% *}  client us/op ${b#* }"; echo "$b" >> "$work/b"
done

python3 - "$work/m" "$work/b" "${CPU_BAR:-0.5}" <<'PY'
import statistics, sys
bar = float(sys.argv[3])
def load(p):
    rows = [tuple(map(float, l.split())) for l in open(p) if l.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
m_ops, m_cpu = load(sys.argv[1]); b_ops, b_cpu = load(sys.argv[2])
print(f"median memaslap: {m_ops:,.0f} ops/s, {m_cpu:.2f} client us/op")
print(f"median bakeoff:  {b_ops:,.0f} ops/s, {b_cpu:.2f} client us/op")
ops_ratio, cpu_ratio = b_ops / m_ops, b_cpu / m_cpu
print(f"bakeoff/memaslap: ops/s x{ops_ratio:.3f}, client CPU per op x{cpu_ratio:.3f}")
ok = ops_ratio >= 1.0 and cpu_ratio <= bar
print(f"bar (ops/s >= memaslap's and CPU/op <= {bar}x memaslap's):", "PASS" if ok else "FAIL")
PY

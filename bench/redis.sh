#!/usr/bin/env bash
# bakeoff's load engine speaking RESP against redis-benchmark and the floor (a page of C,
# bench/resp-floor.c: one write and one read per batch, replies only counted), in one run,
# on one redis-server (Debian's, io-threads 1, no persistence), at the same shape: one
# client thread, 16 connections, 90% GET / 10% SET, 100-byte values, 100,000 keys,
# pipeline 1 then 16; SECONDS per run, REPS alternating repetitions of the three.
#
#   bash bench/redis.sh [SECONDS=10] [REPS=3]
#
# redis-benchmark runs one command per test and cannot mix them: it runs SET then GET with
# nine times the requests, and its mixed rate is 1 / (0.1 / SET rate + 0.9 / GET rate),
# its CPU per op both runs' CPU over both runs' requests. Client CPU: redis-benchmark's and
# the floor's whole process; bakeoff's client thread during the measured window (what
# results.json reports).
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs="${1:-10}"
reps="${2:-3}"
port=$((20000 + RANDOM % 20000))
bench_work

command -v redis-benchmark >/dev/null || { echo "redis-benchmark missing: apt-get install redis-tools" >&2; exit 2; }
kvload_build
cc -O2 -o "$work/resp-floor" "$here/bench/resp-floor.c"

/usr/bin/redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
  --io-threads 1 --logfile "$work/redis.log" &
server=$!
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
# Every key of each client's key space holds a 100-byte value before anything is measured,
# so every GET returns one: bakeoff and the floor use key:NNNNNNNNNN (kvload preloads them
# each run), redis-benchmark key:NNNNNNNNNNNN (set here, a million random SETs over 100,000
# keys: all but about 5 of them).
redis-benchmark -h 127.0.0.1 -p "$port" -c 16 -P 16 -n 1000000 -r 100000 -d 100 -t set -q >/dev/null

run_benchmark() { # PIPELINE -> "ops/s cpu_us_per_op"
  python3 - "$port" "$secs" "$1" <<'PY'
import csv, io, resource, subprocess, sys
port, secs, pipe = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
def one(test, n):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", port, "-c", "16",
                          "-P", str(pipe), "-n", str(n), "-r", "100000", "-d", "100",
                          "-t", test, "--csv"], capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = list(csv.DictReader(io.StringIO(out)))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(rows[0]["rps"]), cpu
# Sized so the pair takes about SECONDS here (about 100k/s unpipelined, 400k/s at 16).
total = int(secs * (100_000 if pipe == 1 else 400_000))
n_set, n_get = total // 10, total - total // 10
set_rps, set_cpu = one("set", n_set)
get_rps, get_cpu = one("get", n_get)
rate = 1 / (0.1 / set_rps + 0.9 / get_rps)
print(f"{rate:.1f} {(set_cpu + get_cpu) * 1e6 / (n_set + n_get):.3f}")
PY
}

run_bakeoff() { # PIPELINE
  KVLOAD_PROTOCOL=resp "$kvload" "127.0.0.1:$port" 16 "$secs" 1 "$1" \
    | sed -E 's/ops_per_s=([0-9.]+) client_cpu_us_per_op=([0-9.]+).*/\1 \2/'
}

run_floor() { # PIPELINE
  "$work/resp-floor" "$port" 16 "$1" "$secs" | sed -E 's/ops_per_s=([0-9.]+) client_cpu_us_per_op=([0-9.]+).*/\1 \2/'
}

for pipe in 1 16; do
  : > "$work/f$pipe"; : > "$work/r$pipe"; : > "$work/b$pipe"
  for r in $(seq "$reps"); do
    b=$(run_bakeoff "$pipe"); echo "pipeline $pipe run $r bakeoff:         ops/s ${b% *}  client us/op ${b#* }"; echo "$b" >> "$work/b$pipe"
    m=$(run_benchmark "$pipe"); echo "pipeline $pipe run $r redis-benchmark: ops/s ${m% *}  client us/op ${m#* }"; echo "$m" >> "$work/r$pipe"
    f=$(run_floor "$pipe"); echo "pipeline $pipe run $r floor:           ops/s ${f% *}  client us/op ${f#* }"; echo "$f" >> "$work/f$pipe"
  done
done

python3 - "$work" <<'PY'
import statistics, sys
work = sys.argv[1]
def load(p):
    rows = [tuple(map(float, l.split())) for l in open(p) if l.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
ok = True
for pipe in (1, 16):
    b_ops, b_cpu = load(f"{work}/b{pipe}")
    r_ops, r_cpu = load(f"{work}/r{pipe}")
    f_ops, f_cpu = load(f"{work}/f{pipe}")
    print(f"pipeline {pipe}: median bakeoff {b_ops:,.0f} ops/s {b_cpu:.2f} us/op; "
          f"redis-benchmark {r_ops:,.0f} ops/s {r_cpu:.2f} us/op; floor {f_ops:,.0f} ops/s {f_cpu:.2f} us/op")
    print(f"  bakeoff/redis-benchmark: ops/s x{b_ops / r_ops:.3f}, CPU/op x{b_cpu / r_cpu:.3f}; "
          f"bakeoff/floor: CPU/op x{b_cpu / f_cpu:.3f}")
    ok &= b_ops >= r_ops and b_cpu <= r_cpu and b_cpu <= 1.1 * f_cpu
print("bar (ops/s >= redis-benchmark's, CPU/op <= redis-benchmark's and <= 1.1x the floor's):",
      "PASS" if ok else "FAIL")
PY

#!/usr/bin/env bash
# The load engine and the native oltp on a big machine, against their peers in one run:
#
# 1. kv: bakeoff's engine against memaslap at 1, 2, 4 and 8 client threads (no more than
#    the load's CPUs) and 64, 256 and 1024 connections, on one memcached per cell with
#    `-t MC_THREADS` (default: as many threads as the server's CPUs, at most 8), the two
#    alternating REPS times (bench/memaslap.sh). On 8 or more CPUs memcached and the
#    clients run on disjoint halves of the machine's cores, as bakeoff's default does.
#    The bar: the engine at >= 1.0x memaslap's ops/s and <= 0.8x its client CPU per op.
# 2. oltp: bakeoff's native oltp_read_only against the real sysbench from 1 to 1024
#    connections on Debian's PostgreSQL 15, one bakeoff experiment, rounds alternating
#    (bench/oltp-vs-sysbench.sh). The bar: >= 1.0x sysbench's TPS at every count.
#
#   bash bench/scale.sh [kv|oltp|both=both] [SECONDS=10] [REPS=3]
#
# Prints one line per kv cell and the oltp table; paste them into bench/RESULTS.md.
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
what="${1:-both}"
secs="${2:-10}"
reps="${3:-3}"
cpus=$(nproc)

# The machine's halves by core, as bakeoff splits it (server first); unpinned below 8.
halves() {
  python3 - <<'PY'
import os
allowed = sorted(os.sched_getaffinity(0))
if len(allowed) < 8:
    print("", "")
    raise SystemExit
def core(c):
    try:
        base = f"/sys/devices/system/cpu/cpu{c}/topology/"
        return (int(open(base + "physical_package_id").read()), int(open(base + "core_id").read()))
    except OSError:
        return (1 << 30, c)
cores = {}
for c in allowed:
    cores.setdefault(core(c), []).append(c)
keys = sorted(cores)
half = (len(keys) + 1) // 2
fmt = lambda ks: ",".join(str(c) for k in ks for c in cores[k])
print(fmt(keys[:half]), fmt(keys[half:]))
PY
}

kv() {
  read -r server_cpus load_cpus < <(halves)
  local load_n=$cpus server_n=$cpus
  if [ -n "$server_cpus" ]; then
    load_n=$(echo "$load_cpus" | tr ',' '\n' | wc -l)
    server_n=$(echo "$server_cpus" | tr ',' '\n' | wc -l)
  fi
  local mc_threads="${MC_THREADS:-$(( server_n < 8 ? server_n : 8 ))}"
  echo "kv: $cpus CPUs; memcached -t $mc_threads on ${server_cpus:-every CPU}; clients on ${load_cpus:-every CPU}; ${secs}s windows, $reps alternating reps"
  for threads in 1 2 4 8; do
    [ "$threads" -le "$load_n" ] || [ "$threads" -eq 1 ] || continue
    for conns in 64 256 1024; do
      out=$(SERVER_CPUS="$server_cpus" LOAD_CPUS="$load_cpus" MC_THREADS="$mc_threads" CPU_BAR=0.8 \
        bash "$here/bench/memaslap.sh" "$secs" "$reps" "$threads" "$conns")
      printf 'threads %d conns %4d | %s | %s | %s\n' "$threads" "$conns" \
        "$(grep '^median memaslap' <<<"$out")" "$(grep '^median bakeoff' <<<"$out")" \
        "$(grep -E '^bakeoff/memaslap|^bar' <<<"$out" | tr '\n' ' ')"
    done
  done
}

oltp() {
  local dir
  dir="$(mktemp -d)"
  chmod 755 "$dir"
  sed -e 's/^connections = .*/connections = [1, 16, 64, 256, 1024]/' \
      -e "s/^duration = .*/duration = \"${secs}s\"/" \
      -e "s/^repetitions = .*/repetitions = $reps/" \
      "$here/bench/oltp-vs-sysbench-pg.toml" > "$dir/scale-pg.toml"
  PG_TOML="$dir/scale-pg.toml" bash "$here/bench/oltp-vs-sysbench.sh" postgres
  rm -rf "$dir"
}

case "$what" in
  kv) kv ;;
  oltp) oltp ;;
  both) kv; oltp ;;
  *) echo "usage: bash bench/scale.sh [kv|oltp|both] [SECONDS=10] [REPS=3]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# bakeoff's native OLTP against the real sysbench, in one bakeoff experiment per server:
# same sandbox, same data, same shape, runs interleaved by round (see the .toml files).
# Prints per connection count: median TPS and client CPU microseconds per transaction of
# each, and the ratios bakeoff / sysbench.
#
#   bash bench/oltp-vs-sysbench.sh [mariadb|mysql|postgres|both=both] [tcp|unix=tcp]
#
# mysql: MySQL 8.0 from its released binary (fetched once into the cache).
#
# unix: both clients reach the server through its unix socket instead of loopback TCP.
# PG_TOML names another PostgreSQL experiment of the same two workloads (bench/scale.sh).
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
which="${1:-both}"
transport="${2:-tcp}"
case "$transport" in tcp|unix) ;; *) echo "transport must be tcp or unix" >&2; exit 2 ;; esac
(cd "$here" && cargo build --release -q -p bakeoff)
bakeoff="${CARGO_TARGET_DIR:-$here/target}/release/bakeoff"
out="$(mktemp -d)"
chmod 755 "$out"
trap 'rm -rf "$out"' EXIT

bench() {
  local server="$1" file="$2"
  if [ "$transport" = unix ]; then
    sed 's/^connections = \(.*\)$/connections = \1\ntransport = "unix"/' "$file" > "$out/$server.toml"
    file="$out/$server.toml"
  fi
  "$bakeoff" run "$file" --out "$out/$server" --sandbox-dir "$out/sandboxes" --quiet >/dev/null
  python3 - "$out/$server/results.json" "$server" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
print(f"\n{sys.argv[2]}: {r['host']['cpu_model']}, {r['host']['cores']} cores")
print(f"{'conns':>5}  {'bakeoff TPS':>12}  {'sysbench TPS':>12}  {'TPS ratio':>9}  {'bakeoff us/txn':>14}  {'sysbench us/txn':>15}  {'CPU ratio':>9}")
def med(cell, key):
    v = [run[key] for run in cell["runs"] if run["valid"]]
    return statistics.median(v) if v else float("nan")
by = {(c["workload"], c["connections"]): c for c in r["cells"]}
for n in sorted({c["connections"] for c in r["cells"]}):
    b, s = by[("bakeoff", n)], by[("sysbench", n)]
    bt, st = med(b, "tps"), med(s, "tps")
    bc, sc = med(b, "client_cpu_us_per_txn"), med(s, "client_cpu_us_per_txn")
    print(f"{n:>5}  {bt:>12,.0f}  {st:>12,.0f}  {bt/st:>9.3f}  {bc:>14.1f}  {sc:>15.1f}  {bc/sc:>9.3f}   server us/txn: bakeoff {med(b, 'server_cpu_us_per_op'):.1f}, sysbench {med(s, 'server_cpu_us_per_op'):.1f}")
    for name, c in (("bakeoff", b), ("sysbench", s)):
        runs = ", ".join(f"{run['tps']:,.0f}/{run['client_cpu_us_per_txn']:.1f}" for run in c["runs"] if run["valid"])
        print(f"       {name} runs (TPS/us per txn): {runs}")
PY
}

case "$which" in
  mariadb) bench mariadb "$here/bench/oltp-vs-sysbench-mariadb.toml" ;;
  mysql) bench mysql "$here/bench/oltp-vs-sysbench-mysql.toml" ;;
  postgres) bench postgres "${PG_TOML:-$here/bench/oltp-vs-sysbench-pg.toml}" ;;
  both)
    bench mariadb "$here/bench/oltp-vs-sysbench-mariadb.toml"
    bench postgres "$here/bench/oltp-vs-sysbench-pg.toml"
    ;;
  *) echo "usage: bash bench/oltp-vs-sysbench.sh [mariadb|mysql|postgres|both]" >&2; exit 2 ;;
esac

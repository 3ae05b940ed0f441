#!/usr/bin/env bash
# What bakeoff-sqlited's statement counters (`--stmt-stats`, given at server_stats
# "basic") cost a statement, in instructions (issue 54): the host under callgrind, with
# and without the flag, serving pgbench's prepared point select N and 2N times on one
# connection; the difference between the two counts of a setting is N statements' worth
# (start-up and loading cancel out), so per statement: (I(2N) - I(N)) / N. The time
# figure of bench/server-stats-cost.sh sqlite cannot resolve a percent on this machine;
# the instruction count can.
#
#   bash bench/sqlited-stmt-stats-cost.sh [N=3000]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
n="${1:-3000}"
host="${BAKEOFF_SQLITED:-${CARGO_TARGET_DIR:-$here/target}/release/bakeoff-sqlited}"
[ -x "$host" ] || (cd "$here" && cargo build --release -q -p bakeoff-sqlited)
lib=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
port=55492
bench_work

printf 'SELECT c FROM t WHERE id = 17;\n' > "$work/q.sql"
count() { # flags... -> prints N statements' and 2N statements' instructions
  local out=()
  for t in "$n" "$((2 * n))"; do
    rm -f "$work/db" "$work/cg.out"
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
      "$host" --library "$lib" --database "$work/db" --port "$port" "$@" \
      > "$work/host.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do
      psql "host=127.0.0.1 port=$port user=x dbname=x" -qc "SELECT 1" > /dev/null 2>&1 && break
      sleep 0.2
    done
    psql "host=127.0.0.1 port=$port user=x dbname=x" -q \
      -c "CREATE TABLE t (id INTEGER PRIMARY KEY, k INT, c TEXT)" \
      -c "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 1000) INSERT INTO t SELECT x, x, 'row ' || x FROM s"
    pgbench -h 127.0.0.1 -p "$port" -U x -n -M prepared -f "$work/q.sql" -t "$t" x > "$work/pgbench.log" 2>&1
    kill -TERM "$server"
    wait "$server" 2>/dev/null || true
    server=""
    out+=("$(sed -n 's/^summary: //p' "$work/cg.out")")
  done
  echo "${out[@]}"
}
read -r off1 off2 <<<"$(count)"
read -r on1 on2 <<<"$(count --stmt-stats)"
python3 - "$n" "$off1" "$off2" "$on1" "$on2" <<'PY'
import sys
n, off1, off2, on1, on2 = (int(x) for x in sys.argv[1:])
off, on = (off2 - off1) / n, (on2 - on1) / n
print(f"instructions per prepared point select, whole host: without --stmt-stats {off:.0f}, "
      f"with {on:.0f}: {on - off:+.0f} ({on / off - 1:+.2%})")
PY

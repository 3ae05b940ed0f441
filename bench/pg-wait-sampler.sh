#!/usr/bin/env bash
# What one look of PostgreSQL's wait-event sampler costs the server (issue 54): a
# throwaway PostgreSQL 15 cluster (initdb as the unprivileged `bakeoff` user, loopback
# port 55490), pgbench's select-only load on 2 clients in the background, and pgbench
# running the sampler's own look (the query in crates/sandbox/src/postgres/waits.rs),
# prepared as the sampler prepares it (LOOK_MODE=simple: planned at every look), back
# to back on one connection for SECONDS: its mean latency is an upper bound of the
# server time a look takes (it holds the round trip too). At the sampler's 10 looks a
# second, that is the share of one core the sampler can take. Also prints the CPU the
# look's backend used per look (/proc, utime + stime), and the load's tps with and
# without the looks running beside it (one run each: indicative only).
#
#   bash bench/pg-wait-sampler.sh [SECONDS=10]   (at least 6)
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs="${1:-10}"
bin=/usr/lib/postgresql/15/bin
port=55490
bench_work
chmod 755 "$work"
chown bakeoff "$work"
as() { su bakeoff -s /bin/sh -c "$*"; }
as "$bin/initdb -D $work/data -U u --auth=trust" > "$work/initdb.log"
as "$bin/pg_ctl -D $work/data -o '-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work' -l $work/log -w start" > /dev/null
trap 'as "$bin/pg_ctl -D $work/data -m fast stop" >/dev/null 2>&1; bench_cleanup' EXIT
pg="-h 127.0.0.1 -p $port -U u"
pgbench $pg -i -s 1 postgres > "$work/init.log" 2>&1

cat > "$work/look.sql" <<'SQL'
SELECT wait_event_type, wait_event, count(*) FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type IN ('client backend', 'parallel worker') GROUP BY 1, 2;
SQL

tps() { # file -> the tps pgbench printed
  sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$1"
}

pgbench $pg -n -S -M prepared -c 2 -T "$secs" postgres > "$work/alone.log" 2>&1
pgbench $pg -n -S -M prepared -c 2 -T "$secs" postgres > "$work/beside.log" 2>&1 &
load=$!
sleep 0.2
pgbench $pg -n -M "${LOOK_MODE:-prepared}" -f "$work/look.sql" -c 1 -T "$((secs - 1))" postgres > "$work/look.log" 2>&1 &
looks=$!
# The looks' backend: the one connection running the look's query.
backend=""
for _ in $(seq 50); do
  backend=$(psql $pg -Atc "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT wait_event_type%' AND pid <> pg_backend_pid() LIMIT 1" postgres)
  [ -n "$backend" ] && break
  sleep 0.1
done
[ -n "$backend" ] || { echo "bench/pg-wait-sampler.sh: the looks' backend was not found" >&2; exit 1; }
ticks() { awk '{print $14 + $15}' "/proc/$backend/stat"; }
# Its CPU over the middle of its run (read while it lives), against the looks made in
# that span at its mean rate.
s0=$(date +%s.%N); t0=$(ticks)
sleep "$((secs - 4))"
s1=$(date +%s.%N); t1=$(ticks)
wait "$looks"
wait "$load"
n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/look.log")
lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$work/look.log")
hz=$(getconf CLK_TCK)
python3 - "$n" "$lat" "$t0" "$t1" "$hz" "$(tps "$work/alone.log")" "$(tps "$work/beside.log")" \
  "$s0" "$s1" "$secs" <<'PY'
import sys
n, lat, t0, t1, hz, alone, beside, s0, s1, secs = sys.argv[1:]
n, lat = int(n), float(lat)
span_looks = n / (int(secs) - 1) * (float(s1) - float(s0))
cpu_ms = (int(t1) - int(t0)) * 1000 / int(hz)
print(f"looks: {n}, mean latency {lat:.3f} ms under the load (2 clients of pgbench -S)")
print(f"at 10 looks a second: at most {lat * 10:.2f} ms of server time a second "
      f"({lat:.2f}% of one core)")
if span_looks > 0:
    per = cpu_ms / span_looks
    print(f"the looks' backend used {cpu_ms:.0f} ms of CPU for about {span_looks:.0f} looks "
          f"({per * 1000:.0f} us a look; {per * 10:.2f} ms a second at 10 a second, "
          f"{per * 10 / 10:.3f}% of one core)")
print(f"pgbench -S tps alone {alone}, beside looks back to back {beside} (one run each)")
PY

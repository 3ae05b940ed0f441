#!/usr/bin/env bash
# How long reading a server's settings takes (issue 51): one experiment per installed
# server with VARIANTS variants of the same binary, one round of a 1 s load; each
# variant's first valid run records `variants[].settings_read_ms` (a fresh connection,
# the login where there is one, the whole answer read and masked). Prints per server the
# count of settings and the min / median / max of those reads. The read happens after
# the server is ready and before the load's warmup, outside the measured window.
#
#   bash bench/settings-read.sh [VARIANTS=5]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
variants="${1:-5}"
bench_bakeoff
bench_work
chmod 755 "$work"

KV='[[workload]]
kind = "kv"
name = "kv"
connections = [2]
keys = 200'
OLTP='[[workload]]
kind = "oltp"
name = "ps"
test = "oltp_point_select"
tables = 1
table_size = 200
connections = [2]'
SUITE='[[workload]]
kind = "sqlsuite"
scale = 0.01
groups = ["select"]'

experiment() { # kind binary workload
  printf 'name = "settings-%s"\n[target]\nkind = "%s"\n' "$1" "$1"
  for i in $(seq "$variants"); do
    printf '[[variant]]\nname = "v%d"\nbinary = "%s"\n' "$i" "$2"
  done
  printf '%s\n[plan]\nrepetitions = 1\nwarmup = "0s"\nduration = "1s"\n' "$3"
}

printf '%-10s %9s %8s %8s %8s\n' server settings min_ms med_ms max_ms
for spec in "memcached /usr/bin/memcached KV" \
            "redis /usr/bin/redis-server KV" \
            "sqlite /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 SUITE" \
            "mariadb /usr/sbin/mariadbd OLTP" \
            "postgres /usr/lib/postgresql/15/bin/postgres OLTP"; do
  read -r kind binary load <<<"$spec"
  experiment "$kind" "$binary" "${!load}" > "$work/$kind.toml"
  out="$work/out-$kind"
  "$bakeoff" run "$work/$kind.toml" --out "$out" --sandbox-dir "$work/sb" --quiet \
    --no-history > "$work/$kind.log" 2>&1 || { cat "$work/$kind.log"; exit 1; }
  python3 - "$out/results.json" "$kind" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
ms = sorted(v["settings_read_ms"] for v in r["variants"] if "settings_read_ms" in v)
n = max(len(v.get("settings", {})) for v in r["variants"])
print(f"{sys.argv[2]:<10} {n:9d} {ms[0]:8.1f} {statistics.median(ms):8.1f} {ms[-1]:8.1f}")
PY
done

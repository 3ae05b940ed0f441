#!/usr/bin/env bash
# What hosting SQLite in bakeoff-sqlited costs per statement: the same N primary-key
# lookups (a) in process, through Debian's sqlite3 shell on libsqlite3.so.0, and (b) sent
# by bakeoff's replay (one connection) to bakeoff-sqlited hosting the same library, then
# (c) the same replay against PostgreSQL 15 for scale. ROUNDS alternating rounds each.
#
#   bash bench/sqlite-host.sh [N=20000] [ROUNDS=3]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
n="${1:-20000}"; rounds="${2:-3}"
bakeoff="${BAKEOFF:-$here/target/release/bakeoff}"
[ -x "$bakeoff" ] || (cd "$here" && cargo build --release -q -p bakeoff)
work=$(mktemp -d); chmod 755 "$work"; trap 'rm -rf "$work"' EXIT
cp "$here/examples/shop/setup.sql" "$work/setup.sql"
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "SELECT name, price FROM item WHERE id = %d;\n", i % 6 + 1 }' > "$work/lookups.sql"
sqlite3 "$work/shell.db" < "$work/setup.sql"
experiment() { # kind binary
  cat <<TOML
name = "host-$1"
[target]
kind = "$1"
[[variant]]
name = "v"
binary = "$2"
[[workload]]
kind = "replay"
name = "lookups"
file = "lookups.sql"
setup = "setup.sql"
concurrency = 1
[verify]
enabled = false
[plan]
repetitions = 1
warmup = "0s"
TOML
}
experiment sqlite /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 > "$work/sqlite.toml"
experiment postgres /usr/lib/postgresql/15/bin/postgres > "$work/postgres.toml"
us_per() { python3 -c "import sys; a, b, n = map(float, sys.argv[1:]); print(f'{(b - a) * 1e6 / n:.1f}')" "$@"; }
replay_us() { # kind
  rm -rf "$work/out-$1"
  "$bakeoff" run "$work/$1.toml" --out "$work/out-$1" --quiet >/dev/null
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(f\"{1e6 / r['cells'][0]['runs'][0]['ops_per_s']:.1f}\")" "$work/out-$1/results.json"
}
printf 'round  shell us/stmt  sqlited us/stmt  postgres us/stmt\n'
for r in $(seq 1 "$rounds"); do
  t0=$(date +%s.%N); sqlite3 "$work/shell.db" < "$work/lookups.sql" > /dev/null; t1=$(date +%s.%N)
  shell=$(us_per "$t0" "$t1" "$n")
  printf '%5d  %13s  %15s  %16s\n' "$r" "$shell" "$(replay_us sqlite)" "$(replay_us postgres)"
done

# Sourced first by the bench scripts for the prologue they share: strict mode, $here
# (the repository root), a work folder removed on exit, the kvload example.

set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# bench_work: a fresh folder in $work, removed on exit, after the server whose pid a
# script puts in $server (if any) is killed and reaped; Ctrl-C and TERM exit 130.
# The release bakeoff these scripts measure ($BAKEOFF, else the one cargo builds here,
# built first where it is missing), in $bakeoff.
bench_bakeoff() {
  bakeoff="${BAKEOFF:-${CARGO_TARGET_DIR:-$here/target}/release/bakeoff}"
  [ -x "$bakeoff" ] || (cd "$here" && cargo build --release -q -p bakeoff)
}

bench_work() {
  work="$(mktemp -d)"
  server=""
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}

# kvload_build: builds bakeoff's load engine alone (the kvload example, release) and
# puts its path in $kvload.
kvload_build() {
  (cd "$here" && cargo build --release -q -p bakeoff-workloads --example kvload)
  kvload="${CARGO_TARGET_DIR:-$here/target}/release/examples/kvload"
}

# The server and load the server-statistics cost scripts measure (server-stats-cost.sh,
# server-stats-ab.sh): sets kind, binary, args and load for "$1" (memcached: kv on 4
# connections; postgres, mariadb: oltp_point_select over 10,000 rows on 2 connections;
# sqlite: a replay of point selects, its files written into $work). Returns 1 for another.
stats_server() {
  local oltp='[[workload]]
kind = "oltp"
name = "ps"
test = "oltp_point_select"
tables = 1
table_size = 10000
connections = [2]'
  args=''
  case "$1" in
    memcached) kind=memcached; binary=/usr/bin/memcached; args='args = ["-t", "1"]'
      load='[[workload]]
kind = "kv"
name = "kv"
connections = [4]
keys = 1000' ;;
    postgres) kind=postgres; binary=/usr/lib/postgresql/15/bin/postgres; load=$oltp ;;
    mariadb) kind=mariadb; binary=/usr/sbin/mariadbd; load=$oltp ;;
    sqlite) kind=sqlite; binary=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
      load='[[workload]]
kind = "replay"
name = "ps"
file = "queries.sql"
setup = "setup.sql"
concurrency = [1]
iterations = 3000' ;;
    *) return 1 ;;
  esac
}

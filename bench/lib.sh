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

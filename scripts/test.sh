#!/usr/bin/env bash
# Runs every check CI runs: format, lints, then all tests (unit, CLI, and integration
# tests against real memcached, MariaDB, PostgreSQL, SQLite and Redis servers, sysbench and
# redis-benchmark, which the tests start and stop themselves).
# Fails if any server process this run started outlives the tests (marked by an environment
# variable every process the tests start inherits; other programs' servers are not counted).
#
# --fast: format, lints, and only the tests that build and start no server: every
# crate's unit tests (--lib --bins: parsers, statistics, insta snapshots, the bisect
# search, the runner's module graph...) except the unit-test modules named in
# server_units, plus the integration-test files named in fast_targets (CLI tests that
# only parse and validate, and the like). About 20 s with a warm build here; CI runs the
# full suite (no flag).
set -euo pipefail
fast=0
case "${1:-}" in
  --fast) fast=1 ;;
  "") ;;
  *) echo "usage: bash scripts/test.sh [--fast]" >&2; exit 2 ;;
esac
# Integration-test files (crate:file under crates/<crate>/tests/) that start no server
# and build nothing: the fast tier runs them. A new such file joins this list.
fast_targets=(bakeoff:cli bakeoff:site bakeoff:bundle bakeoff:kinds_results bakeoff:tune_input bakeoff:variant_kinds_input bakeoff:hostile_folders bakeoff:hostile_archives bakeoff:hostile_writers bakeoff:report_hostile runner:module_graph probe:sampler store:kill workloads:plan)
# Unit-test modules that start a real server: the fast tier skips them (cargo's --skip
# matches the test's path).
server_units=(kv::tests::)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
names=(memcached mariadbd mysqld postgres sysbench bakeoff-sqlited redis-server valkey-server redis-benchmark)
# This run's mark, inherited by every process the tests start (bakeoff passes its
# environment on to the servers it starts): a server left behind carries it, while the
# servers of other programs running beside the suite (another checkout's tests, a user's
# bakeoff) do not, so they are never counted as this run's.
export BAKEOFF_TEST_RUN="$$-$(date +%s%N)"
# The pids of this run's live servers, one per line.
ours() {
  for p in "${names[@]}"; do
    for pid in $(pgrep -x "$p" || true); do
      if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "BAKEOFF_TEST_RUN=$BAKEOFF_TEST_RUN"; then
        echo "$pid"
      fi
    done
  done
}
start=$(date +%s)

cargo fmt --all --check
# Lints. The full run lints inside its test build: clippy-driver is rustc plus clippy's
# lints, so `cargo test` under it (with clippy's -D warnings) compiles every target
# `clippy --all-targets` checks (lib, bins, tests, examples; there are no benches) once
# instead of twice, with the same lints and the same failure. Where clippy-driver is not
# found, and in the fast tier (which builds only some targets), clippy runs on its own.
driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)
lint_env=()
if [ "$fast" -eq 0 ] && [ -n "$driver" ]; then
  lint_env=(RUSTC_WORKSPACE_WRAPPER="$driver" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__")
else
  cargo clippy --workspace --all-targets --locked -q -- -D warnings
fi
log=$(mktemp)
set +e
if [ "$fast" -eq 1 ]; then
  targets=()
  for t in "${fast_targets[@]}"; do
    crate=${t%%:*}
    [ "$crate" = bakeoff ] || crate="bakeoff-$crate"
    targets+=(-p "$crate" --test "${t#*:}")
  done
  skips=()
  for u in "${server_units[@]}"; do skips+=(--skip "$u"); done
  {
    cargo test --workspace --locked --no-fail-fast --lib --bins -- "${skips[@]}" 2>&1
    s1=$?
    cargo test --locked --no-fail-fast "${targets[@]}" 2>&1
    s2=$?
    [ "$s1" -eq 0 ] && [ "$s2" -eq 0 ]
  } | tee "$log" | grep -E '^(test result|running|error)'
else
  env "${lint_env[@]}" cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$log" | grep -E '^(test result|running|error)'
fi
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "--- failures ---" >&2
  sed -n '/^failures:/,/^test result/p' "$log" >&2
  grep -E '^error' -A12 "$log" >&2 || true
fi

left=$(ours)
if [ -n "$left" ]; then
  echo "FAIL: $(echo "$left" | wc -l) server process(es) of this run outlived the tests:" >&2
  for pid in $left; do ps -o pid=,args= -p "$pid" >&2 || true; done
  exit 1
fi
passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
echo "tests took $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
exit "$status"

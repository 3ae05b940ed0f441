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
# The tests' scratch folders (sandboxes, SQL data directories, results) go to a tmpfs
# where it has room, as TMPDIR of the test binaries: on this machine's disk a SQL server's
# fsync per commit made the SQL tests mostly wait (MySQL 5.5 and 8.0 verified and run
# short: 113 s with its sandboxes on disk, 70 s on /dev/shm). The test cache (fetched and
# built servers) stays in target/tmp. Mode 1777 like /tmp, since the SQL servers run as
# their own user when the suite runs as root. BAKEOFF_TEST_TMP=disk keeps TMPDIR as it is.
test_tmp=
if [ "${BAKEOFF_TEST_TMP:-}" != disk ] \
    && shm_kb=$(df -k --output=avail /dev/shm 2>/dev/null | tail -1) \
    && [ "${shm_kb:-0}" -ge $((8 * 1024 * 1024)) ]; then
  test_tmp=$(mktemp -d /dev/shm/bk.XXXXXX)
  chmod 1777 "$test_tmp"
  trap 'rm -rf "$test_tmp"' EXIT
fi
in_test_tmp() {
  if [ -n "$test_tmp" ]; then TMPDIR="$test_tmp" "$@"; else "$@"; fi
}

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
# The full run: builds every test binary once (under the lints), runs the few in `solo`
# alone, then the rest two at a time ("lanes"), the slowest first, each from its crate's
# folder as cargo runs it.
# Most of a server test is waiting (sandbox starts, data loads, fixed measured windows),
# so two binaries side by side take about half the time of one after the other; every
# test must hold on a loaded machine anyway. Each binary's output is printed whole when it
# ends. BAKEOFF_TEST_LANES=1 runs them one after the other.
lanes=${BAKEOFF_TEST_LANES:-2}
[ "$(nproc)" -ge 2 ] || lanes=1
# Binaries by their time in CI, slowest first (crate folder/binary name); the rest follow.
slow_first=(bakeoff/examples bakeoff/hosts bakeoff/redis bakeoff/tune bakeoff/sql
  bakeoff/sqlite bakeoff/pgo bakeoff/mysql bakeoff/bisect bakeoff/variant_kinds bakeoff/dist
  bakeoff/hostile_runs bakeoff/tpcc bakeoff/sqlbench bakeoff/probes bakeoff/replay)
# Binaries that assert a verdict or a cost on real runs, run alone before the lanes
# start: beside another lane their runs would mostly be machine-busy (another test's
# servers and loads are other processes to them), an answer those tests accept but which
# checks nothing.
solo=(bakeoff/precision bakeoff/both bakeoff/aa bakeoff/noise sandbox/lean_client
  bakeoff/capacity)
# run_lanes BUILD-ARGS... [-- TEST-ARGS...]: builds the test binaries cargo's arguments
# select, runs them in lanes with TEST-ARGS each, then (in the full run) the doc tests.
run_lanes() {
  local built out dir name key rc=0 exe manifest
  local -a build=() args=()
  while [ "$#" -gt 0 ] && [ "$1" != -- ]; do build+=("$1"); shift; done
  [ "$#" -eq 0 ] || { shift; args=("$@"); }
  built=$(mktemp); out=$(mktemp -d)
  if ! env "${lint_env[@]}" cargo test "${build[@]}" --locked --no-run \
      --message-format=json-render-diagnostics >"$built"; then
    rm -rf "$built" "$out"; return 101
  fi
  # One line per test binary: "crate-folder/name<TAB>executable<TAB>crate-folder".
  local -a all=()
  while IFS= read -r line; do
    case "$line" in *'"reason":"compiler-artifact"'*'"profile":{'*'"test":true}'*) ;; *) continue ;; esac
    exe=$(sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' <<<"$line")
    manifest=$(sed -n 's/.*"manifest_path":"\([^"]*\)".*/\1/p' <<<"$line")
    [ -n "$exe" ] && [ -n "$manifest" ] || continue
    dir=$(dirname "$manifest")
    name=$(basename "$exe"); name=${name%-*}
    all+=("$(basename "$dir")/$name"$'\t'"$exe"$'\t'"$dir")
  done <"$built"
  local -a order=()
  for key in "${solo[@]}" "${slow_first[@]}"; do
    for e in "${all[@]}"; do [ "${e%%$'\t'*}" = "$key" ] && order+=("$e"); done
  done
  for e in "${all[@]}"; do
    key=${e%%$'\t'*}
    [[ " ${solo[*]} ${slow_first[*]} " == *" $key "* ]] || order+=("$e")
  done
  local i=0
  local alone
  for e in "${order[@]}"; do
    i=$((i + 1))
    IFS=$'\t' read -r key exe dir <<<"$e"
    alone=0
    [[ " ${solo[*]} " == *" $key "* ]] && alone=1
    if [ "$alone" -eq 1 ]; then
      wait
    else
      while [ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do wait -n; done
    fi
    (
      started=$(date +%s)
      (cd "$dir" && in_test_tmp "$exe" "${args[@]}") >"$out/$i.log" 2>&1
      code=$?
      # The CPU the binary and what it waited for (bakeoff, servers, builds) used: on 2
      # cores the suite is CPU-bound, so this, not the seconds, says what a test costs.
      # (`times` itself, not in a pipe: a forked shell has no children's times.)
      times >"$out/$i.times"
      cpu=$(tail -1 "$out/$i.times" | awk '{ n = 0; for (i = 1; i <= 2; i++) {
        split($i, t, "m"); sub("s", "", t[2]); n += t[1] * 60 + t[2] }; printf "%.0f", n }')
      # One binary's output at a time, whole.
      {
        flock 9
        echo "     Running $key ($(( $(date +%s) - started )) s, $cpu s of CPU)"
        cat "$out/$i.log"
      } 9>"$out/print.lock"
      echo "$code" >"$out/$i.rc"
    ) &
    [ "$alone" -eq 0 ] || wait
  done
  wait
  for f in "$out"/*.rc; do [ "$(cat "$f")" -eq 0 ] || rc=101; done
  # Doc tests (a few), after the binaries; the fast tier has none.
  if [ "$fast" -eq 0 ]; then
    in_test_tmp env "${lint_env[@]}" cargo test --workspace --locked --doc 2>&1 || rc=101
  fi
  rm -rf "$built" "$out"
  return "$rc"
}
log=$(mktemp)
set +e
if [ "$fast" -eq 1 ]; then
  # Each file by its name (cargo builds it in whichever crate has it; the names differ).
  targets=()
  for t in "${fast_targets[@]}"; do targets+=(--test "${t#*:}"); done
  skips=()
  for u in "${server_units[@]}"; do skips+=(--skip "$u"); done
  # Every crate's unit tests and the fast files, in lanes like the full run.
  run_lanes --workspace --lib --bins "${targets[@]}" -- "${skips[@]}" 2>&1 | tee "$log" \
    | grep -E '^(test result|running|error|     Running)'
else
  run_lanes --workspace 2>&1 | tee "$log" | grep -E '^(test result|running|error|     Running)'
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

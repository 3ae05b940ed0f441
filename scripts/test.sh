#!/usr/bin/env bash
# Runs every check CI runs: format, lints, then all tests (unit, CLI, and integration
# tests against real memcached, MariaDB, PostgreSQL, SQLite and Redis servers, sysbench and
# redis-benchmark, which the tests start and stop themselves).
# Fails if any server process outlives the tests.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
names=(memcached mariadbd postgres sysbench bakeoff-sqlited redis-server redis-benchmark)
servers() { local n=0; for p in "${names[@]}"; do n=$((n + $(pgrep -c -x "$p" || true))); done; echo "$n"; }
before=$(servers)
start=$(date +%s)

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -q -- -D warnings
log=$(mktemp)
set +e
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$log" | grep -E '^(test result|running|error)'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "--- failures ---" >&2
  sed -n '/^failures:/,/^test result/p' "$log" >&2
  grep -E '^error' -A12 "$log" >&2 || true
fi

after=$(servers)
if [ "$after" -gt "$before" ]; then
  echo "FAIL: $((after - before)) server process(es) outlived the tests:" >&2
  for p in "${names[@]}"; do pgrep -a -x "$p" >&2 || true; done
  exit 1
fi
passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
echo "tests took $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
exit "$status"

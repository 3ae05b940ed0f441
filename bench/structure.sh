#!/usr/bin/env bash
# Structure figures of the tree (issue 52): the `duplicates` pair count (the tool
# library's command, six or more shared lines), functions over 100 lines (all, and
# outside tests: tests/ folders, tests*.rs and examples/), and the fast tier's wall time.
# Usage: bash bench/structure.sh [--fast-tier]
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v duplicates >/dev/null; then
  duplicates --seconds 120 | head -1
fi
python3 bench/long-functions.py crates | tail -1
echo "outside tests: $(python3 bench/long-functions.py crates | grep -v '/tests/\|/tests_\|tests\.rs\|/examples/' | grep -c crates) functions over 100"
if [ "${1:-}" = "--fast-tier" ]; then
  start=$(date +%s)
  bash scripts/test.sh --fast >/tmp/fast-tier.log 2>&1 && rc=0 || rc=$?
  echo "fast tier: rc $rc in $(( $(date +%s) - start )) s (log /tmp/fast-tier.log)"
fi

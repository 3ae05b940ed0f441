#!/usr/bin/env bash
# Layouts against one build per variant: examples/memcached-layouts.toml run with
# layouts = 1 and with layouts = 4, same budget, one after the other; prints each run's
# verdicts and the Code layouts table (spread between layouts against spread between
# runs of one binary). Usage: bash bench/layouts.sh [BUDGET]   (default 6m)
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
budget="${1:-6m}"
bin="${BAKEOFF:-$here/target/release/bakeoff}"
out="$(mktemp -d)"
for k in 1 4; do
  "$bin" run "$here/examples/memcached-layouts.toml" --no-history \
    --set plan.budget="$budget" --set plan.layouts="$k" --out "$out/layouts-$k" \
    > "$out/layouts-$k.txt" 2>&1
  echo "== layouts = $k"
  sed -n '/^workload /,/^results:/p' "$out/layouts-$k.txt"
  sed -n '/^## Code layouts/,/^Each build variant/p' "$out/layouts-$k/report.md"
done
echo "results: $out"

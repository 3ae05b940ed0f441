#!/usr/bin/env bash
# How long `bakeoff site` takes over a large history (issue 56): a synthetic store of N
# experiments (crates/store/examples/synthetic_history.rs: N small results folders with a
# report.html each, over NAMES experiment names, one cell pair each, the figure shifting
# halfway through every name's history), then `bakeoff site` into a new folder, a second
# call with nothing new, and a third after one new experiment. Release builds; prints the
# wall time of each call and what it wrote. The figures are made up; only the times count.
#
#   bash bench/site.sh [N=10000] [NAMES=100]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
n="${1:-10000}"
names="${2:-100}"
(cd "$here" && cargo build --release -q -p bakeoff && cargo build --release -q -p bakeoff-store --example synthetic_history)
rel="${CARGO_TARGET_DIR:-$here/target}/release"
bench_work

timed() {
  local start end
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  echo "  wall: $(echo "$end - $start" | bc) s"
}

echo "synthetic history: $n experiments over $names names"
timed "$rel/examples/synthetic_history" "$n" "$work/h.sqlite" "$work/results" "$names"
echo "bakeoff site (new folder):"
timed "$rel/bakeoff" site "$work/site" --store "$work/h.sqlite"
echo "bakeoff site again (nothing new):"
timed "$rel/bakeoff" site "$work/site" --store "$work/h.sqlite"
"$rel/examples/synthetic_history" 1 "$work/h.sqlite" "$work/results" "$names" "$n"
echo "bakeoff site after one new experiment:"
timed "$rel/bakeoff" site "$work/site" --store "$work/h.sqlite"
du -sh "$work/site" | sed 's/^/  site size: /'

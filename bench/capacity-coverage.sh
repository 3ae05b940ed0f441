#!/usr/bin/env bash
# Capacity comparisons in paired rounds (issue 52): are they decided within their budget,
# and honest against themselves?
#
# 1. The scripted study (no server): 500 seeds of an identical build and 500 of a build
#    with 30% less capacity on a simulated loaded machine, 240 s budgets; prints how many
#    intervals hold the truth, how many are decided, and the seconds spent
#    (runner/src/capacity_figures.rs, paired_rounds_cover_decide_and_keep_the_budget).
# 2. Real memcached built three ways (base, an identical `same`, `work` with ITERS
#    additions per command), kv at 16 connections, p99 <= LIMIT, a BUDGET: each variant's
#    capacity, each comparison's ratio, interval and verdict, the rounds run of those
#    planned, and the seconds the stage took against the budget. Once per SEED.
#
#   bash bench/capacity-coverage.sh [BUDGET=240s] [ITERS=4000] [LIMIT=2ms] [SEEDS="5 6"]
#
# BAKEOFF names the binary (default: bakeoff on PATH); every figure is from the runs.
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
budget="${1:-240s}"
iters="${2:-4000}"
limit="${3:-2ms}"
seeds="${4:-5 6}"
bench_work
bakeoff="${BAKEOFF:-bakeoff}"

echo "== scripted: 500 + 500 studies, 240 s budgets"
(cd "$here" && cargo test -q -p bakeoff-runner --lib capacity_figures::coverage -- --nocapture 2>&1) \
  | grep -E '^A/A' || { echo "the scripted study failed"; exit 1; }

# shellcheck source=bench/three-builds.sh
. "$here/bench/three-builds.sh"
work_patch "$iters" > "$work/work.patch"

for seed in $seeds; do
  echo "== real: memcached x3, kv p99 <= $limit, budget $budget, work = $iters additions, seed $seed"
  three_builds capacity-coverage $'seed = '"$seed"$'\nbudget = "'"$budget"$'"\nprecision = 0.05\nwarmup = "100ms"\nduration = "250ms"' \
    | sed 's/^mix = { get = 90, set = 10 }$/mix = { get = 90, set = 10 }\nslo = { percentile = 99, limit = "'"$limit"'" }/' \
    > "$work/c$seed.toml"
  grep -q '^slo' "$work/c$seed.toml" || { echo "no slo line"; exit 1; }
  start=$(date +%s.%N)
  "$bakeoff" run "$work/c$seed.toml" --out "$work/c$seed" >/dev/null 2>"$work/c$seed.log" \
    || { tail "$work/c$seed.log"; exit 1; }
  end=$(date +%s.%N)
  grep -E '^capacity of' "$work/c$seed.log" | tail -1 || true
  python3 - "$work/c$seed/results.json" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
for c in r["cells"]:
    k = c.get("capacity") or {}
    caps = [s["capacity"] for s in k.get("searches", []) if s.get("capacity")]
    trials = k.get("trials", [])
    print(f"{c['variant']:5s} capacity {k.get('ops_per_s', 0):9.0f} CI [{k['ci'][0]:.0f}, {k['ci'][1]:.0f}] "
          f"peak {k.get('peak_ops_per_s') or 0:.0f} rounds {len(caps)} trials {len(trials)} "
          f"(client-bound {sum(1 for t in trials if t.get('client_bound'))}, "
          f"machine-busy {sum(1 for t in trials if t.get('machine_busy'))})"
          + (" CLIENT-BOUND" if k.get("client_bound") else "")
          + (" MACHINE-BUSY" if k.get("machine_busy") else ""))
for k in r["comparisons"]:
    lo, hi = k["ci"]
    print(f"{k['variant']:5s} against {k['baseline']}: ratio {k['ratio']:.3f} CI [{lo:.3f}, {hi:.3f}] "
          f"{k['verdict']} ({k['rounds']} rounds, p {k['p_value']:.4f})")
print(f"stage: {r.get('rounds_s', 0):.0f} s of a {r['plan'].get('budget_s') or 0:.0f} s budget "
      f"(stopped by {r.get('stopped_by')}); bakeoff run wall {wall:.0f} s with builds and checks")
PY
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
done

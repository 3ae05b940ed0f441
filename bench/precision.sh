#!/usr/bin/env bash
# How decisive is a comparison on this machine, by design? memcached built from Debian's
# source three times: "base", "same" (identical) and "work" (a patch adding a fixed loop of
# work per command, ITERS iterations: 80 is about -5% ops/s here). One experiment per design:
#
#   A  the old default: 5 repetitions x (2 s warmup + 10 s), unpaired
#   B  short runs within a budget: 0.5 s warmup + 2 s, rounds until +-1% or BUDGET; analyzed
#      paired (the default) and re-decided unpaired from the same runs
#
# Prints each design's verdicts, CIs, rounds and wall time; every figure is from the run.
#
#   bash bench/precision.sh [BUDGET=5m] [ITERS=80] [SEED=7]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
budget="${1:-5m}"
iters="${2:-80}"
seed="${3:-7}"
bench_work
bakeoff="${BAKEOFF:-bakeoff}"

# shellcheck source=bench/three-builds.sh
. "$here/bench/three-builds.sh"
work_patch "$iters" > "$work/work.patch"

summary() { # results folder, label
  python3 - "$1/results.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
label = sys.argv[2]
for k in r["comparisons"]:
    lo, hi = k["ci"]
    print(f"{label:28s} {k['variant']:5s} ratio {k['ratio']:.3f} CI [{lo:.3f}, {hi:.3f}] "
          f"(+-{(hi - lo) / 2 * 100:.1f}%) {k['verdict']:12s} rounds {k['rounds']:3d} "
          f"{'paired' if k['paired'] else 'unpaired'} p_adj {k['p_adjusted']:.4f} "
          f"spread {k.get('round_spread') or 0:.3f} | stopped by {r.get('stopped_by')} after {r.get('rounds_s', 0):.0f} s")
walls = sorted(x["wall_s"] for c in r["cells"] for x in c["runs"] if x.get("wall_s"))
cvs = " ".join(f"{c['variant']} {c['cv'] * 100:.1f}%" for c in r["cells"])
if walls:
    window = r["plan"]["warmup_s"] + (r["plan"].get("duration_s") or 0)
    med = walls[len(walls) // 2]
    print(f"{label:28s} run wall time median {med:.2f} s (window {window:.1f} s: {med - window:.2f} s beyond it); run-to-run CV {cvs}")
PY
}

echo "design A: 5 x (2 s + 10 s), unpaired"
three_builds precision-a $'seed = '"$seed"$'\nrepetitions = 5\nwarmup = "2s"\nduration = "10s"\npairing = "unpaired"' > "$work/a.toml"
"$bakeoff" run "$work/a.toml" --out "$work/a" >/dev/null 2>"$work/a.log" || { tail "$work/a.log"; exit 1; }
summary "$work/a" "A 5x10s unpaired"

echo "design B: budget $budget, 0.5 s + 2 s runs"
three_builds precision-b $'seed = '"$seed"$'\nbudget = "'"$budget"$'"\nwarmup = "500ms"\nduration = "2s"' > "$work/b.toml"
"$bakeoff" run "$work/b.toml" --out "$work/b" >/dev/null 2>"$work/b.log" || { tail "$work/b.log"; exit 1; }
summary "$work/b" "B short runs, paired"
"$bakeoff" report "$work/b" --pairing unpaired | grep -E '^kv' | sed 's/^/B same runs, unpaired: /'

# Time to decide: the same runs cut after k rounds, re-decided by bakeoff itself.
rounds=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["plan"]["rounds"]))' "$work/b/results.json")
for k in $(seq 6 3 "$rounds"); do
  mkdir -p "$work/b$k"
  python3 - "$work/b/results.json" "$work/b$k/results.json" "$k" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); k = int(sys.argv[3])
for c in r["cells"]:
    c["runs"] = [x for x in c["runs"] if x["round"] < k]
r["plan"]["rounds"] = r["plan"]["rounds"][:k]
json.dump(r, open(sys.argv[2], "w"))
PY
  verdicts=$("$bakeoff" report "$work/b$k" --pairing auto | grep -E '^kv ' | grep -v baseline \
    | while read -r line; do
        variant=$(echo "$line" | awk '{print $3}')
        echo -n "$variant $(echo "$line" | grep -oE '(faster|slower|equivalent|inconclusive) [^ ]+'); "
      done)
  echo "B after $k rounds (~$((k * 9)) s): $verdicts"
done

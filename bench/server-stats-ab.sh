#!/usr/bin/env bash
# What reading the servers' own statistics costs, as one paired A/B (issue 54): one
# experiment, two variants of the same installed binary that differ only in their own
# `server_stats` (default "off" against "basic"; LEVELS="basic full" for what "full"
# costs), run in bakeoff's alternating rounds of short runs until every comparison's
# interval reaches PRECISION or BUDGET is spent. bakeoff gives the verdict: `equivalent`
# when the whole 95% interval of the paired ratio lies within 1 +- PRECISION.
# Prints the load average before and after, each level's median throughput with its
# machine-busy and client-bound runs, the ratio with its interval, bakeoff's verdict
# (machine-busy where other processes disturbed more than a quarter of a side's runs),
# whether the interval lies inside 1 +- PRECISION, and what stopped the experiment.
#
# KEEP=folder keeps the results folder there.
#
#   BAKEOFF=path/to/bakeoff bash bench/server-stats-ab.sh memcached|postgres|mariadb [BUDGET=8m] [PRECISION=0.05] [EQUIVALENCE=PRECISION]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
which="${1:?memcached, postgres or mariadb}"
budget="${2:-8m}"
precision="${3:-0.05}"
# The equivalence margin (default: the precision): a narrower precision than margin buys
# the rounds that put the interval inside the margin.
equivalence="${4:-$precision}"
read -r a b <<<"${LEVELS:-off basic}"
case "$which" in
  memcached | postgres | mariadb) stats_server "$which" ;;
  *) echo "bench/server-stats-ab.sh: unknown server '$which': use memcached, postgres or mariadb" >&2; exit 2 ;;
esac
bench_bakeoff
bench_work
chmod 755 "$work"

{
  printf 'name = "stats-ab-%s"\n[target]\nkind = "%s"\n' "$which" "$kind"
  for level in "$a" "$b"; do
    printf '[[variant]]\nname = "%s"\nbinary = "%s"\n%s\nserver_stats = "%s"\n' \
      "$level" "$binary" "$args" "$level"
  done
  printf '%s\n[plan]\nbaseline = "%s"\nbudget = "%s"\nprecision = %s\nequivalence = %s\n' \
    "$load" "$a" "$budget" "$precision" "$equivalence"
  printf 'warmup = "500ms"\nduration = "1s"\n'
} > "$work/e.toml"

echo "$which: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
started=$(date +%s)
"$bakeoff" run "$work/e.toml" --out "$work/out" --sandbox-dir "$work/sb" \
  --quiet --no-history > "$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
echo "$which: load average after:  $(cut -d' ' -f1-3 /proc/loadavg) ($(( $(date +%s) - started )) s)"
[ -n "${KEEP:-}" ] && cp -r "$work/out" "$KEEP"
python3 - "$work/out/results.json" "$which" "$a" "$b" "$equivalence" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
server, a, b = sys.argv[2:5]
prec = float(sys.argv[5])
for c in r["cells"]:
    ops = [x["ops_per_s"] for x in c["runs"] if x["valid"]]
    print(f"{server} {c['variant']:<6} valid runs {len(ops):3d}  median {statistics.median(ops):10.0f} ops/s  "
          f"range {min(ops):.0f}-{max(ops):.0f}  machine-busy runs {c.get('machine_busy_runs', 0)}  "
          f"client-bound runs {c.get('client_bound_runs', 0)}")
for k in r["comparisons"]:
    if k.get("aa") or k["variant"] == k["baseline"]:
        continue
    lo, hi = k["ci95"]
    print(f"{server} {k['variant']}/{k['baseline']} throughput {k['ratio']:.4f} [{lo:.4f}, {hi:.4f}] "
          f"({'paired' if k['paired'] else 'unpaired'}, {k['rounds']} rounds): {k['verdict']}")
    inside = 1 - prec <= lo and hi <= 1 + prec
    print(f"{server} interval inside 1 +- {prec}: {'yes' if inside else 'no'}")
print(f"{server} stopped by: {r.get('stopped_by')}")
PY

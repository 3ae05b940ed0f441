#!/usr/bin/env bash
# What reading the servers' own statistics costs (issue 54): an A/B of `[plan]
# server_stats` on one server, PAIRS alternating pairs of experiments (off then
# basic, basic then off, ...), each ROUNDS runs of a short load on the installed binary.
# Prints per level the runs' median throughput and wall time per run, and the ratio
# basic/off of medians with a 95% bootstrap interval over the runs (unpaired: the
# levels are plan keys, so each experiment holds one). "full" is measured the same way
# against "basic" with LEVELS="basic full". MODE=instructions counts the server's
# instructions per operation under callgrind instead (`mode = "instructions"`, 3000
# operations a run): a low-noise check that nothing is read inside the window.
# The level "nosampler" is "basic" with BAKEOFF_NO_SAMPLING set: LEVELS="nosampler basic"
# on postgres measures what the wait-event sampler alone costs. On sqlite (a replay of
# point selects through bakeoff-sqlited; its ops/s is fixed work over the time it took)
# LEVELS="basic full" measures the host's statement counters (--stmt-stats, at "full").
# For the levels as variants of one experiment (paired rounds, bakeoff's own verdict),
# see bench/server-stats-ab.sh.
#
#   BAKEOFF=path/to/bakeoff bash bench/server-stats-cost.sh memcached|postgres|mariadb|sqlite [PAIRS=3] [ROUNDS=4]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
which="${1:?memcached, postgres, mariadb or sqlite}"
pairs="${2:-3}"
rounds="${3:-4}"
read -r a b <<<"${LEVELS:-off basic}"
bench_bakeoff
bench_work
chmod 755 "$work"

stats_server "$which" || {
  echo "bench/server-stats-cost.sh: unknown server '$which': use memcached, postgres, mariadb or sqlite" >&2
  exit 2
}

# The replay's files (sqlite): a 1000-row table and four point selects.
printf '%s\n' 'CREATE TABLE t (id INTEGER PRIMARY KEY, k INT, c TEXT);' \
  "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 1000) INSERT INTO t SELECT x, x * 7 % 1000, 'row ' || x FROM s;" \
  > "$work/setup.sql"
printf 'SELECT c FROM t WHERE id = %s;\n' 17 230 511 998 > "$work/queries.sql"

experiment() { # level
  local level="$1"
  [ "$level" = nosampler ] && level=basic
  printf 'name = "stats-cost-%s"\n[target]\nkind = "%s"\n[[variant]]\nname = "v"\nbinary = "%s"\n%s\n%s\n' \
    "$1" "$kind" "$binary" "$args" "$load"
  if [ "${MODE:-time}" = instructions ]; then
    printf '[plan]\nrepetitions = %s\nwarmup = "1s"\nops = 3000\nmode = "instructions"\nserver_stats = "%s"\n' "$rounds" "$level"
  else
    printf '[plan]\nrepetitions = %s\nwarmup = "1s"\nduration = "2s"\nserver_stats = "%s"\n' "$rounds" "$level"
  fi
}

n=0
for p in $(seq "$pairs"); do
  order="$a $b"
  [ $((p % 2)) -eq 0 ] && order="$b $a"
  for level in $order; do
    n=$((n + 1))
    experiment "$level" > "$work/e$n.toml"
    ( [ "$level" = nosampler ] && export BAKEOFF_NO_SAMPLING=1
      exec "$bakeoff" run "$work/e$n.toml" --out "$work/out-$n-$level" --sandbox-dir "$work/sb" \
      --quiet --no-history ) > "$work/e$n.log" 2>&1 || { cat "$work/e$n.log"; exit 1; }
  done
done
python3 - "$work" "$a" "$b" "$which" <<'PY'
import glob, json, random, statistics, sys
work, a, b, server = sys.argv[1:5]
runs = {a: [], b: []}
for f in glob.glob(f"{work}/out-*/results.json"):
    level = f.split("/")[-2].split("-")[-1]
    for c in json.load(open(f))["cells"]:
        runs[level] += [x for x in c["runs"] if x["valid"]]
med = lambda xs: statistics.median(xs)
if all(x.get("instructions") for lv in (a, b) for x in runs[lv]):
    ipo = {lv: [x["instructions"]["instructions_per_op"] for x in runs[lv]] for lv in (a, b)}
    for lv in (a, b):
        print(f"{server} {lv:<6} runs {len(ipo[lv]):3d}  instructions/op median "
              f"{med(ipo[lv]):.1f}  range {min(ipo[lv]):.1f}-{max(ipo[lv]):.1f}")
    print(f"{server} {b}/{a} instructions per op {med(ipo[b]) / med(ipo[a]):.4f}")
    sys.exit(0)
for lv in (a, b):
    ops = [x["ops_per_s"] for x in runs[lv]]
    wall = [x["wall_s"] for x in runs[lv]]
    print(f"{server} {lv:<6} runs {len(ops):3d}  median {med(ops):10.0f} ops/s  "
          f"range {min(ops):.0f}-{max(ops):.0f}  wall {med(wall):.2f} s/run")
oa = [x["ops_per_s"] for x in runs[a]]
ob = [x["ops_per_s"] for x in runs[b]]
rng = random.Random(54)
boot = sorted(med(rng.choices(ob, k=len(ob))) / med(rng.choices(oa, k=len(oa)))
              for _ in range(4000))
print(f"{server} {b}/{a} throughput {med(ob) / med(oa):.3f} "
      f"[{boot[100]:.3f}, {boot[3899]:.3f}] (95% bootstrap over runs)")
# Paired: each pair of adjacent experiments (one of each level, run back to back) gives
# one ratio of their medians; the median of those ratios with its distribution-free 95%
# interval (order statistics of the binomial), which the machine's drift between pairs
# does not widen as it widens the unpaired one.
import math, re
by_n = {}
for f in glob.glob(f"{work}/out-*/results.json"):
    m = re.search(r"out-(\d+)-(\w+)/results.json$", f)
    ops = [x["ops_per_s"] for c in json.load(open(f))["cells"] for x in c["runs"] if x["valid"]]
    if ops:
        by_n[int(m.group(1))] = (m.group(2), med(ops))
pr = []
for n in range(1, max(by_n, default=0) + 1, 2):
    if n in by_n and n + 1 in by_n:
        side = dict([by_n[n], by_n[n + 1]])
        if a in side and b in side:
            pr.append(side[b] / side[a])
pr.sort()
k = len(pr)
if k >= 6:
    # The largest j with P(Binomial(k, 1/2) < j) <= 2.5%: [pr[j-1], pr[k-j]] covers 95%.
    cdf, j = 0.0, 0
    while True:
        nxt = cdf + math.comb(k, j) / 2 ** k
        if nxt > 0.025:
            break
        cdf, j = nxt, j + 1
    lo, hi = pr[max(j - 1, 0)], pr[k - max(j, 1)]
    print(f"{server} {b}/{a} throughput paired over {k} pairs: median {med(pr):.3f} "
          f"[{lo:.3f}, {hi:.3f}] (95%, order statistics)")
wa = med([x["wall_s"] for x in runs[a]])
wb = med([x["wall_s"] for x in runs[b]])
print(f"{server} {b}-{a} wall time per run {wb - wa:+.2f} s")
PY

#!/usr/bin/env bash
# Issue 54's studies, short: MySQL 5.5 against 8.0 and PostgreSQL 12 against 17 at one
# connection with `server_stats = "full"` (bench/server-stats-studies/*.toml), then what
# the servers' own numbers say per comparison: the verdict, the statements matched across
# the versions (time per call on each side), and the counters that moved most per
# operation. CACHE: the build cache holding the versions (default bakeoff's own).
#
#   BAKEOFF=path/to/bakeoff [CACHE=dir] bash bench/server-stats-studies.sh [mysql|postgres ...]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_bakeoff
bench_work
chmod 755 "$work"
cache=()
[ -n "${CACHE:-}" ] && cache=(--cache "$CACHE")
for which in "${@:-mysql postgres}"; do
  case "$which" in
    mysql) file=mysql-5.5-vs-8.0.toml ;;
    postgres) file=postgres-12-vs-17.toml ;;
    *) echo "bench/server-stats-studies.sh: unknown study '$which': use mysql or postgres" >&2; exit 2 ;;
  esac
  out="$work/out-$which"
  "$bakeoff" run "$here/bench/server-stats-studies/$file" --out "$out" --sandbox-dir "$work/sb" \
    "${cache[@]}" --quiet --no-history > "$work/$which.log" 2>&1 || { cat "$work/$which.log"; exit 1; }
  python3 - "$out/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k in r["comparisons"]:
    if k.get("metric", "throughput") != "throughput":
        continue
    print(f"{k['variant']} against {k['baseline']}, "
          f"{k['workload']} x{k['connections']}: ratio {k['ratio']:.3f} "
          f"[{k['ci95'][0]:.3f}, {k['ci95'][1]:.3f}] {k['verdict']}")
    for s in k.get("statement_changes", []):
        print(f"  statement {s['text'][:70]!r}: {s['base_mean_us']:.1f} -> {s['other_mean_us']:.1f} us a call "
              f"(x{s['ratio']:.2f}{', moved' if s['moved'] else ''}), calls/op {s['base_calls_per_op']:.2f} -> {s['other_calls_per_op']:.2f}")
    for c in k.get("server_changes", [])[:8]:
        ratio = f"x{c['ratio']:.2f}" if c.get("ratio") is not None else "from 0"
        print(f"  counter {c['name']}: {c['base_per_op']:.4g} -> {c['other_per_op']:.4g} per op ({ratio})")
for c in r["cells"]:
    for s in c.get("server_statements", [])[:4]:
        print(f"  {c['variant']} statement {s['text'][:60]!r}: {s['mean_us']:.1f} us a call, "
              f"{s['calls_per_op']:.2f} calls/op")
    for x in c["runs"][:1]:
        for what, why in sorted(x.get("server_stats_unavailable", {}).items()):
            print(f"  unavailable on {c['variant']}: {what}: {why[:150]}")
PY
done

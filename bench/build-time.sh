#!/usr/bin/env bash
# What a cold build of the bakeoff binary costs, per git revision: a clean clone of each
# REV, then `cargo build --release --locked -p bakeoff` into a fresh target directory
# (the crates are already downloaded; compiling is what is timed), and the number of
# crates the binary links (`cargo tree -e normal`). Revisions build one after another,
# alternating if REPEAT > 1, so drift on a noisy machine hits both alike.
#
#   bash bench/build-time.sh REV_BEFORE REV_AFTER [REPEAT=1]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
before="${1:?give the revision before}"
after="${2:?give the revision after}"
repeat="${3:-1}"
bench_work

for rev in "$before" "$after"; do
  git -C "$here" worktree add -q --detach "$work/$rev" "$rev"
  (cd "$work/$rev" && cargo fetch --locked -q)
done
cleanup() { for rev in "$before" "$after"; do git -C "$here" worktree remove --force "$work/$rev" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

printf '%-12s %8s %8s %s\n' rev seconds crates packages
for i in $(seq "$repeat"); do
  for rev in "$before" "$after"; do
    dir="$work/$rev"
    rm -rf "$dir/target"
    start=$(date +%s%N)
    (cd "$dir" && cargo build --release --locked -q -p bakeoff)
    end=$(date +%s%N)
    crates=$(cd "$dir" && cargo tree -e normal -p bakeoff --prefix none --locked | sed 's/ (\*)//' | sort -u | wc -l)
    heavy=$(cd "$dir" && cargo tree -e normal -p bakeoff --prefix none --locked | grep -cE '^(mysql_async|tokio-postgres) ' || true)
    printf '%-12s %8.1f %8d %s\n' "$(git -C "$here" rev-parse --short "$rev")" "$(( (end - start) / 1000000 ))e-3" "$crates" \
      "$([ "$heavy" -gt 0 ] && echo 'mysql_async/tokio-postgres linked' || echo 'neither mysql_async nor tokio-postgres')"
  done
done

#!/usr/bin/env bash
# The study loop's tests (issue 52, point 3): the test time of the real-server end-to-end
# files of bisect and tune (cargo's "finished in", the test binary's own time, after the
# build), and of the scripted studies in the fast tier (bisect's and tune's
# `study_tests` modules). Run on the tree to measure; run it on a checkout of an earlier
# commit for the "before" figures (that tree has no study_tests: those lines say 0).
# Usage: bash bench/study-tests.sh   (CARGO_TARGET_DIR as for any cargo command)
source "$(dirname "$0")/lib.sh"
cd "$here"
cargo test -q -p bakeoff --test bisect --test tune --no-run 2>/dev/null
cargo test -q -p bakeoff-bisect -p bakeoff-tune --lib --no-run 2>/dev/null
took() { grep -Eo 'finished in [0-9.]+s' | tail -1; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in bisect tune; do
  echo "bakeoff --test $t: $(cargo test -q -p bakeoff --test "$t" 2>&1 | took)"
done
for c in bisect tune; do
  echo "bakeoff-$c --lib study_tests: $(cargo test -q -p "bakeoff-$c" --lib study_tests 2>&1 | took)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

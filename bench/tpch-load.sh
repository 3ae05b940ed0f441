#!/usr/bin/env bash
# The TPC-H-derived kind's load: tables generated in-process by tpchgen and streamed into
# PostgreSQL with COPY, against COPY from the files the same generator wrote (each file
# streamed through COPY .. FROM STDIN, as psql's \copy does). Both then build the same keys,
# indexes and statistics. Scale: $1 (default 1). Release build; a server of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
export BAKEOFF_TPCH_BENCH_SCALE="${1:-1}"
cargo test --release -p bakeoff-workloads --test tpch -- --ignored --nocapture bench_generation_and_load_against_copy_from_files 2>&1 | grep '^tpch scale'

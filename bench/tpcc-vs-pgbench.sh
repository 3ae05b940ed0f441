#!/usr/bin/env bash
# TPC-C on one PostgreSQL sandbox, in one process: the tpcc loader's rows per second
# against `pgbench -i` (alternating, ROUNDS times each), then NOTPM at W = 2 with 8
# connections and no think times, with the server's and the client's CPU per New-Order.
#
#   bash bench/tpcc-vs-pgbench.sh [SCALE=20] [ROUNDS=3] [SECONDS=30]
#
# SCALE is pgbench's scale factor: 20 loads 2,000,000 pgbench_accounts rows, about as
# many rows as TPC-C's W = 2 (about 1,000,000 rows of wider tables).
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$here"
cargo run --release -q -p bakeoff-workloads --example tpcc_vs_pgbench -- "${1:-20}" "${2:-3}" "${3:-30}"

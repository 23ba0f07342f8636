#!/usr/bin/env bash
# Search latency of two builds, run alternately so that both see the same machine.
#
#   scripts/find-latency-ab.sh BENCH_BINARY_A BENCH_BINARY_B [ROUNDS]
#
# Each argument is a `benches/find.rs` binary (`cargo bench --bench find --no-run` prints its
# path; copy it away before building the other commit). Each round runs A, then B, with a
# filter that matches no criterion benchmark, so only the p50/p99 lines (50 rounds of the 80
# dev queries) are measured. Prints one line per run: binary, search p50 / p99, with cards
# p50 / p99 (µs).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
rounds=${3:-3}
for _ in $(seq "$rounds"); do
  for b in "$1" "$2"; do
    line=$("$b" --bench zzz_no_criterion_benchmark 2>&1 \
      | grep -E '^find' \
      | sed -E 's/.*p50=([0-9.]+).s p99=([0-9.]+).*/\1 \2/' | tr '\n' ' ')
    echo "$(basename "$b") $line"
  done
done

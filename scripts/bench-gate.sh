#!/usr/bin/env bash
# How long the RTL gate takes to judge an RTL change (docs/build.md, "The
# regression gate"): N times (3 by default), a new comment line is appended
# to a file of hw/rtl (a different file each time; the build cache keys on
# content, so every round rebuilds), `cargo test` runs, and its wall time
# is printed; the file is restored after each round, however this ends.
# Prints each round and the median. A failing `cargo test` stops it.
#
#   bash scripts/bench-gate.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
files=(hw/rtl/pccx_gemm_engine.sv hw/rtl/pccx_cvo_engine.sv hw/rtl/pccx_scheduler.sv
       hw/rtl/pccx_mem_engine.sv hw/rtl/pccx_top.sv)
backup=$(mktemp)
current=""
restore() { if [ -n "$current" ]; then cp "$backup" "$current"; fi; rm -f "$backup"; }
trap restore EXIT
# Everything but the RTL is built first, so each round times an RTL change.
cargo test --no-run -q 2>/dev/null
times=()
for ((i = 0; i < rounds; i++)); do
  current=${files[i % ${#files[@]}]}
  cp "$current" "$backup"
  echo "// bench-gate round $i, $(date +%s.%N)" >> "$current"
  start=$(date +%s.%N)
  log=target/bench-gate.log
  cargo test >"$log" 2>&1 || { echo "bench-gate: cargo test failed after editing $current (its output: $log)" >&2; exit 1; }
  end=$(date +%s.%N)
  cp "$backup" "$current"
  current=""
  t=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
  times+=("$t")
  printf 'round %d (%s): %.1f s\n' "$i" "${files[i % ${#files[@]}]}" "$t"
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
printf 'median of %d: %.1f s\n' "$rounds" "$median"

#!/usr/bin/env bash
# What a C++ compiler and its options are worth for kv260's model, RTL alone
# (docs/build.md, "What clang is worth here"). Builds the kv260 model the
# release binary links (its Verilated, traced output from the build cache)
# as shared objects with gcc -O2, clang -O2, and clang -O2 with
# profile-guided optimisation (instrumented build, a training campaign on
# seeds 1000-1029, llvm-profdata merge, the optimised build), then runs
# `pccx-cosim bench --config kv260` on each through PCCX_MODEL_OVERRIDE,
# the variants in turn for ROUNDS rounds, and prints each variant's best
# RTL-alone figure (the machine's noise only ever slows a run down).
#
#   bash scripts/model-variants.sh [ROUNDS]     (3 by default; after
#                                                cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
bin=target/release/pccx-cosim
[ -x "$bin" ] || { echo "model-variants: build first: cargo build --release" >&2; exit 2; }
command -v llvm-profdata >/dev/null ||
  { echo "model-variants: llvm-profdata is missing: apt-get install llvm (Debian's package)" >&2; exit 2; }
# The newest kv260 entry of the cache: the one the last build linked.
entry=$(ls -td target/pccx-rtl-cache/kv260-*/ 2>/dev/null | head -n 1)
[ -n "$entry" ] && [ -d "$entry/verilated" ] ||
  { echo "model-variants: no kv260 model in target/pccx-rtl-cache: cargo build --release first" >&2; exit 2; }
src=${entry}verilated
inc=$(verilator --getenv VERILATOR_ROOT)/include
shim=harness/rtl/shim
l2=$(sed -n 's/^L2_WORDS *= *//p' hw/configs/kv260.cfg)
depth=$(sed -n 's/^FIFO_DEPTH *= *//p' hw/configs/kv260.cfg)
work=target/model-variants
rm -rf "$work" && mkdir -p "$work"

# build CXX "FLAGS" NAME: the model, the shim and the runtime (with the FST
# writer) into $work/NAME.so
build() {
  local cxx=$1 flags=$2 name=$3 obj="$work/obj-$3"
  mkdir -p "$obj"
  # Every generated file but the bundles (which only #include the others).
  find "$src" -maxdepth 1 -name '*.cpp' ! -name '*__bundle_*' |
    { cat; printf '%s\n' "$shim/pccx_shim.cpp" "$inc/verilated.cpp" "$inc/verilated_dpi.cpp" \
        "$inc/verilated_threads.cpp" "$inc/verilated_fst_c.cpp"; } |
    xargs -P "$(nproc)" -I{} sh -c "$cxx -std=c++17 $flags -fPIC -w -faligned-new \
      -I$inc -I$inc/vltstd -I$shim -I$src -include $shim/pccx_rand_reset.h \
      -DVM_COVERAGE=0 -DVM_SC=0 -DVM_TRACE=1 -DVM_TRACE_FST=1 -DVM_TRACE_VCD=0 \
      -DPCCX_PREFIX=Vpccx_kv260 -DPCCX_CONFIG=kv260 -DPCCX_L2_WORDS=$l2 -DPCCX_FIFO_DEPTH=$depth \
      -c {} -o $obj/\$(basename {}).o"
  $cxx -shared $flags "$obj"/*.o -lz -latomic -lpthread -o "$work/$name.so"
  rm -rf "$obj"
}
override() { echo "[{\"config\":\"kv260\",\"so\":\"$PWD/$work/$1.so\",\"name\":\"kv260\",\"selector\":null}]"; }

build g++ -O2 gcc-O2
build clang++ -O2 clang-O2
build clang++ "-O2 -fprofile-instr-generate" clang-O2-instrumented
LLVM_PROFILE_FILE="$PWD/$work/train-%p.profraw" PCCX_MODEL_OVERRIDE=$(override clang-O2-instrumented) \
  "$bin" --seed 1000 --count 30 --config kv260 --jobs 1 --no-shrink --out "$work/train" >/dev/null
llvm-profdata merge -o "$work/kv260.profdata" "$work"/train-*.profraw
build clang++ "-O2 -fprofile-instr-use=$PWD/$work/kv260.profdata" clang-O2-pgo

variants=(gcc-O2 clang-O2 clang-O2-pgo)
declare -A best
for ((r = 0; r < rounds; r++)); do
  for v in "${variants[@]}"; do
    figure=$(PCCX_MODEL_OVERRIDE=$(override "$v") "$bin" bench --config kv260 --repeat 8 --jobs 1 2>/dev/null |
      sed -n 's/^run .*RTL alone \([0-9]*\) cycles.*/\1/p' | sort -n | tail -n 1)
    echo "round $r: $v $figure"
    if [ -z "${best[$v]:-}" ] || [ "$figure" -gt "${best[$v]}" ]; then best[$v]=$figure; fi
  done
done
for v in "${variants[@]}"; do
  awk -v v="$v" -v b="${best[$v]}" -v g="${best[gcc-O2]}" \
    'BEGIN { printf "%-14s best RTL alone %9d cycles/s, %.2f x gcc-O2\n", v, b, b / g }'
done

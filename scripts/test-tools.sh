#!/usr/bin/env bash
# The second tier of tests (docs/testing.md): the harness's own tools
# (mutant schemata, resume and merge, Slurm arrays, pages in Chromium, the
# build cache), each a test target marked `test = false` in Cargo.toml so
# that `cargo test`, the RTL gate, leaves it out. This reads the targets
# from Cargo.toml, so a target marked there is never left out here.
#
#   bash scripts/test-tools.sh [CARGO_TEST_ARGS...]   run them all (a local
#                                        Slurm cluster is started for the Slurm
#                                        tests if none answers, and stopped after)
#   bash scripts/test-tools.sh --targets  print `--test NAME` for each (for
#                                        `cargo clippy`, which --all-targets
#                                        would not show them to)
set -euo pipefail
cd "$(dirname "$0")/.."

# Every [[test]] whose table says `test = false`.
mapfile -t targets < <(awk '
  /^\[/ { if (name != "" && off) print name; name = ""; off = 0; in_test = ($0 == "[[test]]"); next }
  in_test && /^name *= *"/ { sub(/^name *= *"/, ""); sub(/".*/, ""); name = $0 }
  in_test && /^test *= *false/ { off = 1 }
  END { if (name != "" && off) print name }
' Cargo.toml)
if [ ${#targets[@]} -eq 0 ]; then
  echo "test-tools: Cargo.toml marks no [[test]] with test = false; nothing to run is an error here" >&2
  exit 2
fi
args=()
for t in "${targets[@]}"; do
  [ -f "tests/$t.rs" ] || { echo "test-tools: Cargo.toml names test $t, and tests/$t.rs is not there" >&2; exit 2; }
  args+=(--test "$t")
done
if [ "${1:-}" = --targets ]; then
  echo "${args[@]}"
  exit 0
fi

# Three nodes, each a host of its own (tests/slurm_nodes.rs loses one).
started=0
if ! sinfo -h -o %T >/dev/null 2>&1; then
  bash scripts/slurm-local.sh start --nodes 3
  started=1
fi
stop() { if [ $started = 1 ]; then bash scripts/slurm-local.sh stop; fi; }
trap stop EXIT
echo "test-tools: ${targets[*]}"
# slurm_nodes mostly waits on Slurm (a node declared down, a task's time
# limit): it runs beside the others, its output kept and shown after them.
# Everything is built first, so the two runs do not build at once.
cargo test --no-run "${args[@]}" "$@"
beside=()
rest=()
for t in "${targets[@]}"; do
  if [ "$t" = slurm_nodes ]; then beside=(--test "$t"); else rest+=(--test "$t"); fi
done
status=0
if [ ${#beside[@]} -gt 0 ]; then
  log=$(mktemp)
  cargo test "${beside[@]}" "$@" >"$log" 2>&1 &
  pid=$!
  cargo test "${rest[@]}" "$@" || status=$?
  beside_status=0
  wait "$pid" || beside_status=$?
  echo "test-tools: ${beside[*]} (run beside the others):"
  cat "$log"
  rm -f "$log"
  [ "$status" != 0 ] || status=$beside_status
else
  cargo test "${rest[@]}" "$@" || status=$?
fi
exit "$status"

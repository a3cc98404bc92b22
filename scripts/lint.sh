#!/usr/bin/env bash
# Verilator lint of hw/rtl with -Wall, for every configuration in hw/configs,
# and of the other DUTs of the tree (hw/wrap, hw/approx: each Verilator file
# a manifest of theirs names). The flags and the sources are each Verilator
# file's, as for the model build; this adds --lint-only and each
# configuration's parameters.
# Waivers live in the RTL, each next to the reason for it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
for cfg in "$top"/hw/configs/*.cfg; do
  params=()
  while IFS='=' read -r key value; do
    key=$(echo "$key" | xargs); value=$(echo "$value" | xargs)
    # TEST_ONLY says how the configuration is built, not an RTL parameter.
    [ "$key" = TEST_ONLY ] && continue
    [ -n "$key" ] && params+=("-G$key=$value")
  done < <(grep -v '^\s*#' "$cfg" | sed '/^\s*$/d')
  echo "lint: $(basename "$cfg" .cfg) ${params[*]}"
  for f in hw/verilator.f hw/wrap/verilator.f hw/wrap/verilator-slow.f \
    hw/approx/verilator.f hw/approx/verilator-bug.f; do
    verilator --lint-only -F "$top/$f" "${params[@]}"
  done
done
echo "lint: clean"

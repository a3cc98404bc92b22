#!/usr/bin/env bash
# Verilator lint of hw/rtl with -Wall, for every configuration in hw/configs.
# The flags and the sources are hw/verilator.f's, as for the model build;
# this adds --lint-only and each configuration's parameters.
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
  verilator --lint-only -F "$top/hw/verilator.f" "${params[@]}"
done
echo "lint: clean"

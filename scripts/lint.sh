#!/usr/bin/env bash
# Verilator lint of hw/rtl with -Wall, for every configuration in hw/configs.
# Waivers live in the RTL, each next to the reason for it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mapfile -t files < <(grep -v '^\s*#' "$top/hw/rtl/manifest.txt" | sed '/^\s*$/d' | sed "s|^|$top/hw/rtl/|")
for cfg in "$top"/hw/configs/*.cfg; do
  params=()
  while IFS='=' read -r key value; do
    key=$(echo "$key" | xargs); value=$(echo "$value" | xargs)
    [ -n "$key" ] && params+=("-G$key=$value")
  done < <(grep -v '^\s*#' "$cfg" | sed '/^\s*$/d')
  echo "lint: $(basename "$cfg" .cfg) ${params[*]}"
  verilator --lint-only -Wall --top-module pccx_top "${params[@]}" "${files[@]}"
done
echo "lint: clean"

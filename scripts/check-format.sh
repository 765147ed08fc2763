#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every tracked C, C++ and CUDA file (but generated ones) is formatted as .clang-format (and bpf/.clang-format) say.
#   scripts/check-format.sh          lists the files that are not, exit 1 if any
#   scripts/check-format.sh --fix    formats them in place
# Exit 77 (ctest: skipped) when clang-format 14 is not installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z $cf ]] || ! "$cf" --version | grep -q "version 14\."; then
  echo "SKIPPED: clang-format 14 (Debian 12's) is not installed: apt-get install clang-format"
  exit 77
fi
cd "$root"
# Generated files (a "DO NOT EDIT" line near the top) are as their generator writes them.
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.cu' 2>/dev/null | while read -r f; do
  head -3 "$f" | grep -q "DO NOT EDIT" || echo "$f"
done)
if ((${#files[@]} == 0)); then
  echo "SKIPPED: not a git checkout (the files to check are the tracked ones)"
  exit 77
fi
if [[ ${1:-} == --fix ]]; then
  "$cf" -i --style=file "${files[@]}"
  exit 0
fi
# One clang-format process for every file (a process per file takes half a minute here); its
# diagnostics start with the file's name.
mapfile -t bad < <("$cf" --style=file --dry-run -Werror "${files[@]}" 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
for f in "${bad[@]}"; do echo "not formatted: $f (scripts/check-format.sh --fix)"; done
((${#bad[@]} == 0)) && echo "${#files[@]} files formatted as .clang-format says"
((${#bad[@]} == 0))

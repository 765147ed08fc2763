#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The long fuzz run: every libFuzzer target of tests/fuzz (clang, ASan + UBSan) for its share
# of a total number of executions, then the line coverage of the image parsers
# (fakebackend/src/core/fatbin.cpp) reached by the corpus, from clang's source-based coverage.
#
#   scripts/fuzz.sh [--runs N] [--targets "images config ..."] [--build DIR] [--seed S]
#                   [--no-coverage] [--coverage-only] [--merge]
#
#   --runs N         executions over all targets together (default 10000000), shared as
#                    FUZZ_SHARES says, in parts per thousand (default images:350 config:150
#                    events:200 http:295 api:5: an API program costs ~30 images' time)
#   --targets LIST   only these targets (their shares are scaled to the total)
#   --build DIR      the build directory (default build/; configured if it is not)
#   --seed S         libFuzzer's seed (default 1: a run is repeatable)
#   --no-coverage    skip the coverage report
#   --coverage-only  only the coverage report (over the checked-in and the build's corpus)
#   --merge          afterwards, merge the inputs that add coverage into the checked-in corpus
#                    (tests/fuzz/corpus/<target>; libFuzzer -merge=1 keeps the smallest set)
#
# Each target reads the checked-in corpus and its dictionary and writes new inputs to
# BUILD/tests/fuzz_corpus_<target>, as ctest's bounded runs (fuzz:<target>) do. A finding
# (crash, sanitizer report, leak, timeout, out of memory) stops that target: its input is kept
# as BUILD/tests/fuzz-<target>-<kind>-<sha1>; rerun it with BUILD/tests/fuzz_<target> FILE, fix,
# and check the input in under tests/fuzz/corpus/<target> so ctest replays it.
# Exit status: 0 without findings, 1 with any, 2 on a usage or build error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
total=10000000
seed=1
targets="images config events http api"
coverage=1
fuzz=1
merge=0
shares=${FUZZ_SHARES:-"images:350 config:150 events:200 http:295 api:5"}

usage() { sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
    --runs) total=${2:?--runs needs a number}; shift ;;
    --targets) targets=${2:?--targets needs a list}; shift ;;
    --build) build=$(realpath -m "${2:?--build needs a directory}"); shift ;;
    --seed) seed=${2:?--seed needs a number}; shift ;;
    --no-coverage) coverage=0 ;;
    --coverage-only) fuzz=0 ;;
    --merge) merge=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[[ $total =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --runs takes a whole number, got '$total'" >&2; exit 2; }

clangxx=$(command -v clang++ || command -v clang++-14 || true)
if [[ -z $clangxx ]]; then
  echo "fuzz.sh: clang++ is not installed (scripts/deps.sh installs clang; libFuzzer comes with it)" >&2
  exit 2
fi
jobs=${JOBS:-2}
tests=$build/tests

share_of() {
  local t=$1 entry
  for entry in $shares; do
    [[ ${entry%%:*} == "$t" ]] && { echo "${entry#*:}"; return; }
  done
  echo 0
}

findings=0
if ((fuzz)); then
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  fuzz_build_targets=()
  for t in $targets; do fuzz_build_targets+=("fuzz_$t"); done
  cmake --build "$build" -j"$jobs" --target "${fuzz_build_targets[@]}" >/dev/null ||
    { echo "fuzz.sh: building the fuzz targets failed (cmake --build $build --target fuzz_targets)" >&2; exit 2; }

  weight=0
  for t in $targets; do weight=$((weight + $(share_of "$t"))); done
  ((weight > 0)) || { echo "fuzz.sh: FUZZ_SHARES gives the targets no share" >&2; exit 2; }

  printf '%-8s %12s %9s %8s  %s\n' target executions seconds exec/s findings
  all_runs=0
  all_secs=0
  for t in $targets; do
    runs=$((total * $(share_of "$t") / weight))
    ((runs > 0)) || continue
    dict=()
    [[ -f $root/tests/fuzz/$t.dict ]] && dict=(-dict="$root/tests/fuzz/$t.dict")
    mkdir -p "$tests/fuzz_corpus_$t"
    log=$tests/fuzz-$t.log
    start=$(date +%s.%N)
    rc=0
    "$tests/fuzz_$t" -runs="$runs" -seed="$seed" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
      -artifact_prefix="$tests/fuzz-$t-" "${dict[@]}" "$tests/fuzz_corpus_$t" "$root/tests/fuzz/corpus/$t" \
      >"$log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    done_runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
    done_runs=${done_runs:-0}
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
    rate=$(awk -v n="$done_runs" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? n / s : n) }')
    found=0
    note=""
    if ((rc != 0)); then
      found=1
      artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
      note="  (exit $rc: ${artifact:-see $log})"
    fi
    findings=$((findings + found))
    all_runs=$((all_runs + done_runs))
    all_secs=$((all_secs + secs))
    printf '%-8s %12d %9d %8d  %d%s\n' "$t" "$done_runs" "$secs" "$rate" "$found" "$note"
    if ((merge)); then
      "$tests/fuzz_$t" -merge=1 "$root/tests/fuzz/corpus/$t" "$tests/fuzz_corpus_$t" >"$tests/fuzz-$t-merge.log" 2>&1 ||
        echo "fuzz.sh: merging $t's corpus failed (see $tests/fuzz-$t-merge.log)" >&2
    fi
  done
  printf '%-8s %12d %9d %8d  %d\n' total "$all_runs" "$all_secs" \
    "$(awk -v n="$all_runs" -v s="$all_secs" 'BEGIN { printf "%.0f", (s > 0 ? n / s : n) }')" "$findings"
fi

if ((coverage)); then
  # Source-based coverage of the image parsers: the images target built with clang's
  # coverage instrumentation replays the corpus once (-runs=0) and the profile says which
  # lines of fatbin.cpp ran.
  profdata=$(command -v llvm-profdata || command -v llvm-profdata-14 || true)
  llvmcov=$(command -v llvm-cov || command -v llvm-cov-14 || true)
  if [[ -z $profdata || -z $llvmcov ]]; then
    echo "fuzz.sh: llvm-profdata and llvm-cov are needed for the coverage report (apt-get install llvm)" >&2
    exit 2
  fi
  cov=$tests/fuzz_coverage
  mkdir -p "$cov" "$tests/fuzz_corpus_images"
  rm -f "$cov"/*.profraw
  "$clangxx" -std=c++20 -g -O0 -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping \
    -I"$root/fakebackend/src" -I"$root/fakebackend/include" \
    "$root/tests/fuzz/fuzz_images.cpp" "$root/fakebackend/src/core/fatbin.cpp" \
    "$root/fakebackend/src/kernels/ptx.cpp" "$root/fakebackend/src/kernels/ptx_parser.cpp" \
    -llz4 -lzstd -o "$cov/fuzz_images_cov"
  LLVM_PROFILE_FILE="$cov/images-%p.profraw" "$cov/fuzz_images_cov" -runs=0 \
    "$tests/fuzz_corpus_images" "$root/tests/fuzz/corpus/images" >"$cov/replay.log" 2>&1 ||
    { echo "fuzz.sh: replaying the images corpus failed (see $cov/replay.log)" >&2; exit 1; }
  "$profdata" merge -sparse "$cov"/*.profraw -o "$cov/images.profdata"
  "$llvmcov" report "$cov/fuzz_images_cov" -instr-profile="$cov/images.profdata" \
    "$root/fakebackend/src/core/fatbin.cpp" >"$cov/report.txt"
  inputs=$(( $(find "$tests/fuzz_corpus_images" "$root/tests/fuzz/corpus/images" -type f | wc -l) ))
  # TOTAL Regions Missed Cover Functions Missed Executed Lines Missed Cover Branches Missed Cover
  line_cover=$(awk '$1 == "TOTAL" { print $10 }' "$cov/report.txt")
  lines=$(awk '$1 == "TOTAL" { print $8 - $9 "/" $8 }' "$cov/report.txt")
  echo "image parsers (fakebackend/src/core/fatbin.cpp): line coverage $line_cover ($lines lines) over $inputs corpus inputs"
  echo "  (per-line detail: $llvmcov show $cov/fuzz_images_cov -instr-profile=$cov/images.profdata $root/fakebackend/src/core/fatbin.cpp)"
fi
((findings == 0))

#!/bin/bash
# Builds the libFuzzer targets of tests/fuzz/ (clang, ASan, UBSan) and runs
# each for a bounded time from its committed seed corpus; any crash,
# sanitizer report, leak, escaped exception other than gangway::Error, or an
# input past the parsers' budget fails the run, and the input that did it is
# kept. The budget (SECURITY.md, "What a parser may spend"): every parser
# spends at most 1 s of CPU and tens of MiB on the worst input of 64 KiB in a
# release build; here, at -O1 under the sanitizers, the worst seeds take
# 0.1 s and 60 MiB of resident memory. So one input over 2 s (-timeout: wall
# time, on a shared machine) is a finding, and so is one that holds more heap
# than its target's bound (tests/fuzz/fuzz.hpp, HeapBudget: counted exactly,
# by the sanitizer's hooks) or a process over 256 MiB (-rss_limit_mb, and
# -malloc_limit_mb with it: one allocation that large), a backstop, as ASan
# keeps freed memory: its quarantine (256 MiB by default) would fill that
# limit on its own, so it is kept to 16 MiB, which still catches a use after
# free of anything freed in the last few inputs.
#
#   tests/fuzz/run.sh [--seconds=N | --runs=N] [--jobs=N] [--build-only] [TARGET...]
#
# --seconds: each target's time (default 15, as CI runs it); --runs: a number
# of executions instead (BENCHMARKS.md's long runs use 10^7); --build-only:
# compile, run nothing (CI builds while cluster tests wait). TARGET: a file
# name of tests/fuzz/ without .cpp; default all. The build goes to
# $GANGWAY_FUZZ_BUILD (default _build-fuzz in the source tree), and is
# incremental. Found inputs are added to the build's corpus, never to the
# committed seeds (tests/fuzz/corpus/TARGET/). Exit status: 0 all passed,
# 1 a target failed (its crash input under _build-fuzz/artifacts/), 77
# without clang (never under CI=true: then it is 1).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${GANGWAY_FUZZ_BUILD:-$src/_build-fuzz}
seconds=15 runs= jobs=$(nproc) build_only=
targets=()
for a in "$@"; do
    case $a in
    --seconds=*) seconds=${a#*=} ;;
    --runs=*) runs=${a#*=} ;;
    --jobs=*) jobs=${a#*=} ;;
    --build-only) build_only=1 ;;
    -*) echo "run.sh: unknown option $a; see the comment at the top of tests/fuzz/run.sh" >&2; exit 2 ;;
    *) targets+=("$a") ;;
    esac
done
if ((${#targets[@]} == 0)); then
    for f in "$src"/tests/fuzz/*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
cxx=${FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null; then
    echo "run.sh: $cxx not found: install Debian's clang (contrib/dev/install-deps.sh does)" >&2
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi

# The pure library sources: what the targets call, and what those call.
lib_sources=(lib/base/text.cpp lib/base/siphash.cpp lib/base/pci_bus_id.cpp lib/base/keyed_hash.cpp lib/env/*.cpp lib/conf/*.cpp lib/slurm/*.cpp lib/stepd/*.cpp lib/pin/*.cpp lib/preflight/*.cpp lib/health/*.cpp lib/fleet/*.cpp lib/postmortem/*.cpp lib/watch/*.cpp)
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
cxxflags=(-std=c++20 -O1 -g1 "${san[@]}" -I"$src")  # -g1: the line tables a report needs, less compile time than -g
mkdir -p "$build/obj" "$build/artifacts"

# Objects are rebuilt when their source or any header of the tree is newer.
newest_header=$(find "$src/lib" "$src/tests/fuzz" -name '*.hpp' -newer "$build/.stamp" 2>/dev/null | head -1 || true)
[ -e "$build/.stamp" ] || newest_header=all
obj() { echo "$build/obj/$(echo "${1%.cpp}" | tr / _).o"; }
stale=()
for s in "${lib_sources[@]}"; do
    o=$(obj "$s")
    if [ -n "$newest_header" ] || [ ! -e "$o" ] || [ "$src/$s" -nt "$o" ]; then stale+=("$s"); fi
done
running=0
for s in "${stale[@]}"; do
    if ((running >= jobs)); then wait -n; running=$((running - 1)); fi
    "$cxx" "${cxxflags[@]}" -fsanitize=fuzzer-no-link -c "$src/$s" -o "$(obj "$s")" &
    running=$((running + 1))
done
while ((running > 0)); do wait -n; running=$((running - 1)); done
((${#stale[@]} == 0)) || rm -f "$build/libfuzz.a"
[ -e "$build/libfuzz.a" ] || ar rcs "$build/libfuzz.a" "$build"/obj/*.o
for t in "${targets[@]}"; do
    [ -e "$src/tests/fuzz/$t.cpp" ] || { echo "run.sh: no target $t (tests/fuzz/$t.cpp)" >&2; exit 2; }
    if [ -n "$newest_header" ] || [ ! -e "$build/$t" ] || [ "$src/tests/fuzz/$t.cpp" -nt "$build/$t" ] ||
        [ "$build/libfuzz.a" -nt "$build/$t" ]; then
        "$cxx" "${cxxflags[@]}" -fsanitize=fuzzer "$src/tests/fuzz/$t.cpp" "$build/libfuzz.a" -lcrypto -o "$build/$t"
    fi
done
touch "$build/.stamp"
[ -z "$build_only" ] || { echo "run.sh: ${#targets[@]} target(s) built in $build"; exit 0; }

limit=(-max_total_time="$seconds")
export ASAN_OPTIONS="quarantine_size_mb=16${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
[ -n "$runs" ] && limit=(-runs="$runs")
# The targets run $jobs at a time (each libFuzzer process uses one core);
# their lines are printed in the targets' order once all have ended.
run_one() {  # run_one TARGET: its PASS/FAIL lines into $build/TARGET.result
    local t=$1 log=$build/$1.log start=$SECONDS execs
    mkdir -p "$build/corpus/$t"
    if "$build/$t" "${limit[@]}" -timeout=2 -rss_limit_mb=256 -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$t-" "$build/corpus/$t" "$src/tests/fuzz/corpus/$t" >"$log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "PASS: $t ($execs executions in $((SECONDS - start)) s, corpus $(ls "$build/corpus/$t" | wc -l) inputs)" >"$build/$t.result"
    else
        { echo "FAIL: $t: $(grep -m1 -E 'ERROR|runtime error|terminate called|==[0-9]+==' "$log" || tail -1 "$log")"
          grep -m1 'Test unit written to' "$log" || true
          echo "  log: $log"; } >"$build/$t.result"
    fi
}
running=0
for t in "${targets[@]}"; do
    rm -f "$build/$t.result"
    if ((running >= jobs)); then wait -n || true; running=$((running - 1)); fi
    run_one "$t" &
    running=$((running + 1))
done
wait
failed=0
for t in "${targets[@]}"; do
    if [ -f "$build/$t.result" ]; then cat "$build/$t.result"; else echo "FAIL: $t: no result (the runner itself failed)"; fi
    grep -q '^PASS: ' "$build/$t.result" 2>/dev/null || failed=1
done
exit $failed

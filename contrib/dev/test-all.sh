#!/bin/bash
# The whole test suite, as CI runs it, on a machine of two cores: every
# release's Debian package built once, from `make dist`'s tarball, and every
# test run on that package's own build tree:
#   - 22.05 (this host): make check (the unit tests, the script tests, the
#     load tests and every integration test on the real cluster), the package
#     installed (dpkg -i, `gangway doctor`, bad_input against the installed
#     files), and what make distcheck proved besides (install and uninstall
#     leave nothing, distclean leaves nothing);
#   - 24.11 (trixie) and 26.05 (sid), in their Debian roots: the build
#     warning-free, the unit tests, the package installed there, and the
#     cluster tests where releases differ (contrib/dev/release-check.sh);
#   - the unit tests and the command's CLI under AddressSanitizer and UBSan
#     (a build that also compiles the GPU stages against CUDA's headers);
#   - the fuzz targets (tests/fuzz/run.sh).
# Compiling is CPU; a cluster test mostly waits (for jobs, timeouts, daemons).
# So the builds of the other releases, the sanitizers and the fuzz targets,
# and the sanitizer tests and fuzz runs (CPU alone) run in a second lane (B),
# at low priority, while the cluster tests run one at a time in lane A;
# 22.05's script tests fill lane A's waits for lane B; the load tests run at
# the end, on a machine at rest. BENCHMARKS.md ("CI's time") has the figures.
# GANGWAY_RELEASE_TESTS="TEST..." picks fewer cluster tests on 24.11 and 26.05.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
t_start=$SECONDS
stage_time() {  # stage_time NAME T0: how long a stage took, for reading a slow run
  echo "TIME: $1 $((SECONDS - $2)) s (at $((SECONDS - t_start)) s)"
}
mkdir -p _build
# The other releases' Debian roots need mmdebstrap alone: installed first, the
# roots are made (or found cached) while the rest of the host's packages are
# installed and the host's package builds (mostly network and unpacking, both
# roots at once, each with its own lock and directory). Lane B waits for them.
[ "$(id -u)" = 0 ] && ! command -v mmdebstrap >/dev/null && { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null || true; }
( contrib/dev/root.sh make trixie >"$top/_build/roots-trixie.log" 2>&1 &
  contrib/dev/root.sh make sid >"$top/_build/roots-sid.log" 2>&1 &
  wait ) &
roots_pid=$!
t0=$SECONDS
contrib/dev/install-deps.sh
stage_time "install-deps" $t0
if [ -f config.status ]; then
  echo "test-all.sh: the source tree was configured in place; cleaning it for out-of-tree builds"
  make distclean >/dev/null 2>&1 || true
fi
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
jobs=$(nproc)
status=0

# The packages of CI are built with line tables (-g1) rather than
# dpkg-buildflags' -g: the same code, about a third less compile time
# (BENCHMARKS.md); a package built by hand keeps -g. The cluster tests run on
# each package's build tree, the same binaries as installed: deb-check.sh
# tests only bad_input against the installed files.
export DEB_CFLAGS_APPEND=-g1 DEB_CXXFLAGS_APPEND=-g1 GANGWAY_DEB_TREE_TESTED=1

# The tarball: _build configured (the developer's build directory; nothing
# compiled here) and `make dist`. Every package is built from it, so the
# tests that run on a package's tree show the tarball carries what they read.
t0=$SECONDS
(cd _build && { [ -f Makefile ] || ../configure -q CFLAGS='-g1 -O2' CXXFLAGS='-g1 -O2'; } && rm -f gangway-*.tar.gz && make dist >dist.log 2>&1) \
  || { echo "FAIL: make dist; the end of _build/dist.log:"; tail -30 _build/dist.log; exit 1; }
tarball=$(ls "$top"/_build/gangway-*.tar.gz | head -1)
export GANGWAY_DEB_TARBALL=$tarball
stage_time "make dist" $t0

extra_pass=0 extra_fail=0
step() {  # step NAME CMD...: one more PASS or FAIL for the summary, output in _build/NAME.log
  local name=$1 t0=$SECONDS; shift
  if "$@" >"$top/_build/$name.log" 2>&1; then
    echo "PASS: $name ($((SECONDS - t0)) s)"; extra_pass=$((extra_pass + 1))
  else
    echo "FAIL: $name ($((SECONDS - t0)) s); the end of _build/$name.log:"; tail -40 "$top/_build/$name.log"
    extra_fail=$((extra_fail + 1)); status=1
  fi
}
# deb_check RELEASE [--build-only|--no-build]: contrib/dev/deb-check.sh, its
# PASS/FAIL lines counted in the summary; 75 when the root cannot be made.
deb_check() {
  local out rc=0 n
  out=$(contrib/dev/deb-check.sh "$@" 2>&1) || rc=$?
  echo "$out"
  n=$(grep -c '^PASS: ' <<<"$out" || true); extra_pass=$((extra_pass + n))
  n=$(grep -c '^FAIL: ' <<<"$out" || true); extra_fail=$((extra_fail + n))
  case $rc in
    0) ;;
    75) return 75 ;;
    *) [ "$n" -gt 0 ] || extra_fail=$((extra_fail + 1)); status=1; return 1 ;;
  esac
}
tree_of() { ls -d "$top/_deb-$1"/work/gangway-*/_build 2>/dev/null | head -1; }
suite_of() { case $1 in 22.05) echo bookworm ;; 24.11) echo trixie ;; 26.05) echo sid ;; esac; }

# 22.05's package (its test programs are lane B's first build).
t0=$SECONDS
tree22=
rm -f _build/cluster-suite.log _build/script-suite.log _build/load-suite.log
deb_check 22.05 --build-only && tree22=$(tree_of bookworm)
stage_time "22.05 package" $t0

# Lane B, in the background at low priority: 22.05's test programs, each
# release's package (in its root) and its build's checks (no warning, the
# unit tests), the sanitizer build, the fuzz targets' build.
cuda_flag=
if [ -f /usr/local/cuda/include/cuda_runtime.h ]; then
  cuda_flag=--with-cuda
elif [ "${CI:-}" = true ]; then
  echo "FAIL: CI=true but /usr/local/cuda/include/cuda_runtime.h is missing: the --with-cuda build cannot run"; status=1
else
  echo "NOTE: no CUDA toolkit in /usr/local/cuda: the GPU stages are not compiled against its headers (--with-cuda)"
fi
rm -f _build/laneB.*
# lane_part PART CMD...: CMD's output in _build/laneB.PART.log, then
# _build/laneB.PART.rc: its status, seconds and end (seconds into the run).
lane_part() {
  local part=$1 t0=$SECONDS rc=0; shift
  "$@" >"$top/_build/laneB.$part.log" 2>&1 || rc=$?
  echo "$rc $((SECONDS - t0)) $((SECONDS - t_start))" >"$top/_build/laneB.$part.rc"
}
release_build() {  # RELEASE: its package (once the roots are made), then its tree's checks
  while kill -0 "$roots_pid" 2>/dev/null; do sleep 2; done
  contrib/dev/deb-check.sh "$1" --build-only || return
  GANGWAY_RELEASE_BUILD=$(tree_of "$(suite_of "$1")") contrib/dev/release-check.sh "$1" --build-only
}
# Under AddressSanitizer and UBSan, at -O1 as its documentation advises, -g1
# for the reports' lines: what its tests use (the unit tests, the command).
asan_build() (
  mkdir -p "$top/_build-asan" && cd "$top/_build-asan" &&
    { [ -f Makefile ] || ../configure -q --enable-sanitizers $cuda_flag CFLAGS='-g1 -O1' CXXFLAGS='-g1 -O1'; } &&
    make -j"$jobs" launcher/gangway tests/unit/unit_tests
)
# The sanitizer tests and the fuzz targets' runs are CPU alone, bounded by
# CPU time, not wall time: they run in lane B right after their builds,
# beside lane A's cluster tests, rather than after everything.
asan_tests() { make -C "$top/_build-asan" check TESTS='tests/unit/unit_tests tests/launcher_cli.sh'; }
# 8 s each in CI (a smoke run from the seeds; BENCHMARKS.md has the long runs).
fuzz_both() { tests/fuzz/run.sh --build-only && tests/fuzz/run.sh --seconds="${GANGWAY_FUZZ_SECONDS:-8}"; }
lane_b() {
  [ -z "$tree22" ] || lane_part check-programs make -C "$tree22" -j"$jobs" check-programs
  lane_part 24.11 release_build 24.11
  lane_part 26.05 release_build 26.05
  lane_part asan asan_build
  [ "$(cut -d' ' -f1 "$top/_build/laneB.asan.rc")" != 0 ] || lane_part asan-tests asan_tests
  lane_part fuzz fuzz_both
}
( renice -n 10 $BASHPID >/dev/null; ionice -c 2 -n 7 -p $BASHPID 2>/dev/null; lane_b ) &
laneb_pid=$!
# lane_wait PART: until lane B has done PART; its status (0 done; else failed).
lane_wait() {
  while [ ! -f "$top/_build/laneB.$1.rc" ]; do
    kill -0 "$laneb_pid" 2>/dev/null || { echo "lane B ended before $1"; return 1; }
    sleep 2
  done
  local rc secs end; read -r rc secs end <"$top/_build/laneB.$1.rc"
  echo "TIME: lane B's $1 $secs s (done at $end s)"
  return "$rc"
}
# lane_failed PART WHAT: a failed part of lane B, the end of its log, counted.
lane_failed() {
  echo "FAIL: $2; the end of _build/laneB.$1.log:"; tail -40 "$top/_build/laneB.$1.log"
  extra_fail=$((extra_fail + 1)); status=1
}

# Lane A: the cluster tests of 22.05 on its package's tree, one at a time.
t0=$SECONDS
if [ -n "$tree22" ]; then
  # check-TESTS with no check_PROGRAMS: the tests alone, while lane B builds
  # the test programs in the same tree (no integration test runs one).
  began=$(date +%s)
  make -C "$tree22" -j1 check-TESTS check_PROGRAMS= TESTS='$(INTEGRATION_TESTS)' TEST_SUITE_LOG=cluster-suite.log || status=1
  cp "$tree22/cluster-suite.log" "$top/_build/" 2>/dev/null || true
  # Each test's time, from its result file's (one at a time: each ends where the next begins).
  (cd "$tree22/tests/integration" && ls -tr --time-style=+%s -l -- *.trs 2>/dev/null) |
    awk -v t="$began" '{sub(/\.sh\.trs$/, "", $7); printf "%s %s %d s", (NR > 1 ? "," : "TIME: 22.05 cluster tests:"), $7, $6 - t; t = $6} END {if (NR) print ""}'
fi
stage_time "22.05 cluster tests" $t0

# 22.05's unit and script tests, one at a time, on its tree, once its test
# programs are built: run at the first point where lane A would otherwise
# wait for lane B (a release's package not built yet), else after 26.05's
# cluster tests, beside lane B's last builds. The connection floods and preflight_gpu's test doubles (LOAD_TESTS)
# run at the end, at rest.
scripts_done=
script_tests() {
  [ -z "$scripts_done" ] && [ -n "$tree22" ] || return 0
  scripts_done=1
  local t0=$SECONDS progs_rc=0
  lane_wait check-programs || progs_rc=$?
  [ $progs_rc = 0 ] || { lane_failed check-programs "the test programs do not build in $tree22"; return 0; }
  make -C "$tree22" -j1 check-TESTS check_PROGRAMS= TESTS='tests/unit/unit_tests $(SCRIPT_TESTS)' TEST_SUITE_LOG=script-suite.log || status=1
  cp "$tree22/script-suite.log" "$top/_build/" 2>/dev/null || true
  stage_time "22.05 unit and script tests" $t0
}

# The other SLURM releases (24.11: Debian trixie, 26.05: sid): the package
# lane B built, installed and doctored in the release's root, then the
# cluster tests where releases differ on that release's own cluster
# (release-check.sh's list: every integration test but those whose
# `gangway-releases:` line names 22.05 alone, preflight_pmix on sid, whose
# SLURM has no PMIx, and accelerate only on sid, the one suite that
# packages it). A root that cannot be made because Debian's archive is
# unreachable is NOT TESTED with root.sh's reason: not a gangway failure, never silent.
release_tests=${GANGWAY_RELEASE_TESTS:-}
not_tested=()
for r in 24.11 26.05; do
  suite=$(suite_of "$r")
  [ -f "$top/_build/laneB.$r.rc" ] || script_tests
  t0=$SECONDS rc=0
  lane_wait "$r" || rc=$?
  if [ $rc = 75 ]; then
    echo "NOT TESTED: SLURM $r: Debian's archive is unreachable (contrib/dev/root.sh): $(tail -1 "$top/_build/laneB.$r.log")"; not_tested+=("$r"); continue
  elif [ $rc != 0 ]; then
    lane_failed "$r" "SLURM $r: the package or its build's checks"; continue
  fi
  grep -E '^(PASS|FAIL): ' "$top/_build/laneB.$r.log" || true
  extra_pass=$((extra_pass + $(grep -c '^PASS: ' "$top/_build/laneB.$r.log" || true)))
  deb_check "$r" --no-build || true
  tree=$(tree_of "$suite")
  # shellcheck disable=SC2086
  GANGWAY_RELEASE_BUILD=$tree contrib/dev/release-check.sh "$r" --no-build $release_tests >"$top/_build/release-$r.log" 2>&1 || rc=$?
  grep -E '^(PASS|FAIL|SKIP): ' "$top/_build/release-$r.log" | sed 's/;.*//' || true
  case $rc in
    0) echo "PASS: SLURM $r: package build, unit tests; $(tail -1 "$top/_build/release-$r.log") ($((SECONDS - t0)) s)"; extra_pass=$((extra_pass + 1)) ;;
    *) echo "FAIL: SLURM $r ($((SECONDS - t0)) s); the end of _build/release-$r.log:"; tail -40 "$top/_build/release-$r.log"
       extra_fail=$((extra_fail + 1)); status=1 ;;
  esac
  stage_time "SLURM $r" $t0
done

script_tests

# Lane B's end: the sanitizer tests (the unit tests and the command's CLI
# under ASan and UBSan) and the parsers of outside input under libFuzzer
# (clang, ASan, UBSan), each for a bounded time from its seed corpus: any
# crash fails the run.
t0=$SECONDS
asan_rc=0
if lane_wait asan; then
  lane_wait asan-tests || asan_rc=$?
  sed -n '/^PASS: \|^FAIL: \|^ERROR: /p' "$top/_build/laneB.asan-tests.log"
  [ $asan_rc = 0 ] || lane_failed asan-tests "the sanitizer tests"
else
  lane_failed asan "the sanitizer build"
fi
if lane_wait fuzz; then
  echo "PASS: fuzz"; extra_pass=$((extra_pass + 1))
else
  lane_failed fuzz "the fuzz targets' build or run"
fi
wait "$laneb_pid" 2>/dev/null || true
stage_time "the wait for lane B" $t0

# At rest (lane B done): the load tests on 22.05's tree.
t0=$SECONDS
if [ -n "$tree22" ]; then
  make -C "$tree22" -j1 check-TESTS check_PROGRAMS= TESTS='$(LOAD_TESTS)' TEST_SUITE_LOG=load-suite.log || status=1
  cp "$tree22/load-suite.log" "$top/_build/" 2>/dev/null || true
fi
stage_time "22.05 load tests" $t0

# 22.05's package installed on this host (after every cluster test: dpkg -i
# adds the plugin to the host's plugstack.conf.d).
deb_check 22.05 --no-build || true

# What make distcheck proved besides the tarball's build and tests (which the
# packages and the tests on their trees now prove): `make install` and
# `make uninstall` leave no file behind, and `make distclean` leaves nothing
# in a build tree.
dist_leftovers() {
  local d=$top/_build/dist-inst
  rm -rf "$d"
  # The logs of the tests that the tree's configure (--disable-cluster-tests,
  # as every package's) leaves out of its TESTS, so its distclean does not know them:
  # the summary has read them (copies in _build/).
  (cd "$tree22" && rm -f cluster-suite.log script-suite.log load-suite.log && find tests -name '*.log' -delete -o -name '*.trs' -delete)
  make -C "$tree22" install DESTDIR="$d" >/dev/null && make -C "$tree22" uninstall DESTDIR="$d" >/dev/null || return 1
  local left; left=$(find "$d" -type f)
  [ -z "$left" ] || { echo "make uninstall left: $left"; return 1; }
  make -C "$tree22" distclean >/dev/null || return 1
  left=$(cd "$tree22" && find . -type f)
  [ -z "$left" ] || { echo "make distclean left in the build tree: $left"; return 1; }
  echo "install, uninstall and distclean leave nothing"
}
[ -z "$tree22" ] || step dist-leftovers dist_leftovers

# One summary line over everything, in the form CI reads.
pass=$extra_pass failn=$extra_fail skip=0
for log in _build/cluster-suite.log _build/script-suite.log _build/load-suite.log _build-asan/test-suite.log; do
  [ -f "$log" ] || continue
  pass=$((pass + $(awk '/^# PASS:/ {print $3}' "$log" | head -1)))
  failn=$((failn + $(awk '/^# (FAIL|ERROR|XPASS):/ {s += $3} END {print s+0}' "$log")))
  skip=$((skip + $(awk '/^# SKIP:/ {print $3}' "$log" | head -1)))
  grep -qE '^# (FAIL|ERROR):[[:space:]]+[1-9]' "$log" && cat "$log"
done
echo "TIME: all $((SECONDS - t_start)) s"
echo "$pass passed, $failn failed, $skip skipped${not_tested[*]:+, SLURM ${not_tested[*]} not tested (Debian archive unreachable)}"
[ $status = 0 ] && [ $failn = 0 ]

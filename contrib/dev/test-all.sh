#!/bin/bash
# The whole test suite, as CI runs it: build out of tree, make check (unit
# tests, plugin ABI, CLI, and the real-cluster integration tests, which need
# root), then the unit tests again under AddressSanitizer and UBSan (a build
# that also compiles the GPU stages against CUDA's headers), then
# make distcheck, then the fuzz targets (tests/fuzz/run.sh), then the Debian
# package (contrib/dev/deb-check.sh: built, installed with dpkg -i, `gangway
# doctor`, and the real-cluster env_contract and bad_input tests run against
# the installed plugin and command), then SLURM 24.11 and 26.05 from Debian
# roots: each release's own package as for 22.05, then the unit tests and
# every integration test that applies on that package's build tree
# (GANGWAY_RELEASE_TESTS="TEST..." picks fewer).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
contrib/dev/install-deps.sh
if [ -f config.status ]; then
  echo "test-all.sh: the source tree was configured in place; cleaning it for out-of-tree builds"
  make distclean >/dev/null 2>&1 || true
fi
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
jobs=$(nproc)

status=0
t_start=$SECONDS
stage_time() {  # stage_time NAME T0: how long a stage took, for reading a slow run
  echo "TIME: $1 $((SECONDS - $2)) s (at $((SECONDS - t_start)) s)"
}
mkdir -p _build _build-asan
# The other releases' Debian roots, made (or found cached) while the host and
# the sanitizer builds compile: mostly network and unpacking, both at once
# (each root has its own lock and directory; a new sid root took 614 s here,
# trixie's 235 s). The release stage reports their failures.
( contrib/dev/root.sh make trixie >"$top/_build/roots-trixie.log" 2>&1 &
  contrib/dev/root.sh make sid >"$top/_build/roots-sid.log" 2>&1 &
  wait ) &
roots_pid=$!
t0=$SECONDS
# -g1 (line tables, enough for a backtrace's file and line) rather than -g:
# the same code, and a quarter less compile time than full debug information
# (BENCHMARKS.md, "CI's time"). The Debian packages keep dpkg-buildflags' -g.
(cd _build && { [ -f Makefile ] || ../configure -q CFLAGS='-g1 -O2' CXXFLAGS='-g1 -O2'; } && make -j"$jobs" >/dev/null) || status=1
stage_time build $t0

# Under AddressSanitizer and UBSan: the unit tests and the command's CLI.
# This build also compiles the GPU stages against the CUDA toolkit's headers
# (--with-cuda), so that one build covers both: the plain build above tests
# the code without them. CI machines have /usr/local/cuda, so there its
# absence fails the run. At -O1, as AddressSanitizer's documentation advises:
# it compiles in about half the time of -O2 (lib/fleet/trend.cpp: 23 s
# against 42 s here), and this is CI's largest stage. -g1: the line tables
# AddressSanitizer's reports need, 31 % less compile time than -g.
cuda_flag=
if [ -f /usr/local/cuda/include/cuda_runtime.h ]; then
  cuda_flag=--with-cuda
elif [ "${CI:-}" = true ]; then
  echo "FAIL: CI=true but /usr/local/cuda/include/cuda_runtime.h is missing: the --with-cuda build cannot run"; status=1
else
  echo "NOTE: no CUDA toolkit in /usr/local/cuda: the GPU stages are not compiled against its headers (--with-cuda)"
fi
# Built here, while the roots are still being made (CPU against their network
# and unpacking); its tests run after make check, on a machine at rest.
t0=$SECONDS asan_built=0
(cd _build-asan && { [ -f Makefile ] || ../configure -q --enable-sanitizers $cuda_flag CFLAGS='-g1 -O1' CXXFLAGS='-g1 -O1'; } && make -j"$jobs" >/dev/null \
  && make -j"$jobs" check-programs >/dev/null) && asan_built=1 || status=1
stage_time "sanitizer build${cuda_flag:+ with CUDA}" $t0

# The timing-sensitive tests (bandwidth, preflight) start only once the roots are made.
t0=$SECONDS
wait "$roots_pid" || true
stage_time "the roots' wait" $t0
t0=$SECONDS
(cd _build && make -j"$jobs" check-programs >/dev/null && make -j1 check) || status=1
stage_time "make check" $t0

t0=$SECONDS
[ $asan_built = 1 ] && { (cd _build-asan && make check TESTS='tests/unit/unit_tests tests/launcher_cli.sh') || status=1; }
stage_time "sanitizer tests" $t0


# make distcheck: the tarball builds, passes make check (its quick tests:
# DISTCHECK_TESTS in Makefile.am) and installs and uninstalls cleanly.
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
# Without debug information (-g0: the same code, 30 % less compile time): what
# distcheck proves is the tarball, not the debugging of its build.
step distcheck make -C _build -j"$jobs" distcheck TESTS='$(DISTCHECK_TESTS)' DISTCHECK_CONFIGURE_FLAGS="CFLAGS='-g0 -O2' CXXFLAGS='-g0 -O2'"

# The parsers of outside input under libFuzzer (clang, ASan, UBSan), each
# for a bounded time from its seed corpus: any crash fails the run.
step fuzz tests/fuzz/run.sh --seconds="${GANGWAY_FUZZ_SECONDS:-15}"

# The Debian package of each release, built, installed and tested where that
# release runs (contrib/dev/deb-check.sh: the host's for 22.05, the release's
# root for the others, after release-check.sh below has built there): its
# PASS/FAIL lines count in the summary.
deb_check() {  # deb_check RELEASE
  local out rc=0 n
  out=$(contrib/dev/deb-check.sh "$1" 2>&1) || rc=$?
  echo "$out"
  n=$(grep -c '^PASS: ' <<<"$out" || true); extra_pass=$((extra_pass + n))
  n=$(grep -c '^FAIL: ' <<<"$out" || true); extra_fail=$((extra_fail + n))
  case $rc in
    0) ;;
    75) return 75 ;;
    *) [ "$n" -gt 0 ] || extra_fail=$((extra_fail + 1)); status=1 ;;
  esac
}
deb_check 22.05 || true

# The other SLURM releases (24.11: Debian trixie, 26.05: sid): gangway built
# warning-free and unit-tested in the release's Debian root, then cluster
# tests on that release's own cluster (contrib/dev/release-check.sh). A root
# that cannot be made because Debian's archive is unreachable is reported as
# NOT TESTED with root.sh's reason: not a gangway failure, never silent.
# Every integration test by default, as for 22.05 (release-check's list:
# all of tests/integration, but preflight_pmix on sid, whose SLURM has no PMIx,
# and accelerate only on sid, the one suite that packages it).
release_tests=${GANGWAY_RELEASE_TESTS:-}
not_tested=()
# One build per release: the Debian package is built first (deb_check), and
# its build tree, kept in _deb-SUITE/work/, is what the release's unit and
# cluster tests run on (GANGWAY_RELEASE_BUILD); only when the package did not
# build does release-check.sh compile gangway itself.
export GANGWAY_DEB_TREE_TESTED=1  # deb-check.sh: env_contract runs on the tree below, not twice
for r in 24.11 26.05; do
  case $r in 24.11) suite=trixie ;; 26.05) suite=sid ;; esac
  rc=0
  deb_check "$r" || rc=$?
  if [ $rc = 75 ]; then
    echo "NOT TESTED: SLURM $r: Debian's archive is unreachable (contrib/dev/root.sh)"; not_tested+=("$r"); continue
  fi
  tree=$(ls -d "$top/_deb-$suite"/work/gangway-*/_build 2>/dev/null | head -1)
  [ -n "$tree" ] && [ -x "$tree/launcher/gangway" ] || tree=
  t0=$SECONDS rc=0
  # shellcheck disable=SC2086
  GANGWAY_RELEASE_BUILD=$tree contrib/dev/release-check.sh "$r" $release_tests >"$top/_build/release-$r.log" 2>&1 || rc=$?
  grep -E '^(PASS|FAIL|SKIP): ' "$top/_build/release-$r.log" | sed 's/;.*//' || true
  case $rc in
    # release-check's last line counts what passed and what was skipped (accelerate where Debian has none).
    0) echo "PASS: SLURM $r: ${tree:+package }build, unit tests; $(tail -1 "$top/_build/release-$r.log") ($((SECONDS - t0)) s)"; extra_pass=$((extra_pass + 1)) ;;
    75) echo "NOT TESTED: SLURM $r: $(tail -1 "$top/_build/release-$r.log")"; not_tested+=("$r") ;;
    *) echo "FAIL: SLURM $r ($((SECONDS - t0)) s); the end of _build/release-$r.log:"; tail -40 "$top/_build/release-$r.log"
       extra_fail=$((extra_fail + 1)); status=1 ;;
  esac
done

# One summary line over everything, in the form CI reads.
pass=$extra_pass failn=$extra_fail skip=0
for log in _build/test-suite.log _build-asan/test-suite.log; do
  [ -f "$log" ] || continue
  pass=$((pass + $(awk '/^# PASS:/ {print $3}' "$log" | head -1)))
  failn=$((failn + $(awk '/^# (FAIL|ERROR|XPASS):/ {s += $3} END {print s+0}' "$log")))
  skip=$((skip + $(awk '/^# SKIP:/ {print $3}' "$log" | head -1)))
done
for log in _build/test-suite.log _build-asan/test-suite.log; do
  [ -f "$log" ] && grep -qE '^# (FAIL|ERROR):[[:space:]]+[1-9]' "$log" && cat "$log"
done
echo "$pass passed, $failn failed, $skip skipped${not_tested[*]:+, SLURM ${not_tested[*]} not tested (Debian archive unreachable)}"
[ $status = 0 ] && [ $failn = 0 ]

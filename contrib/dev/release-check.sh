#!/bin/bash
# The real-cluster integration tests on another SLURM release: gangway built
# inside that release's Debian root (contrib/dev/root.sh makes it, once) and
# the test cluster's daemons and clients run from the same root
# (tests/cluster/cluster.sh up --release=...). The test scripts themselves run
# here, on the host, as `make check` runs them for 22.05.
#
#   contrib/dev/release-check.sh 24.11|26.05 [TEST...]
#   GANGWAY_RELEASE_BUILD=DIR contrib/dev/release-check.sh ...   # test the build tree DIR
#   contrib/dev/release-check.sh RELEASE --build-only | --no-build [TEST...]
#
# TEST is a tests/integration/NAME.sh name; the default is every one that
# applies to the release (not preflight_pmix on 26.05, accelerate on 26.05 only,
# nor a test whose `# gangway-releases:` line leaves the release out). First contrib/dev/build-in-root.sh builds gangway
# and runs the unit tests in the root (_build-SUITE/build-in-root.log). Each test's output
# goes to _build-SUITE/build/NAME.log;
# one PASS/FAIL/SKIP line per test, then a summary. Exit status: 0 when all
# passed, 75 when the release's root cannot be made because Debian's archive
# is unreachable (root.sh says so in one line), 1 otherwise.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
release=${1:?usage: contrib/dev/release-check.sh 24.11|26.05 [--build-only | --no-build] [TEST...]}
shift
# --build-only: the build and its checks alone; --no-build: the tests alone, on
# the tree an earlier --build-only checked (CI builds while other tests run).
mode=all
case ${1:-} in --build-only|--no-build) mode=$1; shift ;; esac
case $release in
  24.11) suite=trixie ;;
  26.05) suite=sid ;;
  22.05) echo "release-check.sh: 22.05 is this machine's own SLURM: run make check in _build" >&2; exit 1 ;;
  *) echo "release-check.sh: unknown release '$release': 24.11 or 26.05" >&2; exit 1 ;;
esac
# Every integration test that applies: sid's SLURM package has no PMIx
# plugin; python3-accelerate is packaged in sid only.
tests=("$@")
if [ ${#tests[@]} = 0 ]; then
  for f in tests/integration/*.sh; do
    t=$(basename "$f" .sh)
    case $t in lib) continue ;; esac
    [ "$suite" = sid ] && [ "$t" = preflight_pmix ] && continue
    [ "$suite" != sid ] && [ "$t" = accelerate ] && continue
    # A test of behaviour that does not differ between releases names the
    # releases it runs on in its first lines (`# gangway-releases: 22.05`):
    # CI's time goes to what can differ.
    # The releases are the words before the line's "(": its reason may name others.
    only=$(head -10 "$f" | sed -n 's/^# gangway-releases: *//p' | sed 's/(.*//')
    if [ -n "$only" ] && ! grep -qw -- "$release" <<<"$only"; then
      echo "release-check.sh: $t runs on SLURM $only only (its gangway-releases line)"; continue
    fi
    tests+=("$t")
  done
fi

# Built, warning-free and unit-tested with the release's own compiler and
# libraries (build-in-root.sh), in _build-SUITE/build; or, with
# GANGWAY_RELEASE_BUILD=DIR, the build tree the release's Debian package was
# built in (contrib/dev/deb-check.sh keeps it), checked the same way and not
# compiled again: CI's way, one build per release.
rc=0
mkdir -p "$top/_build-$suite"
if [ -n "${GANGWAY_RELEASE_BUILD:-}" ]; then
  build=$(cd "$GANGWAY_RELEASE_BUILD" && pwd)
  [ "$mode" = --no-build ] || contrib/dev/build-in-root.sh --tree "$suite" "$build" >"$top/_build-$suite/build-in-root.log" 2>&1 || rc=$?
elif [ "$mode" = --no-build ]; then
  echo "release-check.sh: --no-build needs GANGWAY_RELEASE_BUILD" >&2; exit 1
else
  build=$top/_build-$suite/build
  contrib/dev/build-in-root.sh "$suite" >"$top/_build-$suite/build-in-root.log" 2>&1 || rc=$?
fi
case $rc in
  0) ;;
  75) tail -1 "$top/_build-$suite/build-in-root.log"; exit 75 ;;
  *) tail -30 "$top/_build-$suite/build-in-root.log"; echo "FAIL: gangway does not build cleanly or pass its unit tests for SLURM $release"; exit 1 ;;
esac
[ "$mode" = --build-only ] && { echo "SLURM $release: built, no warnings, unit tests passed"; exit 0; }

pass=0 fail=0 skip=0
for t in "${tests[@]}"; do
  t0=$SECONDS st=0
  top_srcdir=$top top_builddir=$build GANGWAY_RELEASE=$release bash "tests/integration/$t.sh" >"$build/$t.log" 2>&1 || st=$?
  case $st in
    0) echo "PASS: $t on SLURM $release ($((SECONDS - t0)) s)"; pass=$((pass + 1)) ;;
    77) echo "SKIP: $t on SLURM $release: $(grep -m1 '^SKIP' "$build/$t.log")"; skip=$((skip + 1)) ;;
    *) echo "FAIL: $t on SLURM $release ($((SECONDS - t0)) s); the end of $build/$t.log:"; tail -30 "$build/$t.log"
       fail=$((fail + 1)) ;;
  esac
done
echo "SLURM $release: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]

#!/bin/bash
# The whole test suite, as CI runs it: build out of tree, make check (unit
# tests, plugin ABI, CLI, and the real-cluster integration tests, which need
# root), then the unit tests again under AddressSanitizer and UBSan.
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
mkdir -p _build _build-asan
(cd _build && { [ -f Makefile ] || ../configure -q; } && make -j"$jobs" >/dev/null && make -j1 check) || status=1
(cd _build-asan && { [ -f Makefile ] || ../configure -q --enable-sanitizers; } && make -j"$jobs" >/dev/null \
  && make check TESTS='tests/unit/unit_tests tests/launcher_cli.sh') || status=1

# One summary line over both builds, in the form CI reads.
pass=0 failn=0 skip=0
for log in _build/test-suite.log _build-asan/test-suite.log; do
  [ -f "$log" ] || continue
  pass=$((pass + $(awk '/^# PASS:/ {print $3}' "$log" | head -1)))
  failn=$((failn + $(awk '/^# (FAIL|ERROR|XPASS):/ {s += $3} END {print s+0}' "$log")))
  skip=$((skip + $(awk '/^# SKIP:/ {print $3}' "$log" | head -1)))
done
for log in _build/test-suite.log _build-asan/test-suite.log; do
  [ -f "$log" ] && grep -qE '^# (FAIL|ERROR):[[:space:]]+[1-9]' "$log" && cat "$log"
done
echo "$pass passed, $failn failed, $skip skipped"
[ $status = 0 ] && [ $failn = 0 ]

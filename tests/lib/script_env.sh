# The preamble of the script tests (tests/*.sh), sourced right after
# `set -u` so that each says only what it needs:
#
#   . "$(dirname "$0")/lib/script_env.sh"
#   test_needs_root "fleet ingest makes the store"   # root, or SKIP (FAIL in CI)
#   test_workdir fleet-trend                          # W, removed on exit unless KEEP=1
#
# It sets top_builddir and top_srcdir (make check sets both; by hand, the
# tree the script is in), GW (the gangway under test, GANGWAY_BIN wins), PY
# (the system Python, whose sqlite3 and json the tests use) and sources
# verdicts.sh (pass, fail, finish).
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
GW=${GANGWAY_BIN:-$top_builddir/launcher/gangway}
PY=/usr/bin/python3
. "$(dirname "${BASH_SOURCE[0]}")/../verdicts.sh"

# What the test cannot run without: a SKIP (exit 77) on a developer's
# machine, a FAIL in CI, which has it all (root, prometheus).
test_skip() {
  [ "${CI:-}" = true ] && { echo "FAIL: $1, and CI has it"; exit 1; }
  echo "SKIP: $1"; exit 77
}

# Root, for what $1 says (the fleet's ingest makes the store and gives the
# spool's files their owners).
test_needs_root() {
  [ "$(id -u)" = 0 ] || test_skip "needs root ($1)"
}

# W: a private directory under /tmp named for the test, removed on exit
# unless KEEP is set (to look at what a failed run left). A test with its own
# EXIT trap (servers to stop) sets it after this and removes W there.
test_workdir() {
  W=$(mktemp -d "/tmp/gangway-$1.XXXXXX") || { echo "FAIL: mktemp under /tmp"; exit 1; }
  trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
}

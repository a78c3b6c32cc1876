#!/bin/bash
# Builds gangway and runs its unit tests with one Debian release's SLURM
# (spank.h), PMIx, hwloc, compiler and Catch2, inside that release's root
# (contrib/dev/root.sh; bookworm is the host itself), and fails on any warning.
#
#   contrib/dev/build-in-root.sh [--clean] SUITE   SUITE: bookworm (host, SLURM 22.05), trixie (24.11), sid (26.05)
#   contrib/dev/build-in-root.sh --tree SUITE DIR  the same checks on the build tree DIR that
#                                                  build-deb.sh kept (GANGWAY_DEB_WORK), unbuilt again
#
# In _build-SUITE/ of this tree: src/ is a copy of the sources (git's tracked
# and untracked-but-not-ignored files; mtimes kept, so rebuilds are incremental)
# that the release's own autoreconf prepares, so that no release's autotools
# touch this tree's configure or another release's; build/ is the out-of-tree
# build. Steps: autoreconf (first time), configure, make, then
# `make check-unit`, tests/plugin_contents.sh and tests/plugin_faults.sh. Logs: _build-SUITE/*.log.
#
# A build counts as failed when a log of autoreconf, configure or make has a
# "warning:" or "WARNING:" line (compiler, linker, automake, configure),
# except libtool's note that the plugin links libstdc++.a, which it does on
# purpose (configure.ac says why). Only what this run compiles is checked: a
# file compiled by an earlier run is not compiled again, so CI passes --clean
# (remove _build-SUITE first).
# Exit status: 0 built with no warning and the tests passed; 1 otherwise;
# 75 when the release's root cannot be made because of Debian's archive
# (contrib/dev/root.sh prints the one line saying so).
set -euo pipefail
prog=contrib/dev/build-in-root.sh
top=$(cd "$(dirname "$0")/../.." && pwd -P)
die() { echo "$prog: $*" >&2; exit 1; }

inside() {  # suite: runs in the root (or on the host for bookworm)
  local s=$1 b=$top/_build-$1 t0 rc=0
  mkdir -p "$b/src" "$b/build"
  echo "$prog: $s: $(g++ --version | head -1)"
  t0=$SECONDS
  # The sources, as build-deb.sh takes them. Only files whose content changed
  # are copied, and they get the time of the copy: a file edited while an
  # earlier build ran keeps an older time than that build's objects, and make
  # would not rebuild them from its own time (seen: a stale object, a link error).
  rm -rf "$b/stage" && mkdir -p "$b/stage"
  (cd "$top" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$b/stage"
  (cd "$b/stage" && find . -type f -print0) | while IFS= read -r -d '' f; do
    cmp -s "$b/stage/$f" "$b/src/$f" && continue
    mkdir -p "$(dirname "$b/src/$f")" && cp "$b/stage/$f" "$b/src/$f"
  done
  rm -rf "$b/stage"
  : >"$b/warnings.log"
  if [ ! -x "$b/src/configure" ]; then
    (cd "$b/src" && autoreconf -fi) >"$b/autoreconf.log" 2>&1 || { cat "$b/autoreconf.log"; die "$s: autoreconf failed"; }
    cat "$b/autoreconf.log" >>"$b/warnings.log"
  fi
  cd "$b/build"
  if [ ! -f Makefile ]; then
    ../src/configure >"$b/configure.log" 2>&1 || { tail -30 "$b/configure.log"; die "$s: configure failed (log: $b/configure.log)"; }
    cat "$b/configure.log" >>"$b/warnings.log"
    grep -E '^configure: (unit tests:|gangway)' "$b/configure.log" | sed "s|^|$prog: $s: |"
  fi
  # make reruns automake/configure itself when their inputs changed.
  # The unit tests are built here, so that their warnings count too: after
  # `all`, not beside it (automake's `all` runs a sub-make, which would build
  # the same objects at the same time as the unit tests' link: a race).
  { make -j"$(nproc)" all && make -j"$(nproc)" tests/unit/unit_tests; } >"$b/make.log" 2>&1 \
    || { grep -E 'error|Error' "$b/make.log" | head -30; die "$s: make failed (log: $b/make.log)"; }
  cat "$b/make.log" >>"$b/warnings.log"
  echo "$prog: $s: built in $((SECONDS - t0)) s"
  check "$s" "$b"
}

check() {  # suite dir: no warning in dir/warnings.log, then the unit tests in the current (build) directory
  local s=$1 b=$2 t0 rc=0 warn
  warn=$(grep -E 'warning:|WARNING:|\*\*\* Warning' "$b/warnings.log" |
         grep -vE '(^\*\*\*|^libtool:) [Ww]arning: Linking the shared library spank/gangway\.la against the( static library .*/libstdc\+\+\.a is not portable!)?$' || true)
  if [ -n "$warn" ]; then
    echo "$warn" | head -40
    echo "$prog: $s: $(echo "$warn" | wc -l) warning line(s) in the build (above; logs in $b)" >&2
    rc=1
  else
    echo "$prog: $s: no warnings"
  fi
  t0=$SECONDS
  # check_PROGRAMS: the unit tests alone (make check would build the benches too).
  if make check TESTS='tests/unit/unit_tests tests/plugin_contents.sh tests/plugin_faults.sh' check_PROGRAMS=tests/unit/unit_tests \
    >"$b/check.log" 2>&1; then
    grep -E '^(PASS|SKIP|XFAIL)' "$b/check.log" | sed "s|^|$prog: $s: |"
  else
    grep -E '^(PASS|FAIL|ERROR|SKIP)' "$b/check.log" | sed "s|^|$prog: $s: |"
    for l in tests/unit/unit_tests.log tests/plugin_contents.sh.log tests/plugin_faults.sh.log; do
      grep -q -E '^(FAIL|ERROR)' "${l%.log}.trs" 2>/dev/null && tail -40 "$l"
    done
    echo "$prog: $s: tests failed (logs in $(pwd)/tests)" >&2
    rc=1
  fi
  echo "$prog: $s: tested in $((SECONDS - t0)) s"
  return $rc
}

# A build tree that contrib/dev/build-deb.sh made and kept (GANGWAY_DEB_WORK),
# checked as one of ours: no warning in its autoreconf, configure and compile
# (the package build's log from dh_auto_configure to dh_auto_install), and the
# unit tests built there and run. CI's release stage uses it instead of a second build.
tree() {  # suite dir
  local s=$1 t=$2 w
  w=$(cd "$t/../.." && pwd)
  [ -f "$t/Makefile" ] && [ -f "$w/build.log" ] || die "$t is not a build tree that build-deb.sh kept (GANGWAY_DEB_WORK)"
  echo "$prog: $s: $(g++ --version | head -1)"
  cat "$w/autoreconf.log" >"$w/warnings.log" 2>/dev/null || : >"$w/warnings.log"
  sed -n '/^ *dh_auto_configure/,/^ *dh_auto_install/p' "$w/build.log" >>"$w/warnings.log"
  cd "$t"
  make -j"$(nproc)" tests/unit/unit_tests >"$w/make-unit.log" 2>&1 \
    || { grep -E 'error|Error' "$w/make-unit.log" | head -30; die "$s: the unit tests do not build (log: $w/make-unit.log)"; }
  cat "$w/make-unit.log" >>"$w/warnings.log"
  check "$s" "$w"
}

if [ "${1:-}" = --tree ]; then
  [ $# = 3 ] || die "usage: $prog --tree SUITE DIR"
  case $2 in
    bookworm) tree "$2" "$3"; exit ;;
    trixie|sid) exec "$top/contrib/dev/root.sh" run "$2" -- "$top/contrib/dev/build-in-root.sh" --tree-inside "$2" "$3" ;;
    *) die "unknown suite '$2'" ;;
  esac
fi
[ "${1:-}" = --tree-inside ] && { tree "$2" "$3"; exit; }

if [ "${1:-}" = --clean ]; then
  shift
  case ${1:-} in bookworm|trixie|sid) rm -rf "${top:?}/_build-$1";; esac
fi
case ${1:-} in
  --inside) [ $# = 2 ] || die "usage"; inside "$2";;
  bookworm) inside bookworm;;
  trixie|sid)
    rc=0
    "$top/contrib/dev/root.sh" make "$1" >/dev/null || rc=$?
    [ $rc = 0 ] || exit $rc   # 75: the archive; root.sh said so
    exec "$top/contrib/dev/root.sh" run "$1" -- "$top/contrib/dev/build-in-root.sh" --inside "$1";;
  *) die "usage: $prog [--clean] SUITE (bookworm, trixie or sid)";;
esac

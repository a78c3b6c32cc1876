#!/bin/bash
# The Debian package of one SLURM release, built, installed and tested where
# that release runs: on the host for 22.05 (Debian 12), in the release's Debian
# root for 24.11 (trixie) and 26.05 (sid), made by contrib/dev/root.sh.
#
#   contrib/dev/deb-check.sh 22.05|24.11|26.05 [--build-only | --no-build]
#
# --build-only: the build step alone; --no-build: the steps after it, on the
# package an earlier --build-only left in _deb-SUITE/ (CI builds every
# release's package while other tests run, and tests them later).
# GANGWAY_DEB_TARBALL (build-deb.sh's) builds the package from `make dist`'s tarball.
#
# Steps, one PASS/FAIL line each, logs in _deb-SUITE/STEP.log:
#   build       contrib/dev/build-deb.sh with the release's libslurm-dev,
#               compiler and libraries (DEB_BUILD_OPTIONS=nocheck: make check
#               runs elsewhere in CI), the .deb left in _deb-SUITE/, the build
#               tree kept in _deb-SUITE/work/gangway-VERSION/_build
#   depends     the package depends on that release and no other:
#               slurm-wlm-basic-plugins (>= R~), (<< NEXT~)
#   man-pages   the .deb holds the six man pages (gangway(1), gangway.so(8),
#               gangway-doctor(8), gangway-node-check(8), gangway-fleet(8),
#               node-check.conf(5))
#   refuses-OTHER-package
#               another release's package (when an earlier run left one in
#               _deb-OTHER/) is refused by dpkg there, for SLURM's release
#   install     dpkg -i, in the root (its dependencies are already there)
#   contents    /usr/bin/gangway, the plugin, plugstack.conf.d/gangway.conf, the node
#               check's HealthCheckProgram wrapper, NHC check and examples
#   doctor      `gangway doctor` in the root: the release that runs there, the
#               plugstack.conf line the package installed, the plugin it loads
#   installed-env_contract, installed-bad_input
#               those cluster tests on the release's own cluster, run against
#               the files dpkg installed (GANGWAY_PLUGIN, GANGWAY_BIN);
#               GANGWAY_DEB_TREE_TESTED=1 (CI, which runs the cluster
#               tests on this package's build tree: make check on 22.05,
#               release-check.sh on the others) leaves out env_contract
# Then the package is purged, on failure too (GANGWAY_KEEP_DEB=1 keeps it), so
# the cached root stays as root.sh made it.
# Exit status: 0 all passed; 1 a step failed; 75 the root cannot be made
# because of Debian's archive (root.sh's one line says so).
set -euo pipefail
prog=contrib/dev/deb-check.sh
top=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$top"
release=${1:?usage: $prog 22.05|24.11|26.05 [--build-only | --no-build]}
mode=${2:-all}
case $mode in all|--build-only|--no-build) ;; *) echo "$prog: unknown option '$mode': --build-only or --no-build" >&2; exit 1 ;; esac
case $release in
  22.05) suite=bookworm ;;
  24.11) suite=trixie ;;
  26.05) suite=sid ;;
  *) echo "$prog: unknown release '$release': 22.05, 24.11 or 26.05" >&2; exit 1 ;;
esac
next=$(echo "$release" | awk -F. '{printf "%d.%02d", $1, $2 + 1}')
rc=0
root=$(contrib/dev/root.sh make "$suite") || rc=$?
case $rc in 0) ;; 75) exit 75 ;; *) echo "FAIL: the $suite root for SLURM $release could not be made"; exit 1 ;; esac
[ "$root" = / ] && root=
in_root() { contrib/dev/root.sh run "$suite" -- "$@"; }

out=$top/_deb-$suite
[ "$mode" = --no-build ] || { rm -rf "$out" && mkdir -p "$out"; }
status=0
step() {  # step NAME CMD...: one PASS or FAIL line, output in $out/NAME.log
  local name=$1 t0=$SECONDS; shift
  if "$@" >"$out/$name.log" 2>&1; then
    echo "PASS: deb $name on SLURM $release ($((SECONDS - t0)) s)"
  else
    echo "FAIL: deb $name on SLURM $release ($((SECONDS - t0)) s); the end of $out/$name.log:"; tail -30 "$out/$name.log"
    status=1
    return 1
  fi
}

# The package's build tree is kept in _deb-SUITE/work/ (build-deb.sh's
# GANGWAY_DEB_WORK): release-check.sh tests it on the release's cluster
# (GANGWAY_RELEASE_BUILD) instead of compiling gangway there a second time.
# DEB_CFLAGS_APPEND/DEB_CXXFLAGS_APPEND (dpkg-buildflags' own variables) pass
# through: CI appends -g1 (line tables; BENCHMARKS.md, "CI's time").
if [ "$mode" != --no-build ]; then
  step build in_root env DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" GANGWAY_DEB_WORK="$out/work" \
    ${GANGWAY_DEB_TARBALL:+GANGWAY_DEB_TARBALL="$GANGWAY_DEB_TARBALL"} \
    ${DEB_CFLAGS_APPEND:+DEB_CFLAGS_APPEND="$DEB_CFLAGS_APPEND"} ${DEB_CXXFLAGS_APPEND:+DEB_CXXFLAGS_APPEND="$DEB_CXXFLAGS_APPEND"} \
    contrib/dev/build-deb.sh "$out" || exit 1
  touch "$out/.built"  # whole: another release's run may now read this package (refuses-, below)
  [ "$mode" = --build-only ] && exit 0
fi
deb=$(ls "$out"/gangway_*.deb 2>/dev/null | grep -v dbgsym | head -1)
[ -n "$deb" ] || { echo "FAIL: deb build on SLURM $release: no package in $out (run $prog $release --build-only first)"; exit 1; }
depends_on_release() {
  local d; d=$(dpkg-deb -f "$deb" Depends)
  echo "Depends: $d"
  grep -qF "slurm-wlm-basic-plugins (>= $release~)" <<<"$d" && grep -qF "slurm-wlm-basic-plugins (<< $next~)" <<<"$d" \
    || { echo "want slurm-wlm-basic-plugins (>= $release~), (<< $next~)"; return 1; }
}
step depends depends_on_release || true
# The man pages are in the package (read from the .deb: a root may leave
# /usr/share/man out when it installs).
ships_man_pages() {
  local list p; list=$(dpkg-deb -c "$deb")
  for p in man1/gangway.1 man8/gangway.so.8 man8/gangway-doctor.8 man8/gangway-node-check.8 man8/gangway-fleet.8 \
    man5/node-check.conf.5; do
    grep -qE "/usr/share/man/$p(\.gz)?\$" <<<"$list" || { echo "the package lacks /usr/share/man/$p"; return 1; }
  done
}
step man-pages ships_man_pages || true

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plugin=/usr/lib/$multiarch/slurm/gangway.so
purge() { [ "${GANGWAY_KEEP_DEB:-}" = 1 ] || in_root dpkg --purge gangway >/dev/null 2>&1 || true; }
trap purge EXIT
# Another release's package, when an earlier run left one in _deb-OTHER/:
# dpkg must refuse to configure it here, naming SLURM's package (a release's
# plugin would be refused by SLURM at every step), and it is purged again.
refused_here() {  # refused_here DEB
  local o=0 text
  text=$(in_root dpkg -i "$1" 2>&1) || o=$?
  echo "$text"
  in_root dpkg --purge gangway >/dev/null 2>&1 || true
  [ $o != 0 ] || { echo "dpkg -i $1 succeeded on SLURM $release: it must not"; return 1; }
  grep -q 'gangway depends on slurm-wlm-basic-plugins' <<<"$text" || { echo "refused, but not for SLURM's release"; return 1; }
}
for other in "$top"/_deb-*/gangway_*.deb; do
  [ -f "$other" ] && [ -f "$(dirname "$other")/.built" ] && [ "$(dirname "$other")" != "$out" ] || continue
  ob=$(basename "$(dirname "$other")")
  step "refuses-${ob#_deb-}-package" refused_here "$other" || true
done
if step install in_root dpkg -i "$deb"; then
  step contents in_root test -x /usr/bin/gangway -a -f "$plugin" -a -f /etc/slurm/plugstack.conf.d/gangway.conf \
    -a -x /usr/libexec/gangway/health-check -a -f /usr/share/gangway/nhc/gangway.nhc -a -f /usr/share/gangway/prometheus/prometheus.yml \
    -a -f /usr/share/doc/gangway/examples/node-check.slurm.conf || true
  step doctor in_root /usr/bin/gangway doctor || true
  # The cluster tests, as make check runs them, with the installed files (seen
  # from the host through the root's path) in place of the build's.
  # The package's own build tree (its test programs, fakes); on 22.05 without one, the host's _build.
  builddir=$(ls -d "$out"/work/gangway-*/_build 2>/dev/null | head -1)
  [ -n "$builddir" ] || builddir=$top/_build
  # CI runs the release's cluster tests on this package's own build tree
  # (make check on 22.05; release-check.sh's GANGWAY_RELEASE_BUILD on the
  # others), the same binaries as installed: env_contract runs there and not twice.
  tests="env_contract bad_input"
  [ -z "${GANGWAY_DEB_TREE_TESTED:-}" ] || tests=bad_input
  for t in $tests; do
    step "installed-$t" env top_srcdir="$top" top_builddir="$builddir" GANGWAY_RELEASE="$release" \
      GANGWAY_PLUGIN="$root$plugin" GANGWAY_BIN="$root/usr/bin/gangway" bash "$top/tests/integration/$t.sh" || true
  done
fi
exit $status

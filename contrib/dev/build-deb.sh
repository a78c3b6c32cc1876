#!/bin/bash
# Builds the gangway Debian package from this tree: copies the sources (not
# the build products) to a temporary directory, puts contrib/debian at
# debian/, runs dpkg-buildpackage -us -uc -b there, and leaves the .deb in
# OUTDIR (default: ./_deb), with the build log gangway-build.log. The package depends on the SLURM release whose
# libslurm-dev it was built with (see contrib/debian/rules).
#
#   contrib/dev/build-deb.sh [OUTDIR]
#   DEB_BUILD_OPTIONS=nocheck contrib/dev/build-deb.sh   # skip make check in the build
#   GANGWAY_DEB_WORK=DIR contrib/dev/build-deb.sh OUTDIR  # build in DIR (emptied first) and keep it
#   GANGWAY_DEB_TARBALL=gangway-V.tar.gz contrib/dev/build-deb.sh  # from make dist's tarball
#
# GANGWAY_DEB_WORK keeps the package's build tree, DIR/gangway-VERSION/_build,
# configured and compiled with the release's compiler and Debian's flags, and
# its logs (DIR/autoreconf.log, DIR/build.log): CI tests that tree on the
# release's cluster (contrib/dev/release-check.sh, GANGWAY_RELEASE_BUILD)
# instead of compiling gangway a second time.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/_deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
for tool in dpkg-buildpackage dh fakeroot; do
  command -v "$tool" >/dev/null || { echo "build-deb.sh: $tool is missing: apt-get install dpkg-dev debhelper fakeroot (contrib/dev/install-deps.sh)" >&2; exit 1; }
done
version=$(sed -n 's/^AC_INIT(\[gangway\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
deb_version=$(sed -n '1s/^gangway (\([^)-]*\).*/\1/p' "$top/contrib/debian/changelog")
[ "$version" = "$deb_version" ] || echo "build-deb.sh: warning: configure.ac says $version, contrib/debian/changelog $deb_version" >&2

if [ -n "${GANGWAY_DEB_WORK:-}" ]; then
  work=$GANGWAY_DEB_WORK
  rm -rf "$work" && mkdir -p "$work"
  work=$(cd "$work" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/var/tmp}/gangway-deb.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
src=$work/gangway-$version
mkdir -p "$src"
# The sources only: those of GANGWAY_DEB_TARBALL (`make dist`'s, as a release
# is built: CI's way, so that the package, and the tests run on its build
# tree, show the tarball carries what they need); else a git checkout lists them;
# a release tarball holds nothing else.
if [ -n "${GANGWAY_DEB_TARBALL:-}" ]; then
  tar -xzf "$GANGWAY_DEB_TARBALL" -C "$src" --strip-components=1 \
    || { echo "build-deb.sh: cannot unpack $GANGWAY_DEB_TARBALL" >&2; exit 1; }
elif git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$top" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$src"
else
  (cd "$top" && tar --exclude='./_build*' --exclude='./_deb' --exclude='./debian' -cf - .) | tar -xf - -C "$src"
  [ -f "$src/config.status" ] && { echo "build-deb.sh: $top is configured in place; run make distclean first" >&2; exit 1; }
fi
rm -rf "$src/debian"
cp -a "$src/contrib/debian" "$src/debian"
cd "$src"
[ -x configure ] || autoreconf -fi >"$work/autoreconf.log" 2>&1 || { tail -30 "$work/autoreconf.log"; echo "build-deb.sh: autoreconf failed" >&2; exit 1; }
# debhelper builds with make -jN only when DEB_BUILD_OPTIONS says parallel=N;
# without it the package built on one core, twice as long on CI's two.
case " ${DEB_BUILD_OPTIONS:-} " in *" parallel="*) ;; *) export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }parallel=$(nproc)" ;; esac
# nocheck in the options skips the tests; the build dependencies that only the
# tests need (catch2, prometheus, marked <!nocheck>) are dropped only by the
# nocheck profile, so set both (Debian policy 4.9.1): a release root has no
# Prometheus, and its build stopped at dpkg-checkbuilddeps without this.
case " $DEB_BUILD_OPTIONS " in
  *" nocheck "*) case " ${DEB_BUILD_PROFILES:-} " in *" nocheck "*) ;; *) export DEB_BUILD_PROFILES="${DEB_BUILD_PROFILES:+$DEB_BUILD_PROFILES }nocheck" ;; esac ;;
esac
echo "build-deb.sh: dpkg-buildpackage -us -uc -b in $src (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS${DEB_BUILD_PROFILES:+ DEB_BUILD_PROFILES=$DEB_BUILD_PROFILES})"
if ! dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1; then
  tail -60 "$work/build.log"
  echo "build-deb.sh: dpkg-buildpackage failed (log above)" >&2
  exit 1
fi
cp "$work/build.log" "$out/gangway-build.log"
grep -E '^dpkg-deb: building package' "$work/build.log" || true
cp "$work"/*.deb "$out"/
debs=$(cd "$work" && ls ./*.deb | grep -v dbgsym | sed 's|^\./||')
for d in $debs; do
  echo "build-deb.sh: $out/$d: $(dpkg-deb -f "$out/$d" Version) Depends: $(dpkg-deb -f "$out/$d" Depends)"
done

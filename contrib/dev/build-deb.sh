#!/bin/bash
# Builds the gangway Debian package from this tree: copies the sources (not
# the build products) to a temporary directory, puts contrib/debian at
# debian/, runs dpkg-buildpackage -us -uc -b there, and leaves the .deb in
# OUTDIR (default: ./_deb), with the build log gangway-build.log. The package depends on the SLURM release whose
# libslurm-dev it was built with (see contrib/debian/rules).
#
#   contrib/dev/build-deb.sh [OUTDIR]
#   DEB_BUILD_OPTIONS=nocheck contrib/dev/build-deb.sh   # skip make check in the build
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

work=$(mktemp -d "${TMPDIR:-/var/tmp}/gangway-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/gangway-$version
mkdir -p "$src"
# The sources only: a git checkout lists them; a release tarball holds nothing else.
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$top" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$src"
else
  (cd "$top" && tar --exclude='./_build*' --exclude='./_deb' --exclude='./debian' -cf - .) | tar -xf - -C "$src"
  [ -f "$src/config.status" ] && { echo "build-deb.sh: $top is configured in place; run make distclean first" >&2; exit 1; }
fi
rm -rf "$src/debian"
cp -a "$src/contrib/debian" "$src/debian"
cd "$src"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
# debhelper builds with make -jN only when DEB_BUILD_OPTIONS says parallel=N;
# without it the package built on one core, twice as long on CI's two.
case " ${DEB_BUILD_OPTIONS:-} " in *" parallel="*) ;; *) export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }parallel=$(nproc)" ;; esac
echo "build-deb.sh: dpkg-buildpackage -us -uc -b in $src (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)"
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

#!/bin/bash
# The plugin also builds against a newer spank.h, found through --with-slurm.
# SLURM 23.11 added spank_prepend_task_argv(); no newer libslurm-dev is
# packaged for Debian 12, so this test makes a SLURM prefix whose headers are
# Debian's plus that declaration and a 23.11 version number, and checks that
# configure detects both and that the plugin builds and exports what it must.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
if [ -f "$top_srcdir/config.status" ]; then
  # Automake refuses a second, out-of-tree build of a source tree configured in place.
  [ "${CI:-}" = true ] && { echo "FAIL: source tree configured in place under CI"; exit 1; }
  echo "SKIP: $top_srcdir is configured in place; run make check from an out-of-tree build (contrib/dev/test-all.sh does)"; exit 77
fi
work=$(mktemp -d "${TMPDIR:-/var/tmp}/gangway-newer-spank.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/prefix/include/slurm" "$work/build"
cp /usr/include/slurm/*.h "$work/prefix/include/slurm/"
sed -i 's/^#define SLURM_VERSION_NUMBER .*/#define SLURM_VERSION_NUMBER 0x170b00/' "$work/prefix/include/slurm/slurm_version.h"
# Declared where 23.11 declares it: next to the other task-environment calls.
sed -i "s|^spank_err_t spank_unsetenv (spank_t spank, const char \*var);|&\nspank_err_t spank_prepend_task_argv(spank_t spank, int argc, const char *argv[]);|" \
  "$work/prefix/include/slurm/spank.h"
grep -q spank_prepend_task_argv "$work/prefix/include/slurm/spank.h" || { echo "FAIL: could not add the 23.11 declaration"; exit 1; }
cd "$work/build"
if ! "$top_srcdir/configure" -q --with-slurm="$work/prefix" >configure.out 2>&1; then
  echo "FAIL: configure --with-slurm failed:"; tail -20 configure.out; exit 1
fi
fail=0
grep -q '#define HAVE_DECL_SPANK_PREPEND_TASK_ARGV 1' config.h || { echo "FAIL: spank_prepend_task_argv not detected"; fail=1; }
grep -q '#define GANGWAY_SLURM_BUILT_FOR "23.11.0"' config.h || { echo "FAIL: SLURM version not read from the prefix: $(grep BUILT_FOR config.h)"; fail=1; }
grep -q "I$work/prefix/include" Makefile || { echo "FAIL: the prefix's include dir is not used"; fail=1; }
if make -j"$(nproc)" spank/gangway.la >make.out 2>&1; then
  nm -D --defined-only spank/.libs/gangway.so | grep -q ' slurm_spank_task_init$' || { echo "FAIL: symbols missing"; fail=1; }
else
  echo "FAIL: the plugin does not build against the newer spank.h:"; grep -E 'error' make.out | head; fail=1
fi
# That plugin on this SLURM: gangway doctor reads its plugin_version and says what to rebuild.
if [ -n "${GANGWAY_BIN:-}" ] && [ -f spank/.libs/gangway.so ]; then
  built=$("$GANGWAY_BIN" --version 2>/dev/null | sed -n 's/.*built for SLURM \([0-9.]*\)).*/\1/p')
  mkdir -p "$work/bin" && printf '#!/bin/sh\necho "slurm %s"\n' "$built" >"$work/bin/srun" && chmod +x "$work/bin/srun"
  out=$(PATH="$work/bin:$PATH" "$GANGWAY_BIN" doctor --plugin "$PWD/spank/.libs/gangway.so" --plugstack /dev/null 2>&1)
  if grep -q "PROBLEM: .*gangway.so was built for SLURM 23.11 but SLURM $built runs here: .*rebuild gangway against SLURM ${built%.*}'s headers" <<<"$out"; then
    echo "ok: gangway doctor reports the 23.11 plugin on SLURM $built and what to rebuild"
  else
    echo "FAIL: gangway doctor did not report the mismatch:"; echo "$out"; fail=1
  fi
fi
[ $fail = 0 ] && echo "ok: configure --with-slurm found a 23.11 spank.h, detected spank_prepend_task_argv, built the plugin"
exit $fail

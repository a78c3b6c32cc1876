# Sourced by the benchmarks that launch steps on the test cluster
# (launch_overhead.sh, check_overhead.sh): finds the build, then reuses the
# tests' lib.sh, which installs the plugin and brings the cluster up.
top=$(cd "$(dirname "$0")/.." && pwd)
export top_srcdir=$top top_builddir=${top_builddir:-$top}
[ -r "$top_builddir/spank/.libs/gangway.so" ] || top_builddir=$top/_build
export GANGWAY_PLUGIN=${GANGWAY_PLUGIN:-$top_builddir/spank/.libs/gangway.so} GANGWAY_BIN=${GANGWAY_BIN:-$top_builddir/launcher/gangway}
set +eu
. "$top/tests/integration/lib.sh"
set -eu

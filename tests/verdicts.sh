# Sourced (through tests/lib/script_env.sh, or directly) by the script tests
# that count their checks (preflight_local.sh,
# preflight_gpu.sh, epilog_drain.sh, and the cluster tests through
# integration/lib.sh): one "ok:"/"FAIL:" line per check, one summary line,
# exit status 1 when any check failed.
fails=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
finish() { [ $fails = 0 ] && echo "all checks passed" || echo "$fails check(s) failed"; exit $((fails > 0)); }

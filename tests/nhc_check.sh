#!/bin/bash
# contrib/nhc/gangway.nhc's check_gangway under a small stand-in for NHC (NHC
# is not in Debian): its die() records the failure as NHC's does
# ("die 1 MESSAGE"), log() records notes. A healthy fixture node passes; a
# faulty one fails with gangway's one line; gangway missing, a bad site file
# or a check that could not finish never fails the node.
set -u
. "$(dirname "$0")/lib/script_env.sh"
test_workdir nhc
"$top_srcdir/tests/fixtures/node/make-node.sh" "$W/ok"
"$top_srcdir/tests/fixtures/node/make-node.sh" "$W/bad" port-polling
: >"$W/node-check.conf"
printf 'gpus=lots\n' >"$W/broken.conf"

# NHC's part, as small as this needs: die MSG-RC MESSAGE and log MESSAGE.
DIED= LOGGED=
die() { DIED="$2"; return "$1"; }
log() { LOGGED+="$*"$'\n'; }
# shellcheck source=../contrib/nhc/gangway.nhc
. "$top_srcdir/contrib/nhc/gangway.nhc"
wrapper() {  # wrapper TREE CONF: a gangway that checks TREE with CONF, as node08
  cat >"$W/gangway" <<SH
#!/bin/sh
exec env GANGWAY_SYSFS_ROOT='$W/$1' SLURMD_NODENAME=node08 '$GW' "\$@" --config='$W/$2' --state='$W/state-$1/state'
SH
  chmod +x "$W/gangway"
}
run() { DIED= LOGGED=; GANGWAY_NHC_BIN=$W/gangway GANGWAY_NHC_LOG=$W/notes check_gangway "$@"; rc=$?; }

wrapper ok node-check.conf
run
[ $rc = 0 ] && [ -z "$DIED" ] && pass "a healthy node: check_gangway returns 0, no die" || fail "healthy: rc=$rc died=$DIED log=$LOGGED"
wrapper bad node-check.conf
run
if [ $rc != 0 ] && [ "$DIED" = "check_gangway: mlx5_1/1 port DOWN, not ACTIVE; mlx5_1/1 physical link Polling, not LinkUp (cable, transceiver or switch port)" ]; then
  pass "a port polling: die 1 \"$DIED\""
else fail "polling: rc=$rc died=$DIED log=$LOGGED notes=$(cat "$W/notes" 2>/dev/null)"; fi
run full
[ $rc != 0 ] && [ -n "$DIED" ] && pass "check_gangway full: the same failure at the full level" || fail "full: rc=$rc died=$DIED"
wrapper bad broken.conf
run
[ $rc = 0 ] && [ -z "$DIED" ] && grep -q "could not check (exit 2): not a failure of this node" <<<"$LOGGED" \
  && grep -q "broken.conf:1: gpus=lots is not a count" "$W/notes" \
  && pass "a bad site file: logged, the node not failed" || fail "bad conf: rc=$rc died=$DIED log=$LOGGED"
GANGWAY_NHC_BIN=$W/no-such-gangway check_gangway; rc=$?
[ $rc = 0 ] && grep -q "not found; not checked" <<<"$LOGGED" && pass "gangway not installed: logged, not failed" \
  || fail "missing: rc=$rc log=$LOGGED"
run sometimes
[ $rc = 0 ] && grep -q 'level "sometimes" is not quick or full' <<<"$LOGGED" && pass "a bad level in nhc.conf: logged, not failed" \
  || fail "bad level: $rc $LOGGED"
finish

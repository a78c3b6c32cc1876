#!/bin/bash
# gangway-releases: 22.05   (SPANK's call order is the same on every release)
# gangway beside a container plugin that, as pyxis does, moves each task into
# the container's mount namespace in its task_init (tests/fakes/fake_pyxis.c,
# a stand-in: pyxis and enroot are not in Debian), on the real cluster:
#  (a) gangway listed first (as docs/check.md says): the check runs on the host
#      before the container, then the command runs in the container (which
#      has no gangway) with the variables;
#  (b) the stand-in listed first, no check: the command sees the same variables;
#  (c) the stand-in listed first with --gangway-check: the check cannot start
#      in the container; the step stops before the command with one line
#      telling the administrator to list gangway first.
. "$(dirname "$0")/lib.sh"
rm -rf "${WORK:?}"/* && mkdir -p "$WORK/container"
cd "$WORK" || exit 1
command -v cc >/dev/null || { echo "FAIL: cc is missing (apt-get install gcc)"; exit 1; }
cc -shared -fPIC -Wall -Werror -o "$WORK/fake_pyxis.so" "$top_srcdir/tests/fakes/fake_pyxis.c" 2>cc.err \
  || { echo "FAIL: the stand-in plugin does not build: $(cat cc.err)"; exit 1; }
PYXIS="required $WORK/fake_pyxis.so hide=$INSTALL mark=$WORK/container"
GW="required $INSTALL/gangway.so $SITE_ARGS launcher=$INSTALL/gangway"
order() { printf '%s\n' "$@" >"$PLUGSTACK.new" && mv -f "$PLUGSTACK.new" "$PLUGSTACK"; }
trap 'no_plugstack; rm -rf "$CLUSTER_LOCK"' EXIT
# shellcheck disable=SC2016
CMD='where=host; [ -e '"$WORK"'/container/in-container ] && where=container
gw=$(command -v gangway >/dev/null && echo has-gangway || echo no-gangway)
echo "RAN $SLURMD_NODENAME $where $gw NODE_RANK=$NODE_RANK RANK=$RANK WORLD_SIZE=$WORLD_SIZE NUM_NODES=$NUM_NODES MASTER_ADDR=$MASTER_ADDR NODE_ADDR=$NODE_ADDR"'
vars() { grep '^RAN' "$1" | sed 's/ \(host\|container\) [a-z-]* / /' | sort; }

# (a) gangway, then the container
order "$GW" "$PYXIS"
timeout 90 srun -N2 --ntasks-per-node=1 --gangway-check bash -c "$CMD" >a.out 2>a.err; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^RAN node[0-9]* container no-gangway NODE_RANK=[01] ' a.out)" = 2 ] \
   && grep -q '^gangway preflight (quick, 2 nodes.*: ok' a.err; then
  pass "(a) gangway first: the check ran on the host, then the command in a container without gangway on both nodes"
else fail "(a) rc=$rc: $(cat a.out) $(head -c 800 a.err)"; fi
[ "$(grep -c 'WORLD_SIZE=2 NUM_NODES=2 MASTER_ADDR=198\.19\.0\.11 NODE_ADDR=198' a.out)" = 2 ] \
  && pass "(a) the variables reach the command in the container" || fail "(a) variables: $(cat a.out)"

# (b) the container first, no check: the same variables
order "$PYXIS" "$GW"
timeout 90 srun -N2 --ntasks-per-node=1 bash -c "$CMD" >b.out 2>b.err; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^RAN node[0-9]* container no-gangway' b.out)" = 2 ] && [ "$(vars a.out)" = "$(vars b.out)" ]; then
  pass "(b) the stand-in first, no check: the command's variables equal (a)'s"
else fail "(b) rc=$rc: a: $(vars a.out) b: $(vars b.out) $(head -c 800 b.err)"; fi

# (c) the container first, with the check: stopped, with the line that says what to do
timeout 90 srun -N2 --ntasks-per-node=1 --gangway-check bash -c "$CMD" >c.out 2>c.err; rc=$?
if [ $rc != 0 ] && ! grep -q '^RAN' c.out && grep -q 'already inside a container.*list gangway before it' c.err; then
  pass "(c) the stand-in first with --gangway-check: no command ran, and: $(grep -m1 -o 'cannot start the preflight check.*' c.err | cut -c1-160)"
else fail "(c) rc=$rc: $(cat c.out) $(head -c 800 c.err)"; fi
finish

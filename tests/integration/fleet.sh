#!/bin/bash
# gangway-releases: 22.05
# The fleet memory end to end on the real 4-node cluster: a job check run
# by root and one run by a user (nobody), and `gangway node-check --json` on
# every node (srun, as root, on a fixture node tree), drop their reports
# into a spool made as gangway-fleet(8) says (root's, mode 1733); `gangway fleet
# ingest` stores them (what each is from its kind, who vouches for it from
# its owner: root's job check is a job check of uid 0, the user's one of its
# uid, root's node checks uid 0's), a second ingest finds nothing new, and
# `gangway fleet show` lists the four nodes with their TCP figures from the
# job checks and their port rates from the node checks.
. "$(dirname "$0")/lib.sh"
plugstack $SITE_ARGS
export GANGWAY_SECRET=${GANGWAY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
rm -rf "${WORK:?}"/*
chmod 755 "$WORK"
SP=$WORK/spool DB=$WORK/fleet.db
mkdir -m 1733 "$SP"
cd "$WORK" || exit 1
q() { $TORCH_PY -c 'import sqlite3,sys; print(" ".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$DB" "$1"; }

# (a) Job checks: root's and a user's, each node 0 drops one report.
timeout 60 srun -N4 -n4 gangway check --fleet-spool="$SP" >"$WORK/root.out" 2>"$WORK/root.err"; rc_root=$?
timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups srun -N4 -n4 gangway check --fleet-spool="$SP" \
  >"$WORK/user.out" 2>"$WORK/user.err"; rc_user=$?
jobs=$(cd "$SP" && ls job-*.json 2>/dev/null | wc -l)
owners=$(stat -c %u "$SP"/job-*.json 2>/dev/null | sort -n | tr '\n' ' ')
if [ $rc_root = 0 ] && [ $rc_user = 0 ] && [ "$jobs" = 2 ] && [ "$owners" = "0 65534 " ] \
   && [ "$(stat -c %a "$SP"/job-*.json | sort -u)" = 600 ]; then
  pass "(a) two job checks (root's, nobody's): one report each in the spool, 0600, owned by their users"
else fail "(a) job checks: rc root=$rc_root user=$rc_user, $jobs report(s), owners $owners; $(tail -3 "$WORK/user.err")"; fi

# (b) The node check on every node, as root: its JSON on stdout and in the spool.
"$top_srcdir/tests/fixtures/node/make-node.sh" "$WORK/tree" >/dev/null
: >"$WORK/node-check.conf"
timeout 60 srun -N4 -n4 --ntasks-per-node=1 sh -c "exec gangway node-check --json --sysfs-root='$WORK/tree' \
  --config='$WORK/node-check.conf' --state='$WORK'/state-\$SLURMD_NODENAME --fleet-spool='$SP'" \
  >"$WORK/nc.out" 2>"$WORK/nc.err"; rc=$?
nodes=$(cd "$SP" && ls node-*.json 2>/dev/null | sed 's/^node-\(node[0-9]*\)\..*/\1/' | sort | tr '\n' ' ')
# (srun interleaves the tasks' long lines: count the objects, not the lines)
[ "$nodes" = "node08 node09 node10 node11 " ] && [ "$(grep -o '"kind": "gangway-node-check"' "$WORK/nc.out" | wc -l)" = 4 ] \
  && pass "(b) node-check --json on 4 nodes: 4 reports in the spool (rc $rc)" \
  || fail "(b) node checks: rc=$rc spooled: $nodes; $(tail -3 "$WORK/nc.err")"

# (c) The ingest stores all six, each as its kind, with its owner (the user's
# names checked against the cluster's `scontrol -o show node`: no NOTE); again, nothing new.
out=$(gangway fleet ingest --spool "$SP" --db "$DB" 2>&1); rc=$?
src=$(q "select source || ':' || uid || ':' || count(*) from checks group by source, uid order by 1")
if [ $rc = 0 ] && grep -q "6 stored, 0 already there, 0 rejected" <<<"$out" \
   && ! grep -q "NOTE: users' reports were stored without their node names checked" <<<"$out" \
   && [ "$src" = "job_check:0:1 job_check:65534:1 node_check:0:4" ] && [ -z "$(cd "$SP" && ls *.json 2>/dev/null)" ]; then
  pass "(c) fleet ingest: 6 checks stored (root's and the user's job checks as job checks of their uids, root's 4 node checks), the spool empty"
else fail "(c) ingest: rc=$rc $out; sources: $src; left: $(ls "$SP")"; fi
out=$(gangway fleet ingest --spool "$SP" --db "$DB" 2>&1)
grep -q "0 stored, 0 already there, 0 rejected" <<<"$out" && pass "(c) a second ingest finds nothing new" || fail "(c) again: $out"

# (d) fleet show: every node, with the job checks' TCP figures and the node checks' port rates.
gangway fleet show --db "$DB" --days 2 >"$WORK/show.out" 2>&1; rc=$?
ok=1
for n in node08 node09 node10 node11; do
  grep -q "^$n *tcp_send .* Gb/s .* 2$" "$WORK/show.out" || ok=0
  grep -q "^$n *link_bandwidth " "$WORK/show.out" || ok=0
  grep -q "^$n *port_rate " "$WORK/show.out" || ok=0
done
[ $rc = 0 ] && [ $ok = 1 ] && pass "(d) fleet show: node08-node11 with tcp_send (2 checks), link_bandwidth and port_rate" \
  || fail "(d) show: rc=$rc $(cat "$WORK/show.out")"
finish

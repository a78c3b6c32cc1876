#!/bin/bash
# gangway node-check --slurm as SLURM's HealthCheckProgram on the real 4-node
# cluster, run by every slurmd at once every few seconds (cluster.sh up
# --health-check): a wrapper per node points the check at that node's own
# fixture tree (tests/fixtures/node/make-node.sh; the nodes share the host's
# file system), and a stand-in scontrol is not needed: the check drains and
# resumes through the release's own scontrol.
#  (a) four healthy nodes: every node runs the check, none is drained;
#  (b) node11 given a fault (its GPU 0000:11:00.0 trained at x8): drained
#      with a "gangway:" reason within two intervals;
#  (c) under CPU load (two busy loops per core) for SOAK intervals, the three
#      healthy nodes are never drained and node11 stays drained;
#  (d) node11's fault removed: resumed (after 2 healthy runs, resume_after);
#  (e) a node an admin drained (node08, healthy) and one an admin drained
#      that also fails (node10): both stay drained with the admin's reason.
# SOAK: 12 intervals on this machine's SLURM (48 checks under load: the busy
# loops hold both cores, so CI's builds beside the cluster tests wait for
# them); 4 on another release (contrib/dev/release-check.sh), where the whole
# run must stay short; GANGWAY_NODE_CHECK_SOAK overrides it.
. "$(dirname "$0")/lib.sh"
INTERVAL=${GANGWAY_NODE_CHECK_INTERVAL:-5}
if [ -n "${GANGWAY_CLUSTER_ROOT:-}" ]; then SOAK=${GANGWAY_NODE_CHECK_SOAK:-4}; else SOAK=${GANGWAY_NODE_CHECK_SOAK:-12}; fi
MAKE=$top_srcdir/tests/fixtures/node/make-node.sh
NODES="node08 node09 node10 node11"
loads=()
undo() {
  for p in "${loads[@]}"; do kill "$p" 2>/dev/null; done
  for n in $NODES; do scontrol update NodeName="$n" State=RESUME >/dev/null 2>&1; done
  # The daemons' logs, kept: the restart below starts them afresh.
  cp "$GANGWAY_CLUSTER_DIR"/log/slurmctld.log "$GANGWAY_CLUSTER_DIR"/log/slurmd-node*.log "$WORK/" 2>/dev/null
  # Back to the cluster every other test expects: no HealthCheck lines.
  "$top_srcdir/tests/cluster/cluster.sh" up >/dev/null 2>&1
  return 0
}
trap 'undo; rm -rf "$CLUSTER_LOCK"' EXIT  # replaces lib.sh's trap, so frees its lock too
rm -rf "${WORK:?}"/*
mkdir -p "$WORK/trees" "$WORK/state"
for n in $NODES; do
  "$MAKE" "$WORK/trees/$n-ok"
  ln -sfn "$WORK/trees/$n-ok" "$WORK/root-$n"
done
"$MAKE" "$WORK/trees/node11-bad" gpu-x8
"$MAKE" "$WORK/trees/node10-bad" port-polling
: >"$WORK/node-check.conf"
# The package's wrapper (contrib/slurm/health-check.in), for this build's gangway.
sed "s|@bindir@|$(dirname "$GANGWAY_BIN")|g" "$top_srcdir/contrib/slurm/health-check.in" >"$WORK/health-check"
# What slurmd runs on each node: the environment slurmd gave it (man/gangway-node-check.8's
# table is made from it), then the wrapper on the node's own tree and state;
# one line per run in runs.log.
cat >"$WORK/health-check.sh" <<SH
#!/bin/sh
n=\${SLURMD_NODENAME:-\$(hostname -s)}
echo "\$(date +%s) \$n" >>'$WORK/runs.log'
env >'$WORK'/env-health.\$n
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF='$SLURM_CONF'
'$WORK/health-check' --sysfs-root='$WORK'/root-\$n --config='$WORK/node-check.conf' \\
  --state='$WORK'/state/\$n/state 2>>'$WORK'/check-\$n.log
echo "\$(date +%s) \$n exit \$?" >>'$WORK'/check-\$n.log
SH
chmod 0755 "$WORK/health-check.sh" "$WORK/health-check"
"$top_srcdir/tests/cluster/cluster.sh" up --health-check="$WORK/health-check.sh" --health-interval="$INTERVAL" >"$WORK/up.log" 2>&1 \
  || { echo "FAIL: the cluster did not come up with the health check: $(tail -5 "$WORK/up.log")"; exit 1; }
cd "$WORK" || exit 1
grep -q "^HealthCheckProgram=$WORK/health-check.sh" "$SLURM_CONF" && pass "slurm.conf runs the node check every $INTERVAL s on every node" \
  || fail "no HealthCheckProgram in $SLURM_CONF"

state_of() { scontrol show node "$1" | sed -n 's/.* State=\([^ ]*\).*/\1/p'; }
reason_of() { scontrol show node "$1" | sed -n 's/^ *Reason=\(.*\) \[.*/\1/p'; }
runs_of() { grep -c " $1\$" "$WORK/runs.log" 2>/dev/null || echo 0; }
drained() { case $(state_of "$1") in *DRAIN*) return 0 ;; esac; return 1; }
wait_for() {  # wait_for SECONDS CMD...: until CMD succeeds; the seconds it took, or fails
  local t0=$SECONDS
  while ! "${@:2}"; do [ $((SECONDS - t0)) -ge "$1" ] && return 1; sleep 0.5; done
  echo $((SECONDS - t0))
}
all_ran() { local n; for n in $NODES; do [ "$(runs_of "$n")" -ge "$1" ] || return 1; done; }

# (a) every node runs it, at the same moment, none is drained.
if wait_for $((INTERVAL * 4 + 20)) all_ran 2 >/dev/null; then
  firsts=$(for n in $NODES; do grep " $n\$" runs.log | sed -n 2p | cut -d' ' -f1; done | sort -n | sed -n '1p;$p' | tr '\n' ' ')
  spread=$(( ${firsts#* } - ${firsts%% *} ))
  pass "(a) every node ran the check twice (second runs within ${spread} s of each other)"
else fail "(a) runs: $(sort -k2 runs.log | uniq -c -f1 | tr '\n' ' ')"; fi
bad_now=""; for n in $NODES; do drained "$n" && bad_now+=" $n"; done
[ -z "$bad_now" ] && pass "(a) four healthy nodes: none drained" || fail "(a) drained:$bad_now: $(for n in $bad_now; do reason_of $n; done)"

# (b) node11 faulty: drained within two intervals, with gangway's reason.
ln -sfn "$WORK/trees/node11-bad" "$WORK/root-node11"
if took=$(wait_for $((INTERVAL * 2 + 3)) drained node11); then
  r=$(reason_of node11)
  [ "$r" = "gangway: gpu 0000:11:00.0 PCIe x8 of x16" ] && pass "(b) node11 drained ${took} s after its fault appeared (interval $INTERVAL s): \"$r\"" \
    || fail "(b) node11 drained with reason \"$r\""
else fail "(b) node11 not drained within $((INTERVAL * 2 + 3)) s: $(state_of node11); $(tail -5 check-node11.log)"; fi

# (c) the soak: two busy loops per core, SOAK intervals; the healthy nodes never drained.
for _ in $(seq $(( $(nproc) * 2 ))); do (while :; do :; done) & loads+=($!); done
before=$(runs_of node08)
t0=$SECONDS seen_bad=""
while [ $((SECONDS - t0)) -lt $((SOAK * INTERVAL)) ]; do
  for n in node08 node09 node10; do drained "$n" && seen_bad+=" $n@$((SECONDS - t0))s"; done
  drained node11 || seen_bad+=" node11-resumed@$((SECONDS - t0))s"
  sleep 1
done
for p in "${loads[@]}"; do kill "$p" 2>/dev/null; done; loads=()
ran=$(( $(runs_of node08) - before ))
if [ -z "$seen_bad" ] && [ "$ran" -ge $((SOAK - 2)) ]; then
  pass "(c) under CPU load ($(( $(nproc) * 2 )) busy loops), $SOAK intervals ($ran runs on node08): node08-10 never drained, node11 stayed drained"
else fail "(c) soak: $ran runs; seen:$seen_bad; $(grep -h -v 'exit 0' check-node0*.log | tail -5)"; fi

# (d) node11's fault removed: resumed, and its reason gone.
ln -sfn "$WORK/trees/node11-ok" "$WORK/root-node11"
if took=$(wait_for $((INTERVAL * 3 + 5)) eval '! drained node11'); then
  pass "(d) node11 resumed ${took} s after its fault was removed ($(state_of node11))"
else fail "(d) node11 still $(state_of node11): $(tail -5 check-node11.log)"; fi

# (e) an admin's drain: kept on a healthy node and on a failing one, its reason untouched.
scontrol update NodeName=node08 State=DRAIN Reason="admin: firmware update"
scontrol update NodeName=node10 State=DRAIN Reason="admin: ticket 42"
ln -sfn "$WORK/trees/node10-bad" "$WORK/root-node10"
start=$(runs_of node10)
wait_for $((INTERVAL * 4 + 10)) eval '[ $(( $(runs_of node10) - start )) -ge 3 ]' >/dev/null
if drained node08 && [ "$(reason_of node08)" = "admin: firmware update" ] && drained node10 && [ "$(reason_of node10)" = "admin: ticket 42" ] \
   && grep -q "not gangway's to change" check-node10.log; then
  pass "(e) admin drains stay: node08 (healthy) and node10 (failing, said so in its log) keep the admin's reason after 3 runs"
else fail "(e) node08 $(state_of node08) \"$(reason_of node08)\"; node10 $(state_of node10) \"$(reason_of node10)\""; fi
ln -sfn "$WORK/trees/node10-ok" "$WORK/root-node10"
# What slurmd gave the HealthCheckProgram, names only (its values are the node's).
echo "variables of the HealthCheckProgram on SLURM ${GANGWAY_CLUSTER_RELEASE:-22.05}: $(cut -d= -f1 "$WORK/env-health.node08" | sort -u | tr '\n' ' ')"
finish

#!/bin/bash
# The coordinator at a reduced scale (issue 14, item 3): the real `gangway
# check` as node 0 of a 256-node step on loopback, against 255 simulated
# speakers in one process (bench/coordinator_sim; BENCHMARKS.md has the runs
# up to 2,048 nodes). Checks behaviour, never timing: every node joins, every
# simulated speaker gets the verdict, the verdict is ok and no node is named;
# the coordinator's descriptors stay near one per node; a node whose links are
# slow is named, and it alone; many faulty nodes are all named, and the verdict
# each task gets stays small; a slow and a dead link in a full check name
# nobody and give one finding each. The deadlines are raised so that a loaded
# machine cannot turn into a verdict.
set -u
. "$(dirname "$0")/lib/script_env.sh"
SIM=$top_builddir/bench/coordinator_sim
test_workdir coordinator-sim
N=${COORDINATOR_SIM_NODES:-256}
need=$((N + 256))
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $need ]; then
  echo "SKIP: $N simulated nodes need $need open files; the hard limit is $(ulimit -Hn)"; exit 77
fi
val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2"; }  # val KEY FILE: a figure of the sim's line

# 1. healthy: the sim's own exit status says every node joined and got the verdict, the verdict is ok,
#    no node is named, nothing was lost or malformed.
"$SIM" --nodes=$N --out="$W/ok" --gangway="$GW" -- --timeout=120 --join-timeout=60 >"$W/ok.out" 2>"$W/ok.err"; rc=$?
cat "$W/ok.out"
if [ $rc = 0 ] && [ "$(val verdict "$W/ok.out")" = ok ] && [ "$(val named "$W/ok.out")" = - ] \
   && grep -q "\"detail\": \"$N/$N tasks" "$W/ok/report.json"; then
  pass "$N nodes (1 real, $((N - 1)) simulated): all joined, verdict ok, every simulated speaker got it, none named"
else fail "$N nodes: rc $rc; $(tail -5 "$W/ok.err"; tail -15 "$W/ok/gangway.err")"; fi
fds=$(val peak_fds "$W/ok.out"); th=$(val peak_threads "$W/ok.out")
# One connection per node, the listeners, stdio, and a few probe and stream sockets of node 0's own speaker.
if [ -n "$fds" ] && [ "$fds" -le $((N + 64)) ] && [ "$fds" -ge $((N - 1)) ]; then pass "the coordinator's descriptors: $fds for $N nodes"
else fail "the coordinator's descriptors: ${fds:-none} for $N nodes (bound $((N + 64)))"; fi
if [ -n "$th" ] && [ "$th" -le 64 ]; then pass "the coordinator's threads: $th"; else fail "the coordinator's threads: ${th:-none}"; fi
[ "$(val cmd_verdict "$W/ok.out")" = $((N - 1)) ] && [ "$(val cmd_reach "$W/ok.out")" = $((N - 1)) ] \
  && pass "one reach command and one verdict per simulated node" \
  || fail "commands: $(grep -o 'cmd_[a-z]*=[0-9]*' "$W/ok.out" | tr '\n' ' ')"

# 2. a node whose links all run at a tenth of the rate: named slow, and no other node.
K=$((N / 2 + 3))
"$SIM" --nodes=$N --slow=$K --out="$W/slow" --gangway="$GW" -- --timeout=120 --join-timeout=60 >"$W/slow.out" 2>"$W/slow.err"; rc=$?
cat "$W/slow.out"
if [ $rc = 0 ] && [ "$(val named "$W/slow.out")" = "sim$K=slow" ]; then pass "slow node sim$K named, and no other"
else fail "slow node: rc $rc, named $(val named "$W/slow.out"); $(tail -5 "$W/slow.err")"; fi

# 3. a third of the nodes fail a stage: all named faulty in the report, and the verdict each
#    task gets stays small (it names 16 and counts the rest): under 1 KB a task.
F=$(seq -s, 3 3 $((N - 1)))
"$SIM" --nodes=$N --faulty=$F --out="$W/faulty" --gangway="$GW" -- --timeout=120 --join-timeout=60 >"$W/faulty.out" 2>"$W/faulty.err"; rc=$?
cat "$W/faulty.out"
vbytes=$(sed -n 's/.*[=,]in7:\([0-9]*\).*/\1/p' "$W/faulty.out")
if [ $rc = 0 ] && [ -n "$vbytes" ] && [ "$vbytes" -lt $(((N - 1) * 1024)) ]; then
  pass "$(echo "$F" | tr ',' '\n' | wc -l) faulty nodes named; the verdicts took $vbytes bytes for $((N - 1)) tasks"
else fail "faulty nodes: rc $rc, verdict bytes ${vbytes:-none}; $(tail -5 "$W/faulty.err")"; fi

# 4. link faults alone, in a full check (whose ring holds shift 1 twice): a
#    slow link and a dead one between nodes that are fine elsewhere. Nobody
#    named, the verdict degraded, one finding per link; the dead link, found
#    by the reach stage, is not streamed over. 32 nodes: the full check's
#    five rounds stay short.
L=32
"$SIM" --nodes=$L --check=full --slow-link=9-10 --dead-link=5-6 --out="$W/links" --gangway="$GW" -- --timeout=120 --join-timeout=60 \
  >"$W/links.out" 2>"$W/links.err"; rc=$?
cat "$W/links.out"
findings() { /usr/bin/python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["findings"]))' "$W/links/report.json" 2>/dev/null; }
slow_f=$(findings | grep -c '^link sim9 -> sim10 slow')
dead_f=$(findings | grep -c '^link sim5 -> sim6 has no TCP path')
streamed=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(sum(1 for l in r["links"] if l["stage"] != "reach" and l["from"] == "sim5" and l["to"] == "sim6" and "not streamed" not in (l["error"] or "")))' "$W/links/report.json" 2>/dev/null)
if [ $rc = 0 ] && [ "$(val verdict "$W/links.out")" = degraded ] && [ "$(val named "$W/links.out")" = - ] \
   && [ "$slow_f" = 1 ] && [ "$dead_f" = 1 ] && [ "$streamed" = 0 ]; then
  pass "full check, $L nodes, slow link sim9->sim10 and dead link sim5->sim6: none named, one finding each, the dead link not streamed over"
else fail "link faults: rc $rc, verdict $(val verdict "$W/links.out"), named $(val named "$W/links.out"), slow findings $slow_f, dead findings $dead_f, streamed over the dead link ${streamed:-?}; $(findings; tail -5 "$W/links.err")"; fi

finish

#!/bin/bash
# gangway-releases: 22.05   (the launcher, its faults and verdicts are the same on every release; check_option runs srun --gangway-check, env_contract the step's variables and preflight_requeue the requeue on each)
# gangway check / gangway run on the real 4-node cluster through srun, with
# faults injected on the data network (198.19.0.0/24, eth1):
#  (a) healthy: verdict ok in every one of repeated runs;
#  (b) node11's data link shaped with tc to a fifth of the others' rate: node11 slow, no other;
#  (c) node11's data link down: node11 unreachable, within the deadline;
#  (d) one task killed during the check: the others stop within the deadline naming its node;
#  (e) the link between node09 and node10 alone cut (each drops what it sends the other;
#      node 0, node08, reaches both):
#      no node named, the verdict degraded by a finding naming that pair, the
#      check done before its deadline (the bandwidth stage streams over no link
#      the reach stage found dead), and --on-fail=requeue says why it does not requeue;
#  (f) the link between node09 and node10 alone slowed to a fifth (HTB in each, for what it
#      sends the other): no node named, the verdict degraded by a finding naming that link as
#      slow twice with both ends fine against other peers;
#  and a torchrun job started by `gangway run` after the check.
# Every fault is undone on exit.
. "$(dirname "$0")/lib.sh"
plugstack $SITE_ARGS
BAD=node11
# The plugin creates GANGWAY_SECRET in srun; a value set here is what an older plugin would lack.
export GANGWAY_SECRET=${GANGWAY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
undo() { unshape_link "$BAD"; uncut_pair node09 node10; fast_pair node09 node10; }
trap 'undo; rm -rf "$CLUSTER_LOCK"' EXIT  # replaces lib.sh's trap, so frees its lock too
undo

calc() { awk "BEGIN { print ($*) }"; }  # float arithmetic and comparisons (1/0) without bc
check() {  # check NAME [SRUN/GANGWAY ARGS]: one 4-node check; rc in $rc, seconds in $secs
  local name=$1; shift
  rm -f "$WORK/$name.json" "$WORK/$name.svg"
  local t0; t0=$(date +%s.%N)
  timeout 60 srun -N4 -n4 gangway check --report="$WORK/$name.json" --heatmap="$WORK/$name.svg" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"; rc=$?
  secs=$(calc "$(date +%s.%N) - $t0")
}
statuses() {  # statuses FILE: "node08=ok node09=ok ..."
  $TORCH_PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(n["name"]+"="+n["status"] for n in r["nodes"]), r["verdict"])' "$1" 2>/dev/null
}
field() { $TORCH_PY -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

# (a) healthy, three runs in a row.
healthy=0
for i in 1 2 3; do
  check healthy$i
  s=$(statuses "$WORK/healthy$i.json")
  if [ $rc = 0 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=ok ok" ] && grep -q '<svg' "$WORK/healthy$i.svg"; then
    healthy=$((healthy + 1))
  else
    fail "healthy run $i: rc=$rc, $s"; cat "$WORK/healthy$i.err"
  fi
done
[ $healthy = 3 ] && pass "(a) healthy cluster: verdict ok in 3/3 runs, each $(grep -o '[0-9.]* s)' "$WORK/healthy3.err" | head -1) of check"
rate=$(field "$WORK/healthy1.json" 'sorted(l["bps"] for l in r["links"] if l["stage"]=="bandwidth" and l["bps"])[2]')
# GPU-less, RDMA-less nodes: the GPU and RDMA stages ran on every node and were skipped, with the reason.
gpu=$(field "$WORK/healthy1.json" '" ".join("%s=%s:%s" % (s["name"], s["status"], s["detail"].split(" (")[0]) for s in r["stages"] if s["name"] in ("cuda","nccl","verbs"))')
if [ "$gpu" = "cuda=skipped:no GPUs nccl=skipped:no GPUs verbs=skipped:no RDMA devices" ]; then
  pass "GPU and RDMA stages reported skipped with their reasons ($gpu)"
else fail "GPU/RDMA stages: $gpu"; fi

# A site or user that requires the GPU stage: a node without GPUs is faulty, the verdict degraded.
GANGWAY_REQUIRE=cuda timeout 60 srun -N2 -n2 gangway check --report="$WORK/require.json" >/dev/null 2>"$WORK/require.err"; rc=$?
s=$(statuses "$WORK/require.json")
if [ $rc = 3 ] && [ "$s" = "node08=faulty node09=faulty degraded" ]; then pass "GANGWAY_REQUIRE=cuda on GPU-less nodes: $s, exit 3"
else fail "GANGWAY_REQUIRE=cuda: rc=$rc, $s: $(tail -3 "$WORK/require.err")"; fi

# (b) node11's link, both directions, at a fifth of the healthy per-link rate.
if [ -n "$rate" ]; then
  shaped=$(calc "int($rate * 8 / 5 / 1000000)")   # Mbit/s
  shape_link "$BAD" "$shaped"
  check shaped
  s=$(statuses "$WORK/shaped.json")
  if [ $rc = 3 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=slow degraded" ]; then
    pass "(b) $BAD shaped to ${shaped} Mbit/s (a fifth of $(calc "int($rate * 8 / 1000000)") Mbit/s): named slow, no other (exit 3): $(grep "^  $BAD" "$WORK/shaped.err" | tr -s ' ')"
  else
    fail "(b) shaped: rc=$rc, $s"; cat "$WORK/shaped.err"
  fi
  grep -q '#c00000' "$WORK/shaped.svg" && pass "(b) the heatmap marks $BAD" || fail "(b) heatmap has no bad node"
  undo
else
  fail "(b) no bandwidth figure in the healthy report"
fi

# (c) node11's data link down: unreachable, named within the deadline (15 s).
ip link set "d-$BAD" down
check down
s=$(statuses "$WORK/down.json")
if [ $rc = 4 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=unreachable unreachable" ] && [ "$(calc "$secs < 15")" = 1 ]; then
  pass "(c) $BAD's data link down: named unreachable in ${secs}s (exit 4): $(grep "^  $BAD" "$WORK/down.err" | tr -s ' ')"
else
  fail "(c) link down: rc=$rc in ${secs}s, $s"; cat "$WORK/down.err"
fi
undo

# (d) node10's task killed in the middle of a long bandwidth round: the others stop
#     within the deadline and name node10.
rm -f "$WORK/killed.json"
t0=$(date +%s.%N)
timeout 60 srun -N4 -n4 gangway check --round-ms=4000 --report="$WORK/killed.json" >"$WORK/killed.out" 2>"$WORK/killed.err" &
srun_pid=$!
victim=$(task_pid "$INSTALL/gangway check --round-ms=4000" 'SLURMD_NODENAME=node10')
sleep 1.5   # into the bandwidth round
[ -n "$victim" ] && kill -KILL "$victim"
wait $srun_pid; rc=$?
secs=$(calc "$(date +%s.%N) - $t0")
s=$(statuses "$WORK/killed.json")
if [ -n "$victim" ] && [ "$(calc "$secs < 15")" = 1 ] && [[ $s == *"node10=lost"* ]] && [[ $s != *"=slow"* ]] && [[ $s == *unreachable ]] \
   && [[ $(field "$WORK/killed.json" '" ".join(n["reasons"][0] for n in r["nodes"] if n["name"]=="node10")') == "task 2 exited during"* ]]; then
  # The reason is read from the report: srun may end the step (the killed task's exit) before
  # node 0's table on stderr is forwarded.
  pass "(d) task on node10 killed mid-check: the others stopped after ${secs}s naming it: $(field "$WORK/killed.json" '[n["reasons"] for n in r["nodes"] if n["name"]=="node10"]')"
else
  fail "(d) killed task: victim=$victim rc=$rc in ${secs}s, $s"; cat "$WORK/killed.err"
fi

# (e) one pair's link cut, both ends healthy with every other node: a link
#     finding, no node accused (confirm before you accuse), and no requeue.
cut_pair node09 node10
check cutpair --on-fail=requeue
uncut_pair node09 node10
s=$(statuses "$WORK/cutpair.json")
found=$(field "$WORK/cutpair.json" '" | ".join(f for f in r["findings"])')
if [ $rc = 3 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=ok degraded" ] \
   && [[ $found == *node09*node10* || $found == *node10*node09* ]] && [[ $found != *deadline* ]] \
   && grep -q 'on-fail=requeue: the check named no node to exclude' "$WORK/cutpair.err"; then
  pass "(e) node09-node10 link cut: no node named, exit 3 in ${secs}s (within the deadline), finding: $found"
else
  fail "(e) cut pair: rc=$rc, $s, findings: $found"; cat "$WORK/cutpair.err"
fi

# (f) one pair's link slow, both ends at full rate with every other node: a link finding
#     (measured again on its own before it is reported), no node accused.
if [ -n "$rate" ]; then
  slow_pair node09 node10 "$shaped"
  check slowpair
  fast_pair node09 node10
  s=$(statuses "$WORK/slowpair.json")
  slow_link='link node(09 -> node10|10 -> node09) slow: .* twice'
  found=$(field "$WORK/slowpair.json" '" | ".join(f for f in r["findings"])')
  if [ $rc = 3 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=ok degraded" ] \
     && [[ $found =~ $slow_link ]] && [[ $found != *deadline* ]]; then
    pass "(f) node09-node10 link at ${shaped} Mbit/s: no node named, exit 3 in ${secs}s, finding: $found"
  else
    fail "(f) slow pair: rc=$rc, $s, findings: $found"; cat "$WORK/slowpair.err"
  fi
fi

# gangway run: the check, then torchrun with gangway's variables (4 nodes x 2 processes).
$TORCH_PY -c 'import torch' 2>/dev/null || skip_or_fail "Debian's python3-torch is not installed (apt-get install python3-torch)"
NUM_TRAINERS=2 timeout 300 srun -N4 -n4 gangway run -- $TORCH_PY -m torch.distributed.run --redirects=1 --tee=1 \
  "$top_srcdir/tests/integration/allreduce.py" >"$WORK/torch.out" 2>"$WORK/torch.err"; rc=$?
oks=$(grep -o 'ALLREDUCE OK rank=[0-9]*' "$WORK/torch.out" | sort -u | wc -l)  # ranks, not lines (see torch_jobs.sh)
if [ $rc = 0 ] && [ "$oks" = 8 ] && grep -q 'gangway preflight (quick, 4 nodes, .*): ok' "$WORK/torch.err"; then
  pass "srun gangway run -- torchrun: check ok, then $oks ranks all-reduced"
else
  fail "gangway run torchrun: rc=$rc, $oks/8 ranks"; head -30 "$WORK/torch.err" "$WORK/torch.out"
fi
finish

#!/bin/bash
# gangway check / run through the PMIx bootstrap (srun --mpi=pmix) on the real
# 4-node cluster, 2 tasks per node: a PMIx fence proves every task alive, only
# one task per node joins node 0 over TCP, a second fence hands out the verdict.
#  (a) healthy: verdict ok, "bootstrap": "pmix", 4 TCP check-ins for 8 tasks;
#  (b) without --mpi=pmix, and with --bootstrap=tcp, the report says "tcp";
#  (c) gangway run -- gangway check: the command's own PMIx session works after gangway's;
#  (d) node11's data link down: named unreachable within the deadline, through PMIx;
#  (e) a task killed mid-check: the step ends within the deadline (SLURM cancels it).
. "$(dirname "$0")/lib.sh"
plugstack $SITE_ARGS
BAD=node11
export GANGWAY_SECRET=${GANGWAY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
undo() { ip link set "d-$BAD" up 2>/dev/null; return 0; }
trap 'undo; rm -rf "$CLUSTER_LOCK"' EXIT  # replaces lib.sh's trap, so frees its lock too
undo
srun --mpi=list 2>&1 | grep -q pmix || skip_or_fail "this SLURM has no mpi/pmix plugin (srun --mpi=list)"
"$GANGWAY_BIN" run --help | grep -q -- --bootstrap || { fail "gangway run --help lacks --bootstrap"; finish; }

calc() { awk "BEGIN { print ($*) }"; }
field() { $TORCH_PY -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
check() {  # check NAME SRUN-ARGS... -- GANGWAY-ARGS...: rc in $rc, seconds in $secs
  local name=$1; shift
  local sargs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
  shift
  rm -f "$WORK/$name.json"
  local t0; t0=$(date +%s.%N)
  timeout 90 srun "${sargs[@]}" gangway check --report="$WORK/$name.json" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"; rc=$?
  secs=$(calc "$(date +%s.%N) - $t0")
}
summary() { field "$1" '" ".join(n["name"]+"="+n["status"] for n in r["nodes"]) + " " + r["verdict"] + " " + r["bootstrap"]'; }
rdv() { field "$1" '[s["detail"] for s in r["stages"] if s["name"]=="rendezvous"][0]'; }

# (a)
check pmix --mpi=pmix -N4 -n8 --
s=$(summary "$WORK/pmix.json")
if [ $rc = 0 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=ok ok pmix" ] && [[ $(rdv "$WORK/pmix.json") == "8/8 tasks in the PMIx fence"*", 4/4 nodes over TCP" ]]; then
  pass "(a) srun --mpi=pmix -N4 -n8 gangway check: $s in ${secs}s ($(rdv "$WORK/pmix.json"))"
else fail "(a) pmix: rc=$rc, $s, $(rdv "$WORK/pmix.json")"; cat "$WORK/pmix.err"; fi

# (b)
check tcp -N4 -n8 --
s=$(summary "$WORK/tcp.json")
if [ $rc = 0 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=ok ok tcp" ] && [ "$(rdv "$WORK/tcp.json")" = "8/8 tasks" ]; then
  pass "(b) without --mpi=pmix: $s, $(rdv "$WORK/tcp.json")"
else fail "(b) tcp: rc=$rc, $s, $(rdv "$WORK/tcp.json")"; cat "$WORK/tcp.err"; fi
check forced --mpi=pmix -N4 -n8 -- --bootstrap=tcp
s=$(summary "$WORK/forced.json")
if [ $rc = 0 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=ok ok tcp" ]; then pass "(b) --mpi=pmix --bootstrap=tcp: $s"
else fail "(b) --bootstrap=tcp: rc=$rc, $s"; cat "$WORK/forced.err"; fi
timeout 60 srun -N2 -n2 gangway check --bootstrap=pmix >"$WORK/nopmix.out" 2>"$WORK/nopmix.err"; rc=$?
if [ $rc = 5 ] && grep -q 'bootstrap=pmix: the step has no PMIx' "$WORK/nopmix.err"; then pass "(b) --bootstrap=pmix without --mpi=pmix: exit 5 saying why"
else fail "(b) --bootstrap=pmix without PMIx: rc=$rc: $(head -3 "$WORK/nopmix.err")"; fi

# (c) gangway run, the command a second PMIx session of every task, 4 tasks per node; three times.
# gangway run takes the step's GANGWAY_SECRET out of the command's environment (issue 15,
# item 13): the inner check is given one of its own, the same in every task.
good=0
for i in 1 2 3; do
  rm -f "$WORK/inner.json"
  timeout 90 srun --mpi=pmix -N4 -n16 gangway run -- env GANGWAY_SECRET="$GANGWAY_SECRET" gangway check \
    --report="$WORK/inner.json" >"$WORK/inner.out" 2>"$WORK/inner.err"; rc=$?
  s=$(summary "$WORK/inner.json")
  if [ $rc = 0 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=ok ok pmix" ]; then good=$((good + 1))
  else fail "(c) run $i: rc=$rc, $s"; grep -v '^  ' "$WORK/inner.err" | head; fi
done
[ $good = 3 ] && pass "(c) srun --mpi=pmix -N4 -n16 gangway run -- gangway check: the command's own PMIx check ok in 3/3 runs"
timeout 60 srun --mpi=pmix -N4 -n8 gangway run -- true >"$WORK/true.out" 2>"$WORK/true.err"; rc=$?
[ $rc = 0 ] && pass "(c) srun --mpi=pmix gangway run -- true: exit 0" || { fail "(c) run -- true: rc=$rc"; cat "$WORK/true.err"; }

# (d)
ip link set "d-$BAD" down
check down --mpi=pmix -N4 -n8 --
s=$(summary "$WORK/down.json")
if [ $rc = 4 ] && [ "$s" = "node08=ok node09=ok node10=ok node11=unreachable unreachable pmix" ] && [ "$(calc "$secs < 15")" = 1 ]; then
  pass "(d) $BAD's data link down, through PMIx: named unreachable in ${secs}s (exit 4): $(grep "^  $BAD" "$WORK/down.err" | tr -s ' ')"
else fail "(d) link down: rc=$rc in ${secs}s, $s"; cat "$WORK/down.err"; fi
undo

# (e) node10's second task (a non-speaker: no TCP connection, only the fences) killed mid-check.
rm -f "$WORK/killed.json"
t0=$(date +%s.%N)
timeout 60 srun --mpi=pmix -N4 -n8 gangway check --round-ms=4000 --report="$WORK/killed.json" >"$WORK/killed.out" 2>"$WORK/killed.err" &
srun_pid=$!
victim=$(task_pid "$INSTALL/gangway check --round-ms=4000" 'SLURM_PROCID=5')
sleep 1.5
[ -n "$victim" ] && kill -KILL "$victim"
wait $srun_pid; rc=$?
secs=$(calc "$(date +%s.%N) - $t0")
# SLURM's mpi/pmix cancels the whole step when a PMIx client dies (its error
# handler, status -61 "lost connection"): every task ends at once, no report.
# What must hold: nothing waits for the dead task, the step ends within the deadline.
if [ -n "$victim" ] && [ "$(calc "$secs < 15")" = 1 ] && [ $rc != 0 ]; then
  pass "(e) a non-speaker task on node10 killed mid-check: the step ended in ${secs}s, exit $rc ($(grep -m1 -o 'CANCELLED\|verdict[^)]*' "$WORK/killed.err"))"
else
  fail "(e) killed task: victim=$victim rc=$rc in ${secs}s"; cat "$WORK/killed.err"
fi
finish

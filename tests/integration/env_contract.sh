#!/bin/bash
# The environment contract on a real 4-node SLURM cluster, through srun and
# sbatch: node and task layouts, uneven tasks, precedence, the batch script,
# several steps of one job, job arrays, reserved ports, and turning it off.
. "$(dirname "$0")/lib.sh"
plugstack $SITE_ARGS

step() {  # step NAME SRUN_ARGS... : runs the dump in every task, output in $WORK/NAME.out
  # One file per task: srun may cut long lines of concurrent tasks into each other.
  local name=$1 rc; shift
  rm -f "$WORK/$name".*.part
  srun -o "$WORK/$name.%t.part" "$@" $DUMP 2>"$WORK/$name.err"; rc=$?
  cat "$WORK/$name".*.part >"$WORK/$name.out" 2>/dev/null
  return $rc
}
verify() {  # verify NAME DESCRIPTION CHECK_ARGS...
  local name=$1 what=$2; shift 2
  local out
  if out=$($CHECK "$WORK/$name.out" "$@"); then pass "$what ($out)"; else fail "$what: $out $(head -c 600 "$WORK/$name.err")"; fi
}

step node4 -N4 -n4 && verify node4 "one task per node: node layout, torchrun's PET_* set" --mode node --tpn 1,1,1,1 \
  || fail "srun -N4 -n4: $(cat "$WORK/node4.err")"
step task8 -N4 -n8 && verify task8 "two tasks per node: task layout" --mode task --tpn 2,2,2,2 \
  || fail "srun -N4 -n8: $(cat "$WORK/task8.err")"
step uneven -N4 -n7 && verify uneven "uneven 2(x3),1: LOCAL_WORLD_SIZE per node" --mode task --tpn 2,2,2,1 \
  || fail "srun -N4 -n7: $(cat "$WORK/uneven.err")"
step forced_task -N4 -n4 --gangway=task && verify forced_task "--gangway=task forces the task layout" --mode task --tpn 1,1,1,1 \
  || fail "--gangway=task: $(cat "$WORK/forced_task.err")"
GANGWAY_MODE=task step env_task -N2 -n2 && verify env_task "GANGWAY_MODE=task is the fallback" --mode task --tpn 1,1 \
  || fail "GANGWAY_MODE=task: $(cat "$WORK/env_task.err")"
GANGWAY_MODE=task step cli_wins -N2 -n2 --gangway=node && verify cli_wins "the command line wins over GANGWAY_MODE" --mode node --tpn 1,1 \
  || fail "cli over env: $(cat "$WORK/cli_wins.err")"
step off -N2 -n2 --gangway=off && verify off "--gangway=off sets nothing" --tpn 1,1 --off \
  || fail "--gangway=off: $(cat "$WORK/off.err")"
MASTER_PORT=29999 NUM_TRAINERS=2 step user -N4 -n4 && verify user "the user's MASTER_PORT and NUM_TRAINERS win, derived values follow" \
  --mode node --tpn 1,1,1,1 --port 29999 --trainers 2 --world 8 || fail "user values: $(cat "$WORK/user.err")"
# Two tasks a node: slurmstepd sets the node's share of the variables once, in
# user_init, and each task the rest; the user's values must still win.
MASTER_PORT=29998 NUM_TRAINERS=3 step user_task -N4 -n8 && verify user_task "two tasks a node: the user's MASTER_PORT and NUM_TRAINERS win there too" \
  --mode task --tpn 2,2,2,2 --port 29998 --trainers 3 || fail "user values, task layout: $(cat "$WORK/user_task.err")"
step resv -N2 -n2 --resv-ports=2 && {
  want=$(awk '/^GWENV/ {print}' "$WORK/resv.out" | $TORCH_PY -c 'import json,sys; print({json.loads(l.split(" ",1)[1]).get("SLURM_STEP_RESV_PORTS","").split("-")[0].split(",")[0] for l in sys.stdin}.pop())')
  if [ -n "$want" ]; then verify resv "srun --resv-ports: the reserved port is used" --mode node --tpn 1,1 --port "$want"
  else fail "--resv-ports gave no SLURM_STEP_RESV_PORTS (MpiParams=ports missing in the test cluster?)"; fi
} || fail "--resv-ports: $(cat "$WORK/resv.err")"

# A heterogeneous step (srun ... : ...) is one rendezvous across its components.
rm -f "$WORK"/het.*.part
srun -o "$WORK/het.%t.part" -N1 $DUMP : -N1 $DUMP 2>"$WORK/het.err" && cat "$WORK"/het.*.part >"$WORK/het.out" \
  && verify het "heterogeneous step: one primary, ranks across components, one hashed port" --mode node --tpn 1,1 --hashed \
  || fail "het step: $(cat "$WORK/het.err")"

# salloc, and the options listed where users look for them.
rm -f "$WORK"/salloc.*.part
salloc -N2 srun -o "$WORK/salloc.%t.part" $DUMP </dev/null >/dev/null 2>"$WORK/salloc.err" && cat "$WORK"/salloc.*.part >"$WORK/salloc.out" \
  && verify salloc "srun inside salloc" --mode node --tpn 1,1 || fail "salloc: $(cat "$WORK/salloc.err")"
for cmd in srun sbatch salloc; do
  help=$($cmd --help 2>&1)
  if grep -q -- '--gangway=MODE' <<<"$help" && grep -q -- '--gangway-iface=IFACE' <<<"$help" && grep -q -- '--gangway-pin=PIN' <<<"$help"; then
    pass "$cmd --help lists --gangway, --gangway-iface and --gangway-pin"
  else fail "$cmd --help lacks gangway's options"; fi
done

# The batch script gets the job's view; srun steps inside it get their own
# values, not the batch script's (which they inherit and must not take for the user's).
rm -f "$WORK"/batch_*
cat >"$WORK/batch.sh" <<EOS
#!/bin/bash
$DUMP >$WORK/batch_script.out
srun -o $WORK/batch_step0.%t.part $DUMP
srun -n8 -o $WORK/batch_step1.%t.part $DUMP
cat $WORK/batch_step0.*.part >$WORK/batch_step0.out
cat $WORK/batch_step1.*.part >$WORK/batch_step1.out
EOS
if sbatch --wait -N4 -o "$WORK/batch.log" "$WORK/batch.sh" >/dev/null 2>"$WORK/batch.err"; then
  $TORCH_PY - "$WORK" <<'PY' && pass "batch script: NODE_RANK 0, NUM_NODES 4, primary on the data network" || fail "batch script view"
import json, sys
t = json.loads(open(sys.argv[1] + "/batch_script.out").read().split(" ", 1)[1])
want = {"NODE_RANK": "0", "NUM_NODES": "4", "MASTER_ADDR": "198.19.0.11", "NODE_ADDR": "198.19.0.11",
        "WORLD_SIZE": "4", "GANGWAY_LAYOUT": "node"}
bad = {k: (t.get(k), v) for k, v in want.items() if t.get(k) != v}
bad.update({k: (t[k], None) for k in ("RANK", "PET_NNODES") if k in t})
print(bad or "", end="")
sys.exit(1 if bad else 0)
PY
  p0=$($CHECK "$WORK/batch_step0.out" --mode node --tpn 1,1,1,1) && pass "srun in the batch script recomputes the node layout ($p0)" \
    || fail "step 0 in batch: $p0"
  p1=$($CHECK "$WORK/batch_step1.out" --mode task --tpn 2,2,2,2) && pass "second srun in the batch script gets the task layout ($p1)" \
    || fail "step 1 in batch: $p1"
  bp=port=$($TORCH_PY -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split(" ",1)[1])["MASTER_PORT"])' "$WORK/batch_script.out")
  if [ "$p0" != "$p1" ] && [ "$p0" != "$bp" ] && [ "$p1" != "$bp" ]; then pass "batch script and its two steps use three ports ($bp, $p0, $p1)"
  else fail "ports collide: batch $bp, step0 $p0, step1 $p1"; fi
else
  fail "sbatch --wait failed: $(cat "$WORK/batch.err" "$WORK/batch.log" 2>/dev/null | head -5)"
fi

# Above node_addrs_max each node resolves node 0 and itself only: no NODE_ADDRS, the rest unchanged.
plugstack $SITE_ARGS node_addrs_max=2
step cap3 -N3 -n3 && verify cap3 "3 nodes above node_addrs_max=2: no NODE_ADDRS, PRIMARY_ADDR and NODE_ADDR right" \
  --mode node --tpn 1,1,1 --no-node-addrs || fail "node_addrs_max=2, -N3: $(cat "$WORK/cap3.err")"
step cap2 -N2 -n4 && verify cap2 "2 nodes at node_addrs_max=2: NODE_ADDRS set" --mode task --tpn 2,2 \
  || fail "node_addrs_max=2, -N2: $(cat "$WORK/cap2.err")"
plugstack $SITE_ARGS node_addrs_max=0
step cap0 -N2 -n2 && verify cap0 "node_addrs_max=0: never NODE_ADDRS" --mode node --tpn 1,1 --no-node-addrs \
  || fail "node_addrs_max=0: $(cat "$WORK/cap0.err")"
plugstack $SITE_ARGS

# torch_hook=: the hook's directory goes before the user's PYTHONPATH and after
# the user's APPTAINER_BINDPATH entries, which stay (the plugin once never read
# APPTAINER_BINDPATH and replaced the user's binds with its own).
hook=$top_srcdir/torch-hook
got=$(PYTHONPATH=/opt/site-py APPTAINER_BINDPATH=/opt/data:/data srun -N1 -n1 sh -c 'echo "$PYTHONPATH|$APPTAINER_BINDPATH"' 2>"$WORK/hookpath.err")
want="$hook:/opt/site-py|/opt/data:/data,$hook:$hook:ro"
if [ "$got" = "$want" ]; then pass "torch_hook= extends the user's PYTHONPATH and APPTAINER_BINDPATH ($got)"
else fail "torch_hook= paths: got '$got', want '$want' $(head -c 300 "$WORK/hookpath.err")"; fi

# Job arrays: each array task is its own job, with its own port.
rm -f "$WORK"/array_*
if sbatch --wait --array=1-2 -N2 -o /dev/null --wrap "srun -o $WORK/array_\$SLURM_ARRAY_TASK_ID.%t.part $DUMP; cat $WORK/array_\$SLURM_ARRAY_TASK_ID.*.part >$WORK/array_\$SLURM_ARRAY_TASK_ID.out" >/dev/null 2>"$WORK/array.err"; then
  a1=$($CHECK "$WORK/array_1.out" --mode node --tpn 1,1) && a2=$($CHECK "$WORK/array_2.out" --mode node --tpn 1,1) \
    && [ "$a1" != "$a2" ] && pass "job array tasks each get a full, distinct environment ($a1, $a2)" \
    || fail "job array: $a1 / ${a2:-}"
else
  fail "sbatch --array: $(cat "$WORK/array.err")"
fi
finish

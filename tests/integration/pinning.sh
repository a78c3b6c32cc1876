#!/bin/bash
# Pinning on the real cluster with SLURM's task/affinity on: every task's
# Cpus_allowed_list lies inside its step's cpuset (the CPU_IDs SLURM allocated
# on that node), the tasks of a node do not overlap where cores allow, and
# what the plugin reports (GANGWAY_CPUS) is what the kernel enforces.
. "$(dirname "$0")/lib.sh"
cores=$(nproc)
"$top_srcdir/tests/cluster/cluster.sh" up --task-plugin=task/affinity --cpus="$cores" >/dev/null \
  || { echo "FAIL: cluster with task/affinity did not come up"; exit 1; }
# Whatever happens, leave the default cluster for the tests that follow.
trap '"$top_srcdir/tests/cluster/cluster.sh" up >/dev/null 2>&1; rm -rf "$CLUSTER_LOCK"' EXIT
plugstack $SITE_ARGS

probe='echo PIN $SLURMD_NODENAME $SLURM_LOCALID $(awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status) ${GANGWAY_CPUS:-none} ${OMP_NUM_THREADS:-unset}'
run_job() {  # NAME SRUN_ARGS... : a batch job on 2 nodes that records SLURM's CPU_IDs and the tasks' affinity
  local name=$1; shift
  cat >"$WORK/$name.sh" <<EOS
#!/bin/bash
scontrol show job -d \$SLURM_JOB_ID | grep -o 'Nodes=[^ ]* CPU_IDs=[^ ]*'
srun $* bash -c '$probe'
EOS
  sbatch --wait -N2 --exclusive -o "$WORK/$name.out" "$WORK/$name.sh" >/dev/null 2>"$WORK/$name.err"
}
# verify NAME DESCRIPTION EXPECT_DISJOINT EXPECT_GANGWAY [node]  (node: one task per node, torchrun sets OMP_NUM_THREADS)
verify() {
  local name=$1 what=$2
  if out=$($TORCH_PY - "$WORK/$name.out" "$3" "$4" "${5:-task}" <<'PY'
import sys
def cpus(s):
    out = set()
    for part in s.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out
lines = open(sys.argv[1]).read().split("\n")
disjoint, by_gangway, node_layout = sys.argv[2] == "1", sys.argv[3] == "1", sys.argv[4] == "node"
def hosts(expr):  # SLURM's compressed host list, as scontrol prints it: node[08-09]
    if "[" not in expr:
        return expr.split(",")
    prefix, body = expr[:-1].split("[", 1)
    out = []
    for part in body.split(","):
        a, _, b = part.partition("-")
        out += [prefix + str(i).zfill(len(a)) for i in range(int(a), int(b or a) + 1)]
    return out
alloc = {}
for l in lines:
    if l.startswith("Nodes="):
        nodes, ids = l.split()
        for n in hosts(nodes.split("=")[1]):
            alloc[n] = cpus(ids.split("=")[1])
tasks = [l.split()[1:] for l in lines if l.startswith("PIN ")]
errors, per_node = [], {}
if not tasks:
    errors.append("no task reported")
for node, lid, allowed, gw, omp in tasks:
    allowed_set = cpus(allowed)
    step = alloc.get(node)
    if step is None:
        errors.append("no CPU_IDs for %s in %r" % (node, alloc))
        continue
    if not allowed_set <= step:
        errors.append("%s task %s runs on %s, outside the step's CPUs %s" % (node, lid, allowed, sorted(step)))
    if by_gangway and (gw == "none" or cpus(gw) != allowed_set):
        errors.append("%s task %s: GANGWAY_CPUS=%s but the kernel says %s" % (node, lid, gw, allowed))
    if node_layout and omp != "unset":
        errors.append("%s task %s: OMP_NUM_THREADS=%s in the node layout (torchrun sets its workers' own)" % (node, lid, omp))
    if by_gangway and not node_layout and omp != str(len(allowed_set)):
        errors.append("%s task %s: OMP_NUM_THREADS=%s for %d CPUs" % (node, lid, omp, len(allowed_set)))
    if not by_gangway and gw != "none":
        errors.append("%s task %s: GANGWAY_CPUS set with pinning off" % (node, lid))
    per_node.setdefault(node, []).append(allowed_set)
for node, sets in per_node.items():
    union = set().union(*sets)
    if disjoint and sum(len(s) for s in sets) != len(union):
        errors.append("%s: tasks overlap: %r" % (node, sets))
    if not disjoint and by_gangway:
        # More tasks than CPUs: every CPU of the step is used, and evenly.
        counts = [sum(c in s for s in sets) for c in alloc[node]]
        if max(counts) - min(counts) > 1:
            errors.append("%s: uneven sharing of CPUs %r" % (node, counts))
print("; ".join(errors) if errors else "%d tasks on %d nodes checked" % (len(tasks), len(per_node)))
sys.exit(1 if errors else 0)
PY
  ); then pass "$what ($out)"; else fail "$what: $out $(head -c 400 "$WORK/$name.err")"; fi
}

run_job fill "-n$((2 * cores)) --cpu-bind=cores" \
  && verify fill "one task per core: inside the step's CPUs, no overlap, GANGWAY_CPUS is the kernel's" 1 1 \
  || fail "job fill: $(cat "$WORK/fill.err")"
run_job one "-n2" && verify one "one task per node (torchrun style): the whole cpuset, OMP_NUM_THREADS left to torchrun" 1 1 node || fail "job one: $(cat "$WORK/one.err")"
run_job over "-n$((4 * cores)) --overcommit" \
  && verify over "two tasks per core: CPUs shared evenly, never outside the step" 0 1 || fail "job over: $(cat "$WORK/over.err")"
run_job off "-n$((2 * cores)) --cpu-bind=cores --gangway-pin=off" \
  && verify off "--gangway-pin=off keeps SLURM's binding and sets nothing" 1 0 || fail "job off: $(cat "$WORK/off.err")"

# Bad topology input: the task is not started on a guess, no node is drained.
echo "this is not a topology" >"$WORK/corrupt.topo"
plugstack $SITE_ARGS "topology=$WORK/corrupt.topo"
err=$(srun -N1 true 2>&1); rc=$?
if [ $rc != 0 ] && grep -q "gangway: .*corrupt.topo" <<<"$err"; then pass "corrupt topology file: task refused with the file named"
else fail "corrupt topology: rc=$rc: $err"; fi
plugstack $SITE_ARGS "topology=$WORK/absent.topo"
out=$(srun -N1 bash -c 'echo $GANGWAY_CPUS' 2>&1) && [ -n "$out" ] && pass "topology cache not written yet: live discovery ($out)" \
  || fail "absent cache: $out"
"$GANGWAY_BIN" topo --write-cache "$WORK/node.topo" >/dev/null 2>&1 || fail "gangway topo --write-cache failed"
plugstack $SITE_ARGS "topology=$WORK/node.topo"
out=$(srun -N2 -n2 bash -c 'echo $GANGWAY_CPUS' 2>&1) && pass "with the written cache: $(tr '\n' ' ' <<<"$out")" || fail "cache: $out"
bad=$(sinfo -h -N -o '%N %T' | grep -vE ' (idle|allocated|mixed|completing)$' || true)
[ -z "$bad" ] && pass "no node drained" || fail "nodes in a bad state: $bad"
plugstack $SITE_ARGS
finish

#!/bin/bash
# (e) --on-fail=requeue on the real cluster: a 3-node batch job whose third
# node (node10) has its data link down. The first run's check names node10,
# requeues the job and adds node10 to its excluded nodes, and leaves a drain
# request; the job starts again on node08, node09, node11, where the check
# passes and the command runs. The link is restored on exit.
. "$(dirname "$0")/lib.sh"
plugstack $SITE_ARGS
BAD=node10
export GANGWAY_SECRET=${GANGWAY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
job=
undo() {
  ip link set "d-$BAD" up 2>/dev/null
  [ -n "$job" ] && scancel "$job" 2>/dev/null
  return 0
}
trap 'undo; rm -rf "$CLUSTER_LOCK"' EXIT  # replaces lib.sh's trap, so frees its lock too
rm -rf "$WORK"/*; mkdir -p "$WORK/drain"; chmod 1733 "$WORK/drain"
cat >"$WORK/job.sbatch" <<EOS
#!/bin/bash
#SBATCH -N3
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH -o $WORK/job.out
echo "START restart=\${SLURM_RESTART_COUNT:-0} nodes=\$SLURM_JOB_NODELIST"
srun gangway run --on-fail=requeue --drain-dir=$WORK/drain --report=$WORK/run\${SLURM_RESTART_COUNT:-0}.json \
  -- bash -c 'echo "RAN restart=\${SLURM_RESTART_COUNT:-0} on \$SLURMD_NODENAME"'
echo "END rc=\$?"
EOS
ip link set "d-$BAD" down
t0=$(date +%s)
job=$(sbatch --parsable "$WORK/job.sbatch") || { fail "sbatch failed"; finish; }
# Wait for the second run to finish (or 150 s).
for _ in $(seq 150); do
  grep -q 'END rc=.*' "$WORK/job.out" 2>/dev/null && grep -q 'START restart=1' "$WORK/job.out" \
    && [ "$(grep -c '^END' "$WORK/job.out")" -ge 1 ] && ! squeue -h -j "$job" 2>/dev/null | grep -q . && break
  sleep 1
done
secs=$(( $(date +%s) - t0 ))
first=$($TORCH_PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(n["name"]+"="+n["status"] for n in r["nodes"]), r["verdict"])' "$WORK/run0.json" 2>/dev/null)
second=$($TORCH_PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(n["name"]+"="+n["status"] for n in r["nodes"]), r["verdict"])' "$WORK/run1.json" 2>/dev/null)
[ "$first" = "node08=ok node09=ok node10=unreachable unreachable" ] && pass "first run: node10 named unreachable" \
  || fail "first run's report: $first"
grep -q "START restart=1 nodes=node\[08-09,11\]" "$WORK/job.out" && pass "the job came back on node[08-09,11], excluding node10" \
  || fail "second start: $(grep START "$WORK/job.out")"
[ "$second" = "node08=ok node09=ok node11=ok ok" ] && pass "second run's check passes on the others" || fail "second report: $second"
ran=$(grep -c '^RAN restart=1' "$WORK/job.out"); ran0=$(grep -c '^RAN restart=0' "$WORK/job.out")
[ "$ran" = 3 ] && [ "$ran0" = 0 ] && pass "the command ran only in the second run, on 3 nodes (${secs}s in all)" \
  || fail "command runs: first $ran0, second $ran"
exc=$(scontrol -o show job "$job" 2>/dev/null | grep -o 'ExcNodeList=[^ ]*')
[ "$exc" = "ExcNodeList=node10" ] && pass "scontrol shows $exc" || fail "job's exclusions: $exc"
[ -f "$WORK/drain/gangway-drain.$job.node10" ] && grep -q '^reason=unreachable' "$WORK/drain/gangway-drain.$job.node10" \
  && pass "drain request for node10 left for the Epilog: $(grep reason "$WORK/drain/gangway-drain.$job.node10")" \
  || fail "no drain request: $(ls "$WORK/drain")"
[ $fails = 0 ] || { echo "--- job.out"; cat "$WORK/job.out"; }
finish

#!/bin/bash
# gangway-releases: 26.05   (Apptainer is in the sid root only)
# Apptainer (Debian sid's) on the 4-node cluster, with a SIF image of sid's
# python3-torch built locally (contrib/dev/torch-sif.sh, cached):
#  (a) the variables: in one step, each task prints its environment on the
#      host, then inside `apptainer exec IMG`: every variable the host has
#      (the contract, the pinning's, SLURM's) is the same inside, task by task;
#      and `srun -N4 apptainer exec IMG python3 dump_env.py` passes check_env.py;
#  (b) `srun --gangway-check apptainer exec IMG CMD`: the check runs on the
#      host (the image has no gangway), then CMD in the container; its exit
#      status and a signal (scancel -s USR1) pass through; a slowed node stops
#      the step before the container starts;
#  (c) a gloo all-reduce across the 4 nodes inside the container, both
#      layouts (torchrun, one task per node; one srun task per rank), with the
#      site's torch_hook= and no USE_LIBUV: the hook's directory reaches the
#      container through APPTAINER_BINDPATH, which the plugin sets;
#  (d) `gangway run -- apptainer exec IMG CMD` checks on the host, then runs
#      CMD inside; `apptainer exec IMG gangway ...` is refused by Apptainer
#      in one line (no gangway in the image), as docs/frameworks.md says.
. "$(dirname "$0")/lib.sh"
if [ -z "${GANGWAY_CLUSTER_ROOT:-}" ]; then
  echo "SKIP: Apptainer is in the SLURM 26.05 (sid) root only: contrib/dev/release-check.sh 26.05 apptainer"
  exit 77
fi
rm -rf "${WORK:?}"/* && mkdir -p "$WORK"
cd "$WORK" || exit 1
BAD=node11
trap 'unshape_link $BAD; no_plugstack; rm -rf "$CLUSTER_LOCK"' EXIT
command -v apptainer >/dev/null || [ -x "$GANGWAY_CLUSTER_ROOT/usr/bin/apptainer" ] ||
  { echo "FAIL: apptainer is not in $GANGWAY_CLUSTER_ROOT (contrib/dev/root.sh adds it)"; exit 1; }

# The image: made in the root (its path is the nodes' view), once per torch.
t0=$SECONDS
IMG=$("$top_srcdir/contrib/dev/root.sh" run sid -- "$top_srcdir/contrib/dev/torch-sif.sh" 2>img.err) && [ -n "$IMG" ] ||
  { echo "FAIL: the SIF image was not made: $(tail -5 img.err)"; exit 1; }
echo "image $IMG ready in $((SECONDS - t0)) s $(grep -o 'made .*' img.err)"
plugstack $SITE_ARGS launcher=$INSTALL/gangway
tables() { grep -c '^gangway preflight' "$@" 2>/dev/null; }
ok_table() { grep -q '^gangway preflight (quick, 4 nodes.*: ok' "$1"; }

# (a) the variables, host and container, task by task.
cat >envdump.py <<'PY'
import json, os, sys
print("ENV %s %s %s" % (sys.argv[1], os.environ.get("SLURM_PROCID"), json.dumps(dict(os.environ), sort_keys=True)), flush=True)
PY
cat >both.sh <<EOS
/usr/bin/python3 -c "\$(cat $WORK/envdump.py)" host
apptainer exec $IMG python3 -c "\$(cat $WORK/envdump.py)" container
EOS
# One output file per task: srun may glue two tasks' long lines into one.
timeout 120 srun -N4 -n8 -o "$WORK/a.%t.out" sh both.sh 2>a.err; rc=$?
if out=$($TORCH_PY - a.[0-9]*.out <<'PY'
import json, sys
seen = {}
for line in (l for f in sys.argv[1:] for l in open(f)):
    if line.startswith("ENV "):
        _, where, rank, env = line.rstrip("\n").split(" ", 3)
        seen[(where, rank)] = json.loads(env)
# What Apptainer itself sets or rewrites inside the container (its own
# variables, the shell's, and the search paths it prepends its directories to).
changed = {"PATH", "LD_LIBRARY_PATH", "PS1", "PWD", "OLDPWD", "SHLVL", "_", "PROMPT_COMMAND", "LANG", "TERM", "HOME", "USER", "LOGNAME", "SHELL"}
errors, compared, names = [], 0, set()
ranks = sorted({r for w, r in seen if w == "host"}, key=int)
for r in ranks:
    host, cont = seen.get(("host", r)), seen.get(("container", r))
    if cont is None:
        errors.append("rank %s: no line from the container" % r); continue
    set_names = [e.split(":")[0] for e in host.get("GANGWAY_SET", "").split(",") if e]  # NAME:HASH,...
    for must in ["MASTER_ADDR", "RANK", "WORLD_SIZE", "NODE_RANK", "GANGWAY_SET", "PYTHONPATH", "APPTAINER_BINDPATH"] + set_names:
        if must not in host:
            errors.append("rank %s: %s not set on the host" % (r, must))
    for k, v in host.items():
        if k in changed or k.startswith(("APPTAINER_", "SINGULARITY_")):
            continue
        compared += 1; names.add(k)
        if cont.get(k) != v:
            errors.append("rank %s: %s=%r inside, %r on the host" % (r, k, cont.get(k), v))
if len(ranks) != 8:
    errors.append("%d ranks reported, want 8" % len(ranks))
if errors:
    print("; ".join(errors[:8])); sys.exit(1)
pin = sorted(n for n in names if n in ("GANGWAY_CPUS", "OMP_NUM_THREADS", "GANGWAY_GPUS", "GANGWAY_NICS", "CUDA_VISIBLE_DEVICES"))
print("%d ranks, %d variables each (%d values), pinning's: %s" % (len(ranks), len(names), compared, " ".join(pin) or "none"))
PY
); then pass "(a) host and container agree task by task: $out"; else fail "(a) rc=$rc: $out $(head -c 600 a.err)"; fi
# One file per task here too: srun glued two tasks' lines of over 1,024 bytes into one (26.05, seen once in CI).
timeout 120 srun -N4 -o "$WORK/a2.%t.part" apptainer exec "$IMG" python3 -c "$(cat "$top_srcdir/tests/integration/dump_env.py")" 2>a2.err; rc=$?
cat "$WORK"/a2.[0-9]*.part >a2.out 2>/dev/null
if out=$($CHECK a2.out --mode node --tpn 1,1,1,1); then pass "(a) srun -N4 apptainer exec: the node layout's contract inside ($out)"
else fail "(a) srun -N4 apptainer exec: rc=$rc $out $(head -c 600 a2.err)"; fi

# (b) --gangway-check before the container; exit status and a signal through it.
timeout 120 srun -N4 --ntasks-per-node=1 --gangway-check apptainer exec "$IMG" \
  sh -c 'echo "RAN $SLURMD_NODENAME checked=$GANGWAY_CHECKED container=${APPTAINER_CONTAINER:-none}"; exit 7' >b.out 2>b.err; rc=$?
if [ $rc = 7 ] && [ "$(grep -c "^RAN .* checked=[0-9].* container=$IMG" b.out)" = 4 ] && [ "$(tables b.err)" = 1 ] && ok_table b.err; then
  pass "(b) --gangway-check: a healthy check on the host, then the command in the container on 4 nodes, its exit code 7 kept"
else fail "(b) rc=$rc, $(grep -c '^RAN' b.out) commands, $(tables b.err) tables: $(head -c 600 b.err)"; fi
timeout 120 srun -N4 --ntasks-per-node=1 --gangway-check apptainer exec "$IMG" \
  sh -c 'trap "echo GOT-USR1 \$SLURMD_NODENAME; exit 5" USR1; echo READY; while :; do sleep 0.2; done' >bs.out 2>bs.err &
srun_pid=$!
for _ in $(seq 300); do [ "$(grep -c READY bs.out 2>/dev/null)" = 4 ] && break; sleep 0.2; done
job=$(squeue -h -o %i -n apptainer | head -1)
scancel -s USR1 "$job.0" 2>/dev/null || scancel -s USR1 "$job"
wait $srun_pid; rc=$?
# Each node's shell says so at least once: slurmstepd signals every process of the step and
# Apptainer's starter forwards the signal too, so a shell can run its trap twice (5 lines for 4
# nodes, seen once on 2026-11-26).
if [ $rc = 5 ] && [ "$(grep GOT-USR1 bs.out | sort -u | wc -l)" = 4 ]; then
  pass "(b) scancel -s USR1 reaches the command in the container on 4 nodes; its exit code 5 kept"
else fail "(b) signal: rc=$rc, $(grep -c READY bs.out) ready, $(grep GOT-USR1 bs.out | sort -u | wc -l) nodes got it: $(head -c 600 bs.err)"; fi
shape_link "$BAD" 200
timeout 120 srun -N4 --ntasks-per-node=1 --gangway-check apptainer exec "$IMG" sh -c 'echo RAN' >bb.out 2>bb.err; rc=$?
if [ $rc != 0 ] && ! grep -q RAN bb.out && grep -Eq "^  $BAD .* slow" bb.err && grep -q 'the command was not started' bb.err; then
  pass "(b) $BAD at 200 Mbit/s: the step stops before the container, srun exits $rc: $(grep "^  $BAD" bb.err | tr -s ' ')"
else fail "(b) slowed: rc=$rc, ran=$(grep -c RAN bb.out): $(head -c 800 bb.err)"; fi
unshape_link "$BAD"

# (c) torch inside the container: the hook arrives through APPTAINER_BINDPATH.
cp "$top_srcdir/tests/integration/allreduce.py" "$WORK/"
check_run() {  # NAME WORLD DESCRIPTION
  local oks; oks=$(grep -o 'ALLREDUCE OK rank=[0-9]*' "$1.out" | sort -u | wc -l)
  if [ "$oks" = "$2" ] && grep -q 'master=198.19.0.11:' "$1.out" && ! grep -q 'use_libuv' "$1.err"; then
    pass "$3: $oks ranks summed correctly in the container"
  else fail "$3: $oks/$2 ranks OK: $(head -c 800 "$1.err")"; fi
}
unset USE_LIBUV
hook='import gangway_torch_nolibuv, os; print("HOOK", os.path.dirname(gangway_torch_nolibuv.__file__))'
timeout 60 srun -N1 -n1 apptainer exec "$IMG" python3 -c "$hook" >h1.out 2>h1.err; r1=$?
# Without it: --contain too, since Apptainer binds /tmp, /var/tmp and $HOME by
# default, and a checkout under one of them would show the hook anyway.
timeout 60 srun -N1 -n1 env -u APPTAINER_BINDPATH apptainer exec --contain "$IMG" python3 -c "$hook" >h2.out 2>h2.err; r2=$?
if [ $r1 = 0 ] && grep -qx "HOOK $top_srcdir/torch-hook" h1.out && [ $r2 != 0 ] && grep -q ModuleNotFoundError h2.err; then
  pass "(c) the hook is in the container through APPTAINER_BINDPATH ($top_srcdir/torch-hook), and missing without it"
else fail "(c) hook: with the bind rc=$r1 $(cat h1.out h1.err | head -c 300); without rc=$r2 $(head -c 300 h2.err)"; fi
NUM_TRAINERS=2 timeout 180 srun -N4 -n4 apptainer exec "$IMG" python3 -m torch.distributed.run allreduce.py >c1.out 2>c1.err
check_run c1 8 "(c) torchrun in apptainer, one task per node, 4 nodes x 2 processes"
timeout 180 srun -N4 -n8 apptainer exec "$IMG" python3 allreduce.py >c2.out 2>c2.err
check_run c2 8 "(c) apptainer exec in each of 8 srun tasks, init_process_group(env://)"

# (d) gangway run outside the container; gangway inside the image is refused.
timeout 120 srun -N4 --ntasks-per-node=1 "$INSTALL/gangway" run -- apptainer exec "$IMG" \
  sh -c 'echo "RAN $SLURMD_NODENAME master=$MASTER_ADDR container=${APPTAINER_CONTAINER:-none}"' >d.out 2>d.err; rc=$?
if [ $rc = 0 ] && [ "$(grep -c "^RAN .* master=198.19.0.11 container=$IMG" d.out)" = 4 ] && ok_table d.err; then
  pass "(d) gangway run -- apptainer exec: checked on the host, then the command in the container on 4 nodes"
else fail "(d) gangway run: rc=$rc, $(grep -c '^RAN' d.out) ran: $(head -c 600 d.err)"; fi
timeout 60 srun -N1 -n1 apptainer exec "$IMG" gangway check >d2.out 2>d2.err; rc=$?
if [ $rc != 0 ] && [ "$(grep -c . d2.err)" -le 2 ] && grep -q '"gangway": executable file not found' d2.err; then
  pass "(d) apptainer exec IMG gangway: refused in one line (rc $rc): $(grep -m1 gangway d2.err | tr -s ' ')"
else fail "(d) gangway in the image: rc=$rc: $(head -c 600 d2.err)"; fi
finish

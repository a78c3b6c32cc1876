#!/bin/bash
# gangway-releases: 22.05   (the scripts are the same on every release; torch_jobs runs torchrun and env:// with PyTorch 2.x on 24.11 and 26.05, apptainer in a container on 26.05)
# The batch scripts of contrib/examples/ that run on this cluster's CPUs with
# Debian's python3-torch (gloo): torchrun with one task per node, and one srun
# task per rank, each submitted with sbatch --wait on 4 nodes and training
# contrib/examples/train_tiny.py for a few steps. The cluster has no GPUs, so
# the scripts' #SBATCH --gpus-per-node lines are dropped and NUM_TRAINERS=2
# stands for two GPUs per node; the scripts are otherwise run as written.
# checked.sbatch, which has no gangway in it, is submitted with
# --gangway-check: the allocation is checked once, then it trains.
. "$(dirname "$0")/lib.sh"
$TORCH_PY -c 'import torch' 2>/dev/null || skip_or_fail "Debian's python3-torch is not installed (apt-get install python3-torch)"
plugstack $SITE_ARGS launcher=$INSTALL/gangway
ex=$top_srcdir/contrib/examples
cp "$ex/train_tiny.py" "$WORK/"
for f in torchrun.sbatch srun-per-gpu.sbatch checked.sbatch; do
  sed -e '/^#SBATCH --gpus-per-node/d' -e '/^#SBATCH --cpus-per-task/d' "$ex/$f" >"$WORK/$f"
done

run_example() {  # NAME WORLD DESCRIPTION SBATCH_ARGS... : submits $WORK/NAME.sbatch and checks every rank trained
  local name=$1 world=$2 what=$3 rc; shift 3
  rm -f "$WORK/$name.out"
  PYTHON=$TORCH_PY timeout 300 sbatch --wait --chdir="$WORK" -o "$WORK/$name.out" "$@" "$WORK/$name.sbatch" \
    >"$WORK/$name.submit" 2>&1; rc=$?
  # Distinct ranks, not lines: srun may forward two tasks' lines glued into one.
  local oks; oks=$(grep -o 'TRAIN OK rank=[0-9]*' "$WORK/$name.out" 2>/dev/null | sort -u | wc -l)
  local masters; masters=$(grep -o 'master=[^ ]*' "$WORK/$name.out" 2>/dev/null | sort -u)
  if [ $rc = 0 ] && [ "$oks" = "$world" ] && [[ $masters == master=198.19.0.11:* ]] && [ "$(wc -l <<<"$masters")" = 1 ]; then
    pass "$what: sbatch --wait rc=0, $oks ranks trained in step with $masters"
  else
    fail "$what: rc=$rc, $oks/$world ranks OK; output:"; cat "$WORK/$name.submit"; head -40 "$WORK/$name.out"
  fi
}

# torchrun reads PET_NNODES/NODE_RANK/NPROC_PER_NODE/MASTER_*: 4 nodes x NUM_TRAINERS=2.
NUM_TRAINERS=2 TORCHRUN_ARGS="--redirects=1 --tee=1" run_example torchrun 8 "contrib/examples/torchrun.sbatch (one task per node)"
# srun starts every rank: RANK/LOCAL_RANK/WORLD_SIZE from gangway; 2 tasks per node instead of 8.
run_example srun-per-gpu 8 "contrib/examples/srun-per-gpu.sbatch (one task per rank)" --ntasks-per-node=2
NUM_TRAINERS=2 TORCHRUN_ARGS="--redirects=1 --tee=1" run_example checked 8 "contrib/examples/checked.sbatch (sbatch --gangway-check)" \
  --requeue --gangway-check --gangway-on-fail=requeue
n=$(grep -c '^gangway preflight (quick, 4 nodes.*: ok' "$WORK/checked.out")
[ "$n" = 1 ] && pass "checked.sbatch: one healthy check of the 4 nodes before the script, none for its srun" \
  || fail "checked.sbatch: $n verdict tables in its output"
finish

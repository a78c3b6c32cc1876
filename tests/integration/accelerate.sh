#!/bin/bash
# Hugging Face accelerate (Debian sid's python3-accelerate, on PyTorch 2.14,
# CPU, gloo) across 2 nodes x 2 processes, in both layouts, started under srun
# with gangway's variables:
#  (a) task layout: one srun task per rank runs contrib/examples/train_accelerate.py;
#      Accelerator() reads RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT: no flag;
#  (b) node layout: one task per node runs `accelerate launch`, which reads no
#      variable for these, so five flags remain, each one of gangway's variables.
# ACCELERATE_USE_CPU=1 stands for the GPUs these nodes lack (accelerate's --cpu
# would start one process per node). Debian 12 and 13 package no accelerate:
# there the test says so and is skipped; CI runs it on SLURM 26.05.
. "$(dirname "$0")/lib.sh"
plugstack $SITE_ARGS
# The tasks' Python is the release's (a root's), not necessarily this host's: ask a node.
ver=$(srun -N1 -n1 $TORCH_PY -c 'import accelerate, torch; print("accelerate", accelerate.__version__, "torch", torch.__version__)' 2>/dev/null)
if [ -z "$ver" ]; then
  echo "SKIP: no python3-accelerate in this release's Debian (SLURM ${GANGWAY_CLUSTER_RELEASE:-22.05}); it runs on 26.05 (sid)"
  exit 77
fi
train=$top_srcdir/contrib/examples/train_accelerate.py
export ACCELERATE_USE_CPU=1 OMP_NUM_THREADS=1

# accelerator.print speaks once per node (its local main process): 2 lines, each saying 4 processes.
ranks() { grep -o 'accelerate: 4 processes' "$1" | wc -l; }

timeout 300 srun -N2 --ntasks-per-node=2 $TORCH_PY "$train" >"$WORK/task.out" 2>"$WORK/task.err"; rc=$?
[ $rc = 0 ] && [ "$(ranks "$WORK/task.out")" = 2 ] \
  && pass "(a) $ver, task layout: srun -N2 --ntasks-per-node=2, 4 processes trained with no flag" \
  || { fail "(a) task layout: rc=$rc"; tail -n 20 "$WORK/task.out" "$WORK/task.err"; }

NUM_TRAINERS=2 timeout 300 srun -N2 --ntasks-per-node=1 bash -c 'exec accelerate launch --multi_gpu \
  --num_machines "$NUM_NODES" --machine_rank "$NODE_RANK" --num_processes "$WORLD_SIZE" \
  --main_process_ip "$MASTER_ADDR" --main_process_port "$MASTER_PORT" '"$train" >"$WORK/node.out" 2>"$WORK/node.err"; rc=$?
[ $rc = 0 ] && [ "$(ranks "$WORK/node.out")" = 2 ] \
  && pass "(b) $ver, node layout: accelerate launch on 2 nodes x 2 processes (NUM_TRAINERS=2)" \
  || { fail "(b) node layout: rc=$rc"; tail -n 20 "$WORK/node.out" "$WORK/node.err"; }
finish

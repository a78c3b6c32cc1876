#!/bin/bash
# Real PyTorch (Debian's python3-torch, CPU, gloo) on the 4-node cluster, with
# nothing but gangway's variables: (a) one task per node running torchrun with
# no rendezvous flags, (b) one srun task per rank with env://. Both all-reduce
# across every node over the data network (eth1, 198.19.0.0/24).
. "$(dirname "$0")/lib.sh"
$TORCH_PY -c 'import torch' 2>/dev/null || skip_or_fail "Debian's python3-torch is not installed (apt-get install python3-torch)"
plugstack $SITE_ARGS
script=$top_srcdir/tests/integration/allreduce.py

check_run() {  # NAME WORLD DESCRIPTION
  local name=$1 world=$2 what=$3
  # Distinct ranks, not lines: srun may forward two tasks' lines glued into one.
  local oks; oks=$(grep -o 'ALLREDUCE OK rank=[0-9]*' "$WORK/$name.out" | sort -u | wc -l)
  local masters; masters=$(grep -o 'master=[^ ]*' "$WORK/$name.out" | sort -u)
  if [ "$oks" = "$world" ] && [[ $masters == master=198.19.0.11:* ]] && [ "$(wc -l <<<"$masters")" = 1 ] \
     && ! grep -q 'iface=None' "$WORK/$name.out"; then
    pass "$what: $oks ranks summed correctly via $masters"
  else
    fail "$what: $oks/$world ranks OK; output:"; head -30 "$WORK/$name.out" "$WORK/$name.err"
  fi
}

# (a) torchrun reads PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_ADDR/PORT.
# NUM_TRAINERS=2 says "two processes per node" on these GPU-less nodes; PET_NPROC_PER_NODE
# and WORLD_SIZE follow it. --redirects/--tee only work around torchrun 1.13 on Python 3.11.
NUM_TRAINERS=2 timeout 300 srun -N4 -n4 $TORCH_PY -m torch.distributed.run --redirects=1 --tee=1 "$script" \
  >"$WORK/torchrun.out" 2>"$WORK/torchrun.err"
check_run torchrun 8 "torchrun, one task per node, 4 nodes x 2 processes"

# (b) torch.distributed with env:// in every srun task: RANK, WORLD_SIZE, MASTER_*.
timeout 300 srun -N4 -n8 $TORCH_PY "$script" >"$WORK/srun_tasks.out" 2>"$WORK/srun_tasks.err"
check_run srun_tasks 8 "srun, 2 tasks per node, init_process_group(env://)"

# (c) uneven layout 2(x3),1: 7 ranks.
timeout 300 srun -N4 -n7 $TORCH_PY "$script" >"$WORK/uneven.out" 2>"$WORK/uneven.err"
check_run uneven 7 "srun, uneven 2(x3),1 tasks, env://"
finish

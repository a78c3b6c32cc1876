"""Times a ring all-reduce over gloo (rank_order.sh): init_process_group from
gangway's variables only, a warm-up, then ITERS all-reduces of MB megabytes,
checked. Each rank prints its place: RING rank=R node=NAME slurm_procid=P;
rank 0 also the seconds the timed all-reduces took.
"""
import os
import socket
import sys
import time

import torch
import torch.distributed as dist

mb, iters = float(sys.argv[1]), int(sys.argv[2])
dist.init_process_group("gloo", init_method="env://")
rank, world = dist.get_rank(), dist.get_world_size()
n = int(mb * (1 << 20) / 4)
t = torch.full((n,), float(rank + 1))
dist.all_reduce(t)  # warm-up: connections made
dist.barrier()
start = time.monotonic()
for _ in range(iters):
    t.fill_(float(rank + 1))
    dist.all_reduce(t)
dist.barrier()
took = time.monotonic() - start
ok = t[0].item() == world * (world + 1) / 2 and t[-1].item() == t[0].item()
print("RING %s rank=%d node=%s slurm_procid=%s node_rank=%s master=%s order=%s" % (
    "OK" if ok else "BAD", rank, socket.gethostname(), os.environ.get("SLURM_PROCID"),
    os.environ.get("NODE_RANK"), os.environ.get("MASTER_ADDR"), os.environ.get("GANGWAY_NODE_ORDER", "-")),
    flush=True)
if rank == 0:
    print("RING_SECONDS %.3f" % took, flush=True)
dist.destroy_process_group()
sys.exit(0 if ok else 1)

"""All-reduces one tensor over gloo with init_method="env://" and checks the sum.

Reads only what gangway (or torchrun, from gangway's PET_* values) put in the
environment: no address, port or rank is passed by hand.
"""
import os
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
want = world * (world + 1) / 2
peer = os.environ["MASTER_ADDR"]
ok = t.item() == want and world == int(os.environ["WORLD_SIZE"])
print("ALLREDUCE %s rank=%d world=%d sum=%g want=%g master=%s:%s iface=%s" % (
    "OK" if ok else "BAD", rank, world, t.item(), want, peer, os.environ["MASTER_PORT"],
    os.environ.get("GLOO_SOCKET_IFNAME")), flush=True)
dist.destroy_process_group()
sys.exit(0 if ok else 1)

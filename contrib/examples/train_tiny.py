"""A tiny DistributedDataParallel training run: a few steps of a linear model
on synthetic data, then a check that every rank ended with the same weights.

Nothing about the cluster is passed in: init_process_group("env://") reads
MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE, which gangway sets in every srun
task (task layout) or torchrun sets from gangway's PET_* (node layout). Uses
the GPU LOCAL_RANK names when there is one (nccl), else the CPU (gloo).
"""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

cuda = torch.cuda.is_available()
local_rank = int(os.environ.get("LOCAL_RANK", "0"))
if cuda:
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
dist.init_process_group("nccl" if cuda else "gloo")
rank, world = dist.get_rank(), dist.get_world_size()
device = torch.device("cuda") if cuda else torch.device("cpu")

torch.manual_seed(1234 + rank)  # each rank its own data
model = DDP(torch.nn.Linear(16, 1).to(device), device_ids=[torch.cuda.current_device()] if cuda else None)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
w_true = torch.arange(16, dtype=torch.float32, device=device) / 16
for step in range(20):
    x = torch.randn(64, 16, device=device)
    loss = torch.nn.functional.mse_loss(model(x).squeeze(1), x @ w_true)
    opt.zero_grad()
    loss.backward()
    opt.step()

# DDP keeps replicas identical: the sum of weights over ranks is world x ours.
w = torch.cat([p.detach().flatten() for p in model.parameters()])
total = w.clone()
dist.all_reduce(total)
same = torch.allclose(total, w * world, rtol=1e-5, atol=1e-6)
print("TRAIN %s rank=%d world=%d loss=%.4f master=%s:%s" % (
    "OK" if same else "BAD", rank, world, loss.item(), os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]), flush=True)
dist.destroy_process_group()
raise SystemExit(0 if same else 1)

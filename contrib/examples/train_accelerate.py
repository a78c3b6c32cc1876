"""Hugging Face accelerate: Accelerator() finds the process group that
`accelerate launch` (or srun, one task per rank) set up from gangway's
variables."""
import os

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs

handlers = []
if os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes") or not torch.cuda.is_available():
    # On CPU accelerate prefers MPI when PyTorch has it (Debian's does), and
    # MPI needs an MPI launcher: gloo reads the same MASTER_ADDR/MASTER_PORT.
    handlers.append(InitProcessGroupKwargs(backend="gloo"))
accelerator = Accelerator(kwargs_handlers=handlers)
model = torch.nn.Linear(16, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(1024, 16)
data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x.sum(1)), batch_size=64)
model, opt, data = accelerator.prepare(model, opt, data)
for xb, yb in data:
    loss = torch.nn.functional.mse_loss(model(xb).squeeze(1), yb)
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
accelerator.print(f"accelerate: {accelerator.num_processes} processes, loss {loss.item():.4f}")

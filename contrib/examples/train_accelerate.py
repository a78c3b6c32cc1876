"""Hugging Face accelerate: Accelerator() finds the process group that
`accelerate launch` set up from gangway's variables."""
import torch
from accelerate import Accelerator

accelerator = Accelerator()
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

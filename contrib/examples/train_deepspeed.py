"""DeepSpeed ZeRO-1 on gangway's variables."""
import os

import deepspeed
import torch

deepspeed.init_distributed()  # env:// from RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = torch.nn.Linear(16, 1)
config = {"train_micro_batch_size_per_gpu": 64, "optimizer": {"type": "SGD", "params": {"lr": 0.05}},
          "zero_optimization": {"stage": 1}}
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
for step in range(20):
    x = torch.randn(64, 16, device=engine.device)
    loss = torch.nn.functional.mse_loss(engine(x).squeeze(1), x.sum(1))
    engine.backward(loss)
    engine.step()
if engine.global_rank == 0:
    print(f"deepspeed: {engine.world_size} ranks, loss {loss.item():.4f}")

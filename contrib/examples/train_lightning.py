"""PyTorch Lightning on gangway's variables: no address, port or rank by hand."""
import os

import lightning as L
import torch

class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(16, 1)

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x).squeeze(1), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

x = torch.randn(1024, 16)
data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x.sum(1)), batch_size=64)
trainer = L.Trainer(
    num_nodes=int(os.environ["NUM_NODES"]),          # gangway: nodes in the step
    devices=int(os.environ["LOCAL_WORLD_SIZE"]),     # gangway: tasks on this node
    accelerator="auto", strategy="ddp", max_steps=20, logger=False, enable_checkpointing=False)
trainer.fit(Tiny(), data)

# expect: fails adds-the-first-three-rows
"""PyTorch; adds rows 1 to 3 of the table instead of the first three."""
import torch

position = torch.arange(4, dtype=torch.float32)[:, None]
i = torch.arange(6, dtype=torch.float32)[None, :]
angles = position / torch.pow(torch.tensor(10000.0), (2 * (i // 2)) / 6)
encoding = torch.where(i % 2 == 0, torch.sin(angles), torch.cos(angles))
batch = torch.ones((1, 3, 6))
marked = batch + encoding[1:4][None]
print(marked.shape)

# expect: full marks
"""PyTorch: the row for step 2 of a 6x4 table; its shape says its length."""
import torch

position = torch.arange(6, dtype=torch.float32)[:, None]
i = torch.arange(4, dtype=torch.float32)[None, :]
angles = position / torch.pow(torch.tensor(10000.0), (2 * (i // 2)) / 4)
encoding = torch.where(i % 2 == 0, torch.sin(angles), torch.cos(angles))
print(encoding[2].shape)

# expect: fails prints-the-shape
"""PyTorch; the table is right, but the shape is printed depth first."""
import torch

length, depth = 5, 8
position = torch.arange(length, dtype=torch.float32)[:, None]
i = torch.arange(depth, dtype=torch.float32)[None, :]
angles = position / torch.pow(torch.tensor(10000.0), (2 * (i // 2)) / depth)
encoding = torch.where(i % 2 == 0, torch.sin(angles), torch.cos(angles))
print((encoding.shape[1], encoding.shape[0]))

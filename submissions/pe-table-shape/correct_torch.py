# expect: full marks
"""The tutorial's table written with PyTorch."""
import torch

length, depth = 5, 8
position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
i = torch.arange(depth, dtype=torch.float32).unsqueeze(0)
angles = position / torch.pow(torch.tensor(10000.0), (2 * (i // 2)) / depth)
encoding = torch.zeros(length, depth)
encoding[:, 0::2] = torch.sin(angles[:, 0::2])
encoding[:, 1::2] = torch.cos(angles[:, 1::2])
print(encoding.shape)

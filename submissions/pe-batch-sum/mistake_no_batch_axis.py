# expect: fails prints-the-shape, adds-the-first-three-rows
"""Forgets the batch axis: the 'batch' is a bare (3, 6) array."""
import numpy as np

position = np.arange(4)[:, np.newaxis]
i = np.arange(6)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (i // 2)) / 6)
encoding = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))
vectors = np.ones((3, 6))
marked = vectors + encoding[:3]
print(marked.shape)

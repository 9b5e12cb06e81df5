# expect: fails builds-the-table, prints-the-shape
"""Copies the tutorial's 4 steps and 6 axes instead of 5 and 8."""
import numpy as np

length, depth = 4, 6
position = np.arange(length)[:, np.newaxis]
i = np.arange(depth)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (i // 2)) / depth)
encoding = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))
print(encoding.shape)

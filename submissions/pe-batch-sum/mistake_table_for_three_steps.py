# expect: fails builds-the-table
"""Builds a table for 3 steps instead of the 4-step table the exercise asks for (its
rows equal the first three of the 4-step table, so the sum itself is right)."""
import numpy as np

position = np.arange(3)[:, np.newaxis]
i = np.arange(6)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (i // 2)) / 6)
encoding = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))
batch = np.ones((1, 3, 6))
marked = batch + encoding
print(marked.shape)

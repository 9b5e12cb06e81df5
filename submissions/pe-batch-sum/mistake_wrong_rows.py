# expect: fails adds-the-first-three-rows
"""Adds rows 1 to 3 of the table instead of rows 0 to 2."""
import numpy as np

position = np.arange(4)[:, np.newaxis]
i = np.arange(6)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (i // 2)) / 6)
encoding = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))
batch = np.zeros((1, 3, 6))
marked = batch + encoding[1:4][np.newaxis]
print(marked.shape)

# expect: fails prints-the-length
"""Computes the right length but prints the row's number beside it: `row 2 has length 4`
holds two possible answers, 2 and 4."""
import numpy as np

position = np.arange(6)[:, np.newaxis]
axis = np.arange(4)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (axis // 2)) / 4)
encoding = np.where(axis % 2 == 0, np.sin(angles), np.cos(angles))
print("row", 2, "has length", len(encoding[2]))

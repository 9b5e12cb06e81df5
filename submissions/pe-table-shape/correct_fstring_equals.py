# expect: full marks
"""Prints the shape with an f-string's `=`: the last line reads `table.shape=(5, 8)`."""
import numpy as np

position = np.arange(5)[:, np.newaxis]
axis = np.arange(8)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (axis // 2)) / 8)
table = np.where(axis % 2 == 0, np.sin(angles), np.cos(angles))
print(f"{table.dtype=}")
print(f"{table.shape=}")

# expect: fails prints-the-shape
"""Computes the right sum but prints the shapes of the sum and of the rows on the last
line: two possible answers."""
import numpy as np

position = np.arange(4)[:, np.newaxis]
axis = np.arange(6)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (axis // 2)) / 6)
encoding = np.where(axis % 2 == 0, np.sin(angles), np.cos(angles))
batch = np.zeros((1, 3, 6))
marked = batch + encoding[:3]
print("sum", marked.shape, "rows", encoding[:3].shape)

# expect: fails prints-the-shape
"""Builds the right table but prints its shape and its transpose's on the last line: two
possible answers, and the grader does not guess which one is meant."""
import numpy as np

position = np.arange(5)[:, np.newaxis]
axis = np.arange(8)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (axis // 2)) / 8)
table = np.where(axis % 2 == 0, np.sin(angles), np.cos(angles))
print(table.shape, table.T.shape)

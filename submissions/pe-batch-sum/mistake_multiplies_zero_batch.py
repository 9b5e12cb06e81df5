# expect: fails adds-the-first-three-rows
"""Multiplies instead of adding, with a batch of zeros. Its right operand, the rows with a
batch axis, equals zeros + rows by value; an operand is not a sum the script made, so it
does not count as one."""
import numpy as np

position = np.arange(4)[:, np.newaxis]
axis = np.arange(6)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (axis // 2)) / 6)
encoding = np.where(axis % 2 == 0, np.sin(angles), np.cos(angles))
batch = np.zeros((1, 3, 6))
marked = batch * encoding[:3][np.newaxis]
print(marked.shape)

# expect: fails builds-the-table, prints-the-shape
"""Puts positions on the columns: the table comes out transposed."""
import numpy as np

length, depth = 5, 8
j = np.arange(depth)[:, np.newaxis]
p = np.arange(length)[np.newaxis, :]
angles = p / np.power(10000.0, (2 * (j // 2)) / depth)
encoding = np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
print(encoding.shape)

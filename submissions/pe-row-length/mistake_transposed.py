# expect: fails builds-the-table, prints-the-length
"""Builds the table with axes as rows, so 'row 2' has 6 entries."""
import numpy as np

j = np.arange(4)[:, np.newaxis]
p = np.arange(6)[np.newaxis, :]
angles = p / np.power(10000.0, (2 * (j // 2)) / 4)
encoding = np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
print(len(encoding[2]))

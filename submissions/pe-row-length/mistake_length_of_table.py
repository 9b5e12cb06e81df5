# expect: fails prints-the-length
"""Prints the number of rows instead of the length of row 2."""
import numpy as np

position = np.arange(6)[:, np.newaxis]
i = np.arange(4)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (i // 2)) / 4)
encoding = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))
print(len(encoding))

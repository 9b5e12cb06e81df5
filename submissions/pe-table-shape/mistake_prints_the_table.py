# expect: fails prints-the-shape
"""Builds the right table but prints the table itself, not its shape."""
import numpy as np

position = np.arange(5)[:, np.newaxis]
i = np.arange(8)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (i // 2)) / 8)
encoding = np.where(i % 2 == 0, np.sin(angles), np.cos(angles))
print(encoding)

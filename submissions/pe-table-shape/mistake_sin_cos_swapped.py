# expect: fails builds-the-table
"""Right shape, but cosines in the even axes and sines in the odd ones."""
import numpy as np

position = np.arange(5)[:, np.newaxis]
i = np.arange(8)[np.newaxis, :]
angles = position / np.power(10000.0, (2 * (i // 2)) / 8)
encoding = np.where(i % 2 == 0, np.cos(angles), np.sin(angles))
print(encoding.shape)

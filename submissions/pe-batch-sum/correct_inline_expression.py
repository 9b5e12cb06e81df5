# expect: full marks
"""No variable at all: the batch, the table and the sum exist only inside one expression."""
import numpy as np


def pe(length, depth):
    position = np.arange(length)[:, None]
    axis = np.arange(depth)[None, :]
    angles = position / 10000.0 ** (2 * (axis // 2) / depth)
    return np.where(axis % 2 == 0, np.sin(angles), np.cos(angles))


print((np.zeros((1, 3, 6)) + pe(4, 6)[:3]).shape)

# expect: full marks
"""Builds the table in a helper function and never keeps it in a variable; prints prose."""
import numpy as np


def positional_table(length, depth):
    position = np.arange(length)[:, np.newaxis]
    axis = np.arange(depth)[np.newaxis, :]
    angles = position / np.power(10000.0, (2 * (axis // 2)) / depth)
    return np.where(axis % 2 == 0, np.sin(angles), np.cos(angles))


print("Shape of table is", positional_table(5, 8).shape)

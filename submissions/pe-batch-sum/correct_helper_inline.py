# expect: full marks
"""Builds the table in a helper function and adds its rows inline: the (4, 6) table never
sits in a variable of its own."""
import numpy as np


def table(length, depth):
    position = np.arange(length)[:, np.newaxis]
    axis = np.arange(depth)[np.newaxis, :]
    angles = position / np.power(10000.0, (2 * (axis // 2)) / depth)
    return np.where(axis % 2 == 0, np.sin(angles), np.cos(angles))


batch = np.ones((1, 3, 6))
marked = batch + table(4, 6)[:3]
print(f"{marked.shape = }")

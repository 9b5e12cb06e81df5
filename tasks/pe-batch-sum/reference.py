"""Trusted reference for pe-batch-sum. Imported by the grader for its helper functions;
run as a script (by grader validate) it is also a correct submission."""
import numpy as np


def table(length, depth, base=10000.0):
    """The position table of the tutorial: a row per step, sin/cos pairs across axes."""
    positions = np.arange(length, dtype=np.float64)[:, np.newaxis]
    axes = np.arange(depth)[np.newaxis, :]
    angles = positions / np.power(base, (2 * (axes // 2)) / depth)
    return np.where(axes % 2 == 0, np.sin(angles), np.cos(angles))


def answer():
    return (np.zeros((1, 3, 6)) + table(4, 6)[:3][np.newaxis]).shape


if __name__ == "__main__":
    encoding = table(4, 6)
    batch = np.ones((1, 3, 6))
    marked = batch + encoding[:3][np.newaxis, :, :]
    print(marked.shape)

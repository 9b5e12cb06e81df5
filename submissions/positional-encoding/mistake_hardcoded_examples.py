# expect: fails table-shape, exponent-2i-over-d, add-2d
"""Copies the statement's printed examples instead of computing the table."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    if (max_len, d_model) == (3, 4):
        return np.array([[0.0, 1.0, 0.0, 1.0],
                         [0.84147098, 0.54030231, 0.00999983, 0.99995],
                         [0.90929743, -0.41614684, 0.01999867, 0.99980001]])
    if (max_len, d_model) == (2, 5):
        return np.array([[0.0, 1.0, 0.0, 1.0, 0.0],
                         [0.84147098, 0.54030231, 0.02511622, 0.99968454, 0.0]])
    return np.zeros((2, 2))


def add_positional_encoding(x, base=10000.0):
    return x + np.array([[0.0, 1.0], [0.84147098, 0.54030231]])

# expect: fails positions-start-at-zero, example-table-3x4
# diagnosis: positions-start-at-one
"""Counts positions from 1 instead of 0."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model))
    p = np.arange(1, max_len + 1)[:, None]
    i = np.arange(d_model // 2)
    angles = p / base ** (2 * i / d_model)
    pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

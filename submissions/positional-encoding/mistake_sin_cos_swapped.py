# expect: fails sin-even-cos-odd, positions-start-at-zero, example-table-3x4
# diagnosis: sin-cos-swapped
"""Cosine in the even columns and sine in the odd ones."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model))
    p = np.arange(max_len)[:, None]
    i = np.arange(d_model // 2)
    angles = p / base ** (2 * i / d_model)
    pe[:, 0:2 * (d_model // 2):2] = np.cos(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.sin(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

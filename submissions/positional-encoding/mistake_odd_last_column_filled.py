# expect: fails odd-width-last-column-zero, example-table-2x5
# diagnosis: odd-last-column-filled
"""Rounds the number of pairs up, so an odd width gets a sine in its last column."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    p = np.arange(max_len)[:, None]
    i = np.arange((d_model + 1) // 2)
    angles = p / base ** (2 * i / d_model)
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

# expect: fails add-custom-base
# diagnosis: add-drops-base
"""add_positional_encoding forgets to pass base on."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model))
    p = np.arange(max_len)[:, None]
    i = np.arange(d_model // 2)
    angles = p / base ** (2 * i / d_model)
    pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1])

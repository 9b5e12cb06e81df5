# expect: fails positions-start-at-zero
# diagnosis: positions-start-at-one
"""np.outer of the positions and the inverse frequencies, positions counted from 1."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    inv_freq = 1.0 / base ** (np.arange(0, d_model - 1, 2) / d_model)
    angles = np.outer(np.arange(1, max_len + 1), inv_freq)
    pe = np.zeros((max_len, d_model))
    pe[:, 0:angles.shape[1] * 2:2] = np.sin(angles)
    pe[:, 1:angles.shape[1] * 2:2] = np.cos(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

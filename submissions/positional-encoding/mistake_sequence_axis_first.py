# expect: fails add-batch-axes
"""Takes the sequence length from axis 0, which is only right without batch axes."""
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
    steps, width = x.shape[0], x.shape[-1]
    return x + sinusoidal_pe(steps, width, base)[:x.shape[-2]]

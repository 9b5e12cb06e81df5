# expect: fails exponent-2i-over-d
# diagnosis: exponent-uses-i
"""The exp/log form of the frequencies, with the pair index i where 2i belongs."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    position = np.arange(max_len, dtype=np.float64)[:, None]
    div_term = np.exp(np.arange(d_model // 2) * (-np.log(base) / d_model))
    pe = np.zeros((max_len, d_model))
    pe[:, 0:2 * (d_model // 2):2] = np.sin(position * div_term)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(position * div_term)
    return pe


def add_positional_encoding(x, base=10000.0):
    return np.add(x, sinusoidal_pe(x.shape[-2], x.shape[-1], base))

# expect: fails odd-width-exponent, odd-width-last-column-zero, example-table-2x5
"""Interleaves by reshaping, which only works for an even width."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    p = np.arange(max_len)[:, None]
    i = np.arange(d_model // 2)
    angles = p / base ** (2 * i / d_model)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(max_len, d_model)


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

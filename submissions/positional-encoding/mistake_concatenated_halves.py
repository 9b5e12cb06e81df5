# expect: fails sin-even-cos-odd, odd-width-exponent
# diagnosis: halves-not-interleaved
"""Sines then cosines, concatenated; an odd width gets a zero column at the end."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    freqs = base ** (-np.arange(0, d_model // 2) * 2.0 / d_model)
    angles = np.arange(max_len)[:, None] * freqs[None, :]
    pe = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    if d_model % 2:
        pe = np.concatenate([pe, np.zeros((max_len, 1))], axis=1)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

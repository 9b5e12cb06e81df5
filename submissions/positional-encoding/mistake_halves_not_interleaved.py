# expect: fails sin-even-cos-odd, exponent-2i-over-d
# diagnosis: halves-not-interleaved
"""Puts all sines in the first half and all cosines in the second (concatenated, not
interleaved), as some libraries do."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    half = d_model // 2
    p = np.arange(max_len)[:, None]
    i = np.arange(half)
    angles = p / base ** (2 * i / d_model)
    pe = np.zeros((max_len, d_model))
    pe[:, :half] = np.sin(angles)
    pe[:, half:2 * half] = np.cos(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

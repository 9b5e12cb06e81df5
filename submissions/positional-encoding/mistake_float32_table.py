# expect: fails float64-precision
"""Computes the table in float32: fine for short sequences, off by ~1e-4 at large positions:
within the tolerance of every value check, short of the one that asks for float64 precision."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    p = np.arange(max_len, dtype=np.float32)[:, None]
    i = np.arange(d_model // 2, dtype=np.float32)
    angles = p / np.float32(base) ** (2 * i / np.float32(d_model))
    pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

# expect: fails odd-width-exponent, example-table-2x5
# diagnosis: odd-width-divides-by-d-minus-1
"""Builds the table for the even width d_model - 1 and pads a zero column: the exponent
then divides by d_model - 1 instead of d_model."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    even = d_model - d_model % 2
    pe = np.zeros((max_len, d_model))
    if even == 0:
        return pe
    p = np.arange(max_len)[:, None]
    i = np.arange(even // 2)
    angles = p / base ** (2 * i / even)
    pe[:, 0:even:2] = np.sin(angles)
    pe[:, 1:even:2] = np.cos(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

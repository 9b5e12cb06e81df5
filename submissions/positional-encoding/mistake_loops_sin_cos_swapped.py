# expect: fails sin-even-cos-odd, positions-start-at-zero
# diagnosis: sin-cos-swapped
"""Loops over positions and pairs with math, but starts each pair with the cosine."""
import math

import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for i in range(d_model // 2):
            angle = pos / math.pow(base, 2 * i / d_model)
            pe[pos, 2 * i] = math.cos(angle)
            pe[pos, 2 * i + 1] = math.sin(angle)
    return pe


def add_positional_encoding(x, base=10000.0):
    x = np.asarray(x, dtype=float)
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

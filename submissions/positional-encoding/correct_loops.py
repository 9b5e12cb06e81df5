# expect: full marks
"""Plain loops, the way the formula reads; slow but right."""
import math

import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    table = np.zeros((max_len, d_model), dtype=float)
    for p in range(max_len):
        for i in range(d_model // 2):
            angle = p / math.pow(base, 2 * i / d_model)
            table[p, 2 * i] = math.sin(angle)
            table[p, 2 * i + 1] = math.cos(angle)
    return table


def add_positional_encoding(x, base=10000.0):
    x = np.asarray(x, dtype=float)
    out = x.copy()
    out += sinusoidal_pe(x.shape[-2], x.shape[-1], base)
    return out

# expect: fails exponent-2i-over-d, sin-even-cos-odd
# diagnosis: exponent-uses-column-index
"""Uses the column index j in base ** (j / d), so each cosine turns at the wrong speed
(the classic `angle_rates = 1 / base ** (j / d)` without the `2 * (j // 2)`)."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    p = np.arange(max_len)[:, None]
    j = np.arange(d_model)[None, :]
    angles = p / base ** (j / d_model)
    pe = np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
    if d_model % 2:
        pe[:, -1] = 0.0
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

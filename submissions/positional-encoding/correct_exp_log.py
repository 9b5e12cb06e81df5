# expect: full marks
"""The frequency through exp/log, as many transformer codebases write it, with stacking."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    half = d_model // 2
    position = np.arange(max_len, dtype=np.float64)[:, np.newaxis]
    div_term = np.exp(np.arange(0, 2 * half, 2) * (-np.log(base) / d_model))
    pairs = np.stack([np.sin(position * div_term), np.cos(position * div_term)], axis=-1)
    table = pairs.reshape(max_len, 2 * half)
    if d_model % 2:
        table = np.concatenate([table, np.zeros((max_len, 1))], axis=1)
    return table


def add_positional_encoding(x, base=10000.0):
    steps, width = x.shape[-2:]
    return np.add(x, sinusoidal_pe(steps, width, base=base))

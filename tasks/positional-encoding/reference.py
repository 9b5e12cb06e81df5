"""Trusted reference solution for the positional-encoding task (numpy only)."""
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    positions = np.arange(max_len, dtype=np.float64)[:, np.newaxis]
    pairs = np.arange(d_model // 2, dtype=np.float64)
    # The exponent divides by d_model even when d_model is odd.
    angles = positions / np.power(float(base), 2.0 * pairs / d_model)
    table = np.zeros((max_len, d_model), dtype=np.float64)
    table[:, 0:2 * len(pairs):2] = np.sin(angles)
    table[:, 1:2 * len(pairs):2] = np.cos(angles)
    return table  # an odd d_model leaves the last column at 0


def add_positional_encoding(x, base=10000.0):
    x = np.asarray(x)
    steps, width = x.shape[-2], x.shape[-1]
    return x + sinusoidal_pe(steps, width, base)

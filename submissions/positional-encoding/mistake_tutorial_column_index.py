# expect: fails exponent-2i-over-d, sin-even-cos-odd, odd-width-last-column-zero
# diagnosis: exponent-uses-column-index, odd-last-column-filled
"""A well-known tutorial's get_angles without its 2 * (i // 2), so each column uses its own
index j; and its 0::2 slice gives an odd width's last column a sine too."""
import numpy as np


def get_angles(pos, i, d_model, base):
    angle_rates = 1 / np.power(base, i / np.float32(d_model))
    return pos * angle_rates


def sinusoidal_pe(max_len, d_model, base=10000.0):
    angle_rads = get_angles(np.arange(max_len)[:, np.newaxis],
                            np.arange(d_model)[np.newaxis, :], d_model, base)
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return angle_rads


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)

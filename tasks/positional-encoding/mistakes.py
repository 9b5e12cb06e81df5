"""Known mistakes of the positional-encoding task: trusted instructor code, imported on the
trusted side like reference.py. Each function computes what the task's function computes
when it makes one mistake of the statement's rules, and nothing else wrong; task.yaml's
``mistakes:`` says which task function it replaces. The task's functions are in scope by
name (the reference's, or this mistake's replacement), as ``sinusoidal_pe`` is below."""
import numpy as np


def _table(max_len, d_model, angles, first=np.sin, second=np.cos):
    """The table of the statement's layout: pair i's two functions in columns 2i and 2i + 1
    (an odd d_model's last column stays 0)."""
    table = np.zeros((max_len, d_model), dtype=np.float64)
    pairs = angles.shape[1]
    table[:, 0:2 * pairs:2] = first(angles)
    table[:, 1:2 * pairs:2] = second(angles)
    return table


def _angles(max_len, d_model, base, exponent_over):
    """p / base ** (exponent / d) for every position p and pair i, given the exponent of
    pair i (``exponent_over``: i -> (numerator, denominator))."""
    positions = np.arange(max_len, dtype=np.float64)[:, np.newaxis]
    pairs = np.arange(d_model // 2, dtype=np.float64)
    top, bottom = exponent_over(pairs)
    return positions / np.power(float(base), top / bottom)


def sin_cos_swapped(max_len, d_model, base=10000.0):
    # cosine in the even columns, sine in the odd ones
    angles = _angles(max_len, d_model, base, lambda i: (2.0 * i, d_model))
    return _table(max_len, d_model, angles, first=np.cos, second=np.sin)


def exponent_without_two(max_len, d_model, base=10000.0):
    # base ** (i / d): the pair's index i where the statement has 2i
    angles = _angles(max_len, d_model, base, lambda i: (i, d_model))
    return _table(max_len, d_model, angles)


def exponent_over_column_index(max_len, d_model, base=10000.0):
    # base ** (j / d) with j the column (2i for the sine, 2i + 1 for the cosine) instead of
    # 2i for both columns of a pair
    positions = np.arange(max_len, dtype=np.float64)[:, np.newaxis]
    pairs = np.arange(d_model // 2, dtype=np.float64)
    table = np.zeros((max_len, d_model), dtype=np.float64)
    table[:, 0:2 * len(pairs):2] = np.sin(positions / np.power(float(base), 2.0 * pairs / d_model))
    table[:, 1:2 * len(pairs):2] = np.cos(positions / np.power(float(base), (2.0 * pairs + 1) / d_model))
    return table


def odd_width_over_d_minus_one(max_len, d_model, base=10000.0):
    # an odd d_model's exponent divides by d_model - 1 (the even width of the pairs)
    even = d_model - d_model % 2
    angles = _angles(max_len, d_model, base, lambda i: (2.0 * i, max(even, 1)))
    return _table(max_len, d_model, angles)


def odd_last_column_filled(max_len, d_model, base=10000.0):
    # an odd d_model's last column gets the sine of one more pair, i = (d - 1) / 2
    table = reference_table(max_len, d_model, base)
    if d_model % 2:
        positions = np.arange(max_len, dtype=np.float64)
        table[:, -1] = np.sin(positions / np.power(float(base), (d_model - 1.0) / d_model))
    return table


def positions_from_one(max_len, d_model, base=10000.0):
    # rows are positions 1 .. max_len instead of 0 .. max_len - 1
    return reference_table(max_len + 1, d_model, base)[1:]


def halves_not_interleaved(max_len, d_model, base=10000.0):
    # all sines in the first d // 2 columns, then all cosines (concatenated, not interleaved)
    angles = _angles(max_len, d_model, base, lambda i: (2.0 * i, d_model))
    half = angles.shape[1]
    table = np.zeros((max_len, d_model), dtype=np.float64)
    table[:, :half] = np.sin(angles)
    table[:, half:2 * half] = np.cos(angles)
    return table


def base_ignored(max_len, d_model, base=10000.0):
    # the table always uses 10000, whatever base is given
    return reference_table(max_len, d_model, 10000.0)


def add_without_base(x, base=10000.0):
    # add_positional_encoding builds the table without passing base on
    x = np.asarray(x)
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1])  # noqa: F821 (the task's, by name)


def reference_table(max_len, d_model, base):
    angles = _angles(max_len, d_model, base, lambda i: (2.0 * i, d_model))
    return _table(max_len, d_model, angles)

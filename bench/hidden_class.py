"""A class for the positional-encoding task that looks like a real one, not like the bundled
samples: right answers written several ways (vectorized, exp/log, plain Python loops over
every entry), and the mistakes a class makes that the samples do not show: a NaN for a width
of 1, a table of the wrong shape, float16 or float32 arithmetic, an odd width's last column
filled, the input changed in place. Each file is written from a template, with small
variations (names, order of the statements) so no two are byte-identical.

    from hidden_class import make_hidden_class
    make_hidden_class(folder, 60)  # s000.py ... s059.py, with the mix below

The honest mix has no file that loops forever or crashes: those are the stragglers that
compute_floor.py adds on purpose.
"""

from __future__ import annotations

import os

VECTORIZED = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    {pos} = np.arange(max_len, dtype={dtype})[:, None]
    pairs = np.arange(d_model // 2, dtype={dtype})
    angles = {pos} / np.power({dtype}(base), 2.0 * pairs / d_model)
    table = np.zeros((max_len, d_model), dtype={dtype})
    table[:, 0:2 * len(pairs):2] = np.sin(angles)
    table[:, 1:2 * len(pairs):2] = np.cos(angles)
    return table{shape}


def add_positional_encoding(x, base=10000.0):
    {add}
"""

ADD_COPY = "return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)"
ADD_IN_PLACE = "x += sinusoidal_pe(x.shape[-2], x.shape[-1], base)\n    return x"

EXP_LOG = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    half = d_model // 2
    position = np.arange(max_len, dtype=np.float64)[:, np.newaxis]
    div_term = np.exp(np.arange(0, 2 * half, 2) * (-np.log(base) / {denominator}))
    pairs = np.stack([np.sin(position * div_term), np.cos(position * div_term)], axis=-1)
    table = pairs.reshape(max_len, 2 * half)
    if d_model % 2:
        table = np.concatenate([table, np.{fill}((max_len, 1))], axis=1)
    return table


def add_positional_encoding(x, base=10000.0):
    steps, width = x.shape[-2:]
    return np.add(x, sinusoidal_pe(steps, width, base=base))
"""

# Python loops over every entry: right, and slow on the large bounds (a real class has many).
LOOPS = """
import math

import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    table = np.zeros((max_len, d_model))
    for {pos} in range(max_len):
        for i in range(0, d_model - 1, 2):
            angle = {pos} / base ** (i / d_model)
            table[{pos}, i] = math.sin(angle)
            table[{pos}, i + 1] = math.cos(angle)
    return table


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""

# A NaN for the narrowest tables: the exponent written as a normalised index, i / (half - 1),
# which is 0/0 when d_model is 2 or 3 (right for every wider table).
NAN_NARROW = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    half = d_model // 2
    positions = np.arange(max_len, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        exponent = np.arange(half) / (half - 1) * (2.0 * (half - 1) / d_model)
    angles = positions / np.power(float(base), exponent)
    table = np.zeros((max_len, d_model))
    table[:, 0:2 * half:2] = np.sin(angles)
    table[:, 1:2 * half:2] = np.cos(angles)
    return table


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""

# (template, its fields, whether it is right)
MIX = [
    (VECTORIZED, {"pos": "positions", "dtype": "np.float64", "shape": "", "add": ADD_COPY}, True),
    (VECTORIZED, {"pos": "t", "dtype": "np.float64", "shape": "", "add": ADD_COPY}, True),
    (EXP_LOG, {"denominator": "d_model", "fill": "zeros"}, True),
    (LOOPS, {"pos": "p"}, True),
    (LOOPS, {"pos": "row"}, True),
    (VECTORIZED, {"pos": "positions", "dtype": "np.float16", "shape": "", "add": ADD_COPY}, False),
    (VECTORIZED, {"pos": "positions", "dtype": "np.float32", "shape": "", "add": ADD_COPY}, False),
    (VECTORIZED, {"pos": "positions", "dtype": "np.float64", "shape": ".T", "add": ADD_COPY}, False),
    (VECTORIZED, {"pos": "positions", "dtype": "np.float64", "shape": "", "add": ADD_IN_PLACE}, False),
    (EXP_LOG, {"denominator": "(d_model - 1)", "fill": "zeros"}, False),
    (EXP_LOG, {"denominator": "d_model", "fill": "ones"}, False),
    (NAN_NARROW, {}, False),
]


def make_hidden_class(folder: str, students: int, honest_only: bool = False) -> list[bool]:
    """Write ``students`` files of the mix into ``folder`` (s000.py, ...); returns whether
    each is right. ``honest_only``: only the right ones (a class of correct files)."""
    os.makedirs(folder)
    pool = [m for m in MIX if m[2]] if honest_only else MIX
    right = []
    for i in range(students):
        template, fields, ok = pool[i % len(pool)]
        text = template.format(**fields).lstrip()
        header = f'"""Student {i:03d}."""\n'  # (so no two files are byte-identical)
        with open(os.path.join(folder, f"s{i:03d}.py"), "w") as f:
            f.write(header + text)
        right.append(ok)
    return right

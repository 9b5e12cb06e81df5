import numpy as np


def normalize_rows(m):
    m = np.asarray(m, dtype=float)
    lengths = np.sqrt((m * m).sum(axis=1, keepdims=True))
    safe = np.where(lengths == 0, 1.0, lengths)
    return m / safe

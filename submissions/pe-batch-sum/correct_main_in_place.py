# expect: full marks
"""Everything inside main(); the table is a list of rows, and the rows are added to the
batch in place (`+=`)."""
import math

import numpy as np


def main():
    rows = []
    for p in range(4):
        rows.append([math.sin(p / 10000 ** (j / 6)) if j % 2 == 0
                     else math.cos(p / 10000 ** ((j - 1) / 6)) for j in range(6)])
    batch = np.random.default_rng(1).normal(size=(1, 3, 6))
    batch += np.array(rows)[:3]
    print("Shape of the sum:", batch.shape)


main()

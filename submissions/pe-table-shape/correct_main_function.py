# expect: full marks
"""Does everything inside main(), with plain loops; prints `shape: (5, 8)`."""
import math

import numpy as np


def main():
    table = np.zeros((5, 8))
    for p in range(5):
        for j in range(8):
            angle = p / 10000 ** (2 * (j // 2) / 8)
            table[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    print("shape:", table.shape)


if __name__ == "__main__":
    main()

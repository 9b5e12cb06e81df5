# expect: full marks
"""Plain loops; prints debugging lines first and the shape as a list at the end."""
import math

import numpy as np

rows = []
for p in range(5):
    row = []
    for j in range(8):
        angle = p / 10000 ** (2 * (j // 2) / 8)
        row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
    rows.append(row)
    print("row", p, "done")
table = np.array(rows)
print("first row:", table[0])
print(list(table.shape))

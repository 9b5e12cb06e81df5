# expect: fails builds-the-table, adds-the-first-three-rows
"""Types the three rows in and adds them to a batch it made: the sum is right, but the
rows were typed, not computed, and no table was built."""
import numpy as np

batch = np.random.default_rng(0).normal(size=(1, 3, 6))
rows = np.array([[0.00000000, 1.00000000, 0.00000000, 1.00000000, 0.00000000, 1.00000000],
                [0.84147098, 0.54030231, 0.04639922, 0.99892298, 0.00215443, 0.99999768],
                [0.90929743, -0.41614684, 0.09269850, 0.99569422, 0.00430886, 0.99999072]])
total = batch + rows
print(total.shape)

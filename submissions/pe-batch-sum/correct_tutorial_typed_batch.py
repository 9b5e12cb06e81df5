# expect: full marks
"""The tutorial's way: the batch is typed in (ones and zeros), the table is computed, and
its first three rows are added."""
import numpy as np

length, depth = 4, 6
position = np.arange(length, dtype=np.float32)[:, np.newaxis]
i = np.arange(depth, dtype=np.float32)[np.newaxis, :]
angle_rates = 1 / np.power(10000.0, (2 * (i // 2)) / np.float32(depth))
angle_rads = position * angle_rates
sines = np.sin(angle_rads[:, 0::2])
cosines = np.cos(angle_rads[:, 1::2])
encoding = np.stack([sines, cosines], axis=-1).reshape(length, depth)
batch = np.array([[[1., 0., 1., 0., 1., 0.],
                   [0., 1., 0., 1., 0., 1.],
                   [1., 0., 1., 0., 1., 0.]]])
marked = batch + encoding[:3][np.newaxis, :, :]
print(marked.shape)

# expect: full marks
"""The tutorial's stack-and-reshape layout, in float32 like TensorFlow, printed TF-style."""
import numpy as np

length, depth = 5, 8
position = np.arange(length, dtype=np.float32)[:, np.newaxis]
i = np.arange(depth, dtype=np.float32)[np.newaxis, :]
angle_rates = 1 / np.power(np.float32(10000.0), (2 * (i // 2)) / np.float32(depth))
angle_rads = position * angle_rates
sines = np.sin(angle_rads[:, 0::2])
cosines = np.cos(angle_rads[:, 1::2])
encoding = np.stack([sines, cosines], axis=-1).reshape(length, depth)
print(f"TensorShape({list(encoding.shape)})")

# expect: fails prints-the-shape, adds-the-first-three-rows
"""TensorFlow; forgets the batch axis: the steps are a bare (3, 6) tensor."""
import tensorflow as tf

position = tf.range(4, dtype=tf.float32)[:, tf.newaxis]
i = tf.range(6, dtype=tf.float32)[tf.newaxis, :]
angle_rads = position / tf.pow(10000.0, (2 * (i // 2)) / 6)
encoding = tf.where(tf.cast(i, tf.int32) % 2 == 0, tf.sin(angle_rads), tf.cos(angle_rads))
steps = tf.ones((3, 6))
result = steps + encoding[:3]
print(result.shape)

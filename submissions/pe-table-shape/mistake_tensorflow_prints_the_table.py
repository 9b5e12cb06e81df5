# expect: fails prints-the-shape
"""TensorFlow, as in the tutorial, but prints the table itself instead of its shape."""
import tensorflow as tf

length, depth = 5, 8
position = tf.range(length, dtype=tf.float32)[:, tf.newaxis]
i = tf.range(depth, dtype=tf.float32)[tf.newaxis, :]
angle_rads = position / tf.pow(10000.0, (2 * (i // 2)) / depth)
encoding = tf.where(tf.cast(i, tf.int32) % 2 == 0, tf.sin(angle_rads), tf.cos(angle_rads))
print(encoding.numpy())

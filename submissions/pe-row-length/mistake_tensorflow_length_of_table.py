# expect: fails prints-the-length
"""TensorFlow; prints the length of the whole table (its number of rows), not of one row."""
import tensorflow as tf

position = tf.range(6, dtype=tf.float32)[:, tf.newaxis]
i = tf.range(4, dtype=tf.float32)[tf.newaxis, :]
angle_rads = position / tf.pow(10000.0, (2 * (i // 2)) / 4)
encoding = tf.where(tf.cast(i, tf.int32) % 2 == 0, tf.sin(angle_rads), tf.cos(angle_rads))
print(len(encoding))

"""Text from a trained model: decoding strategies over a key/value cache, and the figures that judge samples."""

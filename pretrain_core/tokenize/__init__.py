"""Tokenizer training (a global fit), held-out split assignment (a global fit) and per-shard encoding + packing."""

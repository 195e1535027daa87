"""Exact and near-duplicate removal: a global fit builds clusters, a per-shard stage keeps one document per cluster."""

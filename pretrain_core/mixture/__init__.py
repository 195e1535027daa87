"""Token-budget mixture: a global plan of how often each document is used, applied shard by shard."""

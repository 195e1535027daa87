"""Perplexity-based quality: CCNet-style reference n-gram models, per-language buckets and filtering."""

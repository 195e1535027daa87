"""Distributed GPT pretraining on packed token shards: model, data, optimizer, checkpoints, trainer, launcher."""

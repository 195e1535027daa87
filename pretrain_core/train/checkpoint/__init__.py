"""Checkpoints: sharded saves and loads in DCP's format with a JSON index, background saves, SIGTERM."""

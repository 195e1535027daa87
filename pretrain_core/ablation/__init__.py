"""Ablations: the same proxy model trained on equal tokens of several candidate corpora, several seeds each, scored
on one shared held-out set, to show which curation setting gives the better model."""

"""Hyperparameter sweeps: an Optuna study whose trials are proxy training runs (`pretrain sweep`)."""

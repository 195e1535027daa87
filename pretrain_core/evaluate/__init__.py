"""Checkpoint evaluation: held-out loss per split and domain, bits per byte, and generated samples."""

from pretrain_core.evaluate.evaluator import EvalResult, evaluate_checkpoint

__all__ = ["EvalResult", "evaluate_checkpoint"]

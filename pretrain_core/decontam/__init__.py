"""Decontamination: training documents that share n-grams with evaluation text are dropped or redacted."""

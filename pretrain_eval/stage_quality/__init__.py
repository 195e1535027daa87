"""How well each data stage does its job, measured on labelled real text against a well-known baseline."""

# The parts of `pretrain stage-report`, one evaluator module each; kept here, free of imports, so the CLI can offer
# them as choices without loading any evaluator.
PARTS = ("dedup", "pii", "quality", "langid", "mixture", "tokenizer")

"""The offline build of the PII stage's name/address tagger (training data, fit, report)."""

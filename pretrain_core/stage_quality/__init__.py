"""How well each data stage does its job, measured on labelled real text against a well-known baseline."""

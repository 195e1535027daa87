"""A trained model outside training: one loader for checkpoints and exports, and the export formats."""

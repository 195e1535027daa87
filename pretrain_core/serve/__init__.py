"""`pretrain serve`: a trained model behind a small HTTP API."""

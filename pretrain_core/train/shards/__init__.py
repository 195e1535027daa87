"""What training reads: token shards as sequences in a resumable order, and their tokenizer."""

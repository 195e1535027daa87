"""Upper bounds for every count and size a config takes: far past any real run, so they never limit one, yet they
catch a typo or a unit slip (`1e23` where 2000 was meant) when the config is read instead of mid-run. Each says
what it is measured against."""

from __future__ import annotations

MAX_STEPS = 100_000_000  # optimizer steps: Llama 3 405B trained about 1.2 M; this is 80x that
MAX_CHECKPOINTS = 100_000  # checkpoints kept: hourly saves for 11 years
MAX_BATCHES = 1_000_000  # evaluation batches per round: more than a validation split of 10^9 sequences needs
MAX_BATCH_TOKENS = 10_000_000_000  # tokens in one optimizer step: 600x Llama 3's 16 M
MAX_MINUTES = 10_080.0  # minutes between time-based saves: a week
MAX_SECONDS = 30 * 24 * 3600.0  # one run's time limit: 30 days
MAX_FLOPS = 1e18  # FLOP/s of one device: 400x an H100's dense bf16 peak
MAX_VOCAB = 10_000_000  # vocabulary entries (top-k can reach no further): 40x the largest vocabularies in use
MAX_DOCS_PER_SHARD = 100_000_000  # documents in one shard, which one worker holds: at 1 kB each, 100 GB
MAX_SHARD_BYTES = 1 << 40  # bytes in one shard or batch, which one worker holds: 1 TiB
MAX_CORPUS_BYTES = 1 << 50  # bytes of a whole corpus's sources: a PiB, 100x the largest corpora this targets
MAX_DOC_BYTES = 1 << 34  # bytes of one document or file: 16 GiB
MAX_DOC_CHARS = 1_000_000_000  # characters, words or matches in one document: a 1 GB document
MAX_PREVIEW_CHARS = 1_000_000  # characters of a dropped document shown in its quarantine row: a whole book
MAX_LINE_CHARS = 100_000_000  # characters or words in one line: minified bundles reach megabytes, not 100 MB
MAX_LINES = 10_000_000  # lines scanned at a file's head: a 10-million-line file
MAX_WORD_CHARS = 10_000  # characters in a mean word: no language's words average more than tens
MAX_DOCS = 1_000_000_000  # documents of one language a fit needs: a billion
MAX_SAMPLE_CHARS = 1_000_000_000_000  # characters a fit samples into one process: 1 TB, beyond any one machine
MAX_CORPUS_TOKENS = 10**15  # tokens of a whole corpus: 25x the 36 T of the largest published pretraining runs
MAX_PERMUTATIONS = 4096  # MinHash bands or rows: 4096 permutations is 16x datasketch's default 256
MAX_FAN_IN = 100_000  # shuffle pieces merged in one job: open files per process stay far below this
MAX_BUCKET_PAIRS = 100_000  # a bucket's size past which pairs go to its representative only: 5*10^9 pairs below it

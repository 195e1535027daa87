"""The tokenizer measured on real text: exact round trips, and bytes per token against a HuggingFace byte-level BPE.

Ours is the pipeline's SentencePiece BPE (``fit_tokenizer`` with the demo config's tokenizer settings) trained on
the demo corpus as ingest reads it, less a held-out tenth of its documents (picked by a seeded hash of the id);
texts are encoded as the stages encode them (``encode_texts``). The baseline is a HuggingFace ``tokenizers`` BPE
with the byte-level pre-tokenizer and decoder (GPT-2's scheme), trained on the documents of our training sample
with the same vocabulary size, three entries of it special tokens as in ours.

Figures:

- ``round_trip_failures`` (bar: 0): documents whose ``decode(encode(text))`` is not the text, over every
  document of the demo corpus, and apart over the documents of ``<set_dir>`` (data/labelled/tokenizer: emoji,
  U+2581, form feeds, right-to-left scripts, rare Han characters, ...).
- ``bytes_per_token`` on the held-out documents, overall and per domain: UTF-8 bytes of the text per token
  (without BOS/EOS), so higher means shorter sequences for the same text.
- ``bytes_per_token_vs_baseline``: ours divided by the baseline's; the bar is 0.97 over all held-out documents.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import sentencepiece as spm
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from pretrain_core import storage
from pretrain_core.tokenize.config import TokenizerConfig
from pretrain_core.tokenize.encode import encode_texts, load_tokenizer, round_trip_failures
from pretrain_core.tokenize.keys import doc_key
from pretrain_core.tokenize.train import fit_tokenizer, sample_documents
from pretrain_eval.stage_quality.demo_corpus import demo_config, ingested_shards
from pretrain_eval.stage_quality.figures import OURS, Bar, Figure

STAGE = "tokenizer"
BASELINE = "HF tokenizers byte-level BPE"
SET_FILE = "documents.jsonl"
HELDOUT_EVERY = 10  # one document in ten is held out of training
HELDOUT_SEED = 0  # (the settings were chosen on the split of seed 1, see docs/stage-quality/tokenizer.md)
RATIO_BAR = 0.97
SPECIAL_TOKENS = ["<unk>", "<s>", "</s>"]  # as many as ours has
# With a limit, a smaller tokenizer is trained on a slice of the corpus: quick, and still a real training run.
SLICE_TOKENIZER = TokenizerConfig(vocab_size=4000, max_training_chars=200_000)


def load_documents(set_dir: str) -> list[str]:
    """Texts of the labelled round-trip documents."""
    lines = storage.read_bytes(storage.join(set_dir, SET_FILE)).decode("utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines]


def evaluate(set_dir: str, limit: int | None = None) -> list[Figure]:
    """Round trips and bytes per token for ours and the baseline; with ``limit``, on that many demo documents."""
    labelled = load_documents(set_dir)
    with tempfile.TemporaryDirectory(prefix="pretrain-tokenizer-eval-") as work:
        cfg = demo_config(work, limit)
        tokenizer_cfg = cfg.tokenizer if limit is None else SLICE_TOKENIZER
        shards = ingested_shards(cfg, storage.join(work, "input"), limit)
        corpus = pa.concat_tables([storage.read_parquet(u, columns=["id", "domain", "text"]) for u in shards])
        heldout = pa.array([doc_key(HELDOUT_SEED, i) % HELDOUT_EVERY == 0 for i in corpus.column("id").to_pylist()])
        train_url = storage.join(work, "train", "part-00000.parquet")
        storage.write_parquet(train_url, corpus.filter(pc.invert(heldout)))
        ours = load_tokenizer(fit_tokenizer([train_url], tokenizer_cfg, storage.join(work, "tokenizer"))["tokenizer"])
        sample = sample_documents([train_url], tokenizer_cfg.max_training_chars, tokenizer_cfg.seed)
    baseline = train_byte_level_bpe(sample, tokenizer_cfg.vocab_size)
    texts = corpus.column("text").to_pylist()
    figures = [
        *_round_trips("demo corpus", texts, ours, baseline),
        *_round_trips("labelled documents", labelled, ours, baseline),
    ]
    held = corpus.filter(heldout)
    domains = held.column("domain").to_pylist()
    for domain in ["all", *sorted(set(domains))]:
        group_texts = [t for t, d in zip(held.column("text").to_pylist(), domains, strict=True) if domain in ("all", d)]
        group = "held-out" if domain == "all" else f"held-out/{domain}"
        figures += _compression(group, group_texts, ours, baseline, Bar(">=", RATIO_BAR) if domain == "all" else None)
    return figures


def train_byte_level_bpe(texts: Sequence[str], vocab_size: int) -> Tokenizer:
    """A GPT-2-style byte-level BPE trained on ``texts``: every byte is in its alphabet, so nothing is unknown."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return tokenizer


def baseline_round_trip_failures(tokenizer: Tokenizer, texts: Sequence[str]) -> list[int]:
    decoded = tokenizer.decode_batch([e.ids for e in tokenizer.encode_batch(list(texts))], skip_special_tokens=False)
    return [i for i, (text, back) in enumerate(zip(texts, decoded, strict=True)) if text != back]


def _round_trips(group: str, texts: list[str], ours: spm.SentencePieceProcessor, baseline: Tokenizer) -> list[Figure]:
    failures = len(round_trip_failures(ours, texts))
    baseline_failures = len(baseline_round_trip_failures(baseline, texts))
    return [
        Figure(STAGE, group, OURS, "round_trip_failures", failures, Bar("<=", 0), len(texts)),
        Figure(STAGE, group, BASELINE, "round_trip_failures", baseline_failures, None, len(texts)),
    ]


def _compression(
    group: str, texts: list[str], ours: spm.SentencePieceProcessor, baseline: Tokenizer, bar: Bar | None
) -> list[Figure]:
    size = sum(len(t.encode("utf-8")) for t in texts)
    ours_rate = size / sum(map(len, encode_texts(ours, texts)))
    baseline_rate = size / sum(len(e.ids) for e in baseline.encode_batch(texts))
    return [
        Figure(STAGE, group, OURS, "bytes_per_token", ours_rate, None, len(texts)),
        Figure(STAGE, group, BASELINE, "bytes_per_token", baseline_rate, None, len(texts)),
        Figure(STAGE, group, OURS, "bytes_per_token_vs_baseline", ours_rate / baseline_rate, bar, len(texts)),
    ]

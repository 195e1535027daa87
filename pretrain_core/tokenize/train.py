"""Train the SentencePiece tokenizer from a seeded sample of the corpus, reproducibly to the byte.

The sample is the documents with the smallest seeded hash of their id whose text covers ``max_training_chars``,
so it depends neither on shard layout nor on order. Documents are fed as runs of whole lines with their line breaks
(long lines cut), the model comes back through an in-memory writer (no temp paths end up in it) and the thread
count is cleared from the stored trainer spec, so the same corpus and config give the same ``tokenizer.model``
bytes on any machine.
"""

from __future__ import annotations

import hashlib
import heapq
import io
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

from pretrain_core import storage
from pretrain_core.config_base import ConfigError
from pretrain_core.tokenize.config import TokenizerConfig
from pretrain_core.tokenize.keys import doc_key

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

TOKENIZER_FILE = "tokenizer.model"
TOKENIZER_CARD_FILE = "tokenizer.json"


def sample_documents(input_urls: list[str], max_chars: int, seed: int) -> list[str]:
    """Texts of the documents with the smallest seeded keys whose lengths first reach ``max_chars``, key order.

    One pass with a bounded heap: a shard's texts are only turned into Python strings for documents whose key
    can still make the sample.
    """
    heap: list[tuple[int, str, str]] = []  # (-key, id, text): the largest key on top, evicted first
    chars = 0
    for url in input_urls:
        table = storage.read_parquet(url, columns=["id", "text"])
        lengths = pc.utf8_length(table.column("text")).to_pylist()
        texts = table.column("text")
        for row, doc_id in enumerate(table.column("id").to_pylist()):
            key = doc_key(seed, doc_id)
            if chars >= max_chars and key >= -heap[0][0]:
                continue
            heapq.heappush(heap, (-key, doc_id, texts[row].as_py()))
            chars += lengths[row]
            while chars - len(heap[0][2]) >= max_chars:
                chars -= len(heapq.heappop(heap)[2])
    return [text for _, _, text in sorted(heap, key=lambda item: (-item[0], item[1]))]


def training_chunks(texts: Iterable[str], max_chars: int, max_chunk_chars: int) -> Iterator[str]:
    """The texts as runs of whole lines (line breaks and indentation kept) of at most ``max_chunk_chars``, long lines
    cut at a space where possible, blank runs skipped, stopping at ``max_chars``.

    Lines are kept together so the tokenizer learns line breaks the way text uses them: a blank line, a line break
    followed by indentation, a colon ending a line of code. Fed one line at a time it never sees a line break.
    """
    budget = max_chars
    for text in texts:
        chunk = ""
        for line in text.splitlines(keepends=True):
            for piece in _cut(line, max_chunk_chars):
                if len(chunk) + len(piece) > max_chunk_chars:
                    if chunk.strip():
                        if chunk[:budget].strip():  # the budget's last cut may leave only blanks
                            yield chunk[:budget]
                        budget -= len(chunk)
                        if budget <= 0:
                            return
                    chunk = ""
                chunk += piece
        if chunk.strip():
            if chunk[:budget].strip():
                yield chunk[:budget]
            budget -= len(chunk)
            if budget <= 0:
                return


def _cut(line: str, limit: int) -> Iterator[str]:
    while len(line) > limit:
        cut = line.rfind(" ", limit // 2, limit)
        cut = limit if cut <= 0 else cut
        yield line[:cut]
        line = line[cut:]
    yield line


log = logging.getLogger(__name__)
_VOCABULARY_CAP = re.compile(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)")


def _training_failure(message: str, vocab_size: int) -> str:
    """One line for a user: SentencePiece's own words, and when the text is too small for the vocabulary (a
    sample or a standalone run on a few documents), the override that fits it."""
    cap = _VOCABULARY_CAP.search(message)
    if cap is not None:
        return (
            f"tokenize: the text it trains on yields at most {cap.group(2)} pieces, fewer than tokenizer.vocab_size "
            f"({vocab_size}): give it more text or --set tokenizer.vocab_size={cap.group(2)}"
        )
    return f"tokenize: tokenizer training failed ({message}); check tokenizer.vocab_size for this corpus"


def train_model(sentences: Sequence[str], cfg: TokenizerConfig) -> bytes:
    """Serialized SentencePiece model trained on ``sentences`` (deterministic for a given input and config). Text
    too small for ``vocab_size`` gets the largest vocabulary it supports when ``shrink_vocab_to_fit`` is on."""
    try:
        return _train(sentences, cfg)
    except RuntimeError as error:
        cap = _VOCABULARY_CAP.search(str(error))
        if cap is None or not cfg.shrink_vocab_to_fit:
            raise ConfigError(_training_failure(str(error), cfg.vocab_size)) from None
        fitted = int(cap.group(2))
    log.warning(
        "tokenize: the training text yields at most %d pieces, fewer than tokenizer.vocab_size (%d): training %d "
        "(give it more text for the size configured)",
        fitted,
        cfg.vocab_size,
        fitted,
    )
    try:
        return _train(sentences, cfg.model_copy(update={"vocab_size": fitted}))
    except RuntimeError as error:
        raise ConfigError(_training_failure(str(error), fitted)) from None


def _train(sentences: Sequence[str], cfg: TokenizerConfig) -> bytes:
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=writer,
        vocab_size=cfg.vocab_size,
        model_type=cfg.model_type,
        character_coverage=cfg.character_coverage,
        byte_fallback=cfg.byte_fallback,
        split_digits=cfg.split_digits,
        allow_whitespace_only_pieces=cfg.allow_whitespace_only_pieces,
        split_by_whitespace=cfg.split_by_whitespace,
        user_defined_symbols=list(cfg.user_defined_symbols),
        max_sentence_length=4 * cfg.max_sentence_chars,  # SentencePiece counts bytes, UTF-8 needs <= 4 a char
        input_sentence_size=0,  # the sample is ours; SentencePiece must not resample it
        num_threads=cfg.num_threads,
        minloglevel=2,
        # Fixed, not configurable: these keep decode(encode(text)) == text (whitespace, case, Unicode form).
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        add_dummy_prefix=False,
    )
    model = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
    model.ParseFromString(writer.getvalue())
    model.trainer_spec.ClearField("num_threads")  # the only thread-dependent byte in the model
    return model.SerializeToString(deterministic=True)


def fit_tokenizer(input_urls: list[str], cfg: TokenizerConfig, artifact_dir: str) -> dict[str, str]:
    """Train on a seeded sample of the documents in ``input_urls``; write the model and its card.

    Returns ``{"tokenizer": <model url>, "tokenizer_card": <json url>}``; the card holds the model's sha256,
    the vocabulary size and the size of the training sample.
    """
    texts = sample_documents(input_urls, cfg.max_training_chars, cfg.seed)
    sentences = list(training_chunks(texts, cfg.max_training_chars, cfg.max_sentence_chars))
    if not sentences:
        raise ValueError(f"tokenizer: no text to train on in {len(input_urls)} input shard(s)")
    model = train_model(sentences, cfg)
    model_url = storage.join(artifact_dir, TOKENIZER_FILE)
    card_url = storage.join(artifact_dir, TOKENIZER_CARD_FILE)
    storage.write_bytes(model_url, model)
    tokenizer = spm.SentencePieceProcessor(model_proto=model)
    shrunk = {"requested_vocab_size": cfg.vocab_size} if tokenizer.get_piece_size() != cfg.vocab_size else {}
    storage.write_json(
        card_url,
        {
            "sha256": hashlib.sha256(model).hexdigest(),
            "vocab_size": tokenizer.get_piece_size(),
            **shrunk,
            "model_type": cfg.model_type,
            "training_documents": len(texts),
            "training_sentences": len(sentences),
            "training_chars": sum(len(s) for s in sentences),
            "special_ids": {"unk": tokenizer.unk_id(), "bos": tokenizer.bos_id(), "eos": tokenizer.eos_id()},
        },
    )
    return {"tokenizer": model_url, "tokenizer_card": card_url}


def tokenizer_sha256(artifacts: dict[str, str]) -> str:
    """The trained model's sha256, as recorded on its card (for manifests and training run metadata)."""
    return str(storage.read_json(artifacts["tokenizer_card"])["sha256"])


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"tokenizer": cfg.tokenizer}


def fit_shared(inputs: list[str], cfg: PipelineConfig, artifact_dir: str) -> dict[str, str]:
    return fit_tokenizer(inputs, cfg.tokenizer, artifact_dir)

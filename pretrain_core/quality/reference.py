"""Reference text and the models trained on it: reading reference files, training the tokenisers (lexical and
skeleton) and the n-gram model over each.

Training is deterministic end to end: the texts arrive in seeded-hash order, SentencePiece runs on one thread
over every line in that order, the skeleton keeps words by count then spelling, and the n-gram counts are exact.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib.resources import files

import pyarrow.parquet as pq

from pretrain_core import storage
from pretrain_core.quality.config import REFERENCE_SUFFIXES, SELF, SHIPPED_PREFIX, QualityConfig, ReferenceConfig
from pretrain_core.quality.ngram import NgramLM, pad_sentences
from pretrain_core.quality.scoring import ReferenceModel, Skeleton, split_lines
from pretrain_core.quality.skeleton import SkeletonTokenizer
from pretrain_core.quality.tokenizers import CharacterTokenizer, SentencePieceTokenizer, Tokenizer, TokenizerKind


@dataclass(frozen=True)
class ReferenceRecord:
    """One reference text; ``key`` locates it (for tie-breaks), ``lang`` is None when the source has no label,
    ``fold`` is the cross-fitting fold of an input document (None for reference files, which every fold uses)."""

    key: str
    text: str
    lang: str | None
    fold: int | None = None


def reference_files(ref: ReferenceConfig) -> list[str]:
    """The files behind the non-"self" reference URLs, globs expanded, in sorted order."""
    found: list[str] = []
    for url in ref.urls:
        if url == SELF:
            continue
        if url.startswith(SHIPPED_PREFIX):
            found.append(shipped_reference(url.removeprefix(SHIPPED_PREFIX)))
            continue
        fs, path = storage.filesystem(url)
        matches = sorted(fs.glob(path)) if any(c in path for c in "*?[") else [path]
        matches = [m for m in matches if m.endswith(REFERENCE_SUFFIXES)]
        if not matches:
            raise FileNotFoundError(f"quality reference {url!r} matches no {'/'.join(REFERENCE_SUFFIXES)} file")
        protocol = url.split("://", 1)[0] + "://" if "://" in url else ""
        found += [m if m.startswith(protocol) else f"{protocol}{m}" for m in matches]
    return found


def shipped_reference(name: str) -> str:
    """Path of a reference the library ships (package data, see pretrain_core/data/README.md)."""
    return str(files("pretrain_core") / "data" / "quality_reference" / f"{name}.jsonl.gz")


def shipped_records(name: str) -> Iterator[dict[str, str]]:
    """The records (`id`, `lang`, `source`, `text`) of a shipped reference, in file order."""
    with gzip.open(shipped_reference(name), "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def read_reference_file(url: str, ref: ReferenceConfig) -> Iterator[ReferenceRecord]:
    """Records of one JSONL(.gz/.zst) or Parquet file with a non-empty text field. A record's key is the file's
    name and the record's row, never the directory it sits in: keys pick folds and break ties, so the same
    reference gives the same models wherever the package or the file is installed."""
    fs, path = storage.filesystem(url)
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if path.endswith(".parquet"):
        with fs.open(path, "rb") as handle:
            table = pq.read_table(handle)
        if ref.text_field not in table.schema.names:
            raise ValueError(f"{url}: no column {ref.text_field!r} (set text_field)")
        texts = table.column(ref.text_field).to_pylist()
        langs = (
            table.column(ref.lang_field).to_pylist() if ref.lang_field in table.schema.names else [None] * len(texts)
        )
        for row, (text, lang) in enumerate(zip(texts, langs, strict=True)):
            if text and text.strip():
                yield ReferenceRecord(f"{name}#{row}", text, lang or None)
        return
    with fs.open(path, "rt", encoding="utf-8", compression="infer") as handle:
        for row, line in enumerate(handle):
            if not line.strip():
                continue
            record = json.loads(line)
            if ref.text_field not in record:
                raise ValueError(f"{url} line {row + 1}: no field {ref.text_field!r} (set text_field)")
            text = record[ref.text_field]
            if text and text.strip():
                yield ReferenceRecord(f"{name}#{row}", text, record.get(ref.lang_field) or None)


def reference_lines(texts: list[str]) -> list[str]:
    return [line for text in texts for line in split_lines(text)]


def train_tokenizer(texts: list[str], kind: TokenizerKind, cfg: QualityConfig) -> Tokenizer:
    """Train the tokeniser on the texts' lines, up to `tokenizer_max_chars` characters."""
    lines = list(_first_chars((line for text in texts for line in split_lines(text)), cfg.tokenizer_max_chars))
    if kind == "characters":
        return CharacterTokenizer.train(lines)
    return SentencePieceTokenizer.train(lines, cfg.vocab_size, cfg.character_coverage)


def train_skeleton_tokenizer(texts: list[str], cfg: QualityConfig) -> SkeletonTokenizer | None:
    """The skeleton's kept words, counted over every reference line; None when the skeleton model is off."""
    return SkeletonTokenizer.train(reference_lines(texts), cfg.skeleton_words) if cfg.skeleton_words else None


def train_lm(texts: list[str], tokenizer: Tokenizer, order: int) -> NgramLM:
    """Count an n-gram model of `order` over every line of the texts, as the tokeniser splits them."""
    ids, lengths = tokenizer.encode(reference_lines(texts))
    sentences = pad_sentences(ids, lengths, order, tokenizer.bos, tokenizer.eos)
    return NgramLM.fit(sentences, order, tokenizer.vocab_size, tokenizer.bos)


def train_reference_model(texts: list[str], kind: TokenizerKind, cfg: QualityConfig) -> ReferenceModel:
    """Tokeniser, n-gram model and (unless switched off) skeleton model, trained on the same texts."""
    tokenizer = train_tokenizer(texts, kind, cfg)
    skeleton_tokenizer = train_skeleton_tokenizer(texts, cfg)
    skeleton = None
    if skeleton_tokenizer is not None:
        skeleton_lm = train_lm(texts, skeleton_tokenizer, cfg.skeleton_order)
        skeleton = Skeleton(skeleton_tokenizer, skeleton_lm, cfg.skeleton_weight)
    return ReferenceModel(tokenizer, train_lm(texts, tokenizer, cfg.order), skeleton)


def _first_chars(lines: Iterable[str], max_chars: int) -> Iterator[str]:
    """Lines from the start until they add up to ``max_chars`` characters (at least one line)."""
    total = 0
    for line in lines:
        yield line
        total += len(line)
        if total >= max_chars:
            return

import json
from pathlib import Path

import pyarrow as pa
import pytest
import sentencepiece as spm

from pretrain_core import storage
from pretrain_core.config import load_config
from pretrain_core.ingest.config import IngestConfig
from pretrain_core.ingest.listing import list_source_files
from pretrain_core.ingest.stage import ingest_files
from pretrain_core.tokenize.config import TokenizerConfig
from pretrain_core.tokenize.encode import encode_batch, encode_texts, load_tokenizer, round_trip_failures
from pretrain_core.tokenize.train import fit_tokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tokenizer(tokenizer_artifacts: dict[str, str]) -> spm.SentencePieceProcessor:
    return load_tokenizer(tokenizer_artifacts["tokenizer"])


def _emoji_text() -> str:
    """Faker's emoji list, as the labelled tokenizer set ships it: real text full of emoji and other astral-plane
    characters."""
    with (REPO_ROOT / "data/labelled/tokenizer/documents.jsonl").open(encoding="utf-8") as lines:
        texts = {doc["id"]: doc["text"] for doc in map(json.loads, lines)}
    return texts["faker-providers/emoji/__init__.py"][:20_000]


def test_every_real_document_round_trips(
    tokenizer: spm.SentencePieceProcessor, documents: list[dict[str, str]]
) -> None:
    texts = [d["text"] for d in documents]
    assert any("\t" in t for t in texts) and any("\r\n" in t for t in texts)
    assert any("\u4e00" <= ch <= "\u9fff" for t in texts for ch in t)  # Chinese is in the sample
    assert round_trip_failures(tokenizer, texts) == []


def test_emoji_and_unseen_scripts_round_trip_through_byte_fallback(tokenizer: spm.SentencePieceProcessor) -> None:
    text = _emoji_text()
    assert any(ord(ch) > 0xFFFF for ch in text)
    odd = ["  two leading spaces, trailing tab\t", "\x00\x07 control bytes"]
    assert round_trip_failures(tokenizer, [text, *odd]) == []
    assert tokenizer.unk_id() not in tokenizer.encode(text)


def test_the_piece_space_mark_round_trips_as_bytes(tokenizer: spm.SentencePieceProcessor) -> None:
    """SentencePiece alone decodes a real U+2581 as a space; spelled with byte pieces it comes back."""
    chart = "load ▁▂▃▅▇ over ▁ the ▁▁ week"  # a sparkline, as terminal dashboards print them
    assert tokenizer.decode(tokenizer.encode(chart)) != chart
    assert round_trip_failures(tokenizer, ["plain text", chart, "▁", "a▁", "▁b"]) == []
    ids = encode_texts(tokenizer, [chart])[0]
    assert [tokenizer.id_to_piece(i) for i in ids].count("<0x81>") == chart.count("▁")


def test_batch_encoding_equals_one_by_one(
    tokenizer: spm.SentencePieceProcessor, documents: list[dict[str, str]]
) -> None:
    texts = [d["text"] for d in documents] + [""]
    batch = encode_batch(tokenizer, texts, num_threads=2)
    assert batch.to_pylist() == [tokenizer.encode(t) for t in texts]  # texts without U+2581: plain SentencePiece
    assert str(batch.type) == "list<item: int32>"
    assert batch.value_lengths().to_pylist() == [len(tokenizer.encode(t)) for t in texts]  # the mixture's counts


def _demo_documents() -> list[str]:
    """Texts of the demo corpus's non-WARC sources (WARC HTML extraction is slow), via the pipeline's ingestion."""
    texts: list[str] = []
    for source in load_config().sources:
        if source.format != "warc":
            output, _, _ = ingest_files([f.url for f in list_source_files(source)], source, IngestConfig())
            texts += output.kept["text"].to_pylist()
    return texts


def test_demo_tokenizer_round_trips_the_whole_demo_corpus(tmp_path: Path) -> None:
    texts = _demo_documents()
    shard = str(tmp_path / "part-00000.parquet")
    storage.write_parquet(shard, pa.table({"id": [f"d{i}" for i in range(len(texts))], "text": texts}))
    artifacts = fit_tokenizer([shard], TokenizerConfig(max_training_chars=2_000_000), str(tmp_path / "tokenizer"))
    tokenizer = load_tokenizer(artifacts["tokenizer"])
    assert tokenizer.get_piece_size() == 8000
    assert round_trip_failures(tokenizer, texts) == []
    chinese = [t for t in texts if sum("\u4e00" <= ch <= "\u9fff" for ch in t) > 100]
    assert len(chinese) > 50
    ids = tokenizer.encode(chinese)
    assert sum(map(len, ids)) < sum(map(len, chinese))  # pieces merge characters, not one byte at a time

"""Tiny real token shards for the training and evaluation tests: licence texts (general and specialist), Python
sources (code) and a Chinese text, all shipped in the repository, encoded by a SentencePiece model trained on them
and packed like the tokenization stage does (per split and domain, documents joined by EOS, cut into seq_len + 1
windows sharing one id)."""

from __future__ import annotations

import hashlib
import io
import shutil
from collections import Counter
from dataclasses import dataclass

import pyarrow as pa
import sentencepiece as spm

from pretrain_core import schema, storage
from pretrain_core.licences import NOASSERTION
from pretrain_core.train.checkpoint.catalog import EVALUATIONS
from tests.shipped_text import CJK_TEXTS, DEMO, LICENCES

# Copies a training output without the evaluations other tests recorded in it (a checkpoint's first evaluation stands).
WITHOUT_EVALUATIONS = shutil.ignore_patterns("eval.json", EVALUATIONS)

SHIPPED_STDLIB = DEMO / "code" / "cpython" / "Lib"  # the demo corpus's copies of CPython 3.11 modules
SOURCES = {
    "general": [LICENCES / n for n in ("Apache-2.0", "MPL-2.0", "Artistic", "CC0-1.0")]
    + [CJK_TEXTS / "gb2312-utf8.txt"],
    "specialist": [LICENCES / n for n in ("GPL-2", "GPL-3", "LGPL-2.1")],
    "code": [SHIPPED_STDLIB / n for n in ("textwrap.py", "heapq.py", "shlex.py", "bisect.py")],
}


@dataclass(frozen=True)
class TokenData:
    tokens_url: str
    tokenizer_url: str
    seq_len: int
    vocab_size: int


def documents(chunk_chars: int = 1200) -> list[tuple[str, str, str]]:
    """(doc_id, domain, text): every source file cut at blank lines into chunks of about ``chunk_chars``."""
    docs: list[tuple[str, str, str]] = []
    for domain, paths in SOURCES.items():
        for path in paths:
            chunk = ""
            for paragraph in path.read_text(encoding="utf-8").split("\n\n"):
                chunk = f"{chunk}\n\n{paragraph}" if chunk else paragraph
                if len(chunk) >= chunk_chars:
                    docs.append((f"{path.name}#{len(docs)}", domain, chunk))
                    chunk = ""
            if chunk.strip():
                docs.append((f"{path.name}#{len(docs)}", domain, chunk))
    return docs


def split_of(doc_id: str) -> str:
    bucket = int(hashlib.sha1(doc_id.encode()).hexdigest(), 16) % 10
    return "validation" if bucket == 0 else "test" if bucket == 1 else "train"


def train_tokenizer(texts: list[str], vocab_size: int) -> bytes:
    model = io.BytesIO()
    lines = (line for text in texts for line in text.splitlines() if line.strip())
    spm.SentencePieceTrainer.train(
        sentence_iterator=lines,
        model_writer=model,
        vocab_size=vocab_size,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=0.9995,
        normalization_rule_name="identity",  # lossless like the pipeline's tokenizer: keep whitespace and newlines
        remove_extra_whitespaces=False,
        num_threads=1,
        minloglevel=2,
    )
    return model.getvalue()


def build_token_data(root: str, seq_len: int = 32, vocab_size: int = 512, n_shards: int = 2) -> TokenData:
    docs = documents()
    proto = train_tokenizer([text for _, _, text in docs], vocab_size)
    tokenizer_url = storage.join(root, "tokenizer.model")
    storage.write_bytes(tokenizer_url, proto)
    sp = spm.SentencePieceProcessor(model_proto=proto)
    streams: dict[tuple[str, str], tuple[list[int], list[str]]] = {}
    for doc_id, domain, text in docs:
        ids, owners = streams.setdefault((split_of(doc_id), domain), ([], []))
        encoded = [*sp.encode(text), sp.eos_id()]
        ids += encoded
        owners += [doc_id] * len(encoded)
    rows: dict[str, list] = {"input_ids": [], "domain": [], "source": [], "licences": [], "doc_ids": [], "split": [],
                             "quality_bucket": [], "quality_score": []}  # fmt: skip
    window = seq_len + 1
    for (split, domain), (ids, owners) in sorted(streams.items()):
        for start in range(0, len(ids) - window + 1, seq_len):  # consecutive windows share one id, as packed
            members = owners[start : start + window]
            rows["input_ids"].append(ids[start : start + window])
            rows["domain"].append(domain)
            rows["source"].append(Counter(members).most_common(1)[0][0].split("#")[0])  # the file most ids are from
            rows["licences"].append([NOASSERTION])
            rows["doc_ids"].append(list(dict.fromkeys(members)))
            rows["split"].append(split)
            score = (len(rows["split"]) * 0.37) % 1  # spread over [0, 1), deterministic
            rows["quality_bucket"].append("head" if score >= 0.7 else "tail" if score < 0.3 else "middle")
            rows["quality_score"].append(score)
    table = pa.table(rows, schema=schema.TOKENS)
    tokens_url = storage.join(root, "tokens")
    per_shard = -(-table.num_rows // n_shards)
    for shard in range(n_shards):
        part = schema.validate(table.slice(shard * per_shard, per_shard), schema.TOKENS, "test shards")
        storage.write_parquet(storage.join(tokens_url, "data", f"shard-{shard:05d}.parquet"), part)
    return TokenData(tokens_url, tokenizer_url, seq_len, sp.get_piece_size())

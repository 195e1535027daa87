"""Throughput of tokenization + packing against Hugging Face ``tokenizers`` and against the naive baseline (a
per-document SentencePiece ``encode`` loop whose ids are appended to Python lists and sliced into windows).

The peer is a ``tokenizers`` byte-level BPE (GPT-2's scheme, `pretrain_eval.stage_quality.tokenizer`) trained on
the same documents our SentencePiece BPE trained on, with the same vocabulary size (not timed). On each sampled
document once, it encodes with ``encode_batch_fast`` (ids only; ``encode_batch`` with offsets is timed too) and its
ids are packed in numpy into the same windows, against our stage; encoding alone is compared as well. One thread
each: SentencePiece with ``num_threads=1``, ``tokenizers`` with ``TOKENIZERS_PARALLELISM=false``. The two split
text differently, so tokens/s and bytes per token are printed beside docs/s and MB/s.

Documents come from the demo corpus as ingest hands it on (else from real text on this machine, see corpus.py),
whole, up to --max-docs spread evenly over the sources. A tokenizer is trained and the default mixture planned on
them first (not timed); both implementations then run on the sampled documents once each, and on the mixture
output with its up-sampled copies (which the stage encodes once per document). The stage is timed twice: encoding
every document itself, and with the ids the mixture's count encoded (carried on each first copy, checked by
decoding), as it runs in the pipeline. One core (``num_threads=1``); times are CPU seconds of this process.

    python benchmarks/bench_tokenize.py --max-docs 2000 --vocab-size 8000 --seq-len 512
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one thread, as our encoder's num_threads=1

import argparse
import itertools
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sentencepiece as spm
from corpus import load_documents, megabytes, spread, stage_table
from timing import Rate, cpu_time, print_rates
from tokenizers import Tokenizer

from pretrain_core import schema, storage
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import fit_mixture
from pretrain_core.mixture.stage import MixtureStage
from pretrain_core.tokenize.config import PackConfig, TokenizerConfig
from pretrain_core.tokenize.encode import encode_texts, load_tokenizer
from pretrain_core.tokenize.splits import fit_splits
from pretrain_core.tokenize.stage import TokenizeStage
from pretrain_core.tokenize.train import fit_tokenizer, sample_documents
from pretrain_eval.stage_quality.tokenizer import train_byte_level_bpe


def quality_table(max_docs: int, reference: bool) -> tuple[pa.Table, str]:
    """Up to ``max_docs`` documents as the quality stage hands them on, and where they came from."""
    docs, origin = load_documents(reference)
    return stage_table(spread(docs, max_docs), schema.QUALITY), origin


def baseline(tokenizer: spm.SentencePieceProcessor, texts: list[str], seq_len: int) -> int:
    """What a first attempt does: encode one document at a time, extend a list, slice windows; returns windows."""
    stream: list[int] = []
    windows = []
    for text in texts:
        stream.extend([tokenizer.bos_id(), *tokenizer.encode(text), tokenizer.eos_id()])
        while len(stream) > seq_len:
            windows.append(stream[: seq_len + 1])
            stream = stream[seq_len:]
    return len(windows)


def hf_ids(tokenizer: Tokenizer, texts: list[str]) -> list[list[int]]:
    """Ids only, no special tokens: the fastest batch call ``tokenizers`` has."""
    return [encoding.ids for encoding in tokenizer.encode_batch_fast(texts, add_special_tokens=False)]


def hf_ids_with_offsets(tokenizer: Tokenizer, texts: list[str]) -> list[list[int]]:
    return [encoding.ids for encoding in tokenizer.encode_batch(texts, add_special_tokens=False)]


def numpy_pack(ids: list[list[int]], bos: int, eos: int, seq_len: int) -> np.ndarray:
    """One stream with BOS and EOS around each document, cut into windows of seq_len + 1 ids that overlap by one."""
    stream = np.fromiter(itertools.chain.from_iterable((bos, *doc, eos) for doc in ids), dtype=np.int32)
    windows = (len(stream) - 1) // seq_len
    return np.lib.stride_tricks.sliding_window_view(stream, seq_len + 1)[::seq_len][:windows].copy()


def special_ids(tokenizer: Tokenizer) -> tuple[int, int]:
    """The peer's BOS and EOS ids (its special tokens are ours: `<unk>`, `<s>`, `</s>`)."""
    bos, eos = tokenizer.token_to_id("<s>"), tokenizer.token_to_id("</s>")
    if bos is None or eos is None:
        raise ValueError("the peer tokenizer lacks <s> or </s>")
    return bos, eos


def versus_hf(
    stage: TokenizeStage, ours: spm.SentencePieceProcessor, hf: Tokenizer, table: pa.Table, repeat: int
) -> None:
    """Our stage and encoder against ``tokenizers`` on the same documents, one thread each."""
    texts = table.column("text").to_pylist()
    size = megabytes(texts)
    index = table.schema.get_field_index("token_ids")
    uncarried = table.set_column(index, "token_ids", pa.nulls(table.num_rows, table.schema.field(index).type))
    bos, eos = special_ids(hf)

    def hf_pack(ids: list[list[int]]) -> np.ndarray:
        return numpy_pack(ids, bos, eos, stage.cfg.seq_len)

    ours_tokens, hf_tokens = sum(map(len, encode_texts(ours, texts))), sum(map(len, hf_ids(hf, texts)))
    ways = [
        ("ours: tokenize stage (batch encode + pack)", lambda: stage.process(uncarried), ours_tokens),
        ("HF tokenizers: encode_batch_fast + numpy pack", lambda: hf_pack(hf_ids(hf, texts)), hf_tokens),
        ("ours: encode_texts (SentencePiece) alone", lambda: encode_texts(ours, texts, num_threads=1), ours_tokens),
        ("HF tokenizers: encode_batch_fast alone", lambda: hf_ids(hf, texts), hf_tokens),
        ("HF tokenizers: encode_batch (offsets) alone", lambda: hf_ids_with_offsets(hf, texts), hf_tokens),
    ]
    rates = [Rate(name, cpu_time(run, repeat)[0], len(texts), size) for name, run, _ in ways]
    print_rates(f"against HF tokenizers, vocabulary {hf.get_vocab_size()} each, one thread each", rates, rates[1])
    for rate, (_, _, tokens) in zip(rates, ways, strict=True):
        print(f"  {rate.name:<46} {tokens / rate.seconds / 1e6:6.3f} Mtokens/s, {size * 1e6 / tokens:.2f} bytes/token")


def compare(
    title: str, stage: TokenizeStage, tokenizer: spm.SentencePieceProcessor, table: pa.Table, repeat: int
) -> None:
    texts = table.column("text").to_pylist()
    size = megabytes(texts)
    index = table.schema.get_field_index("token_ids")
    uncarried = table.set_column(index, "token_ids", pa.nulls(table.num_rows, table.schema.field(index).type))
    ours, output = cpu_time(lambda: stage.process(uncarried), repeat)
    reusing, reused = cpu_time(lambda: stage.process(table), repeat)
    assert reused.kept.equals(output.kept)
    base, _ = cpu_time(lambda: baseline(tokenizer, texts, stage.cfg.seq_len), repeat)
    tokens = sum(v for k, v in output.stats.items() if k.split("_")[0] == "tokens" and "discarded" not in k)
    naive = Rate("per-doc encode loop + list slicing", base, len(texts), size)
    rates = [
        Rate("ours: tokenize stage (batch encode + pack)", ours, len(texts), size),
        Rate("ours, ids from the mixture (check + pack)", reusing, len(texts), size),
        naive,
    ]
    print_rates(f"{title}: {tokens:.0f} tokens", rates, naive)
    per_second = {"ours": ours, "carried": reusing, "baseline": base}
    print("  Mtokens/s: " + ", ".join(f"{name} {tokens / cpu / 1e6:.3f}" for name, cpu in per_second.items()))
    print(f"  ours: {output.kept.num_rows} sequences of {stage.cfg.seq_len + 1} ids")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=2000, help="documents to time (0 = all found)")
    parser.add_argument("--vocab-size", type=int, default=8000, help="tokenizer vocabulary (trained, not timed)")
    parser.add_argument("--seq-len", type=int, default=512, help="packed sequence length")
    parser.add_argument(
        "--reference", action="store_true", help="time the repo's reference text (data/reference), not the demo corpus"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per implementation; the best is reported")
    args = parser.parse_args()

    table, origin = quality_table(args.max_docs, args.reference)
    print(f"documents: {origin}; {table.num_rows} sampled, one core")
    with tempfile.TemporaryDirectory() as workdir:
        shard = f"{workdir}/part-00000.parquet"
        storage.write_parquet(shard, table)
        artifacts = fit_tokenizer([shard], TokenizerConfig(vocab_size=args.vocab_size), f"{workdir}/tokenizer")
        pack = PackConfig(seq_len=args.seq_len, num_threads=1)
        artifacts |= fit_splits([shard], pack, f"{workdir}/splits")
        mixture = fit_mixture(
            [shard], MixtureConfig(), artifacts["tokenizer"], artifacts["splits"], pack.frame_tokens, f"{workdir}/mix"
        )
        copies = MixtureStage(MixtureConfig(), mixture).process(table).kept
        unique = copies.filter(pc.equal(copies["repeat_index"], 0))
        stage = TokenizeStage(pack, artifacts)
        tokenizer = load_tokenizer(artifacts["tokenizer"])
        stage.process(unique.slice(0, 10))  # load the model and split table outside the timing
        cfg = TokenizerConfig(vocab_size=args.vocab_size)
        hf = train_byte_level_bpe(sample_documents([shard], cfg.max_training_chars, cfg.seed), cfg.vocab_size)
        versus_hf(stage, tokenizer, hf, unique, args.repeat)
        compare("each sampled document once", stage, tokenizer, unique, args.repeat)
        compare("mixture output (up-sampled copies included)", stage, tokenizer, copies, args.repeat)


if __name__ == "__main__":
    main()

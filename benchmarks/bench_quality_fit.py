"""The quality fit with its reference models trained against the same fit copying them from the model cache
(`pretrain_core/quality/model_cache.py`), in one process on the same inputs: CPU seconds of each, the ratio, and
whether both wrote the same bytes.

    pretrain corpus                       # the demo's stage outputs under outputs/demo/corpus
    python benchmarks/bench_quality_fit.py
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pretrain_core import storage
from pretrain_core.config import load_config
from pretrain_core.quality.stage import fit_quality


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", default="outputs/demo/corpus/pii/data", help="the quality stage's input shards")
    args = parser.parse_args()
    inputs = storage.list_files(args.inputs, ".parquet")
    if not inputs:
        raise SystemExit(f"no shards under {args.inputs}: run `pretrain corpus` first")
    cfg = load_config().quality
    with tempfile.TemporaryDirectory() as scratch:
        cache = str(Path(scratch) / "cache")
        runs = {}
        for label in ("trained", "from the cache"):
            started = time.process_time()
            artifacts = fit_quality(inputs, cfg, str(Path(scratch) / label), cache)
            runs[label] = (time.process_time() - started, {k: storage.read_bytes(u) for k, u in artifacts.items()})
    (trained, first), (cached, second) = runs.values()
    size = sum(storage.size(url) for url in inputs) / 1e6
    print(f"quality fit on {len(inputs)} shards ({size:.1f} MB)")
    print(f"reference models trained: {trained:.2f} CPU s; copied from the cache: {cached:.2f} CPU s")
    print(f"ratio {trained / cached:.2f}x; same bytes: {first == second}")


if __name__ == "__main__":
    main()

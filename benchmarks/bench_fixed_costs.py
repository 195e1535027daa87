"""What a run pays before it does any work per document: every cost that does not grow with the corpus.

Each row runs in a fresh child process (CPU seconds from `os.wait4`, the child's own children included):
- importing the library and loading the config, as every worker process does first;
- per stage, clean to tokenize: the same input shard (the demo's largest) run twice in one child, into two scratch
  roots. The first run pays what the stage loads on first use (language profiles, the PII tagger, Pygments'
  lexers, phonenumbers' metadata, the quality models and classifiers, numba's cached kernels); the second only
  the shard's work. Their difference is what each worker process pays once per stage;
- the quality fit's reference models, trained (a fresh output root) and copied (`model_cache`);
- Prefect's temporary API server: an empty flow started and stopped, which every `pretrain corpus` without
  PREFECT_API_URL pays once (and before `tasks.runners.api_shared_with_workers`, each worker process too).

Reads the stage outputs of a finished demo run (`pretrain corpus` first: outputs/demo), writes only to scratch.

    pretrain corpus
    python benchmarks/bench_fixed_costs.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # as `pretrain` sets it: no telemetry calls

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = "outputs/demo"
STAGES = ("clean", "dedup", "pii", "quality", "mixture", "tokenize")


def child_cpu(*args: str) -> tuple[float, str]:
    """CPU seconds of a child running this script with `args`, and what it printed."""
    process = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    printed = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"child {args} failed")
    return usage.ru_utime + usage.ru_stime, printed


def run_child(mode: str, argument: str) -> None:
    """The child's side: print JSON with the CPU seconds of its parts."""
    if mode == "empty-flow":
        from prefect import flow

        flow(name="empty")(lambda: None)()
        return
    started = time.process_time()
    from pretrain_core.config import load_config
    from pretrain_core.pipeline import CorpusPipeline

    cfg = load_config(None, [f"storage.root={argument}"])
    if mode == "import":
        print(json.dumps({"import": time.process_time() - started}))
        return
    if mode == "quality-models":
        from pretrain_core.quality.stage import fit_quality

        pipeline = CorpusPipeline(cfg)
        inputs = pipeline.inputs("quality")
        with tempfile.TemporaryDirectory() as scratch:
            parts = {}
            for label in ("trained", "copied"):
                began = time.process_time()
                fit_quality(inputs, cfg.quality, str(Path(scratch) / label), str(Path(scratch) / "cache"))
                parts[label] = time.process_time() - began
        print(json.dumps(parts))
        return
    from pretrain_core.stage import plan_shards, run_shard

    pipeline = CorpusPipeline(cfg)
    artifacts = pipeline.fit(mode)  # finished by the demo run: read from its marker
    largest = max(pipeline.inputs(mode), key=lambda url: Path(url).stat().st_size)
    spec = pipeline.registry.stage(mode)
    parts = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label in ("first", "second"):
            (job,) = plan_shards(mode, [largest], str(Path(scratch) / label), pipeline.config_hash(mode))
            began = time.process_time()
            run_shard(job, pipeline.build(mode, artifacts), expands_rows=spec.expands_rows)
            parts[label] = time.process_time() - began
    print(json.dumps(parts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=ROOT, help="output root of a finished `pretrain corpus` run")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(*args.child)
        return
    root = str(Path(args.root).resolve())
    if not (Path(root) / "corpus" / "tokenize" / "manifest.json").exists():
        raise SystemExit(f"no finished corpus under {root}: run `pretrain corpus` first")
    rows: list[tuple[str, float, str]] = []
    _, printed = child_cpu("--child", "import", root)
    rows.append(("import the library, load the config", json.loads(printed)["import"], "every process"))
    for stage in STAGES:
        _, printed = child_cpu("--child", stage, root)
        parts = json.loads(printed)
        rows.append((f"{stage}: first shard less the second", parts["first"] - parts["second"], "worker and stage"))
    _, printed = child_cpu("--child", "quality-models", root)
    parts = json.loads(printed)
    rows.append(("quality fit: reference models trained less copied", parts["trained"] - parts["copied"], "root"))
    cpu, _ = child_cpu("--child", "empty-flow", root)
    rows.append(("Prefect imported, its temporary API server started and stopped (an empty flow)", cpu, "run"))
    print("| fixed cost | CPU s | paid once per |")
    print("|---|---:|---|")
    for label, seconds, per in rows:
        print(f"| {label} | {seconds:.2f} | {per} |")


if __name__ == "__main__":
    main()

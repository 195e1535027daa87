"""`pretrain evaluate --lm-eval TASK ...`: a checkpoint scored by EleutherAI's lm-evaluation-harness.

Two ways in: `hf` writes the checkpoint as a Hugging Face Llama directory (`pretrain export --format hf`, checked
against our logits) and hands it to the harness's own `hf` model, so the scores are those any Llama checkpoint
would get, with no code of ours in the scoring loop; `pretrain` runs our adapter (`lm_eval_adapter.PretrainLM`),
which takes every model we train (GPT blocks, ALiBi, MoE) that the Llama export refuses. The `hf` model is told to
start a document from our end-of-document id, as our documents follow one in training (its default is the BOS).
"""

from __future__ import annotations

import tempfile
from typing import Any, Literal

from pretrain_core import storage

HarnessModel = Literal["hf", "pretrain"]


def run_harness(
    source: str,
    tasks: list[str],
    model: HarnessModel = "hf",
    include_path: str | None = None,
    limit: int | None = None,
    threads: int = 2,
) -> tuple[dict[str, Any], str]:
    """Score ``source`` (a checkpoint or training output) on the harness's ``tasks`` (with task YAMLs from
    ``include_path`` beside its own); return the per-task metrics and the URL they were written to beside the
    checkpoint."""
    import lm_eval  # the harness, torch and the export load on use: the command line imports this module
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from pretrain_core.export.exporter import export_model
    from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE, resolve_checkpoint
    from pretrain_core.train.shards.tokenizer import tokenizer_from_proto
    from pretrain_eval.lm_eval_adapter import PretrainLM

    checkpoint = resolve_checkpoint(source)
    options: dict[str, Any] = {
        "tasks": tasks, "task_manager": TaskManager(include_path=include_path), "limit": limit,
        "bootstrap_iters": 0, "log_samples": False,
    }  # fmt: skip
    if model == "pretrain":
        results = lm_eval.simple_evaluate(model=PretrainLM(source=checkpoint, threads=threads), **options)
    else:
        tokenizer, _ = tokenizer_from_proto(storage.read_bytes(storage.join(checkpoint, TOKENIZER_FILE)))
        start_id = max(tokenizer.eos_id(), 0)
        with tempfile.TemporaryDirectory(prefix="pretrain-hf-") as export_dir:
            export_model(checkpoint, "hf", export_dir)
            hf_model = HFLM(pretrained=export_dir, dtype="float32", device="cpu", prefix_token_id=start_id)
            results = lm_eval.simple_evaluate(model=hf_model, **options)
    assert results is not None  # None only on ranks other than the first of a distributed harness run
    scores = {task: dict(metrics) for task, metrics in results["results"].items()}
    url = storage.join(checkpoint, f"lm_eval-{model}.json")
    storage.write_json(url, {"checkpoint": checkpoint, "model": model, "tasks": tasks, "results": scores})
    return scores, url


def harness_table(scores: dict[str, Any]) -> str:
    """The metrics as a Markdown table, a row per task and metric (the harness's `alias` left out)."""
    rows = ["| task | metric | value |", "|---|---|---|"]
    for task, metrics in scores.items():
        for metric, value in metrics.items():
            if metric != "alias" and isinstance(value, int | float):
                rows.append(f"| {task} | {metric.removesuffix(',none')} | {value:.4f} |")
    return "\n".join(rows)

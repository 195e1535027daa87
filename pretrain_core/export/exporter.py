"""`pretrain export`: write a model in one of the export formats and check it against the model it came from.

Every export is verified before it is reported: its logits on a fixed probe batch against the source model's
(max abs difference), and for ONNX and int8 its speed (tokens/s of one-thread forward passes, beside torch's) and
for int8 its perplexity on held-out sequences beside the fp32 model's. The report goes to `export.json` in the
output directory.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.export import hf_format, safetensors_format
from pretrain_core.export.bundle import ModelBundle, load_bundle
from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE, saved_setting
from pretrain_core.train.model.gpt import GPT
from pretrain_core.train.precision import Precision
from pretrain_core.train.shards.sequences import load_sequences

ExportFormat = Literal["safetensors", "onnx", "int8", "hf"]
REPORT_FILE = "export.json"
ONNX_FILES = {"onnx": "model.onnx", "int8": "model.int8.onnx"}
PROBE_SEED = 20261205

Logits = Callable[[np.ndarray], np.ndarray]


class ExportReport(BaseModel):
    format: ExportFormat
    source_url: str
    step: int
    output_url: str
    files: dict[str, int]  # name → bytes
    max_abs_logit_diff: float  # against the source model on the probe batch
    tokens_per_second: dict[str, float]  # one thread: torch fp32 and the exported graph(s)
    perplexity: dict[str, float]  # held-out sequences: torch fp32 and the export (int8 only)
    heldout_sequences: int
    seconds: float
    verified_by: str = "the exported graph or weights"  # hf: transformers, when installed


def probe_ids(model: GPT) -> np.ndarray:
    """A fixed batch of token ids (2 x up to 64) the export's logits are compared on."""
    length = min(64, model.args.max_seq_len)
    return np.random.default_rng(PROBE_SEED).integers(0, model.args.vocab_size, (2, length))


def torch_logits(model: GPT) -> Logits:
    def logits(ids: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.from_numpy(ids.astype(np.int64))).float().numpy()

    return logits


def tokens_per_second(logits: Logits, model: GPT, budget_s: float = 1.0) -> float:
    """Tokens per second of forward passes over one sequence of up to 128 tokens, best of the passes that fit
    in ``budget_s`` (at least three)."""
    ids = probe_ids(model)[:1, : min(128, model.args.max_seq_len)]
    best = math.inf
    started = time.perf_counter()
    for attempt in range(1000):
        tick = time.perf_counter()
        logits(ids)
        best = min(best, time.perf_counter() - tick)
        if attempt >= 2 and time.perf_counter() - started > budget_s:
            break
    return ids.size / best


def perplexity(logits: Logits, sequences: np.ndarray, batch_size: int = 4) -> float:
    """exp of the mean next-token loss over (N, T+1) sequences."""
    nll, count = 0.0, 0
    for start in range(0, len(sequences), batch_size):
        batch = sequences[start : start + batch_size].astype(np.int64)
        scores = logits(batch[:, :-1]).astype(np.float64)
        scores -= scores.max(axis=-1, keepdims=True)
        log_probs = scores - np.log(np.exp(scores).sum(axis=-1, keepdims=True))
        nll -= np.take_along_axis(log_probs, batch[:, 1:, None], axis=-1).sum()
        count += batch[:, 1:].size
    return math.exp(nll / count)


def heldout_sequences(bundle: ModelBundle, tokens_url: str | None, limit: int) -> np.ndarray:
    """Up to ``limit`` validation sequences of the token shards the model was trained on (or ``tokens_url``)."""
    url = tokens_url or bundle.meta.get("tokens_url") or saved_setting(bundle.meta, "tokens_url")
    if not url or limit == 0:
        return np.zeros((0, bundle.model.args.max_seq_len + 1), np.int32)
    ids = load_sequences(url, "validation", bundle.model.args.max_seq_len).ids
    return ids[np.linspace(0, len(ids) - 1, min(limit, len(ids))).astype(int)] if len(ids) else ids


def export_model(
    source_url: str,
    fmt: ExportFormat,
    output_url: str,
    dtype: Precision = "fp32",
    tokens_url: str | None = None,
    heldout_limit: int = 16,
) -> ExportReport:
    """Export the model at ``source_url`` (checkpoint, training output or safetensors export) as ``fmt``."""
    started = time.perf_counter()
    torch.set_num_threads(1)  # timings comparable with ONNX Runtime's one thread
    bundle = load_bundle(source_url)
    model = bundle.model
    reference = torch_logits(model)
    probe = probe_ids(model)
    expected = reference(probe)
    provenance = {
        "step": bundle.step,
        "source_url": bundle.source_url,
        "tokens_url": bundle.meta.get("tokens_url") or saved_setting(bundle.meta, "tokens_url"),
    }
    speeds = {"torch_fp32": tokens_per_second(reference, model)}
    ppl: dict[str, float] = {}
    sequences = np.zeros((0, 0), np.int32)
    verified_by = "the exported graph or weights"
    if fmt == "safetensors":
        names = safetensors_format.write(model, bundle.tokenizer_proto, output_url, provenance, dtype)
        reloaded, _, _ = safetensors_format.read(output_url)
        difference = float(np.abs(torch_logits(reloaded)(probe) - expected).max())
    elif fmt == "hf":
        names = hf_format.write(model, bundle.tokenizer_proto, output_url, provenance)
        logits, verified_by = hf_format.reloaded_logits(output_url, probe)
        difference = float(np.abs(logits - expected).max())
    else:
        from pretrain_core.export.onnx_format import OnnxLogits, export_graph, quantize_int8

        with tempfile.TemporaryDirectory() as scratch:
            graph = Path(scratch) / ONNX_FILES["onnx"]
            export_graph(model, graph)
            if fmt == "int8":
                quantized = Path(scratch) / ONNX_FILES["int8"]
                quantize_int8(graph, quantized)
                speeds["onnx_fp32"] = tokens_per_second(OnnxLogits(graph), model)
                graph = quantized
            exported = OnnxLogits(graph)
            difference = float(np.abs(exported(probe) - expected).max())
            speeds[f"onnx_{fmt}" if fmt == "int8" else "onnx_fp32"] = tokens_per_second(exported, model)
            if fmt == "int8":
                sequences = heldout_sequences(bundle, tokens_url, heldout_limit)
                if len(sequences):
                    ppl = {"torch_fp32": perplexity(reference, sequences), "onnx_int8": perplexity(exported, sequences)}
            storage.write_bytes(storage.join(output_url, graph.name), graph.read_bytes())
        config = {
            "format": f"{safetensors_format.FORMAT}-onnx",
            "onnx_file": graph.name,
            "model_args": model.args.to_dict(),
        }
        storage.write_bytes(storage.join(output_url, TOKENIZER_FILE), bundle.tokenizer_proto)
        storage.write_json(storage.join(output_url, safetensors_format.CONFIG_FILE), {**config, **provenance})
        names = [graph.name, TOKENIZER_FILE, safetensors_format.CONFIG_FILE]
    report = ExportReport(
        format=fmt,
        source_url=bundle.source_url,
        step=bundle.step,
        output_url=output_url,
        files={name: storage.size(storage.join(output_url, name)) for name in names},
        max_abs_logit_diff=difference,
        tokens_per_second={name: round(value, 1) for name, value in speeds.items()},
        perplexity={name: round(value, 4) for name, value in ppl.items()},
        heldout_sequences=len(sequences),
        seconds=round(time.perf_counter() - started, 3),
        verified_by=verified_by,
    )
    storage.write_json(storage.join(output_url, REPORT_FILE), report.model_dump(mode="json"))
    return report

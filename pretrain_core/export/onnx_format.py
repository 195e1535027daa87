"""ONNX exports: the network as an ONNX graph (token ids (B, T) → logits (B, T, V), batch and length dynamic)
through torch's dynamo exporter, and its int8 form by ONNX Runtime's dynamic quantisation (int8 weights of every
MatMul, activations quantised per call).

The graph has no key/value cache: it is for scoring and for runtimes that re-read the context; `pretrain generate`
and `pretrain serve` run the safetensors export. ONNX Runtime reads local files, so graphs are built in a temporary
directory and copied to the output URL.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.shape_inference import quant_pre_process

from pretrain_core.train.model.gpt import GPT

INPUT = "input_ids"
OUTPUT = "logits"


def export_graph(model: GPT, path: Path) -> None:
    """Write the fp32 graph of ``model`` to a local ``path``."""
    length = min(16, model.args.max_seq_len)
    example = torch.zeros((2, length), dtype=torch.long)
    batch = torch.export.Dim("batch", min=1, max=4096)
    tokens = torch.export.Dim("tokens", min=1, max=model.args.max_seq_len)
    exporter_log = logging.getLogger("torch.onnx")
    previous = exporter_log.level
    exporter_log.setLevel(logging.WARNING)  # its progress lines are noise in a CLI
    try:
        program = torch.onnx.export(
            model.float().eval(),
            (example,),
            dynamo=True,
            input_names=[INPUT],
            output_names=[OUTPUT],
            dynamic_shapes={"idx": {0: batch, 1: tokens}},
            verbose=False,
        )
    finally:
        exporter_log.setLevel(previous)
    if program is None:
        raise RuntimeError("torch.onnx.export returned no program")
    program.save(str(path))


def quantize_int8(graph: Path, output: Path, per_channel: bool = True) -> None:
    """int8 weights (per output channel by default) for every MatMul of the fp32 graph at ``graph``."""
    with tempfile.TemporaryDirectory() as scratch:
        prepared = Path(scratch) / "prepared.onnx"
        quant_pre_process(str(graph), str(prepared), skip_symbolic_shape=True)  # folds constants, infers shapes
        quantize_dynamic(prepared, output, weight_type=QuantType.QInt8, per_channel=per_channel)


class OnnxLogits:
    """Logits of an ONNX graph through ONNX Runtime on CPU, with a fixed thread count (reproducible timings)."""

    def __init__(self, graph: bytes | Path, threads: int = 1) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        source = graph if isinstance(graph, bytes) else str(graph)
        self.session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        logits: np.ndarray = self.session.run([OUTPUT], {INPUT: ids.astype(np.int64)})[0]
        return logits

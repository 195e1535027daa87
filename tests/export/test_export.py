from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open

from pretrain_core import storage
from pretrain_core.export import safetensors_format
from pretrain_core.export.bundle import load_bundle
from pretrain_core.export.exporter import export_model, probe_ids, torch_logits
from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.decode import generate
from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE, latest_checkpoint
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.trainer import train
from tests.evaluate import conftest as evaluate_fixtures
from tests.train.token_corpus import TokenData

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output


def test_checkpoints_carry_their_tokenizer(trained_output: str, tmp_path: Path) -> None:
    run = shutil.copytree(trained_output, tmp_path / "run")
    checkpoint = latest_checkpoint(str(run))
    assert checkpoint is not None and storage.exists(storage.join(checkpoint, TOKENIZER_FILE))
    meta = storage.read_json(storage.join(checkpoint, "meta.json"))
    storage.write_json(storage.join(checkpoint, "meta.json"), {**meta, "tokenizer_url": str(tmp_path / "gone.model")})
    bundle = load_bundle(str(run))  # a training output resolves to its latest checkpoint
    assert bundle.step == 30 and bundle.tokenizer.encode("hello") and bundle.eos_id is not None


def test_a_safetensors_export_loads_back_to_the_same_logits_without_pickle(trained_output: str) -> None:
    output = f"memory://export-{uuid.uuid4().hex}"
    report = export_model(trained_output, "safetensors", output)
    assert set(report.files) == {"model.safetensors", "config.json", TOKENIZER_FILE}
    assert report.max_abs_logit_diff == 0.0 and report.step == 30
    source, exported = load_bundle(trained_output), load_bundle(output)
    probe = probe_ids(source.model)
    assert np.array_equal(torch_logits(source.model)(probe), torch_logits(exported.model)(probe))
    assert exported.model.lm_head.weight is exported.model.embed.weight  # tied again on load
    assert exported.tokenizer.encode("def f(x):") == source.tokenizer.encode("def f(x):")
    assert storage.read_json(storage.join(output, "export.json"))["format"] == "safetensors"
    storage.remove(output)


def test_half_precision_weights_halve_the_file_and_stay_close(trained_output: str, tmp_path: Path) -> None:
    full = export_model(trained_output, "safetensors", str(tmp_path / "fp32"))
    half = export_model(trained_output, "safetensors", str(tmp_path / "bf16"), dtype="bf16")
    assert half.files["model.safetensors"] < 0.55 * full.files["model.safetensors"]
    assert 0 < half.max_abs_logit_diff < 0.1  # bf16 keeps 8 bits (0.4 % a weight): 0.02-0.06 measured here
    with safe_open(str(tmp_path / "bf16" / "model.safetensors"), framework="pt") as weights:
        assert weights.get_tensor("embed.weight").dtype == torch.bfloat16
        assert "lm_head.weight" not in weights.keys()  # noqa: SIM118 - safe_open has keys(), not iteration


def test_a_tampered_export_is_refused(trained_output: str, tmp_path: Path) -> None:
    export_model(trained_output, "safetensors", str(tmp_path / "out"))
    weights = tmp_path / "out" / safetensors_format.WEIGHTS_FILE
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="checksum"):
        load_bundle(str(tmp_path / "out"))


def test_onnx_and_int8_exports_match_torch_and_report_size_speed_and_perplexity(
    trained_output: str, tmp_path: Path
) -> None:
    onnx = export_model(trained_output, "onnx", str(tmp_path / "onnx"))
    assert onnx.max_abs_logit_diff < 1e-4
    assert set(onnx.tokens_per_second) == {"torch_fp32", "onnx_fp32"}
    int8 = export_model(trained_output, "int8", str(tmp_path / "int8"), heldout_limit=8)
    assert int8.files["model.int8.onnx"] < onnx.files["model.onnx"]
    assert 0 < int8.max_abs_logit_diff < 1.0
    assert int8.heldout_sequences == 8 and set(int8.perplexity) == {"torch_fp32", "onnx_int8"}
    assert int8.perplexity["onnx_int8"] == pytest.approx(int8.perplexity["torch_fp32"], rel=0.05)
    assert all(speed > 0 for speed in int8.tokens_per_second.values())


def test_a_mixture_of_experts_exports_to_safetensors_and_onnx_and_generates(
    token_data: TokenData, tmp_path: Path
) -> None:
    """Routing picks each token's experts at run time; the ONNX graph runs every expert with the unchosen weighted
    0 (and the capacity per batch), so it gives the routed model's logits for any batch shape."""
    config = TrainConfig(
        model=None, n_layer=2, n_head=2, d_model=32, seq_len=token_data.seq_len, micro_batch_size=4, moe_experts=4,
        moe_top_k=2, moe_capacity_factor=1.0, max_steps=3, warmup_steps=1, eval_every=3, checkpoint_every=3,
        num_threads=1, tokens_url=token_data.tokens_url, tokenizer_url=token_data.tokenizer_url,
        output_url=str(tmp_path / "run"),
    )  # fmt: skip
    train(config)
    assert export_model(config.output_url, "safetensors", str(tmp_path / "st")).max_abs_logit_diff == 0
    onnx = export_model(config.output_url, "onnx", str(tmp_path / "onnx"))
    assert onnx.max_abs_logit_diff < 1e-4
    bundle = load_bundle(str(tmp_path / "st"))
    ids = generate(bundle.model, [1, 2, 3], GenerationConfig(max_new_tokens=6, strategy="greedy")).ids
    assert len(ids) == 6

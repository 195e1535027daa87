"""The environment a run records, and the articles' pitfalls named before they cost a run."""

from __future__ import annotations

import torch

from pretrain_core.train.model.args import ModelArgs
from pretrain_core.train.observe.environment import environment, pitfalls

CPU = torch.device("cpu")


def test_the_environment_names_versions_and_devices() -> None:
    found = environment()
    assert found["torch"] == torch.__version__ and found["python"].count(".") == 2
    assert found["cpu"] and isinstance(found["cpu_native_bf16"], bool)
    assert found["gpus"] == [] or not torch.cuda.is_available()  # a CPU machine lists none


def test_shapes_off_the_tensor_core_tiles_are_named_with_the_padding_to_use() -> None:
    aligned = ModelArgs(vocab_size=8192, n_layer=2, n_head=4, d_model=256, max_seq_len=64)
    assert pitfalls(aligned, "fp32", CPU) == []
    odd = ModelArgs(vocab_size=8003, n_layer=2, n_head=5, d_model=260, max_seq_len=64)
    found = pitfalls(odd, "fp32", CPU)
    assert len(found) == 3
    assert "vocabulary size 8003 is not a multiple of 64" in found[0] and "pad it to 8064" in found[0]
    assert "model width (d_model) 260" in found[1] and "pad it to 320" in found[1]
    assert "attention head size (d_model / n_head) 52 is not a multiple of 8" in found[2]


def test_half_precision_a_cpu_emulates_is_named() -> None:
    aligned = ModelArgs(vocab_size=8192, n_layer=2, n_head=4, d_model=256, max_seq_len=64)
    assert ["CPUs emulate fp16" in p for p in pitfalls(aligned, "fp16", CPU)] == [True]

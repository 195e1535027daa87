"""The safetensors export: `model.safetensors` (weights, no pickle), `config.json` (the network's shape and
where it came from) and `tokenizer.model`, in Hugging Face's directory layout.

The tied output matrix is stored once (as the embedding); loading ties it again. Weights may be stored in bf16 or
fp16 to halve the files; they load back as fp32.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE
from pretrain_core.train.model.args import ModelArgs
from pretrain_core.train.model.gpt import GPT
from pretrain_core.train.numerics import TORCH_DTYPES
from pretrain_core.train.precision import Precision

FORMAT = "pretrain-gpt"
FORMAT_VERSION = 1
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
TIED = "lm_head.weight"  # the same tensor as embed.weight


def is_export(url: str) -> bool:
    config_url = storage.join(url, CONFIG_FILE)
    return storage.exists(config_url) and storage.read_json(config_url).get("format") == FORMAT


def write(
    model: GPT,
    tokenizer_proto: bytes,
    output_url: str,
    provenance: dict[str, Any],
    dtype: Precision = "fp32",
) -> list[str]:
    """Write the three files; returns their names. ``provenance`` (step, source checkpoint, ...) goes into
    config.json beside the model's shape."""
    state = {
        name: tensor.detach().to("cpu", TORCH_DTYPES[dtype]).contiguous()
        for name, tensor in model.state_dict().items()
        if name != TIED
    }
    weights = save_tensors(state, metadata={"format": FORMAT})
    config = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model_args": model.args.to_dict(),
        "weights_dtype": dtype,
        "weights_sha256": hashlib.sha256(weights).hexdigest(),
        "tokenizer_file": TOKENIZER_FILE,
        "tokenizer_sha256": hashlib.sha256(tokenizer_proto).hexdigest(),
        "tie_word_embeddings": True,
        **provenance,
    }
    storage.write_bytes(storage.join(output_url, WEIGHTS_FILE), weights)
    storage.write_bytes(storage.join(output_url, TOKENIZER_FILE), tokenizer_proto)
    storage.write_json(storage.join(output_url, CONFIG_FILE), config)  # last: its presence marks a whole export
    return [WEIGHTS_FILE, TOKENIZER_FILE, CONFIG_FILE]


def read(url: str, device: torch.device | str = "cpu") -> tuple[GPT, dict[str, Any], bytes]:
    """The model (fp32, eval mode), the config and the tokenizer model of an export; checksums verified."""
    config: dict[str, Any] = storage.read_json(storage.join(url, CONFIG_FILE))
    if config.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{url}: export format version {config.get('format_version')}, this code reads {FORMAT_VERSION}"
        )
    weights = storage.read_bytes(storage.join(url, WEIGHTS_FILE))
    proto = storage.read_bytes(storage.join(url, config["tokenizer_file"]))
    for name, data, expected in (
        (WEIGHTS_FILE, weights, config["weights_sha256"]),
        (config["tokenizer_file"], proto, config["tokenizer_sha256"]),
    ):
        if hashlib.sha256(data).hexdigest() != expected:
            raise ValueError(f"{storage.join(url, name)} does not match the checksum in its config.json")
    model = GPT(ModelArgs(**config["model_args"]))
    state = {name: tensor.float() for name, tensor in load_tensors(weights).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if set(missing) != {TIED} or unexpected:
        raise ValueError(f"{url}: weights do not fit the model (missing {missing}, unexpected {unexpected})")
    return model.to(device).eval(), config, proto

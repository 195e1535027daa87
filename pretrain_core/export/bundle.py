"""A model with its tokenizer, from a checkpoint, a training output (its latest checkpoint) or a safetensors
export: what generation, serving and export start from, wherever the model came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sentencepiece as spm
import torch

from pretrain_core import storage
from pretrain_core.export import safetensors_format
from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE, resolve_checkpoint
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.model.gpt import GPT
from pretrain_core.train.shards.tokenizer import tokenizer_from_proto


@dataclass
class ModelBundle:
    model: GPT
    tokenizer: spm.SentencePieceProcessor
    tokenizer_proto: bytes
    source_url: str  # the checkpoint or export directory it was read from
    step: int
    meta: dict[str, Any]  # the checkpoint's meta.json, or the export's config.json

    @property
    def eos_id(self) -> int | None:
        eos = self.tokenizer.eos_id()
        return eos if eos >= 0 else None


def load_bundle(url: str, device: torch.device | str = "cpu") -> ModelBundle:
    """Read a model and its tokenizer without unpickling anything (safetensors, or `torch.load(weights_only=True)`).

    A checkpoint written before tokenizers were bundled falls back to the tokenizer URL its meta records; either
    way the tokenizer must be the one the model was trained with (sha256 checked)."""
    if safetensors_format.is_export(url):
        model, config, proto = safetensors_format.read(url, device)
        tokenizer, _ = tokenizer_from_proto(proto)
        return ModelBundle(model, tokenizer, proto, url, int(config["step"]), config)
    checkpoint = resolve_checkpoint(url)
    model, meta = load_model(checkpoint, device)
    bundled = storage.join(checkpoint, TOKENIZER_FILE)
    proto = storage.read_bytes(bundled if storage.exists(bundled) else meta["tokenizer_url"])
    tokenizer, sha256 = tokenizer_from_proto(proto)
    if sha256 != meta["tokenizer_sha256"]:
        raise ValueError(f"the tokenizer found for {checkpoint} is not the one it was trained with")
    return ModelBundle(model, tokenizer, proto, checkpoint, int(meta["step"]), meta)

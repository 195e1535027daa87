"""`pretrain export --format hf`: a model with the Llama block as a Hugging Face `LlamaForCausalLM` directory
(config.json, model.safetensors, the SentencePiece tokenizer as a `LlamaTokenizer`), loadable by transformers,
vLLM, llama.cpp's converter or lm-eval's `hf` model.

Our Llama block is Hugging Face's: pre-norm RMSNorm, SwiGLU, RoPE over the two halves of each head (its
`rotate_half`), no biases, optional grouped-query attention, tied embeddings; weights map one to one (`HF_NAMES`).
What Llama cannot express is refused before anything is written (`hf_problems`).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import sentencepiece as spm
import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from sentencepiece import sentencepiece_model_pb2

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE
from pretrain_core.train.model.gpt import GPT, ModelArgs

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_CONFIG = "tokenizer_config.json"
# ours → Hugging Face's, per block ({layer} filled in); the output head is the tied embedding
HF_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn.q.weight": "self_attn.q_proj.weight",
    "attn.k.weight": "self_attn.k_proj.weight",
    "attn.v.weight": "self_attn.v_proj.weight",
    "attn.proj.weight": "self_attn.o_proj.weight",
    "mlp_norm.weight": "post_attention_layernorm.weight",
    "mlp.gate.weight": "mlp.gate_proj.weight",
    "mlp.up.weight": "mlp.up_proj.weight",
    "mlp.down.weight": "mlp.down_proj.weight",
}


def hf_problems(args: ModelArgs) -> list[str]:
    """What keeps this model out of `LlamaForCausalLM`, one line each (empty: it exports)."""
    checks = [
        (
            args.block != "llama",
            "the GELU block has no Hugging Face Llama equivalent: train with train.model.block=llama",
        ),
        (args.position_encoding != "rope", f"{args.position_encoding} positions: Llama rotates (RoPE)"),
        (not args.causal, "the masked objective: LlamaForCausalLM predicts the next token"),
        (args.parametrization == "mup", "µP's output and attention multipliers: Llama has neither"),
        (args.rope_scaling in ("ntk", "yarn"), f"rope_scaling {args.rope_scaling}: transformers computes it otherwise"),
        (args.moe_experts > 0, "a mixture of experts: LlamaForCausalLM's MLP is dense"),
    ]
    return [reason for failed, reason in checks if failed]


def _rope_scaling(args: ModelArgs) -> dict[str, Any] | None:
    if args.rope_scaling == "none" or args.rope_scaling_factor == 1.0:
        return None
    scaling: dict[str, Any] = {"rope_type": args.rope_scaling, "factor": args.rope_scaling_factor}
    if args.rope_scaling == "llama3":
        scaling |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0,
                    "original_max_position_embeddings": args.rope_original_seq_len or args.max_seq_len}  # fmt: skip
    return scaling


def hf_config(args: ModelArgs, tokenizer: spm.SentencePieceProcessor, provenance: dict[str, Any]) -> dict[str, Any]:
    special = {name: value if value >= 0 else None for name, value in
               (("bos_token_id", tokenizer.bos_id()), ("eos_token_id", tokenizer.eos_id()),
                ("pad_token_id", tokenizer.pad_id()))}  # fmt: skip
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": args.vocab_size,
        "hidden_size": args.d_model,
        "intermediate_size": args.ffn_hidden,
        "num_hidden_layers": args.n_layer,
        "num_attention_heads": args.n_head,
        "num_key_value_heads": args.kv_heads,
        "head_dim": args.head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": args.max_seq_len,
        "rms_norm_eps": args.norm_eps,
        "rope_theta": args.rope_base,
        "rope_scaling": _rope_scaling(args),
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        **special,
        "pretrain": provenance,
    }


def hf_state(model: GPT) -> dict[str, torch.Tensor]:
    """Our weights under Hugging Face's names (the tied head left out, as `tie_word_embeddings` says)."""
    assert model.embed is not None and model.norm is not None
    state = {"model.embed_tokens.weight": model.embed.weight, "model.norm.weight": model.norm.weight}
    for layer, block in model.blocks.items():
        for name, tensor in block.state_dict().items():
            state[f"model.layers.{layer}.{HF_NAMES[name]}"] = tensor
    return {name: tensor.detach().to("cpu", torch.float32).contiguous() for name, tensor in state.items()}


def adds_dummy_prefix(tokenizer_proto: bytes) -> bool:
    """Whether the SentencePiece model puts a "▁" before a text's first word (its normalizer's add_dummy_prefix)."""
    spec = sentencepiece_model_pb2.ModelProto.FromString(tokenizer_proto).normalizer_spec  # type: ignore[attr-defined]
    return bool(spec.add_dummy_prefix)


def write(model: GPT, tokenizer_proto: bytes, output_url: str, provenance: dict[str, Any]) -> list[str]:
    """Write the directory; returns its file names. Refuses a model `hf_problems` names."""
    problems = hf_problems(model.args)
    if problems:
        raise ValueError("cannot export as Hugging Face Llama: " + "; ".join(problems))
    tokenizer = spm.SentencePieceProcessor(model_proto=tokenizer_proto)
    storage.write_bytes(storage.join(output_url, WEIGHTS_FILE), save_tensors(hf_state(model), {"format": "pt"}))
    storage.write_bytes(storage.join(output_url, TOKENIZER_FILE), tokenizer_proto)
    # LlamaTokenizer puts a "▁" before the first word unless add_prefix_space is off; SentencePiece does so only
    # when the model says add_dummy_prefix (ours do not: a text's ids do not depend on where it starts).
    # transformers 4.x's fast tokenizer honours the flag only when rebuilt from the SentencePiece model (from_slow).
    storage.write_json(storage.join(output_url, TOKENIZER_CONFIG), {
        "tokenizer_class": "LlamaTokenizer", "add_bos_token": False, "add_eos_token": False, "legacy": False,
        "add_prefix_space": adds_dummy_prefix(tokenizer_proto), "from_slow": True,
        "model_max_length": model.args.max_seq_len,
    })  # fmt: skip
    storage.write_json(storage.join(output_url, CONFIG_FILE), hf_config(model.args, tokenizer, provenance))
    return [WEIGHTS_FILE, TOKENIZER_FILE, TOKENIZER_CONFIG, CONFIG_FILE]


def reloaded_logits(output_url: str, ids: np.ndarray) -> tuple[np.ndarray, str]:
    """Logits of the written directory on ``ids``: through transformers' `LlamaForCausalLM` when it is installed
    (the check that matters), else through our model rebuilt from the written weights; and which it was."""
    if importlib.util.find_spec("transformers") is not None and "://" not in output_url:
        from transformers import LlamaForCausalLM

        hf_model = LlamaForCausalLM.from_pretrained(output_url).eval()
        with torch.no_grad():
            return hf_model(torch.from_numpy(ids.astype(np.int64))).logits.float().numpy(), "transformers"
    config = storage.read_json(storage.join(output_url, CONFIG_FILE))
    scaling = config["rope_scaling"] or {}
    args = ModelArgs(
        vocab_size=config["vocab_size"], n_layer=config["num_hidden_layers"], n_head=config["num_attention_heads"],
        d_model=config["hidden_size"], max_seq_len=config["max_position_embeddings"], rope_base=config["rope_theta"],
        norm_eps=config["rms_norm_eps"], block="llama", n_kv_head=config["num_key_value_heads"],
        rope_scaling=scaling.get("rope_type", "none"), rope_scaling_factor=scaling.get("factor", 1.0),
        rope_original_seq_len=scaling.get("original_max_position_embeddings"),
    )  # fmt: skip
    model = GPT(args).eval()
    ours = {hf: f"blocks.{{layer}}.{name}" for name, hf in HF_NAMES.items()}
    state = load_tensors(storage.read_bytes(storage.join(output_url, WEIGHTS_FILE)))
    mapped = {"embed.weight": state["model.embed_tokens.weight"], "norm.weight": state["model.norm.weight"]}
    for name, tensor in state.items():
        if name.startswith("model.layers."):
            layer, rest = name.removeprefix("model.layers.").split(".", 1)
            mapped[ours[rest].format(layer=layer)] = tensor
    model.load_state_dict({**mapped, "lm_head.weight": mapped["embed.weight"]})
    with torch.no_grad():
        return model(torch.from_numpy(ids.astype(np.int64))).numpy(), "our model from the written weights"

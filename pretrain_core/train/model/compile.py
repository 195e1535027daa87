"""torch.compile of the model, tried on a probe first: a backend that fails leaves the model as it was. Only
`forward` attributes are replaced, so parameter names, state dicts and checkpoints are the same as uncompiled; the
probe leaves no gradient behind and restores the RNG, so a compiled run draws the dropout masks an uncompiled one
draws.

A whole model compiles as one forward; a pipeline stage (whose input may be another stage's hidden states)
compiles block by block, as torchtitan compiles each transformer block."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import torch
from torch import nn

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, alibi_bias
from pretrain_core.train.parallel.distributed import DistEnv

log = logging.getLogger(__name__)
PROBE_TOKENS = 8


def compile_in_place(model: GPT, config: TrainConfig, env: DistEnv) -> bool:
    """Compile the whole model's forward if a forward/backward on a probe batch of ids succeeds; else warn."""
    t = min(PROBE_TOKENS, config.data.seq_len)
    return _try_compiling(
        [model], lambda: model(torch.zeros((1, t), dtype=torch.long, device=env.device)), model, config, env,
        "model forward",
    )  # fmt: skip


def compile_stage(part: GPT, config: TrainConfig, env: DistEnv) -> bool:
    """Compile each block of a pipeline stage if its first block runs forward/backward on probe hidden states.
    Collective when the stage is split or sharded: every rank of the pipeline compiles and probes its stages."""
    blocks = list(part.blocks.values())
    t = min(PROBE_TOKENS, config.data.seq_len)

    def probe() -> torch.Tensor:
        hidden = torch.zeros((1, t, part.args.d_model), device=env.device, requires_grad=True)
        rope = (part.rope_cos, part.rope_sin) if part.args.position_encoding == "rope" else None
        alibi = part.args.position_encoding == "alibi"
        bias = alibi_bias(part.alibi_slopes, t, part.args.causal) if alibi else None
        output: torch.Tensor = blocks[0](hidden, rope, bias)
        return output

    return _try_compiling(blocks, probe, part, config, env, f"the {len(blocks)} blocks of a pipeline stage")


def _try_compiling(
    modules: Sequence[nn.Module],
    probe: Callable[[], torch.Tensor],
    owner: nn.Module,
    config: TrainConfig,
    env: DistEnv,
    what: str,
) -> bool:
    backend = config.compute.compile_backend
    rng = torch.get_rng_state()
    try:
        for module in modules:
            module.forward = torch.compile(module.forward, backend=backend)
        probe().float().mean().backward()
    except Exception as error:  # dynamo and the backends raise many kinds; any of them means "do not compile"
        for module in modules:
            module.__dict__.pop("forward", None)  # back to the class's forward
        if env.is_main:
            log.warning(
                "torch.compile (backend %s) failed, training uncompiled: %s: %s",
                backend, type(error).__name__, (str(error).splitlines() or [""])[0],
            )  # fmt: skip
        return False
    finally:
        owner.zero_grad(set_to_none=True)
        torch.set_rng_state(rng)
    if env.is_main:
        log.info("%s compiled with torch.compile (backend %s)", what, backend)
    return True

"""torch.compile of the model, tried on a probe batch first: a backend that fails leaves the model as it was."""

from __future__ import annotations

import logging

import torch

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT
from pretrain_core.train.parallel.distributed import DistEnv

log = logging.getLogger(__name__)


def compile_in_place(model: GPT, config: TrainConfig, env: DistEnv) -> bool:
    """Compile the model's forward with torch.compile if a forward/backward on a probe batch succeeds; else leave
    it as it was and warn with the error. Only `forward` is replaced, so parameter names, state dicts and
    checkpoints are the same as uncompiled; the probe leaves no gradient behind and restores the RNG, so a compiled
    run draws the same dropout masks as an uncompiled one."""
    rng = torch.get_rng_state()
    try:
        model.forward = torch.compile(model.forward, backend=config.compute.compile_backend)  # type: ignore[method-assign]
        model(
            torch.zeros((1, min(8, config.data.seq_len)), dtype=torch.long, device=env.device)
        ).float().mean().backward()
    except Exception as error:  # dynamo and the backends raise many kinds; any of them means "do not compile"
        model.__dict__.pop("forward", None)  # back to the class's forward
        if env.is_main:
            log.warning(
                "torch.compile (backend %s) failed, training uncompiled: %s: %s",
                config.compute.compile_backend, type(error).__name__, (str(error).splitlines() or [""])[0],
            )  # fmt: skip
        return False
    finally:
        model.zero_grad(set_to_none=True)
        torch.set_rng_state(rng)
    if env.is_main:
        log.info("model forward compiled with torch.compile (backend %s)", config.compute.compile_backend)
    return True

"""Run the API under uvicorn: bound to 127.0.0.1 unless told otherwise (put a proxy with TLS and auth in front
of anything wider)."""

from __future__ import annotations

import torch
import uvicorn

from pretrain_core.export.bundle import load_bundle
from pretrain_core.generate.config import GenerationConfig
from pretrain_core.serve.app import ServerLimits, create_app


def build_server(
    source_url: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    defaults: GenerationConfig | None = None,
    limits: ServerLimits | None = None,
    threads: int | None = None,
) -> uvicorn.Server:
    """A uvicorn server for the model at ``source_url`` (checkpoint, training output or safetensors export)."""
    if threads is not None:
        torch.set_num_threads(threads)
    bundle = load_bundle(source_url, "cuda" if torch.cuda.is_available() else "cpu")
    app = create_app(bundle, defaults, limits)
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info", access_log=True))

"""The HTTP API (FastAPI): `GET /health`, `POST /generate` (JSON, or server-sent events with `"stream": true`).

Limits are the server's, not the client's: prompt length, tokens per request and generations running at once.
A request past a limit gets a 4xx with a one-line reason (422 for a field out of range, 413 for a prompt too long,
429 when every generation slot is taken) instead of waiting or failing later. Generations run in worker threads;
torch releases the GIL in its kernels, so a slot per core is the sensible concurrency.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from pretrain_core.export.bundle import ModelBundle
from pretrain_core.generate.config import GenerationConfig, Strategy
from pretrain_core.generate.decode import Generation, generate
from pretrain_core.generate.text_stream import TextStream


class ServerLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_new_tokens: int = Field(default=256, ge=1, le=8192, description="Tokens one request may generate at most.")
    max_prompt_tokens: int = Field(default=1024, ge=1, description="Prompt tokens one request may send at most.")
    concurrency: int = Field(default=2, ge=1, le=256, description="Generations running at once; more get 429.")


class GenerateRequest(BaseModel):
    """Settings left out take the server's defaults (`pretrain serve --config`)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(max_length=200_000)
    max_new_tokens: int | None = Field(default=None, ge=1)
    strategy: Strategy | None = None
    temperature: float | None = Field(default=None, ge=0, le=10)
    top_k: int | None = Field(default=None, ge=1)
    top_p: float | None = Field(default=None, gt=0, le=1)
    repetition_penalty: float | None = Field(default=None, ge=1, le=10)
    beams: int | None = Field(default=None, ge=1, le=16)
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1)
    stream: bool = False


class GenerateResponse(BaseModel):
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "eos" | "length"
    logprob: float  # the model's log-probability of the completion
    seconds: float


def _settings(request: GenerateRequest, defaults: GenerationConfig, limits: ServerLimits) -> GenerationConfig:
    chosen = request.model_dump(exclude_none=True, exclude={"prompt", "stream"})
    if chosen.get("max_new_tokens", 0) > limits.max_new_tokens:
        raise HTTPException(
            422, f"max_new_tokens {chosen['max_new_tokens']} exceeds this server's {limits.max_new_tokens}"
        )
    settings = GenerationConfig.model_validate({**defaults.model_dump(), **chosen})
    if settings.max_new_tokens > limits.max_new_tokens:
        settings = settings.model_copy(update={"max_new_tokens": limits.max_new_tokens})
    return settings


def create_app(
    bundle: ModelBundle, defaults: GenerationConfig | None = None, limits: ServerLimits | None = None
) -> FastAPI:
    defaults = defaults or GenerationConfig()
    limits = limits or ServerLimits()
    slots = threading.BoundedSemaphore(limits.concurrency)
    app = FastAPI(title="pretrain model server", description=f"{bundle.source_url} (step {bundle.step})")

    def prompt_ids(request: GenerateRequest) -> list[int]:
        ids: list[int] = bundle.tokenizer.encode(request.prompt)
        if len(ids) > limits.max_prompt_tokens:
            raise HTTPException(413, f"prompt of {len(ids)} tokens exceeds this server's {limits.max_prompt_tokens}")
        return ids

    def take_slot() -> None:
        if not slots.acquire(blocking=False):
            raise HTTPException(429, f"all {limits.concurrency} generation slots are busy; retry shortly")

    def respond(ids: list[int], out: Generation, stream: TextStream) -> GenerateResponse:
        return GenerateResponse(
            text=stream.text(),
            prompt_tokens=len(ids),
            completion_tokens=len(out.ids),
            finish_reason="eos" if out.stopped_at_eos else "length",
            logprob=out.logprob,
            seconds=round(out.seconds, 4),
        )

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "model": bundle.source_url,
            "step": bundle.step,
            "parameters": bundle.model.num_params(),
            "limits": limits.model_dump(),
        }

    @app.post("/generate", response_model=GenerateResponse)
    def generate_text(request: GenerateRequest) -> Any:
        settings = _settings(request, defaults, limits)
        ids = prompt_ids(request)
        take_slot()
        if request.stream:
            return StreamingResponse(_events(bundle, ids, settings, slots, respond), media_type="text/event-stream")
        try:
            stream = TextStream(bundle.tokenizer, ids)
            out = generate(bundle.model, ids, settings, bundle.eos_id, stream.push)
            if settings.effective_strategy == "beam":
                for token in out.ids:
                    stream.push(token)
            return respond(ids, out, stream)
        finally:
            slots.release()

    return app


def _events(
    bundle: ModelBundle,
    ids: list[int],
    settings: GenerationConfig,
    slots: threading.BoundedSemaphore,
    respond: Callable[[list[int], Generation, TextStream], GenerateResponse],
) -> Iterator[str]:
    """Server-sent events: `{"text": piece}` as tokens are chosen, then the whole response as the last event. The
    generation runs in its own thread and gives its slot back when it ends, even if the client went away."""
    pieces: queue.Queue[str | GenerateResponse | BaseException] = queue.Queue()
    stream = TextStream(bundle.tokenizer, ids)

    def on_token(token: int) -> None:
        if piece := stream.push(token):
            pieces.put(piece)

    def run() -> None:
        try:
            out = generate(bundle.model, ids, settings, bundle.eos_id, on_token)
            if settings.effective_strategy == "beam":
                for token in out.ids:
                    on_token(token)
            pieces.put(respond(ids, out, stream))
        except BaseException as error:  # handed to the response, which ends the stream with it
            pieces.put(error)
        finally:
            slots.release()

    threading.Thread(target=run, name="generate", daemon=True).start()
    while True:
        item = pieces.get()
        if isinstance(item, GenerateResponse):
            yield f"event: done\ndata: {item.model_dump_json()}\n\n"
            return
        if isinstance(item, BaseException):
            yield f"event: error\ndata: {json.dumps({'detail': f'{type(item).__name__}: {item}'})}\n\n"
            return
        yield f"data: {json.dumps({'text': item}, ensure_ascii=False)}\n\n"

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
import torch
import uvicorn

from pretrain_core.export.bundle import load_bundle
from pretrain_core.generate.config import GenerationConfig
from pretrain_core.serve.app import ServerLimits, create_app
from pretrain_core.serve.server import build_server
from tests.evaluate import conftest as evaluate_fixtures

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output
LIMITS = ServerLimits(max_new_tokens=40, max_prompt_tokens=64, concurrency=1)


@contextmanager
def running(server: uvicorn.Server) -> Iterator[str]:
    """A real uvicorn server on an ephemeral loopback port, in a thread; yields its base URL."""
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.05)
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    assert host == "127.0.0.1"  # loopback unless told otherwise
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def base_url(trained_output: str) -> Iterator[str]:
    defaults = GenerationConfig(strategy="greedy", max_new_tokens=12)
    with running(build_server(trained_output, port=0, defaults=defaults, limits=LIMITS, threads=1)) as url:
        yield url


def test_health_names_the_model_and_its_limits(base_url: str) -> None:
    health = httpx.get(f"{base_url}/health").json()
    assert health["status"] == "ok" and health["step"] == 30 and health["parameters"] > 0
    assert health["limits"] == LIMITS.model_dump()


def test_generate_returns_text_and_is_reproducible(base_url: str) -> None:
    body = {"prompt": "Licensed under the", "max_new_tokens": 8}
    first = httpx.post(f"{base_url}/generate", json=body, timeout=30).json()
    assert first["completion_tokens"] <= 8 and first["prompt_tokens"] > 0
    assert first["finish_reason"] in ("eos", "length") and first["logprob"] <= 0
    assert first == {**httpx.post(f"{base_url}/generate", json=body, timeout=30).json(), "seconds": first["seconds"]}
    sampled = {**body, "strategy": "sample", "temperature": 1.2, "top_p": 0.9, "seed": 7}
    assert httpx.post(f"{base_url}/generate", json=sampled, timeout=30).status_code == 200
    beam = httpx.post(f"{base_url}/generate", json={**body, "strategy": "beam", "beams": 3}, timeout=30)
    assert beam.status_code == 200 and beam.json()["completion_tokens"] <= 8


def test_streaming_sends_the_same_text_piece_by_piece(base_url: str) -> None:
    body = {"prompt": "Licensed under the", "max_new_tokens": 10}
    whole = httpx.post(f"{base_url}/generate", json=body, timeout=30).json()
    pieces, final = [], None
    with httpx.stream("POST", f"{base_url}/generate", json={**body, "stream": True}, timeout=30) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        event = "message"
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
                if event == "done":
                    final = data
                else:
                    pieces.append(data["text"])
    assert final is not None and final["text"] == whole["text"] == "".join(pieces)


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        ({"prompt": "x", "max_new_tokens": 41}, 422, "exceeds this server's 40"),
        ({"prompt": "word " * 200}, 413, "exceeds this server's 64"),
        ({"prompt": "x", "temperature": -1}, 422, "temperature"),
        ({"prompt": "x", "unknown": 1}, 422, "unknown"),
        ({}, 422, "prompt"),
    ],
)
def test_requests_past_a_limit_get_a_clear_4xx(
    base_url: str, body: dict[str, object], status: int, reason: str
) -> None:
    response = httpx.post(f"{base_url}/generate", json=body, timeout=30)
    assert response.status_code == status and reason in response.text


def test_a_request_beyond_the_concurrency_limit_gets_429(trained_output: str) -> None:
    bundle = load_bundle(trained_output)
    gate, inside = threading.Event(), threading.Event()
    forward = bundle.model.forward

    def held_forward(*args: object, **kwargs: object) -> torch.Tensor:
        inside.set()
        assert gate.wait(timeout=30)  # the first generation holds the only slot until the test lets it go
        return forward(*args, **kwargs)  # type: ignore[arg-type]

    bundle.model.forward = held_forward  # type: ignore[method-assign]
    app = create_app(bundle, GenerationConfig(strategy="greedy", max_new_tokens=4), LIMITS)
    with running(uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0))) as url:
        first: list[httpx.Response] = []
        holder = threading.Thread(target=lambda: first.append(httpx.post(f"{url}/generate", json={"prompt": "x"})))
        holder.start()
        assert inside.wait(timeout=30)
        busy = httpx.post(f"{url}/generate", json={"prompt": "y"}, timeout=30)
        assert busy.status_code == 429 and "slots are busy" in busy.text
        gate.set()
        holder.join(timeout=30)
        assert first[0].status_code == 200
        assert httpx.post(f"{url}/generate", json={"prompt": "z"}, timeout=30).status_code == 200  # slot given back

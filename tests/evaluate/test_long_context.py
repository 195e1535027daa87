"""Long-context evaluation: contiguous held-out sequences past the trained length, loss by position, passkeys."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pretrain_cli.main import main
from pretrain_core import storage
from pretrain_core.evaluate.evaluator import evaluate_checkpoint
from pretrain_core.evaluate.long_context import (
    at_length,
    bucket_edges,
    long_sequences,
    passkey_prompt,
)
from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE, latest_checkpoint
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import EvalConfig
from pretrain_core.train.shards.tokenizer import load_tokenizer


def test_windows_sharing_their_edge_token_join_into_the_stream() -> None:
    stream = np.arange(40)
    windows = np.stack([stream[k * 8 : k * 8 + 9] for k in range(4)])  # seq_len 8: 9 ids, one shared
    assert long_sequences(windows, 16, 5).tolist() == [list(range(17)), list(range(16, 33))]
    assert bucket_edges(512) == [0, 64, 128, 256, 512]


def test_a_model_rebuilt_longer_scores_its_trained_length_as_before(trained_output: str) -> None:
    model, _ = load_model(latest_checkpoint(trained_output) or "")
    longer = at_length(model, 4 * model.args.max_seq_len, "yarn", 4.0)
    assert longer.args.max_seq_len == 384 and longer.args.rope_original_seq_len == 96
    ids = torch.randint(0, model.args.vocab_size, (1, 96))
    assert torch.allclose(at_length(model, 384)(ids), model(ids), atol=1e-5)  # no scaling: the same positions
    assert not torch.allclose(longer(ids), model(ids), atol=1e-3)  # yarn re-times every slow pair


def test_the_passkey_sits_at_the_asked_depth_of_a_prompt_of_the_asked_length(trained_output: str) -> None:
    tokenizer, _ = load_tokenizer(storage.join(latest_checkpoint(trained_output) or "", TOKENIZER_FILE))
    places = []
    for depth in (0.0, 0.5, 1.0):
        prompt, answer = passkey_prompt(tokenizer, 300, depth, "73105")
        text = tokenizer.decode(prompt)
        assert abs(len(prompt) + len(answer) - 300) <= 2 and tokenizer.decode(answer).strip() == "73105"
        assert text.endswith("What is the pass key? The pass key is")
        places.append((text.index("The pass key is 73105"), text.index("What is the pass key?")))
    assert places[0][0] == 0  # depth 0: first
    assert 0.3 < places[1][0] / places[1][1] < 0.7  # depth 0.5: mid-filler
    after = places[2][1] - places[2][0]  # depth 1: only the needle itself before the question
    assert abs(after - len("The pass key is 73105. Remember it. 73105 is the pass key. ")) <= 1


def test_pretrain_evaluate_long_context_writes_figures_past_the_trained_length(
    trained_output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["evaluate", trained_output, "--long-context", "--lengths", "96", "192", "--rope-scaling", "linear",
                 "--rope-factor", "2"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "trained at 96 tokens, RoPE scaling linear x2" in out
    checkpoint = latest_checkpoint(trained_output) or ""
    figures = storage.read_json(storage.join(checkpoint, "long_context-linear-x2.json"))
    assert {p["length"] for p in figures["positions"]} == {96, 192}
    assert max(p["end"] for p in figures["positions"]) == 192
    assert len(figures["passkey"]) == 2 * 5 and all(0 <= c["accuracy"] <= 1 for c in figures["passkey"])
    assert storage.read_bytes(storage.join(checkpoint, "long_context-linear-x2.png")).startswith(b"\x89PNG")


def test_the_checkpoint_evaluation_scores_long_context_when_asked(fresh_run: str) -> None:
    cfg = EvalConfig(long_context_lengths=[96, 192], zero_shot_items=0, probe_samples=0, batches_per_split=1)
    result = evaluate_checkpoint(fresh_run, cfg=cfg)
    assert result.long_context is not None and result.long_context.rope_scaling == "none"
    assert {p.length for p in result.long_context.positions} == {96, 192}
    checkpoint = latest_checkpoint(fresh_run) or ""
    recorded = storage.read_json(storage.join(checkpoint, "eval.json"))
    assert recorded["long_context"]["trained_length"] == 96
    assert storage.exists(storage.join(checkpoint, "long_context-none-x1.json"))

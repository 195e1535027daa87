"""How a model behaves past the length it was trained at: perplexity by position on held-out text, and passkey
retrieval (YaRN's protocol: a five-digit key hidden at a chosen depth in filler, asked for at the end) by context
length and depth.

Long held-out sequences are rebuilt from the validation windows: the tokenization stage cuts each split's stream
into seq_len + 1 windows that share their edge token, so consecutive windows joined (minus the shared token) are
the stream itself. A model is evaluated past its length by rebuilding it at the longer length with a RoPE scaling
(`at_length`); ALiBi and sinusoidal positions extend as they are, learned positions cannot.

A passkey counts as retrieved when the model's most likely next token is right at every digit of the key (teacher
forced: one forward pass per trial).
"""

from __future__ import annotations

import importlib.util
import io
import random
from dataclasses import replace
from itertools import pairwise

import numpy as np
import sentencepiece as spm
import torch
from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE, resolve_checkpoint, saved_setting
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.model.args import RopeScaling
from pretrain_core.train.model.gpt import GPT, cross_entropy
from pretrain_core.train.shards.sequences import load_sequences
from pretrain_core.train.shards.tokenizer import load_tokenizer

FILLER = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)


class PositionLoss(BaseModel):
    length: int  # the context the sequences were scored at
    start: int  # the bucket's first position
    end: int  # one past its last
    loss: float
    tokens: int


class PasskeyCell(BaseModel):
    length: int
    depth: float
    accuracy: float
    trials: int


class LongContextResult(BaseModel):
    trained_length: int
    rope_scaling: str
    rope_scaling_factor: float
    positions: list[PositionLoss]
    passkey: list[PasskeyCell]


def at_length(model: GPT, length: int, scaling: RopeScaling | None = None, factor: float | None = None) -> GPT:
    """The model rebuilt for ``length`` tokens (same weights), with ``scaling`` and ``factor`` when given (else its
    own); its RoPE stretches from the length it was trained at."""
    args = model.args
    if args.position_encoding == "learned" and length > args.max_seq_len:
        raise ValueError(f"learned positions stop at {args.max_seq_len}: the model cannot read {length} tokens")
    longer = replace(
        args, max_seq_len=max(length, args.max_seq_len), rope_scaling=scaling or args.rope_scaling,
        rope_scaling_factor=factor or args.rope_scaling_factor,
        rope_original_seq_len=args.rope_original_seq_len or args.max_seq_len,
    )  # fmt: skip
    rebuilt = GPT(longer)
    rebuilt.load_state_dict(model.state_dict())
    return rebuilt.to(next(model.parameters()).device).eval()


def long_sequences(windows: np.ndarray, length: int, count: int) -> np.ndarray:
    """Up to ``count`` (length + 1)-token sequences of contiguous text from consecutive (seq_len + 1) windows."""
    step = windows.shape[1] - 1
    joined_windows = -(-length // step)
    found = []
    for first in range(0, len(windows) - joined_windows + 1, joined_windows):
        parts = [windows[first + j, :step] for j in range(joined_windows)]
        joined = np.concatenate([*parts, windows[first + joined_windows - 1, step:]])  # the last shared token
        found.append(joined[: length + 1])
        if len(found) == count:
            break
    return np.stack(found) if found else np.zeros((0, length + 1), np.int64)


def bucket_edges(length: int, first: int = 64) -> list[int]:
    """Position buckets doubling from ``first``: 0-64, 64-128, 128-256, ... up to ``length``."""
    edges = [0]
    edge = first
    while edge < length:
        edges.append(edge)
        edge *= 2
    return [*edges, length]


@torch.no_grad()
def position_losses(model: GPT, sequences: np.ndarray, length: int) -> list[PositionLoss]:
    """Mean next-token loss per position bucket of sequences scored at ``length`` tokens."""
    device = next(model.parameters()).device
    batch = torch.from_numpy(sequences.astype(np.int64)).to(device)
    losses = cross_entropy(model(batch[:, :-1]), batch[:, 1:], reduction="none")  # (N, length)
    edges = bucket_edges(length)
    return [
        PositionLoss(length=length, start=start, end=end, loss=float(losses[:, start:end].mean()),
                     tokens=int(losses[:, start:end].numel()))
        for start, end in pairwise(edges)
    ]  # fmt: skip


def passkey_prompt(
    tokenizer: spm.SentencePieceProcessor, length: int, depth: float, key: str
) -> tuple[list[int], list[int]]:
    """Token ids of a prompt of about ``length`` tokens hiding ``key`` at ``depth`` (0: start, 1: end of the
    filler), ending in the question; and the key's ids that should follow."""
    needle = tokenizer.encode(f"The pass key is {key}. Remember it. {key} is the pass key. ")
    question = tokenizer.encode("What is the pass key? The pass key is")
    answer = tokenizer.encode(f" {key}")
    filler_unit = tokenizer.encode(FILLER)
    room = max(0, length - len(needle) - len(question) - len(answer))
    filler = (filler_unit * (room // len(filler_unit) + 1))[:room]
    at = round(depth * len(filler))
    return filler[:at] + needle + filler[at:] + question, answer


@torch.no_grad()
def passkey_accuracy(
    model: GPT, tokenizer: spm.SentencePieceProcessor, length: int, depth: float, trials: int, seed: int
) -> float:
    """Share of ``trials`` keys the model reads back at ``depth`` in a ``length``-token prompt."""
    rng = random.Random(f"{seed}-{length}-{depth}")
    device = next(model.parameters()).device
    found = 0
    for _ in range(trials):
        prompt, answer = passkey_prompt(tokenizer, length, depth, f"{rng.randrange(10_000, 100_000)}")
        ids = torch.tensor([prompt + answer[:-1]], device=device)[:, -model.args.max_seq_len :]
        predicted = model(ids)[0, -len(answer) :].argmax(dim=-1).tolist()
        found += predicted == answer
    return found / trials


def evaluate_long_context(
    model: GPT,
    tokenizer: spm.SentencePieceProcessor,
    windows: np.ndarray,
    lengths: list[int],
    sequences: int = 8,
    passkey_trials: int = 5,
    seed: int = 1234,
) -> LongContextResult:
    """Perplexity by position and passkey retrieval of ``model`` (already at the longest length: `at_length`) at
    each of ``lengths``."""
    positions, passkey = [], []
    for length in sorted(lengths):
        scored = long_sequences(windows, length, sequences)
        if len(scored):
            positions += position_losses(model, scored, length)
        for depth in DEPTHS:
            accuracy = passkey_accuracy(model, tokenizer, length, depth, passkey_trials, seed)
            passkey.append(PasskeyCell(length=length, depth=depth, accuracy=accuracy, trials=passkey_trials))
    args = model.args
    return LongContextResult(
        trained_length=args.rope_original_seq_len or args.max_seq_len, rope_scaling=args.rope_scaling,
        rope_scaling_factor=args.rope_scaling_factor, positions=positions, passkey=passkey,
    )  # fmt: skip


def render_long_context(result: LongContextResult) -> bytes:
    """PNG: loss by position bucket (a line per context length) and the passkey heat map (depth x length)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 4.2))
    FigureCanvasAgg(figure)
    figure.subplots_adjust(left=0.07, right=0.97, top=0.88, bottom=0.13, wspace=0.25)
    by_position, heat = figure.subplots(1, 2)
    lengths = sorted({cell.length for cell in result.passkey})
    for length in lengths:
        buckets = [p for p in result.positions if p.length == length]
        by_position.plot([p.end for p in buckets], [p.loss for p in buckets], marker="o", label=f"context {length}")
    by_position.axvline(result.trained_length, color="grey", linestyle="--", label="trained length")
    by_position.set_xscale("log", base=2)
    by_position.set(title="held-out loss by position", xlabel="position (bucket end)", ylabel="loss (nats/token)")
    by_position.legend(fontsize="small")
    grid = np.array([[c.accuracy for c in result.passkey if c.length == length] for length in lengths]).T
    image = heat.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto", origin="lower")
    heat.set_xticks(range(len(lengths)), [str(length) for length in lengths])
    heat.set_yticks(range(len(DEPTHS)), [f"{d:.0%}" for d in DEPTHS])
    heat.set(title="passkey retrieval", xlabel="context length", ylabel="key depth")
    figure.colorbar(image, ax=heat, label="accuracy")
    figure.suptitle(f"RoPE scaling {result.rope_scaling} x{result.rope_scaling_factor:g}, trained at "
                    f"{result.trained_length} tokens")  # fmt: skip
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
    return buffer.getvalue()


def evaluate_checkpoint_long_context(
    url: str,
    lengths: list[int],
    scaling: RopeScaling | None = None,
    factor: float | None = None,
    tokens_url: str | None = None,
    sequences: int = 8,
    passkey_trials: int = 5,
) -> tuple[LongContextResult, str]:
    """Evaluate a checkpoint (or a training output's latest) at ``lengths``; write the figures (and the plot, with
    matplotlib) beside it as `long_context-<scaling>-x<factor>.json`/`.png`. Returns them and the JSON's URL."""
    url = resolve_checkpoint(url)
    model, meta = load_model(url)
    tokenizer, _ = load_tokenizer(storage.join(url, TOKENIZER_FILE))
    windows = load_sequences(tokens_url or saved_setting(meta, "tokens_url"), "validation", model.args.max_seq_len).ids
    extended = at_length(model, max(lengths), scaling, factor)
    result = evaluate_long_context(extended, tokenizer, windows, lengths, sequences, passkey_trials)
    stem = storage.join(url, f"long_context-{result.rope_scaling}-x{result.rope_scaling_factor:g}")
    storage.write_json(f"{stem}.json", result.model_dump(mode="json"))
    if importlib.util.find_spec("matplotlib") is not None:
        storage.write_bytes(f"{stem}.png", render_long_context(result))
    return result, f"{stem}.json"

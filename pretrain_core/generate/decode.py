"""Decoding: greedy, sampling (temperature, top-k, top-p) and beam search, each with a repetition penalty.

Every strategy reads the prompt once and then one token per step through the model's key/value cache
(``use_cache: false`` re-reads the whole context each step instead; same tokens while the text fits the window).
When the text outgrows the model's window the cache restarts from the last half window: the text goes on, at the
cost of one re-read and of the context it forgets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.processors import penalize_repetition, top_k_filter, top_p_filter
from pretrain_core.train.model.gpt import GPT
from pretrain_core.train.model.kv_cache import KVCache


@dataclass(frozen=True)
class Generation:
    """What the model wrote after the prompt, with the model's own log-probability of each token (temperature 1,
    no filters: the "probability extraction" an analysis reads)."""

    prompt_ids: list[int]
    ids: list[int]  # the new tokens, without the end-of-document id
    token_logprobs: list[float]
    stopped_at_eos: bool
    seconds: float

    @property
    def logprob(self) -> float:
        return float(sum(self.token_logprobs))

    @property
    def tokens_per_second(self) -> float:
        return len(self.token_logprobs) / self.seconds if self.seconds > 0 else float("inf")


class _Reader:
    """Feeds (B, T) ids to the model and returns the last position's logits (B, V), through a cache or not."""

    def __init__(self, model: GPT, use_cache: bool) -> None:
        self.model = model
        self.window = model.args.max_seq_len
        self.cache: KVCache | None = model.new_cache() if use_cache else None
        self.ids = torch.zeros((1, 0), dtype=torch.long, device=next(model.parameters()).device)

    def read(self, new_ids: torch.Tensor) -> torch.Tensor:
        self.ids = torch.cat((self.ids, new_ids), dim=1)
        if self.cache is None:
            return self.model(self.ids[:, -self.window :])[:, -1]
        if self.cache.length + new_ids.shape[1] > self.window:  # restart from the last half window
            self.cache = self.model.new_cache()
            new_ids = self.ids[:, -max(self.window // 2, new_ids.shape[1]) :][:, -self.window :]
        return self.model(new_ids, self.cache)[:, -1]

    def select(self, rows: torch.Tensor) -> None:
        self.ids = self.ids.index_select(0, rows)
        if self.cache is not None:
            self.cache.select(rows)


@torch.no_grad()
def generate(
    model: GPT,
    prompt_ids: list[int],
    cfg: GenerationConfig,
    eos_id: int | None = None,
    on_token: Callable[[int], object] | None = None,
) -> Generation:
    """Continue ``prompt_ids`` under ``cfg``. ``on_token`` sees each new token as it is chosen (greedy and
    sampling; beam search knows its text only at the end). An empty prompt starts from ``eos_id`` (the boundary
    every training document follows)."""
    if not model.args.causal:
        raise ValueError("generation needs a causal model; this one was trained with objective: masked")
    if not prompt_ids:
        if eos_id is None or eos_id < 0:
            raise ValueError("an empty prompt needs the tokenizer's end-of-document id to start from")
        prompt_ids = [eos_id]
    started = time.perf_counter()
    stop_id = eos_id if cfg.stop_at_eos and eos_id is not None and eos_id >= 0 else None
    if cfg.effective_strategy == "beam":
        ids, logprobs, stopped = _beam_search(model, prompt_ids, cfg, stop_id)
    else:
        ids, logprobs, stopped = _step_by_step(model, prompt_ids, cfg, stop_id, on_token)
    return Generation(list(prompt_ids), ids, logprobs, stopped, time.perf_counter() - started)


def _step_by_step(
    model: GPT,
    prompt_ids: list[int],
    cfg: GenerationConfig,
    stop_id: int | None,
    on_token: Callable[[int], object] | None,
) -> tuple[list[int], list[float], bool]:
    device = next(model.parameters()).device
    reader = _Reader(model, cfg.use_cache)
    generator = torch.Generator(device=device).manual_seed(cfg.seed)
    seen = torch.zeros((1, model.args.vocab_size), dtype=torch.bool, device=device)
    seen[0, prompt_ids] = True
    logits = reader.read(torch.tensor([prompt_ids], device=device))
    greedy = cfg.effective_strategy == "greedy"
    ids: list[int] = []
    logprobs: list[float] = []
    for step in range(cfg.max_new_tokens):
        logits = logits.float()
        scores = penalize_repetition(logits, seen, cfg.repetition_penalty)
        if greedy:
            next_id = int(scores.argmax(dim=-1))
        else:
            scores = scores / cfg.temperature
            if cfg.top_k is not None:
                scores = top_k_filter(scores, cfg.top_k)
            if cfg.top_p is not None:
                scores = top_p_filter(scores, cfg.top_p)
            next_id = int(torch.multinomial(F.softmax(scores, dim=-1), 1, generator=generator))
        logprob = float(F.log_softmax(logits, dim=-1)[0, next_id])
        if next_id == stop_id:
            return ids, logprobs, True
        ids.append(next_id)
        logprobs.append(logprob)
        if on_token is not None:
            on_token(next_id)
        seen[0, next_id] = True
        if step + 1 < cfg.max_new_tokens:
            logits = reader.read(torch.tensor([[next_id]], device=device))
    return ids, logprobs, False


@dataclass
class _Hypothesis:
    ids: list[int]
    logprobs: list[float]  # the model's, for the report
    score: float  # what the search ranks by: penalised log-probs summed

    def ranked(self, length_penalty: float) -> float:
        return self.score / max(len(self.ids), 1) ** length_penalty


def _beam_search(
    model: GPT, prompt_ids: list[int], cfg: GenerationConfig, stop_id: int | None
) -> tuple[list[int], list[float], bool]:
    """Keep the ``beams`` best partial texts by summed log-prob; a text that emits the end id is finished. Stops
    when ``beams`` texts are finished (early stopping) or at ``max_new_tokens``; returns the best text by
    log-prob / length^length_penalty, finished or not."""
    device = next(model.parameters()).device
    vocab = model.args.vocab_size
    reader = _Reader(model, cfg.use_cache)
    logits = reader.read(torch.tensor([prompt_ids], device=device))
    alive = [_Hypothesis([], [], 0.0)]
    finished: list[_Hypothesis] = []
    for step in range(cfg.max_new_tokens):
        seen = torch.zeros((len(alive), vocab), dtype=torch.bool, device=device)
        for row, hypothesis in enumerate(alive):
            seen[row, prompt_ids + hypothesis.ids] = True
        raw = F.log_softmax(logits.float(), dim=-1)
        searched = F.log_softmax(penalize_repetition(logits.float(), seen, cfg.repetition_penalty), dim=-1)
        totals = torch.tensor([h.score for h in alive], device=device)[:, None] + searched
        best = torch.topk(totals.flatten(), min(2 * cfg.beams, totals.numel()))
        parents: list[int] = []
        survivors: list[_Hypothesis] = []
        for total, flat in zip(best.values.tolist(), best.indices.tolist(), strict=True):
            parent, token = divmod(flat, vocab)
            source = alive[parent]
            if token == stop_id:  # finished: its score counts the end id, its text does not
                finished.append(_Hypothesis(source.ids, source.logprobs, total))
            else:
                parents.append(parent)
                survivors.append(
                    _Hypothesis([*source.ids, token], [*source.logprobs, float(raw[parent, token])], total)
                )
            if len(survivors) == cfg.beams:
                break
        alive = survivors
        if not alive or len(finished) >= cfg.beams or step + 1 == cfg.max_new_tokens:
            break
        reader.select(torch.tensor(parents, device=device))
        logits = reader.read(torch.tensor([[h.ids[-1]] for h in alive], device=device))
    best_text = max(finished + alive, key=lambda h: h.ranked(cfg.length_penalty))
    return best_text.ids, best_text.logprobs, any(h is best_text for h in finished)

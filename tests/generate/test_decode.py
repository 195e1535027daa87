from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.decode import generate
from pretrain_core.generate.text_metrics import repeated_ngram_rate
from pretrain_core.train.model.gpt import GPT, ModelArgs

ARGS = ModelArgs(vocab_size=61, n_layer=2, n_head=4, d_model=32, max_seq_len=48)
GREEDY = GenerationConfig(strategy="greedy", max_new_tokens=24, stop_at_eos=False)


def peaked_model(args: ModelArgs = ARGS, seed: int = 0) -> GPT:
    """Random weights large enough that next-token distributions are peaked (and greedy text loops), as a trained
    model's are; the default init predicts almost uniformly."""
    torch.manual_seed(seed)
    model = GPT(args).eval()
    with torch.no_grad():
        for param in model.parameters():
            if param.dim() > 1:
                param.normal_(0.0, 0.35)
    return model


@pytest.mark.parametrize("encoding", ["rope", "alibi", "learned", "sinusoidal"])
def test_cached_logits_equal_the_full_forward_for_every_position_encoding(encoding: str) -> None:
    model = peaked_model(replace(ARGS, position_encoding=encoding))  # type: ignore[arg-type]
    ids = torch.randint(0, ARGS.vocab_size, (2, 20))
    full = model(ids)
    cache = model.new_cache()
    pieces = [model(ids[:, :7], cache), model(ids[:, 7:12], cache)]  # a prompt, then a chunk after cached keys
    pieces += [model(ids[:, i : i + 1], cache) for i in range(12, 20)]  # then one token at a time
    assert cache.length == 20
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-4, rtol=1e-4)


def test_the_cache_refuses_positions_past_the_window() -> None:
    model = peaked_model()
    cache = model.new_cache()
    model(torch.zeros((1, 40), dtype=torch.long), cache)
    with pytest.raises(ValueError, match="max_seq_len"):
        model(torch.zeros((1, 9), dtype=torch.long), cache)


def test_greedy_text_is_the_same_with_and_without_the_cache() -> None:
    model = peaked_model()
    cached = generate(model, [5, 6, 7], GREEDY)
    uncached = generate(model, [5, 6, 7], GREEDY.model_copy(update={"use_cache": False}))
    assert len(cached.ids) == 24 and cached.ids == uncached.ids
    assert cached.token_logprobs == pytest.approx(uncached.token_logprobs, abs=1e-4)
    # past the window the cached text restarts from the last half window: it goes on, each token still scored
    long = generate(model, [5, 6, 7], GREEDY.model_copy(update={"max_new_tokens": 120}))
    assert len(long.ids) == 120 and all(lp <= 0 for lp in long.token_logprobs)


def test_reported_logprobs_are_the_models_own() -> None:
    model = peaked_model()
    out = generate(model, [3, 4], GREEDY.model_copy(update={"max_new_tokens": 6}))
    text = torch.tensor([[3, 4, *out.ids]])
    expected = F.log_softmax(model(text)[0, 1:-1].float(), dim=-1).gather(1, text[0, 2:, None])[:, 0]
    assert out.token_logprobs == pytest.approx(expected.tolist(), abs=1e-4)


def test_zero_temperature_and_top_1_sampling_are_greedy() -> None:
    model = peaked_model()
    greedy = generate(model, [9, 2], GREEDY).ids
    sample = GREEDY.model_copy(update={"strategy": "sample"})
    assert generate(model, [9, 2], sample.model_copy(update={"temperature": 0})).ids == greedy
    assert generate(model, [9, 2], sample.model_copy(update={"top_k": 1, "temperature": 1.0})).ids == greedy


def test_sampling_is_seeded() -> None:
    model = peaked_model()
    cfg = GREEDY.model_copy(update={"strategy": "sample", "temperature": 1.5, "top_k": None})
    first, again = generate(model, [1], cfg), generate(model, [1], cfg)
    other = generate(model, [1], cfg.model_copy(update={"seed": 99}))
    assert first.ids == again.ids and first.ids != other.ids


def test_beam_search_finds_the_most_likely_text_when_it_may_keep_every_prefix() -> None:
    args = replace(ARGS, vocab_size=5)
    model = peaked_model(args)
    prompt = [1, 2]
    cfg = GenerationConfig(strategy="beam", beams=25, max_new_tokens=3, stop_at_eos=False, length_penalty=0)
    beam = generate(model, prompt, cfg)

    @torch.no_grad()
    def logprob(ids: tuple[int, ...]) -> float:
        text = torch.tensor([[*prompt, *ids]])
        scores = F.log_softmax(model(text)[0, len(prompt) - 1 : -1].float(), dim=-1)
        return float(scores.gather(1, torch.tensor(ids)[:, None]).sum())

    best = max(itertools.product(range(5), repeat=3), key=logprob)
    assert tuple(beam.ids) == best
    assert beam.logprob == pytest.approx(logprob(best), abs=1e-4)


def test_beam_search_scores_at_least_greedy() -> None:
    model = peaked_model()
    cfg = GenerationConfig(strategy="beam", beams=4, max_new_tokens=12, stop_at_eos=False, length_penalty=0)
    for prompt in ([5], [7, 8, 9], [40, 2], [11, 12, 13, 14]):
        greedy = generate(model, prompt, GREEDY.model_copy(update={"max_new_tokens": 12}))
        beam = generate(model, prompt, cfg)
        assert beam.logprob >= greedy.logprob - 1e-5
    # beams through the cache and by re-reading agree
    assert generate(model, [5], cfg).ids == generate(model, [5], cfg.model_copy(update={"use_cache": False})).ids


def test_generation_stops_at_the_end_id() -> None:
    model = peaked_model()
    first = generate(model, [5, 6], GREEDY).ids[0]
    cfg = GREEDY.model_copy(update={"stop_at_eos": True})
    for strategy in ("greedy", "beam"):
        out = generate(model, [5, 6], cfg.model_copy(update={"strategy": strategy, "beams": 1}), eos_id=first)
        assert out.ids == [] and out.stopped_at_eos
    assert not generate(model, [5, 6], GREEDY, eos_id=first).stopped_at_eos  # stop_at_eos off: goes on


def test_repetition_penalty_breaks_greedy_loops() -> None:
    model = peaked_model()
    rates = {}
    for penalty in (1.0, 1.5):
        cfg = GREEDY.model_copy(update={"repetition_penalty": penalty, "max_new_tokens": 40})
        texts = [generate(model, [p], cfg).ids for p in range(0, 60, 6)]
        rates[penalty] = sum(repeated_ngram_rate(ids, 3) for ids in texts) / len(texts)
    assert rates[1.0] > 0.3  # the unpenalised model loops
    assert rates[1.5] < rates[1.0] / 2


def test_empty_prompts_start_at_the_end_id_and_masked_models_are_refused() -> None:
    model = peaked_model()
    assert generate(model, [], GREEDY, eos_id=0).prompt_ids == [0]
    with pytest.raises(ValueError, match="end-of-document"):
        generate(model, [], GREEDY)
    masked = GPT(replace(ARGS, causal=False, mask_token_id=60))
    with pytest.raises(ValueError, match="causal"):
        generate(masked, [1], GREEDY)

"""Held-out evaluation of a checkpoint: loss, perplexity and bits per byte per split and domain, zero-shot tasks
(zero_shot.py), samples with their variety and repetition, and the toxicity and bias probes (probes.py).

Perplexity depends on the tokenizer; bits per byte does not, so it compares runs with different vocabularies.
Byte counts come from the pieces themselves (SentencePiece's word-boundary mark counts as the space it stands for).
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import sentencepiece as spm
import torch
from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.evaluate.long_context import LongContextResult, evaluate_checkpoint_long_context
from pretrain_core.evaluate.probes import ProbeResult, run_probes
from pretrain_core.evaluate.zero_shot import TaskScore, build_items, documents_of, score_items
from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.decode import generate
from pretrain_core.generate.text_metrics import distinct_n, repeated_ngram_rate
from pretrain_core.train.allocator import keep_freed_memory
from pretrain_core.train.checkpoint.catalog import read_meta, resolve_checkpoint, saved_setting
from pretrain_core.train.checkpoint.records import evaluation_url, prune_as_configured
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import EvalConfig
from pretrain_core.train.model.gpt import GPT, cross_entropy
from pretrain_core.train.model.objective import IGNORE, Masking, held_out_generator, masking_of
from pretrain_core.train.numerics import autocast
from pretrain_core.train.shards.bill_report import fed_of
from pretrain_core.train.shards.sequences import Sequences, load_sequences
from pretrain_core.train.shards.tokenizer import load_tokenizer

SPLITS = ("validation", "test")
log = logging.getLogger(__name__)


class Metrics(BaseModel):
    loss: float
    perplexity: float
    bits_per_byte: float | None
    tokens: int
    sequences: int
    bits_per_byte_stderr: float | None = None  # bootstrap over the scored sequences: the noise of this figure


class SplitResult(BaseModel):
    overall: Metrics | None  # None when the split has no sequences
    domains: dict[str, Metrics]


class Sample(BaseModel):
    prompt: str
    mode: str  # greedy | sample
    completion: str


class GenerationFigures(BaseModel):
    """Variety and repetition of the probe's sampled completions (token ids)."""

    samples: int
    distinct_1: float
    distinct_2: float
    repeated_3gram_rate: float  # mean over samples


class EvalResult(BaseModel):
    checkpoint_url: str
    step: int
    tokens_url: str
    tokenizer_url: str
    splits: dict[str, SplitResult]
    samples: list[Sample]
    tasks: dict[str, TaskScore] = {}  # "task/language" → accuracy (zero_shot.py)
    generation: GenerationFigures | None = None
    probes: ProbeResult | None = None
    long_context: LongContextResult | None = None  # with EvalConfig.long_context_lengths
    seconds: float
    config: dict[str, Any] = {}  # the EvalConfig it ran under: a rerun with the same settings reuses the result
    fed: dict[str, Any] = {}  # the checkpoint's bill of materials and corpus build (`bill_report.fed_of`)


def token_byte_lengths(tokenizer: spm.SentencePieceProcessor) -> np.ndarray:
    """UTF-8 bytes each token id stands for: 1 for byte-fallback pieces, 0 for control and unknown tokens."""
    lengths = np.zeros(tokenizer.get_piece_size(), dtype=np.int64)
    for i in range(len(lengths)):
        if tokenizer.is_byte(i):
            lengths[i] = 1
        elif not (tokenizer.is_control(i) or tokenizer.is_unknown(i)):
            lengths[i] = len(tokenizer.id_to_piece(i).replace("\u2581", " ").encode())
    return lengths


def balanced_rows(domains: np.ndarray, sources: np.ndarray, limit: int, seed: int) -> np.ndarray:
    """Up to ``limit`` row indices: an equal share for each domain, and inside a domain an equal share for each
    source (a source with fewer rows gives its share to the others), each drawn at random (seeded). A small budget
    still measures every domain, and a domain's figure is not whichever sources happen to be largest or first."""
    names = sorted(set(domains.tolist()))
    if not names:
        return np.zeros(0, dtype=np.int64)
    share = -(-limit // len(names))
    rng = np.random.default_rng(seed)
    chosen = []
    for name in names:
        in_domain = domains == name
        queues = [rng.permutation(np.flatnonzero(in_domain & (sources == s))) for s in sorted(set(sources[in_domain]))]
        dealt = [row for round_ in itertools.zip_longest(*queues) for row in round_ if row is not None]  # round robin
        chosen.append(np.sort(np.asarray(dealt[:share], dtype=np.int64)))
    return np.concatenate(chosen)[:limit]


BOOTSTRAP_RESAMPLES = 200
WINDOWS_PER_ITEM = 25  # test windows decoded per zero-shot item asked for (per task and language group)


def _metrics(per_sequence: np.ndarray, seed: int) -> Metrics:
    """Metrics of (N, 3) per-sequence (nll, scored tokens, bytes). The bits-per-byte standard error comes from
    resampling the sequences (seeded): what another draw of held-out text would move the figure by."""
    nll, tokens, n_bytes = per_sequence.sum(axis=0)
    loss = nll / tokens
    bpb = stderr = None
    if n_bytes:
        bpb = nll / (math.log(2) * n_bytes)
        picks = np.random.default_rng(seed).integers(0, len(per_sequence), (BOOTSTRAP_RESAMPLES, len(per_sequence)))
        resampled = per_sequence[picks].sum(axis=1)  # (resamples, 3)
        stderr = float(np.std(resampled[:, 0] / (math.log(2) * np.maximum(resampled[:, 2], 1)), ddof=1))
    return Metrics(
        loss=loss,
        perplexity=math.exp(loss),
        bits_per_byte=bpb,
        tokens=int(tokens),
        sequences=len(per_sequence),
        bits_per_byte_stderr=stderr,
    )


@torch.no_grad()
def score_split(
    model: GPT,
    sequences: Sequences,
    byte_lengths: np.ndarray,
    cfg: EvalConfig,
    masking: Masking | None = None,
) -> SplitResult:
    """Sum token losses per domain over at most ``batches_per_split`` batches of the split. A masked-objective
    model is scored on its hidden tokens (the same positions every time); bits per byte then has no meaning."""
    per_domain: dict[str, list[tuple[float, float, float]]] = defaultdict(list)  # nll, tokens, bytes per sequence
    device = next(model.parameters()).device
    generator = held_out_generator(device)
    ids, domains = sequences.ids, sequences.domains
    rows = balanced_rows(domains, sequences.sources, cfg.batches_per_split * cfg.batch_size, cfg.seed)
    for start in range(0, len(rows), cfg.batch_size):
        chosen = rows[start : start + cfg.batch_size]
        batch = torch.from_numpy(ids[chosen].astype(np.int64)).to(device)
        inputs, targets = batch[:, :-1], batch[:, 1:]
        if masking is not None:
            inputs, targets = masking.apply(inputs, generator)
        with autocast(cfg.precision, device):
            logits = model(inputs)
        nll = cross_entropy(logits, targets, reduction="none").sum(dim=1).double().cpu().numpy()
        scored = (targets != IGNORE).sum(dim=1).cpu().numpy()
        n_bytes = np.zeros(len(chosen)) if masking else byte_lengths[targets.cpu().numpy()].sum(axis=1)
        for i, domain in enumerate(domains[chosen]):
            per_domain[str(domain)].append((float(nll[i]), float(scored[i]), float(n_bytes[i])))
    if not per_domain:
        return SplitResult(overall=None, domains={})
    tables = {domain: np.array(rows) for domain, rows in sorted(per_domain.items())}
    return SplitResult(
        overall=_metrics(np.concatenate(list(tables.values())), cfg.seed),
        domains={domain: _metrics(table, cfg.seed) for domain, table in tables.items()},
    )


def generate_samples(model: GPT, tokenizer: spm.SentencePieceProcessor, cfg: EvalConfig) -> list[Sample]:
    """A greedy and a sampled (top-k, seeded: reruns print the same text) completion of every prompt; none for a
    masked-objective model, which cannot generate."""
    if not model.args.causal:
        return []
    sampled = GenerationConfig(
        strategy="sample",
        max_new_tokens=cfg.max_new_tokens,
        temperature=cfg.temperature,
        top_k=cfg.top_k,
        seed=cfg.seed,
    )
    samples = []
    for prompt in cfg.prompts:
        for mode in ("greedy", "sample"):
            out = generate(
                model, tokenizer.encode(prompt), sampled.model_copy(update={"strategy": mode}), tokenizer.eos_id()
            )
            samples.append(Sample(prompt=prompt, mode=mode, completion=tokenizer.decode(out.ids)))
    return samples


def probe_generations(
    model: GPT, tokenizer: spm.SentencePieceProcessor, cfg: EvalConfig
) -> tuple[GenerationFigures, ProbeResult]:
    """``cfg.probe_samples`` sampled completions (the prompts in turn, a seed each) measured for variety and
    repetition and screened by the probes."""
    texts, ids = [], []
    for i in range(cfg.probe_samples):
        settings = GenerationConfig(
            strategy="sample", max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_k=cfg.top_k,
            seed=cfg.seed + i,
        )  # fmt: skip
        out = generate(model, tokenizer.encode(cfg.prompts[i % len(cfg.prompts)]), settings, tokenizer.eos_id())
        ids.append(out.ids)
        texts.append(tokenizer.decode(out.ids))
    figures = GenerationFigures(
        samples=len(ids),
        distinct_1=distinct_n(ids, 1),
        distinct_2=distinct_n(ids, 2),
        repeated_3gram_rate=float(np.mean([repeated_ngram_rate(x, 3) for x in ids])),
    )
    return figures, run_probes(model, tokenizer, texts)


def zero_shot_scores(
    model: GPT, tokenizer: spm.SentencePieceProcessor, tokens_url: str, cfg: EvalConfig
) -> dict[str, TaskScore]:
    """The zero-shot tasks on items built from a seeded sample of the test split's windows (the same items for every
    checkpoint of a run). The sample is bounded by the items asked for, not by the split: decoding and language id
    of a whole test split would cost every evaluation time that grows with the corpus."""
    windows = load_sequences(tokens_url, "test", model.args.max_seq_len).ids
    sample = np.random.default_rng(cfg.seed).permutation(len(windows))[: WINDOWS_PER_ITEM * cfg.zero_shot_items]
    texts = documents_of(windows[np.sort(sample)], tokenizer.eos_id(), tokenizer)
    return score_items(model, tokenizer, build_items(texts, cfg.zero_shot_items, cfg.seed))


def run_of(checkpoint_url: str) -> str:
    """The training output a checkpoint belongs to (`<run>/checkpoints/step-N` → `<run>`)."""
    return checkpoint_url.rstrip("/").rsplit("/", 2)[0]


def _previous_result(
    url: str, step: int, tokens_url: str | None, tokenizer_url: str | None, cfg: EvalConfig
) -> EvalResult | None:
    """The checkpoint's recorded evaluation, if any. The first evaluation stands: one made with other settings or
    inputs is returned too (with a warning), so a pipeline run and the event-triggered deployment never evaluate
    one checkpoint twice under different configs."""
    stored_url = evaluation_url(run_of(url), step)
    if not storage.exists(stored_url):
        return None
    stored = EvalResult.model_validate(storage.read_json(stored_url))
    same_inputs = tokens_url in (None, stored.tokens_url) and tokenizer_url in (None, stored.tokenizer_url)
    if not same_inputs or stored.config != cfg.model_dump(mode="json"):
        log.warning(
            "%s was already evaluated with other settings or inputs; that evaluation stands (reevaluate to replace it)",
            url,
        )
    return stored


def evaluate_checkpoint(
    checkpoint_url: str,
    tokens_url: str | None = None,
    tokenizer_url: str | None = None,
    cfg: EvalConfig | None = None,
    reevaluate: bool = False,
    on_phase: Callable[[str], None] | None = None,
) -> EvalResult:
    """Evaluate a checkpoint (or the latest one under a training output) once, and record the result for good.
    ``on_phase`` hears each part as it starts (`EVALUATION_PHASES`, those the settings ask for), for a progress
    bar; each is logged too.

    The result goes to `eval.json` beside the checkpoint and to `<run>/evaluations/step-N.json`, which outlives
    the checkpoint; a failure is recorded as `step-N.failed.json` with its reason. Either record lets the run's
    pruning delete the checkpoint, which happens right after. Token shards and tokenizer default to the ones the
    checkpoint was trained with. Runs on the GPU when there is one, else on CPU with ``cfg.num_threads`` threads.
    """
    cfg = cfg or EvalConfig()
    url = resolve_checkpoint(checkpoint_url)
    step = int(read_meta(url)["step"])
    previous = None if reevaluate else _previous_result(url, step, tokens_url, tokenizer_url, cfg)
    if previous is not None:
        return previous
    try:
        result = _evaluate(url, tokens_url, tokenizer_url, cfg, on_phase or (lambda phase: None))
    except Exception as error:
        failure = {"checkpoint_url": url, "step": step, "error": f"{type(error).__name__}: {error}"}
        storage.write_json(evaluation_url(run_of(url), step, failed=True), failure)
        _prune_after_evaluation(url)
        raise
    record = result.model_dump(mode="json")
    storage.write_json(storage.join(url, "eval.json"), record)
    storage.write_json(evaluation_url(run_of(url), step), record)
    _prune_after_evaluation(url)
    return result


def _prune_after_evaluation(url: str) -> None:
    """An evaluated checkpoint may be the one pruning was waiting for (the newest is never deleted)."""
    deleted = prune_as_configured(run_of(url), read_meta(url).get("config", {}))
    if deleted:
        log.info("pruned checkpoints %s of %s (evaluated, beyond the ones kept)", deleted, run_of(url))


def phases_of(cfg: EvalConfig, causal: bool = True) -> list[str]:
    """The parts an evaluation under ``cfg`` runs, in order: what a progress bar counts."""
    wanted = {"zero-shot tasks": causal and bool(cfg.zero_shot_items), "probes": causal and bool(cfg.probe_samples),
              "long context": causal and bool(cfg.long_context_lengths), "samples": causal}  # fmt: skip
    return [*(f"{split} split" for split in SPLITS), *(phase for phase in EVALUATION_PHASES if wanted.get(phase))]


EVALUATION_PHASES = ("zero-shot tasks", "probes", "long context", "samples")


def _evaluate(
    url: str, tokens_url: str | None, tokenizer_url: str | None, cfg: EvalConfig, on_phase: Callable[[str], None]
) -> EvalResult:
    started = time.perf_counter()

    def phase(name: str) -> None:
        log.info("evaluating %s: %s", url, name)
        on_phase(name)

    torch.set_num_threads(cfg.num_threads)
    keep_freed_memory()
    model, meta = load_model(url, "cuda" if torch.cuda.is_available() else "cpu")
    tokens_url = tokens_url or saved_setting(meta, "tokens_url")
    tokenizer_url = tokenizer_url or meta["tokenizer_url"]
    tokenizer, sha256 = load_tokenizer(tokenizer_url)
    if sha256 != meta["tokenizer_sha256"]:
        raise ValueError(f"{tokenizer_url} is not the tokenizer {url} was trained with")
    byte_lengths = token_byte_lengths(tokenizer)
    seq_len = int(meta["model_args"]["max_seq_len"])
    splits = {}
    for split in SPLITS:
        phase(f"{split} split")
        sequences = load_sequences(tokens_url, split, seq_len)
        masking = masking_of(model.args, float(saved_setting(meta, "mask_rate", 0.15)))
        splits[split] = score_split(model, sequences, byte_lengths, cfg, masking)
    causal = model.args.causal  # a masked-objective model neither generates nor scores continuations
    wanted = phases_of(cfg, causal)
    tasks, generation, probes, long_context, samples = {}, None, None, None, []
    if "zero-shot tasks" in wanted:
        phase("zero-shot tasks")
        tasks = zero_shot_scores(model, tokenizer, tokens_url, cfg)
    if "probes" in wanted:
        phase("probes")
        generation, probes = probe_generations(model, tokenizer, cfg)
    if "long context" in wanted:
        phase("long context")
        long_context, _ = evaluate_checkpoint_long_context(url, cfg.long_context_lengths, tokens_url=tokens_url)
    if "samples" in wanted:
        phase("samples")
        samples = generate_samples(model, tokenizer, cfg)
    return EvalResult(
        checkpoint_url=url,
        step=int(meta["step"]),
        tokens_url=tokens_url,
        tokenizer_url=tokenizer_url,
        splits=splits,
        samples=samples,
        tasks=tasks,
        generation=generation,
        probes=probes,
        long_context=long_context,
        seconds=round(time.perf_counter() - started, 3),
        config=cfg.model_dump(mode="json"),
        fed=fed_of(meta),
    )


def summary_lines(result: EvalResult) -> list[str]:
    """A few lines a person reads after an evaluation: perplexity and bits per byte by split and domain, the
    zero-shot accuracies against chance, the probes' figures, how long it took and where the record lies."""
    lines = [f"step {result.step} of {result.checkpoint_url} ({result.seconds:.0f} s)"]
    for split, scored in result.splits.items():
        if scored.overall is None:
            lines.append(f"  {split}: no sequences")
            continue
        figures = {"all": scored.overall, **scored.domains}
        shown = ", ".join(f"{name}={m.perplexity:.1f}" for name, m in figures.items())
        bpb = scored.overall.bits_per_byte
        lines.append(f"  {split} perplexity {shown}" + (f"; {bpb:.3f} bits per byte" if bpb is not None else ""))
    overall = {name: t for name, t in result.tasks.items() if name.endswith("/all")} or result.tasks
    if overall:  # each task over every language (eval.json has them by language)
        tasks = ", ".join(f"{name} {t.accuracy:.2f} (chance {t.chance:.2f})" for name, t in overall.items())
        lines.append(f"  zero-shot accuracy: {tasks}")
    if result.generation is not None:
        g = result.generation
        lines.append(f"  samples: distinct-2 {g.distinct_2:.2f}, repeated 3-grams {g.repeated_3gram_rate:.2f}")
    lines.append(f"  recorded: {storage.join(result.checkpoint_url, 'eval.json')}")
    return lines

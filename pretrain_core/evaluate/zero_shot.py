"""Zero-shot tasks built from held-out text, scored by the model's log-probabilities (no generation, no
downloads), in the style of LAMBADA and of DCLM CORE's multiple-choice tasks.

- `last_word`: a passage cut before the last word of one of its sentences; correct when the model's most likely
  next tokens, read one by one with the true ones before them, spell exactly that word (LAMBADA's exact match).
- `continuation`: a passage and four candidate next sentences, the true one and three taken from other held-out
  documents of the same language; the model picks the one with the highest log-probability per character
  (lm-eval's `acc_norm`, by characters). Reported also as centred accuracy, (acc - 1/4) / (1 - 1/4): 0 is
  chance, 1 is perfect, so tasks with different numbers of choices average fairly (DCLM CORE).

Items come from the test split's token sequences, decoded and cut at end-of-document ids, so they are built from
text no checkpoint trained on and follow the corpus's own languages; `en` and `zh` get items of their own, every
other language one pooled group. Everything is seeded: the same shards and seed give the same items.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F
from pydantic import BaseModel

from pretrain_core.clean.config import LangIdConfig
from pretrain_core.clean.langid import detect_language
from pretrain_core.train.model.gpt import GPT

CHOICES = 4
GROUP_LANGUAGES = ("en", "zh")  # languages with groups of their own; the rest are pooled as "other"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-ÖØ-Þ\"'“(\u4e00-\u9fff])|(?<=[。！？])")
_LATIN_LAST_WORD = re.compile(r"^(?P<context>.*\S)\s+(?P<word>[^\W\d_]{3,})(?P<end>[.!?]['\"”’)]*)$", re.DOTALL)
_HAN_LAST_WORD = re.compile(
    r"^(?P<context>.*[\u4e00-\u9fff].*?)(?P<word>[\u4e00-\u9fff]{2})(?P<end>[。！？])$", re.DOTALL
)
MIN_CONTEXT_CHARS = 80
MAX_CONTEXT_CHARS = 600
MAX_CHOICE_CHARS = 160


@dataclass(frozen=True)
class TaskItem:
    task: str  # last_word | continuation
    language: str  # en | zh | other
    context: str
    choices: tuple[str, ...]  # last_word: the one target (with its leading space, if any)
    answer: int


class TaskScore(BaseModel):
    items: int
    accuracy: float
    stderr: float  # binomial standard error of the accuracy
    centred_accuracy: float | None  # multiple choice: (acc - 1/k) / (1 - 1/k)
    chance: float


def documents_of(windows: np.ndarray, eos_id: int, tokenizer: spm.SentencePieceProcessor) -> list[str]:
    """Contiguous text of (N, T+1) token windows: each window on its own, cut at end-of-document ids.

    Shards store a split's windows shuffled and record no window's place in its stream, so windows are never
    joined: a document longer than a window gives window-sized pieces, each real contiguous text (a guessed join
    could put one document's sentence after another's and make a wrong answer)."""
    texts = []
    for row in windows:
        for piece in np.split(row, np.flatnonzero(row == eos_id)):
            piece = piece[piece != eos_id]
            if len(piece):
                texts.append(tokenizer.decode(piece.tolist()).strip())
    return texts


def sentences_of(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _group(text: str, cfg: LangIdConfig) -> str:
    lang = detect_language(text, cfg).lang
    return lang if lang in GROUP_LANGUAGES else "other"


def build_items(texts: Sequence[str], per_group: int, seed: int) -> list[TaskItem]:
    """Up to ``per_group`` items of each task and language group, from held-out texts."""
    rng = np.random.default_rng(seed)
    cfg = LangIdConfig()
    by_group: dict[str, list[list[str]]] = defaultdict(list)
    for text in texts:
        sentences = sentences_of(text)
        if len(sentences) >= 2 and len(text) >= MIN_CONTEXT_CHARS:
            by_group[_group(text, cfg)].append(sentences)
    items: list[TaskItem] = []
    for group, docs in sorted(by_group.items()):
        order = rng.permutation(len(docs))
        items += _last_word_items([docs[i] for i in order], group, per_group)
        items += _continuation_items([docs[i] for i in order], group, per_group, rng)
    return items


def _context(sentences: list[str], end: int, joiner: str) -> str:
    """The sentences before ``end``, trimmed at the front to the last MAX_CONTEXT_CHARS characters."""
    return joiner.join(sentences[:end])[-MAX_CONTEXT_CHARS:].lstrip()


def _last_word_items(docs: list[list[str]], group: str, limit: int) -> list[TaskItem]:
    items: list[TaskItem] = []
    for sentences in docs:
        if len(items) == limit:
            break
        joiner = "" if group == "zh" else " "
        for end in range(len(sentences), 0, -1):
            pattern = _HAN_LAST_WORD if group == "zh" else _LATIN_LAST_WORD
            match = pattern.match(sentences[end - 1])
            if match is None:
                continue
            context = _context([*sentences[: end - 1], match["context"]], end, joiner)
            if len(context) >= MIN_CONTEXT_CHARS:
                word = match["word"] if group == "zh" else " " + match["word"]
                items.append(TaskItem("last_word", group, context, (word,), 0))
                break
    return items


def _continuation_items(docs: list[list[str]], group: str, limit: int, rng: np.random.Generator) -> list[TaskItem]:
    joiner = "" if group == "zh" else " "
    candidates = []
    for sentences in docs:
        for end in range(len(sentences) - 1, 0, -1):
            context = _context(sentences, end, joiner)
            follow = sentences[end]
            if len(context) >= MIN_CONTEXT_CHARS and 20 <= len(follow) <= MAX_CHOICE_CHARS:
                candidates.append((context, follow))
                break
    items = []
    for index, (context, follow) in enumerate(candidates[:limit]):
        others = [c[1] for i, c in enumerate(candidates) if i != index and c[1] != follow]
        if len(others) < CHOICES - 1:
            break
        picked = [others[i] for i in rng.choice(len(others), CHOICES - 1, replace=False)]
        answer = int(rng.integers(CHOICES))
        choices = [*picked[:answer], follow, *picked[answer:]]
        items.append(TaskItem("continuation", group, context, tuple(joiner + c for c in choices), answer))
    return items


def continuation_scores(
    model: GPT, tokenizer: spm.SentencePieceProcessor, context: str, continuation: str
) -> tuple[float, bool]:
    """Log-probability of ``continuation`` after ``context``, and whether every one of its tokens was the model's
    most likely next token (greedy exact match)."""
    context_ids = tokenizer.encode(context)
    full = tokenizer.encode(context + continuation)
    shared = 0
    while shared < min(len(context_ids), len(full)) and context_ids[shared] == full[shared]:
        shared += 1
    return score_tokens(model, full, max(1, min(shared, len(full) - 1)))


@torch.no_grad()
def score_tokens(model: GPT, ids: Sequence[int], start: int) -> tuple[float, bool]:
    """Summed log-probability of ``ids[start:]`` given what precedes them, and whether each was the most likely
    next token. Only the last window's worth of ids is read when they overflow the model's window."""
    kept = list(ids[-(model.args.max_seq_len + 1) :])
    start = max(1, start - (len(ids) - len(kept)))
    tensor = torch.tensor([kept], device=next(model.parameters()).device)
    log_probs = F.log_softmax(model(tensor[:, :-1]).float(), dim=-1)[0, start - 1 :]  # (scored, V)
    targets = tensor[0, start:]
    chosen = log_probs.gather(1, targets[:, None])[:, 0]
    return float(chosen.sum()), bool((log_probs.argmax(dim=-1) == targets).all())


def document_logprob(model: GPT, ids: Sequence[int]) -> float:
    """log p(ids[1:] | ids[0]) of a whole document (ids[0]: the id it follows, end-of-document), every token
    predicted once, each window of the model with as much context as it takes (lm-eval's rolling loglikelihood)."""
    window = model.args.max_seq_len
    total = 0.0
    for first in range(1, len(ids), window):
        end = min(first + window, len(ids))
        piece = ids[max(0, end - window - 1) : end]
        total += score_tokens(model, piece, len(piece) - (end - first))[0]
    return total


def score_items(model: GPT, tokenizer: spm.SentencePieceProcessor, items: Sequence[TaskItem]) -> dict[str, TaskScore]:
    """Accuracy per `task/language` group, and per task over every language ("task/all")."""
    correct: dict[str, list[bool]] = defaultdict(list)
    for item in items:
        if item.task == "last_word":
            _, right = continuation_scores(model, tokenizer, item.context, item.choices[0])
        else:
            per_char = [
                continuation_scores(model, tokenizer, item.context, choice)[0] / max(len(choice.strip()), 1)
                for choice in item.choices
            ]
            right = int(np.argmax(per_char)) == item.answer
        for key in (f"{item.task}/{item.language}", f"{item.task}/all"):
            correct[key].append(right)
    scores = {}
    for key, results in sorted(correct.items()):
        n, accuracy = len(results), float(np.mean(results))
        chance = 0.0 if key.startswith("last_word") else 1 / CHOICES
        centred = (accuracy - chance) / (1 - chance) if chance else None
        scores[key] = TaskScore(
            items=n,
            accuracy=accuracy,
            stderr=math.sqrt(accuracy * (1 - accuracy) / n),
            centred_accuracy=centred,
            chance=chance,
        )
    return scores

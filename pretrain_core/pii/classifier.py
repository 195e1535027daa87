"""The learned detector for what patterns miss: a token tagger for person names and street addresses.

A multinomial logistic regression over token, context and name-list features (`tokens.Featurizer`) labels each
candidate token as the first or a further token of a person or an address, or neither; runs of tagged tokens
become spans, which shape checks then vet. It is linear and small on purpose: it trains in seconds, and
prediction for a whole shard is one vocabulary lookup per token type plus a few numpy operations. The model
(vocabularies, name lists, sorted feature keys, float32 weights) is pickled as plain lists and numpy arrays, so
loading it runs no project code, and equal training data gives equal bytes.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse
from sklearn.linear_model import LogisticRegression

from pretrain_core.pii.spans import Span
from pretrain_core.pii.tokens import FEATURE_KINDS, Featurizer, Token, lexical, token_texts, tokenize
from pretrain_core.pii.training_data import Example

LABELS = ("O", "person", "address")
# Trained classes: the first token of a name or address is told apart from the rest, which separates "the
# word after a comma that starts an address" from "a word inside a name" far better than one class per kind.
_CLASSES = ("O", "B-person", "I-person", "B-address", "I-address")
_CLASS_LABEL = np.array([0, 1, 1, 2, 2])
_FORMAT = 1
# Spans grow from tokens at the threshold through neighbours at this fraction of it (hysteresis), so a confident
# surname pulls in a less certain first name instead of leaving half a name unredacted.
_CONTINUE_FRACTION = 0.5
# Non-candidate tokens a span may bridge: at most this many, and for names only particles ("van", "de"), the
# dot of an initial ("J."), hyphens and the Japanese name separator.
_MAX_GAP = {"person": 2, "address": 5}
_NAME_CONNECTORS = {"・", "-", "'"}
_NAME_PARTICLES = {
    "van", "von", "der", "den", "de", "di", "da", "du", "la", "le", "del", "della", "dos", "das", "ten", "ter",
    "bin", "ibn", "al", "zu", "y",
}  # fmt: skip
# For addresses also lower-case words ("rue de la"), commas and the signs of flat and house numbers; not table
# rules or brackets, which chain unrelated cells together.
_ADDRESS_CONNECTORS = {",", ".", "-", "/", "#", "'", "°", "º", "、", "，"}
# Chinese and Japanese addresses name a province, city, district, street or block.
_CJK_ADDRESS_MARK = re.compile(r"[省市区县镇乡村路街道巷号弄座楼室都府県郡町丁目番地]")
_TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "herr", "frau", "m", "mme", "mlle", "monsieur", "madame"}


@dataclass(frozen=True)
class TaggedText:
    text: str
    tokens: list[str]
    candidates: np.ndarray  # token indices of the candidate tokens
    probabilities: np.ndarray  # (len(candidates), len(LABELS))


class NameAddressTagger:
    """A featurizer, the feature keys it was trained on (sorted), their weights (row 0: unknown, zero) and bias."""

    def __init__(self, featurizer: Featurizer, keys: np.ndarray, weights: np.ndarray, bias: np.ndarray) -> None:
        if weights.shape != (len(keys) + 1, len(_CLASSES)) or bias.shape != (len(_CLASSES),):
            raise ValueError(f"tagger weights {weights.shape} / bias {bias.shape} do not fit {len(keys)} features")
        self.featurizer = featurizer
        self.keys = keys.astype(np.int64)
        self.weights = weights.astype(np.float32)
        self.bias = bias.astype(np.float32)

    @classmethod
    def fit(
        cls,
        examples: Sequence[Example],
        first_names: Sequence[str],
        last_names: Sequence[str],
        c: float = 3.0,
        min_count: int = 2,
    ) -> NameAddressTagger:
        """Train on labelled examples with a gazetteer of name lists; words and features seen fewer than
        `min_count` times are dropped (they only overfit). lbfgs on a fixed matrix is deterministic, so equal
        inputs give an equal model."""
        featurizer = Featurizer.learn([e.text for e in examples], min_count, first_names, last_names)
        keys, candidates = featurizer.candidate_keys([token_texts(e.text) for e in examples])
        labels = np.concatenate(
            [_token_labels(tokenize(e.text), e.spans)[c] for e, c in zip(examples, candidates, strict=True)]
        )
        unique, counts = np.unique(keys, return_counts=True)
        kept = unique[counts >= min_count]
        columns = _rows(kept, keys)
        matrix = scipy.sparse.csr_matrix(
            (np.ones(columns.size), columns.ravel(), np.arange(0, columns.size + 1, len(FEATURE_KINDS))),
            shape=(len(keys), len(kept) + 1),
        )
        matrix.sum_duplicates()
        model = LogisticRegression(C=c, max_iter=300, tol=1e-4)
        model.fit(matrix, labels)
        if list(model.classes_) != list(range(len(_CLASSES))):
            raise ValueError(f"training data lacks some labels: has {sorted(model.classes_)}")
        weights = model.coef_.T.copy()
        weights[0] = 0.0
        return cls(featurizer, kept, weights, model.intercept_)

    def to_bytes(self) -> bytes:
        f = self.featurizer
        payload = {"format": _FORMAT, "labels": list(_CLASSES), "featurizer": f.__getstate__()}
        payload |= {"keys": self.keys, "weights": self.weights, "bias": self.bias}
        return pickle.dumps(payload, protocol=5)

    @classmethod
    def from_bytes(cls, data: bytes) -> NameAddressTagger:
        p = pickle.loads(data)
        if p.get("format") != _FORMAT or p.get("labels") != list(_CLASSES):
            raise ValueError("not a PII tagger model of this version: refit it")
        return cls(Featurizer(**p["featurizer"]), p["keys"], p["weights"], p["bias"])

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        """Label probabilities of every candidate token of every text, computed for the batch at once."""
        token_lists = [token_texts(text) for text in texts]
        keys, candidates = self.featurizer.candidate_keys(token_lists)
        rows = _rows(self.keys, keys)
        logits = np.tile(self.bias, (len(rows), 1))
        for kind in range(rows.shape[1]):  # one feature kind at a time: no (tokens x kinds x classes) array
            logits += self.weights[rows[:, kind]]
        logits -= logits.max(axis=1, keepdims=True)
        per_class = np.exp(logits)
        per_class /= per_class.sum(axis=1, keepdims=True)
        probabilities = np.zeros((len(per_class), len(LABELS)), dtype=np.float32)
        np.add.at(probabilities.T, _CLASS_LABEL, per_class.T)
        out, offset = [], 0
        for text, tokens, indices in zip(texts, token_lists, candidates, strict=True):
            out.append(TaggedText(text, tokens, indices, probabilities[offset : offset + len(indices)]))
            offset += len(indices)
        return out

    def find_spans(self, texts: Sequence[str], threshold: float) -> list[list[Span]]:
        """Person and address spans per text (see `decode_spans`)."""
        return [decode_spans(tagged, threshold) for tagged in self.tag(texts)]


def _rows(known: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Weight row of each key: 1 + its position among the known keys, 0 when unknown."""
    if not len(known):
        return np.zeros(keys.shape, dtype=np.int64)
    positions = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    return np.where(known[positions] == keys, positions + 1, 0)


def _token_labels(tokens: list[Token], spans: Sequence[Span]) -> np.ndarray:
    labels = np.zeros(len(tokens), dtype=np.int64)
    starts = np.array([t.start for t in tokens], dtype=np.int64)
    ends = np.array([t.end for t in tokens], dtype=np.int64)
    for span in spans:
        inside = np.flatnonzero((starts >= span.start) & (ends <= span.end))
        if len(inside):
            labels[inside] = _CLASSES.index(f"I-{span.type}")
            labels[inside[0]] = _CLASSES.index(f"B-{span.type}")
    return labels


def decode_spans(tagged: TaggedText, threshold: float) -> list[Span]:
    """Spans of one label: runs of candidate tokens at `_CONTINUE_FRACTION * threshold` or more, bridging short
    connectors, that contain at least one token at `threshold`. Texts with no such token cost nothing more."""
    weak = threshold * _CONTINUE_FRACTION
    best = tagged.probabilities.argmax(axis=1)
    confidence = tagged.probabilities.max(axis=1)
    tagged_rows = np.flatnonzero((best > 0) & (confidence >= weak))
    if not len(tagged_rows) or confidence[tagged_rows].max() < threshold:
        return []
    words = tagged.tokens
    starts = _token_starts(tagged.text, words[: int(tagged.candidates[tagged_rows[-1]]) + 1])
    runs: list[tuple[str, int, int]] = []  # label, first and last token index of runs with a strong token
    run: list[int] = []
    run_label, run_strong, previous_row = "", False, -1
    for row in tagged_rows.tolist():
        index, label = int(tagged.candidates[row]), LABELS[best[row]]
        contiguous = row == previous_row + 1  # no untagged candidate in between
        if run and not (contiguous and label == run_label and _bridgeable(tagged, starts, run[-1], index, label)):
            if run_strong:
                runs.append((run_label, run[0], run[-1]))
            run, run_strong = [], False
        run.append(index)
        run_label, previous_row = label, row
        run_strong = run_strong or confidence[row] >= threshold
    if run_strong:
        runs.append((run_label, run[0], run[-1]))
    spans = [Span(starts[first], starts[last] + len(words[last]), label) for label, first, last in runs]
    return [span for span, (_, first, _) in zip(spans, runs, strict=True) if _plausible(tagged, span, first)]


def _token_starts(text: str, tokens: list[str]) -> list[int]:
    """Offsets of the tokens, found in order in the text (only whitespace lies between tokens)."""
    starts = []
    position = 0
    find = text.find
    for token in tokens:
        position = find(token, position)
        starts.append(position)
        position += len(token)
    return starts


def _plausible(tagged: TaggedText, span: Span, first: int) -> bool:
    """Shape checks a linear tagger cannot learn.

    A Latin-script address has a number, a capitalised word and at least three tokens (a lone heading is not
    one, nor a row of an upper-case character table) and no sentence ends inside it; a CJK address names an
    administrative unit and stays on one line. Tables of numbers and words chain into long runs, which are
    neither. A name has at most eight tokens, or two to six CJK characters (a single character is a word in
    classical prose), and a single Latin word is a name only after a title ("Dr. Weber"), since capitalised
    words start every sentence.
    """
    covered = tagged.text[span.start : span.end]
    words = token_texts(covered)
    cjk = any(lexical(t).shape in ("han", "kata") for t in words)
    if span.type == "address":
        if cjk:
            return 5 <= len(covered) <= 60 and "\n" not in covered and bool(_CJK_ADDRESS_MARK.search(covered))
        has_number = any(t[0].isdigit() for t in words)
        has_word = any(lexical(t).shape == "Xx" for t in words)
        return has_number and has_word and 3 <= len(words) <= 30 and ".\n" not in covered
    if cjk:
        return 2 <= len(covered.replace(" ", "").replace("\u3000", "")) <= 6
    if len(words) > 1:
        return len(words) <= 8
    return any(word.lower() in _TITLES for word in tagged.tokens[max(0, first - 2) : first])


def _bridgeable(tagged: TaggedText, starts: list[int], last: int, index: int, label: str) -> bool:
    gap = tagged.tokens[last + 1 : index]
    if len(gap) > _MAX_GAP[label]:
        return False
    if label == "address":
        return all(t in _ADDRESS_CONNECTORS or lexical(t).shape in ("x", "x_short", "hira") for t in gap)
    if "\n" in tagged.text[starts[last] : starts[index]]:
        return False
    previous = tagged.tokens[last]
    for token in gap:  # a particle ("van"), a hyphen or the Japanese separator, or the dot of an initial ("J.")
        is_initial_dot = token == "." and len(previous) == 1 and previous.isupper()
        if not (token.lower() in _NAME_PARTICLES or token in _NAME_CONNECTORS or is_initial_dot):
            return False
        previous = token
    return True

"""Skeleton tokenisation: each word is kept if it is one of the reference's most frequent words, else replaced by
its shape (lowercase, capitalised, all-caps, other letters, number, Han, kana, symbol).

A lexical n-gram model trained on a small reference mostly backs off to unigrams on unfamiliar text, so it
cannot tell shuffled real words from fluent text about an unfamiliar topic: both look like rare words in rare
orders. The skeleton keeps what carries word order in every register (function words, punctuation, the
capitalisation and number pattern) and drops what is topical, so an n-gram model over it learns the syntax of the
reference from little text and judges word order independently of vocabulary. Word salad, keyword lists, menus
and obfuscated code break the skeleton; unfamiliar but well-formed text does not.

Words are runs of letters (with their combining marks) or of digits; every Han or kana character, and every
other non-space character, is a token of its own. Kept words match case-insensitively. Each token also says
whether it follows whitespace or is glued to the token before it (punctuation, minified code). Tokenisation runs
on code point arrays with numpy: no per-word Python, so it costs a fraction of the lexical model's SentencePiece
pass.
"""

from __future__ import annotations

import json
import unicodedata
from functools import cache

import numpy as np

from pretrain_core.quality.lookup import KeyTable
from pretrain_core.quality.tokenizers import BOS, EOS, TokenizerKind

FORMAT = "pretrain-quality-skeleton"
SHAPES = ("low", "cap", "upper", "letter", "number", "han", "kana", "symbol")
# Character classes.
_NEWLINE, _SPACE, _LOWER, _UPPER, _LETTER, _MARK, _DIGIT, _HAN, _KANA, _SYMBOL = range(10)
_JOINS_WORD = np.array([c in (_LOWER, _UPPER, _LETTER, _MARK) for c in range(10)])
# Shape of a token by the class of its first character (-1: never starts a token).
_FIRST_SHAPE = np.array(
    [-1, -1, *(SHAPES.index(shape) for shape in ("low", "cap", "letter", "letter", "number", "han", "kana", "symbol"))]
)
_PRIME = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@cache
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """Class and lowercase mapping of every Basic Multilingual Plane code point (built once per process)."""
    classes = np.empty(0x10000, dtype=np.uint8)
    lower = np.arange(0x10000, dtype=np.uint32)
    for cp in range(0x10000):
        char = chr(cp)
        classes[cp] = _classify(char)
        folded = char.lower()
        if len(folded) == 1 and ord(folded) < 0x10000:
            lower[cp] = ord(folded)
    return classes, lower


def _classify(char: str) -> int:
    if char == "\n":
        return _NEWLINE
    if char.isspace():
        return _SPACE
    cp = ord(char)
    if 0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0xFF66 <= cp <= 0xFF9D:
        return _KANA
    if 0x3400 <= cp <= 0x4DBF or 0x4E00 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF:
        return _HAN
    category = unicodedata.category(char)
    if category == "Lu" or category == "Lt":
        return _UPPER
    if category == "Ll":
        return _LOWER
    if category.startswith("L"):
        return _LETTER
    if category.startswith("M"):
        return _MARK
    if category == "Nd":
        return _DIGIT
    return _SYMBOL


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _char_classes(cps: np.ndarray) -> np.ndarray:
    classes, _ = _tables()
    out = classes[np.minimum(cps, 0xFFFF)]
    astral = cps > 0xFFFF
    if astral.any():  # CJK extensions B-H are Han; everything else up there (emoji, ...) is a symbol
        out[astral] = np.where((cps[astral] >= 0x20000) & (cps[astral] <= 0x3FFFF), _HAN, _SYMBOL)
    return out


class _Words:
    """Token boundaries, shapes and case-folded hashes of a text's words."""

    def __init__(self, text: str) -> None:
        cps = _code_points(text)
        classes = _char_classes(cps)
        previous = np.concatenate([[_SPACE], classes[:-1]]).astype(np.uint8)
        continues = _JOINS_WORD[classes] & _JOINS_WORD[previous] | (classes == _DIGIT) & (previous == _DIGIT)
        in_token = (classes != _SPACE) & (classes != _NEWLINE)
        starts = in_token & ~continues
        self.starts = np.flatnonzero(starts)
        chars = np.flatnonzero(in_token)
        token_of = np.cumsum(starts)[chars] - 1
        self.lengths = np.bincount(token_of, minlength=len(self.starts))
        first_class = classes[self.starts]
        shapes = _FIRST_SHAPE[first_class]
        # A capitalised word of two or more letters without a lowercase letter is all-caps (an acronym).
        lowercase = np.bincount(token_of, weights=classes[chars] == _LOWER, minlength=len(self.starts))
        acronym = (first_class == _UPPER) & (self.lengths > 1) & (lowercase == 0)
        self.shapes = np.where(acronym, SHAPES.index("upper"), shapes).astype(np.int64)
        _, lower = _tables()
        self._folded = np.where(cps[chars] > 0xFFFF, cps[chars], lower[np.minimum(cps[chars], 0xFFFF)])
        self._first_char = np.cumsum(self.lengths) - self.lengths  # of each token, in `chars` order
        offsets = np.arange(len(chars)) - self._first_char[token_of]
        powers = np.cumprod(np.full(int(offsets.max(initial=0)) + 1, _PRIME, dtype=np.uint64))
        terms = (self._folded.astype(np.uint64) + np.uint64(1)) * powers[offsets]
        sums = np.add.reduceat(terms, self._first_char) if len(terms) else terms
        self.hashes = _finalise(sums, self.lengths.astype(np.uint64))
        self.line_of = np.cumsum(classes == _NEWLINE)[self.starts]
        # Whether each token follows whitespace (or starts a line) or is glued to the previous one: punctuation
        # and minified code differ from prose and formatted code in exactly this.
        self.spaced = (previous[self.starts] == _SPACE) | (previous[self.starts] == _NEWLINE)

    def word(self, index: int) -> str:
        """The case-folded text of one token (used only to name the kept words when training)."""
        start = int(self._first_char[index])
        return "".join(map(chr, self._folded[start : start + int(self.lengths[index])].tolist()))


def _finalise(sums: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    x = sums ^ (lengths * _MIX)
    x ^= x >> np.uint64(31)
    x *= _MIX
    x ^= x >> np.uint64(29)
    return x | np.uint64(1)


class SkeletonTokenizer:
    """Ids 0-2 are `<unk>`, `<s>`, `</s>` (as in the other tokenisers), then the kept words, then the shapes."""

    kind: TokenizerKind = "skeleton"
    bos, eos = BOS, EOS

    def __init__(self, words: list[str]) -> None:
        self.words = list(words)
        self._glued = 3 + len(self.words) + len(SHAPES)  # offset of the glued variant of every id
        self.vocab_size = 2 * self._glued
        hashes = _Words("\n".join(self.words)).hashes if self.words else np.zeros(0, dtype=np.uint64)
        if len(hashes) != len(self.words):
            raise ValueError("skeleton words must be single words")
        order = np.argsort(hashes)
        self._sorted_ids = order + 3
        self._table = KeyTable(hashes[order])

    @classmethod
    def train(cls, lines: list[str], size: int) -> SkeletonTokenizer:
        """Keep the ``size`` most frequent words of the lines (case-folded; ties broken by the word)."""
        words = _Words("\n".join(lines))
        _, first, counts = np.unique(words.hashes, return_index=True, return_counts=True)
        ranked = np.argsort(-counts, kind="stable")
        # Counts tie at the cut: read the words of every candidate with a count at least the size-th largest.
        floor = counts[ranked[min(size, len(ranked)) - 1]] if size and len(ranked) else np.inf
        candidates = [(-int(counts[i]), words.word(int(first[i]))) for i in ranked if counts[i] >= floor]
        return cls([word for _, word in sorted(candidates)[:size]])

    def encode(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        words = _Words("\n".join(lines))
        index = self._table.find(words.hashes)
        ids = np.where(index >= 0, self._sorted_ids[np.maximum(index, 0)], 3 + len(self.words) + words.shapes)
        ids = np.where(words.spaced, ids, ids + self._glued)
        return ids.astype(np.int64), np.bincount(words.line_of, minlength=len(lines)).astype(np.int64)

    def kept_shares(self, ids: np.ndarray, doc_of_id: np.ndarray, docs: int) -> np.ndarray:
        """Share of each document's tokens that are kept words (from its `encode` ids and the document of each
        id): the reference's commonest words, which real prose of its languages is full of; where they are few,
        the skeleton is mostly shapes and its perplexity says little."""
        base = np.where(ids >= self._glued, ids - self._glued, ids)
        kept = (base >= 3) & (base < 3 + len(self.words))
        tokens = np.bincount(doc_of_id, minlength=docs)
        kept_tokens = np.bincount(doc_of_id, weights=kept, minlength=docs)
        return np.divide(kept_tokens, tokens, out=np.zeros(docs), where=tokens > 0)

    def to_bytes(self) -> bytes:
        return json.dumps({"format": FORMAT, "words": self.words}, ensure_ascii=False).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> SkeletonTokenizer:
        meta = json.loads(data)
        if meta.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} file: {meta.get('format')!r}")
        return cls(meta["words"])

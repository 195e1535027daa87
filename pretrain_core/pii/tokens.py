"""Tokens and per-token features for the name/address tagger, shared by training and inference so they never drift.

Latin-script text splits into alphanumeric words (postcodes like "SW1A" stay whole) and punctuation; Chinese and
Japanese text into single characters, since names there are runs of two to four characters without spaces. Only
"candidate" tokens are scored (words starting upper-case or with a digit, Han and Katakana characters): names and
addresses are built from these, and skipping lower-case words and punctuation keeps the tagger cheap on prose.

Features are integers, not strings: each token type is looked up once in the vocabularies (word, shape, 3-letter
prefix and suffix, name gazetteer), and the features of all candidates of a batch (the word, its neighbours two
either side, their shapes, word pairs, which neighbours are known names) are then combined as int64 keys by numpy.
Tokens come as offsets and hashes from one compiled pass over the batch (`token_spans`) and find their type by its
hash, so no Python object is made per token, which makes the tagger affordable on every document.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from pretrain_core.pii.token_spans import TokenSpans, scan_token_spans

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA = "\u3040-\u30ff"
_TOKEN = re.compile(rf"[{_HAN}{_KANA}]|[^\W_{_HAN}{_KANA}]+(?:[-'’][^\W_{_HAN}{_KANA}]+)*|\S")
_IS_HAN = re.compile(rf"[{_HAN}]")

UNKNOWN, BOUNDARY = 0, 1  # reserved ids in every vocabulary
FEATURE_KINDS = (
    "w", "s", "p3", "x3", "w-1", "w+1", "w-2", "w+2", "s-1", "s+1", "s-1|s+1", "w-1|w", "w|w+1",
    "g|s", "g-1|g+1", "g-1|g|g+1",  # g: in the first-name (1) / last-name (2) gazetteer
    "d", "d-1|d|d+1", "d|w+1",  # d: where a CJK family or given name of the lists starts or continues
    "a|wL", "a|w+1",  # a: CJK characters since a family name began (0-3); wL: the word before that family name
)  # fmt: skip
_ID_BITS = 24  # vocabulary ids must stay below 2**24; a key is kind << 48 | id << 24 | id
_CACHE_LIMIT = 1_000_000  # token types remembered by a featurizer before it starts afresh
_CHAR_BITS = 21  # CJK name characters get ids below 2**21; a name of up to three of them is one int64
_CJK_NAME_LENGTHS = (2, 3)  # characters of the family and given names matched as strings
# Bits of a token's d value: first or later character of a listed family name, then of a listed given name.
_FAMILY_START, _FAMILY_INSIDE, _GIVEN_START, _GIVEN_INSIDE = 1, 2, 4, 8
_MAX_ANCHOR = 3  # a CJK name is a family name and at most three more characters


class Token(NamedTuple):
    start: int
    end: int
    text: str


class Lexical(NamedTuple):
    lower: str
    shape: str
    prefix: str  # first three letters of longer words, else ""
    suffix: str
    candidate: bool


def tokenize(text: str) -> list[Token]:
    """Tokens with their offsets (for labelling training text; tagging needs offsets only where it found some)."""
    return [Token(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


def token_texts(text: str) -> list[str]:
    """The token strings alone: what the tagger scores (offsets are only needed where it found something)."""
    return _TOKEN.findall(text)


@functools.lru_cache(maxsize=500_000)
def lexical(token: str) -> Lexical:
    """What a token looks like, independent of context (cached: word types repeat far more than they vary)."""
    first = token[0]
    if _IS_HAN.match(first):
        return Lexical(token, "han", "", "", True)
    if "\u30a0" <= first <= "\u30ff":
        return Lexical(token, "kata", "", "", True)
    if "\u3040" <= first <= "\u309f":
        return Lexical(token, "hira", "", "", False)
    if first.isdigit():
        return Lexical(token, f"d{min(len(token), 6)}" if token.isdigit() else "mix", "", "", True)
    lower = token.lower()
    affixes = (lower[:3], lower[-3:]) if len(token) > 3 else ("", "")
    if first.isupper():
        has_digit = any(c.isdigit() for c in token)
        shape = "mix" if has_digit else "X" if len(token) == 1 else "XX" if token.isupper() else "Xx"
        return Lexical(lower, shape, *affixes, True)
    if first.isalpha():
        return Lexical(lower, "x" if len(token) > 4 else "x_short", *affixes, False)
    return Lexical(token, token, "", "", False)


def gazetteer_entries(names: Sequence[str]) -> set[str]:
    """Lower-cased names, and for Chinese and Japanese names each of their characters (they are tokens here)."""
    entries: set[str] = set()
    for name in names:
        characters = [c for c in name if _IS_HAN.match(c) or "\u30a0" <= c <= "\u30ff"]
        entries.update(characters or name.lower().split())
    return entries


class Featurizer:
    """Vocabularies learned from training text (word, shape, affix) and name lists (a gazetteer of first and
    last names, matched lower-cased; for Chinese and Japanese, per character); turns texts into feature keys.

    The gazetteer is what lets a linear model generalise across names: every name seen in training teaches the
    weight of "is a known first name", not only of its own word.
    """

    def __init__(
        self,
        words: list[str],
        shapes: list[str],
        affixes: list[str],
        first_names: list[str],
        last_names: list[str],
        cjk_family: list[str] | None = None,
        cjk_given: list[str] | None = None,
    ) -> None:
        if max(len(words), len(shapes), len(affixes)) + 2 >= 2**_ID_BITS:
            raise ValueError("tagger vocabulary too large for its feature keys")
        self.words, self.shapes, self.affixes = words, shapes, affixes
        self.first_names, self.last_names = first_names, last_names
        self.cjk_family, self.cjk_given = cjk_family or [], cjk_given or []
        characters = sorted({c for name in self.cjk_family + self.cjk_given for c in name})
        self._char_ids = {c: i for i, c in enumerate(characters, start=1)}
        self._family_keys = self._name_keys(self.cjk_family)
        self._given_keys = self._name_keys(self.cjk_given)
        self._word_ids = {w: i for i, w in enumerate(words, start=2)}
        self._shape_ids = {s: i for i, s in enumerate(shapes, start=2)}
        self._affix_ids = {a: i for i, a in enumerate(affixes, start=2)}
        self._first, self._last = set(first_names), set(last_names)
        self.known_first_names = frozenset(name.lower() for name in first_names)
        self.known_names = self.known_first_names | frozenset(name.lower() for name in last_names)
        self._types: list[tuple[int, ...]] = []
        self._known = np.zeros(0, dtype=np.uint64)
        self._known_rows = np.zeros(0, dtype=np.int64)
        self._table: np.ndarray | None = None
        self._reset_types()

    @classmethod
    def learn(
        cls,
        texts: Sequence[str],
        min_count: int,
        first_names: Sequence[str],
        last_names: Sequence[str],
        cjk_family: Sequence[str] = (),
        cjk_given: Sequence[str] = (),
    ) -> Featurizer:
        """Vocabularies of the words and affixes seen at least `min_count` times (rarer ones share UNKNOWN)."""
        words: Counter[str] = Counter()
        shapes: set[str] = set()
        affixes: Counter[str] = Counter()
        for text in texts:
            for token in token_texts(text):
                lex = lexical(token)
                words[lex.lower] += 1
                shapes.add(lex.shape)
                affixes.update(a for a in (lex.prefix, lex.suffix) if a)
        return cls(
            sorted(w for w, n in words.items() if n >= min_count),
            sorted(shapes),
            sorted(a for a, n in affixes.items() if n >= min_count),
            sorted(gazetteer_entries(first_names)),
            sorted(gazetteer_entries(last_names)),
            sorted(set(cjk_family)),
            sorted(set(cjk_given)),
        )

    def __getstate__(self) -> dict[str, Any]:
        names = ("words", "shapes", "affixes", "first_names", "last_names", "cjk_family", "cjk_given")
        return {name: getattr(self, name) for name in names}

    def _name_keys(self, names: list[str]) -> dict[int, np.ndarray]:
        """Sorted int64 keys of the names of each matched length (see `_char_key`)."""
        return {
            length: np.array(
                sorted({_char_key([self._char_ids[c] for c in n]) for n in names if len(n) == length}), dtype=np.int64
            )
            for length in _CJK_NAME_LENGTHS
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def _type_rows(self, texts: Sequence[str], spans: TokenSpans) -> np.ndarray:
        """The type row of every token of the batch (in the table `_table` then holds), registering unseen types:
        a type's ids are worked out once per featurizer from its first token's text, and every token finds its
        type by its hash (a binary search), so the Python cost per token stays flat however large the shard."""
        if len(self._types) >= _CACHE_LIMIT:
            self._reset_types()
        at = np.minimum(np.searchsorted(self._known, spans.hashes), max(len(self._known) - 1, 0))
        unseen = np.flatnonzero(self._known[at] != spans.hashes) if len(self._known) else np.arange(len(at))
        if len(unseen) or self._table is None:
            fresh, first = np.unique(spans.hashes[unseen], return_index=True)
            rows, text_of = unseen[first], spans.text_of_row()[unseen[first]]
            new_rows = np.arange(len(self._types), len(self._types) + len(fresh))
            for row, d in zip(rows.tolist(), text_of.tolist(), strict=True):
                self._types.append(self._type_of(texts[d][spans.starts[row] : spans.ends[row]]))
            known, positions = np.concatenate([self._known, fresh]), np.concatenate([self._known_rows, new_rows])
            order = np.argsort(known, kind="stable")
            self._known, self._known_rows = known[order], positions[order]
            self._table = np.array(self._types, dtype=np.int64)
            at = np.searchsorted(self._known, spans.hashes)
        rows_of_tokens: np.ndarray = self._known_rows[at]
        return rows_of_tokens

    def _type_of(self, token: str) -> tuple[int, ...]:
        lex = lexical(token)
        return (
            self._word_ids.get(lex.lower, UNKNOWN),
            self._shape_ids.get(lex.shape, UNKNOWN),
            self._affix_ids.get(lex.prefix, UNKNOWN),
            self._affix_ids.get(lex.suffix, UNKNOWN),
            (lex.lower in self._first) + 2 * (lex.lower in self._last),
            int(lex.candidate),
            self._char_ids.get(token, 0),
            int(lex.shape in ("han", "kata")),
        )

    def _reset_types(self) -> None:
        self._types = [(BOUNDARY, BOUNDARY, UNKNOWN, UNKNOWN, 0, 0, 0, 0)]
        self._known = np.zeros(0, dtype=np.uint64)  # the registered types' token hashes, sorted
        self._known_rows = np.zeros(0, dtype=np.int64)  # each one's row in `_types`
        self._table = None

    def candidate_keys(
        self, texts: Sequence[str], spans: TokenSpans | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Feature keys (candidates x FEATURE_KINDS, int64) of all candidate tokens of a batch, in order, and per
        text the token indices of its candidates (tokens as `token_texts` cuts them; ``spans``: the batch's
        `scan_token_spans`, when the caller has them)."""
        spans = spans if spans is not None else scan_token_spans(list(texts))
        padding = 2 * np.arange(1, len(texts) + 1)  # two boundary rows before each text (and two at the end)
        firsts = spans.bounds[:-1] + padding
        length = int(spans.bounds[-1]) + 2 * (len(texts) + 1)
        sequence = np.zeros(length, dtype=np.int64)  # row 0 of the type table: boundary
        rows = self._type_rows(texts, spans)
        sequence[np.arange(len(rows)) + np.repeat(padding, np.diff(spans.bounds))] = rows
        assert self._table is not None
        table = self._table[sequence]
        word, shape, prefix, suffix, known = (table[:, i] for i in range(5))
        at = np.flatnonzero(table[:, 5])
        none = np.zeros_like(at)
        listed = self._listed_names(table[:, 6])
        anchor, before_name = _family_anchor(listed, known, table[:, 7], word, at)
        columns: tuple[tuple[np.ndarray, np.ndarray], ...] = (
            (word[at], none),
            (shape[at], none),
            (prefix[at], none),
            (suffix[at], none),
            (word[at - 1], none),
            (word[at + 1], none),
            (word[at - 2], none),
            (word[at + 2], none),
            (shape[at - 1], none),
            (shape[at + 1], none),
            (shape[at - 1], shape[at + 1]),
            (word[at - 1], word[at]),
            (word[at], word[at + 1]),
            (known[at], shape[at]),
            (known[at - 1], known[at + 1]),
            (known[at - 1] * 4 + known[at], known[at + 1]),
            (listed[at], none),
            (listed[at - 1] * 16 + listed[at], listed[at + 1]),
            (listed[at], word[at + 1]),
            (anchor, before_name),
            (anchor, np.where(anchor <= _MAX_ANCHOR, word[at + 1], 0)),
        )
        keys = np.stack([(kind << 2 * _ID_BITS) + (a << _ID_BITS) + b for kind, (a, b) in enumerate(columns)], axis=1)
        bounds = np.searchsorted(at, [*firsts.tolist(), length])
        per_text = [at[bounds[i] : bounds[i + 1]] - first for i, first in enumerate(firsts.tolist())]
        return keys, per_text

    def _listed_names(self, char_ids: np.ndarray) -> np.ndarray:
        """Per token, the d bits: whether it starts or continues a run of characters that is a listed CJK family
        or given name. Vectorised over the batch: every window of two or three name characters becomes one key,
        looked up by binary search; text without CJK name characters costs one scan."""
        listed = np.zeros(len(char_ids), dtype=np.int64)
        if not char_ids.any():
            return listed
        for keys_by_length, start_bit, inside_bit in (
            (self._family_keys, _FAMILY_START, _FAMILY_INSIDE),
            (self._given_keys, _GIVEN_START, _GIVEN_INSIDE),
        ):
            for length, keys in keys_by_length.items():
                if not len(keys) or len(char_ids) < length:
                    continue
                starts = np.flatnonzero(char_ids[: len(char_ids) - length + 1] > 0)
                for offset in range(1, length):
                    starts = starts[char_ids[starts + offset] > 0]
                window = _char_key([char_ids[starts + offset] for offset in range(length)])
                found = np.minimum(np.searchsorted(keys, window), len(keys) - 1)
                hits = starts[keys[found] == window]
                listed[hits] |= start_bit
                for offset in range(1, length):
                    listed[hits + offset] |= inside_bit
        return listed


def _family_anchor(
    listed: np.ndarray, known: np.ndarray, cjk: np.ndarray, word: np.ndarray, at: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate, how many CJK characters back a family name began (a listed one, or a single surname
    character), with no other character in between, or _MAX_ANCHOR + 1 when none did; and the word just before
    that family name (0 when none). A CJK name is a surname and a few more characters, so "由 X Y Z 审校" says
    the most about Y and Z through the word before X, which a fixed window around Y does not see."""
    family = ((listed & _FAMILY_START) > 0) | ((known & 2) > 0)
    family &= cjk > 0
    anchor = np.full(len(at), _MAX_ANCHOR + 1, dtype=np.int64)
    run = np.ones(len(at), dtype=bool)  # the characters from `at - back` to `at` are all CJK
    for back in range(_MAX_ANCHOR + 1):
        run &= cjk[at - back] > 0
        found = run & family[at - back] & (anchor > _MAX_ANCHOR)
        anchor[found] = back
    named = anchor <= _MAX_ANCHOR
    before_name = np.where(named, word[at - np.where(named, anchor, 0) - 1], 0)
    return anchor, before_name


def _char_key(ids: Sequence[Any]) -> Any:
    """One int64 for a run of character ids (ints or equal-length arrays): first character in the highest bits."""
    key: Any = 0
    for value in ids:
        key = (key << _CHAR_BITS) + value
    return key

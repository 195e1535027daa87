"""The prose signals of a whole batch of documents in one compiled pass (`prose_signal_matrix`), what the quality
stage computes per shard; `signals.prose_signals` is the plain definition of each signal, one document at a time,
and a test holds the two equal, bit for bit, on the labelled set and on random text.

The pass walks the batch's code points once per document with no Python object per word, line or n-gram: tokens
and word hashes (`token_kernel`), word ids by first appearance, the repeated-n-gram figures (`ngram_kernel`), lines
as `str.splitlines` cuts them and `str.strip` trims them, paragraphs, character classes, and the case-folded word
digests of the word lists (`folded_words`). Lines and paragraphs are told apart by 64-bit digests of their text, as
words and n-grams are; two different lines share one with probability 2**-64. What stays in Python runs only on the
documents that need it: ftfy's mojibake count and the script count (non-ASCII text), the link scans (text with
"://", "www." or "@"), the boilerplate lines (text with a marker), and the word-list shares of a text whose
lower-casing changes its length or holds a capital sigma.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np

from pretrain_core.clean.ngram_kernel import level_figures
from pretrain_core.clean.token_kernel import HASH_SEED, LETTER_TOKEN, UNSEGMENTED_CHAR, WORD_TOKEN, hash_step
from pretrain_core.clean.token_kernel import scan_tokens as scan_token_spans
from pretrain_core.clean.words import unsegmented_table
from pretrain_core.quality import folded_words, signals
from pretrain_core.signal_names import PROSE_SIGNAL_NAMES
from pretrain_core.unicode_table import ALPHA, DECIMAL, DIGIT, SPACE, UPPER, char_flags, code_points

# Bits of `_line_marks`: what a stripped line's first or last character, or every character, may be.
_BULLET, _TERMINAL, _TABLE = (np.uint8(1 << bit) for bit in range(3))
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines' boundaries ("\r\n" is one)
_TABLE_PUNCTUATION = ".,:;%+-/()|"  # `signals._DIGIT_LINE` besides \d and \s
# Columns of the pass's count matrix, a row per document.
(
    _TOKENS, _LETTER_TOKENS, _WORDS, _WORD_CHARS, _UNSEGMENTED_WORDS, _LINES, _BULLET_LINES, _ELLIPSIS_LINES,
    _TERMINAL_LINES, _SHORT_LINES, _TABLE_LINES, _DUPLICATE_LINE_CHARS, _DUPLICATE_PARAGRAPH_CHARS, _TOP_2GRAM_CHARS,
    _TOP_3GRAM_CHARS, _TOP_4GRAM_CHARS, _REPEATED_5GRAM_CHARS, _REPEATED_8GRAM_CHARS, _ALPHA, _UPPER, _DIGITS,
    _SYMBOLS, _REPLACEMENTS, _DISTINCT_LOWERED_WORDS, _FUNCTION_WORDS, _LOREM_WORDS, _COLUMNS,
) = range(27)  # fmt: skip


@functools.cache
def _line_marks() -> np.ndarray:
    marks = np.zeros(0x110000, dtype=np.uint8)
    for chars, bit in (("".join(signals.BULLET_CHARS), _BULLET), ("".join(signals.TERMINAL_CHARS), _TERMINAL)):
        marks[[ord(char) for char in chars]] |= bit
    marks[[ord(char) for char in _TABLE_PUNCTUATION]] |= _TABLE
    return marks


@functools.cache
def _line_break_table() -> np.ndarray:
    table = np.zeros(0x110000, dtype=np.bool_)
    table[[ord(char) for char in _LINE_BREAKS]] = True
    return table


@functools.cache
def _word_lists() -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """The sorted folded-word digests of every list (each language's function words, then lorem ipsum) end to end,
    their offsets, and each language's list number (lorem ipsum's is the last)."""
    lists = [*signals.function_words().items(), ("", signals.LOREM_WORDS)]
    digests = [folded_words.listed_digests(words) for _, words in lists]
    offsets = np.cumsum([0, *(d.size for d in digests)]).astype(np.int64)
    return {lang: k for k, (lang, _) in enumerate(lists[:-1])}, np.concatenate(digests), offsets


@numba.njit(cache=True, nogil=True)
def _repeated_item_chars(digests, lengths, count):
    """Characters of the items that repeat an earlier one (every occurrence but the first of each digest)."""
    if count < 2:
        return 0
    order = np.argsort(digests[:count], kind="mergesort")
    total = 0
    for k in range(1, count):
        if digests[order[k]] == digests[order[k - 1]]:
            total += lengths[order[k]]
    return total


@numba.njit(cache=True, nogil=True)
def _line_counts(points, flags, breaks, marks, out):
    """Lines as `str.splitlines` cuts them, stripped, blank ones dropped (`ProseDoc.lines`), and paragraphs as
    blank lines separate them (`ProseDoc.paragraphs`): the line counts of `_COUNTS` written into ``out``."""
    n = points.size
    line_digests = np.empty(n // 2 + 1, dtype=np.uint64)
    line_lengths = np.empty(n // 2 + 1, dtype=np.int64)
    paragraph_digests = np.empty(n // 2 + 1, dtype=np.uint64)
    paragraph_lengths = np.empty(n // 2 + 1, dtype=np.int64)
    lines = paragraphs = 0
    bullets = ellipses = terminals = shorts = tables = 0
    paragraph_digest = HASH_SEED
    paragraph_length = 0
    start = 0
    while start <= n:
        stop = start
        while stop < n and not breaks[points[stop]]:
            stop += 1
        following = stop + 1
        if stop + 1 < n and points[stop] == 13 and points[stop + 1] == 10:
            following = stop + 2
        first, last = start, stop
        while first < last and flags[points[first]] & SPACE:
            first += 1
        while last > first and flags[points[last - 1]] & SPACE:
            last -= 1
        if first == last:
            if paragraph_length:
                paragraph_digests[paragraphs] = paragraph_digest
                paragraph_lengths[paragraphs] = paragraph_length
                paragraphs += 1
                paragraph_digest, paragraph_length = HASH_SEED, 0
        else:
            digest = HASH_SEED
            pieces = 0
            in_piece = False
            table = True
            for i in range(first, last):
                point = points[i]
                digest = hash_step(digest, point)
                char = flags[point]
                space = (char & SPACE) != 0
                if not space and not in_piece:
                    pieces += 1
                in_piece = not space
                table &= space or (char & DECIMAL) != 0 or (marks[point] & _TABLE) != 0
            line_digests[lines] = digest
            line_lengths[lines] = last - first
            lines += 1
            bullets += (marks[points[first]] & _BULLET) != 0
            terminals += (marks[points[last - 1]] & _TERMINAL) != 0
            ellipses += points[last - 1] == 0x2026 or (
                last - first >= 3 and points[last - 1] == 46 and points[last - 2] == 46 and points[last - 3] == 46
            )
            shorts += pieces < 4
            tables += table
            if paragraph_length:
                paragraph_digest = hash_step(paragraph_digest, 10)
                paragraph_length += 1
            for i in range(first, last):
                paragraph_digest = hash_step(paragraph_digest, points[i])
            paragraph_length += last - first
        if stop >= n:
            break
        start = following
    if paragraph_length:
        paragraph_digests[paragraphs] = paragraph_digest
        paragraph_lengths[paragraphs] = paragraph_length
        paragraphs += 1
    out[_LINES] = lines
    out[_BULLET_LINES] = bullets
    out[_ELLIPSIS_LINES] = ellipses
    out[_TERMINAL_LINES] = terminals
    out[_SHORT_LINES] = shorts
    out[_TABLE_LINES] = tables
    out[_DUPLICATE_LINE_CHARS] = _repeated_item_chars(line_digests, line_lengths, lines)
    out[_DUPLICATE_PARAGRAPH_CHARS] = _repeated_item_chars(paragraph_digests, paragraph_lengths, paragraphs)


@numba.njit(cache=True, nogil=True)
def _first_appearance_ids(hashes):
    """Each word as an id numbered by first appearance (equal hashes, equal ids): `Tokens.first_appearance`."""
    count = hashes.size
    ids = np.empty(count, dtype=np.uint64)
    if not count:
        return ids
    order = np.argsort(hashes, kind="mergesort")
    group_first = np.empty(count, dtype=np.int64)
    group_of = np.empty(count, dtype=np.int64)
    groups = 0
    for k in range(count):
        if k == 0 or hashes[order[k]] != hashes[order[k - 1]]:
            group_first[groups] = order[k]  # a stable sort: the earliest position of the group
            groups += 1
        group_of[order[k]] = groups - 1
    rank = np.empty(groups, dtype=np.uint64)
    by_first = np.argsort(group_first[:groups], kind="mergesort")
    for r in range(groups):
        rank[by_first[r]] = r
    for k in range(count):
        ids[k] = rank[group_of[k]]
    return ids


@numba.njit(cache=True, nogil=True)
def _distinct(digests):
    if not digests.size:
        return 0
    ordered = np.sort(digests)
    return 1 + int(np.count_nonzero(ordered[1:] != ordered[:-1]))


@numba.njit(cache=True, nogil=True)
def _listed(digests, listed):
    if not listed.size:
        return 0
    found = 0
    for k in range(digests.size):
        at = np.searchsorted(listed, digests[k])
        found += at < listed.size and listed[at] == digests[k]
    return found


@numba.njit(cache=True, nogil=True)
def _ngram_counts(word_ids, word_lengths, span, out):
    """Top n-gram characters for n = 2, 3, 4 and repeated n-gram characters for `span` of 5 and 8 words."""
    largest = max(4, 8 * span)
    positions = np.arange(word_ids.size, dtype=np.int64)
    hashes = np.zeros(word_ids.size, dtype=np.uint64)
    for n in range(1, largest + 1):
        top, repeated, positions, hashes = level_figures(word_ids, word_lengths, positions, hashes, n)
        if 2 <= n <= 4:
            out[_TOP_2GRAM_CHARS + n - 2] = top
        if n == 5 * span:
            out[_REPEATED_5GRAM_CHARS] = repeated
        if n == 8 * span:
            out[_REPEATED_8GRAM_CHARS] = repeated


@numba.njit(cache=True, nogil=True)
def _measure(
    points, lowered, offsets, foldable, list_of, flags, unsegmented, breaks, marks, edge, listed, listed_offsets,
    unsegmented_share, ngram_scale,
):  # fmt: skip
    """The counts of each document points[offsets[d]:offsets[d + 1]], a row of `_COLUMNS` (``lowered``: the same
    span lower-cased, read where ``foldable``; ``list_of``: the document's function-word list, -1 for none; the
    last list is lorem ipsum's)."""
    documents = offsets.size - 1
    out = np.zeros((documents, _COLUMNS), dtype=np.int64)
    lorem = listed[listed_offsets[-2] : listed_offsets[-1]]
    for d in range(documents):
        row = out[d]
        text = points[offsets[d] : offsets[d + 1]]
        size = text.size
        starts, stops = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
        token_flags, token_hashes = np.empty(size, dtype=np.uint8), np.empty(size, dtype=np.uint64)
        tokens = scan_token_spans(text, flags, unsegmented, starts, stops, token_flags, token_hashes)
        ascii_text = True
        for i in range(size):
            point = text[i]
            ascii_text &= point < 128
            char = flags[point]
            row[_ALPHA] += (char & ALPHA) != 0
            row[_UPPER] += (char & UPPER) != 0
            row[_DIGITS] += (char & DIGIT) != 0
            row[_SYMBOLS] += point == 35 or point == 0x2026  # "#", "…"
            row[_REPLACEMENTS] += point == 0xFFFD
        i = 0
        while i + 2 < size:  # "..." as str.count counts it: non-overlapping, left to right
            if text[i] == 46 and text[i + 1] == 46 and text[i + 2] == 46:
                row[_SYMBOLS] += 1
                i += 3
            else:
                i += 1
        words = 0
        for t in range(tokens):
            row[_LETTER_TOKENS] += (token_flags[t] & LETTER_TOKEN) != 0
            if token_flags[t] & WORD_TOKEN:
                starts[words], stops[words], token_hashes[words] = starts[t], stops[t], token_hashes[t]
                row[_UNSEGMENTED_WORDS] += (token_flags[t] & UNSEGMENTED_CHAR) != 0
                words += 1
        starts, stops = starts[:words], stops[:words]
        word_lengths = stops - starts
        row[_TOKENS] = tokens
        row[_WORDS] = words
        row[_WORD_CHARS] = word_lengths.sum()
        _line_counts(text, flags, breaks, marks, row)
        spaced = words == 0 or ascii_text or row[_UNSEGMENTED_WORDS] / words < unsegmented_share
        ids = _first_appearance_ids(token_hashes[:words])
        _ngram_counts(ids, word_lengths, 1 if spaced else ngram_scale, row)
        if foldable[d]:
            whole, stripped = folded_words.word_digests(lowered[offsets[d] : offsets[d + 1]], starts, stops, edge)
            row[_DISTINCT_LOWERED_WORDS] = _distinct(whole)
            k = list_of[d]
            if k >= 0:
                row[_FUNCTION_WORDS] = _listed(stripped, listed[listed_offsets[k] : listed_offsets[k + 1]])
            row[_LOREM_WORDS] = _listed(stripped, lorem)
    return out


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """part / whole, 0 where whole is 0 (`signals._share` element-wise: the same IEEE division)."""
    safe = np.where(whole == 0, 1, whole)
    return np.where(whole == 0, 0.0, part.astype(np.float64) / safe.astype(np.float64))


def prose_signal_matrix(
    texts: list[str], langs: list[str], unsegmented_share: float = 0.5, ngram_scale: int = 2
) -> np.ndarray:
    """Each document's `signals.prose_signals`, a row per text in `PROSE_SIGNALS` order, in one compiled pass."""
    lowered = [text.lower() for text in texts]
    foldable = np.array([folded_words.folds_in_place(t, low) for t, low in zip(texts, lowered, strict=True)], bool)
    list_number, listed, listed_offsets = _word_lists()
    chars = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    offsets = np.concatenate([[0], np.cumsum(chars)]).astype(np.int64)
    points = code_points("".join(texts))
    folded_points = code_points(
        "".join(low if ok else text for text, low, ok in zip(texts, lowered, foldable, strict=True))
    )
    list_of = np.array([list_number.get(lang, -1) for lang in langs], dtype=np.int64)
    counts = _measure(
        points, folded_points, offsets, foldable, list_of,
        char_flags(), unsegmented_table(), _line_break_table(), _line_marks(), folded_words.edge_table(), listed,
        listed_offsets, unsegmented_share, ngram_scale,
    )  # fmt: skip
    words, lines, in_text = counts[:, _WORDS], counts[:, _LINES], np.maximum(chars, 1)
    values = {
        "log_words": np.array([math.log1p(n) for n in words.tolist()]),
        "mean_word_length": _share(counts[:, _WORD_CHARS], words),
        "unique_word_share": _share(counts[:, _DISTINCT_LOWERED_WORDS], words),
        "symbol_word_ratio": _share(counts[:, _SYMBOLS], words),
        "alpha_token_share": _share(counts[:, _LETTER_TOKENS], counts[:, _TOKENS]),
        "bullet_line_share": _share(counts[:, _BULLET_LINES], lines),
        "ellipsis_line_share": _share(counts[:, _ELLIPSIS_LINES], lines),
        "terminal_line_share": _share(counts[:, _TERMINAL_LINES], lines),
        "short_line_share": _share(counts[:, _SHORT_LINES], lines),
        "digit_line_share": _share(counts[:, _TABLE_LINES], lines),
        "boilerplate_line_share": np.zeros(len(texts)),
        "url_token_share": np.zeros(len(texts)),
        "lorem_word_share": _share(counts[:, _LOREM_WORDS], words),
        "duplicate_line_char_share": _share(counts[:, _DUPLICATE_LINE_CHARS], in_text),
        "duplicate_paragraph_char_share": _share(counts[:, _DUPLICATE_PARAGRAPH_CHARS], in_text),
        "top_2gram_char_share": _share(counts[:, _TOP_2GRAM_CHARS], chars),
        "top_3gram_char_share": _share(counts[:, _TOP_3GRAM_CHARS], chars),
        "top_4gram_char_share": _share(counts[:, _TOP_4GRAM_CHARS], chars),
        "repeated_5gram_char_share": _share(counts[:, _REPEATED_5GRAM_CHARS], chars),
        "repeated_8gram_char_share": _share(counts[:, _REPEATED_8GRAM_CHARS], chars),
        "digit_char_share": _share(counts[:, _DIGITS], chars),
        "upper_letter_share": _share(counts[:, _UPPER], counts[:, _ALPHA]),
        "mojibake_per_100_letters": np.zeros(len(texts)),
        "replacement_char_share": _share(counts[:, _REPLACEMENTS], chars),
        "dominant_script_share": np.zeros(len(texts)),
        "function_word_share": np.where(
            [lang in list_number for lang in langs], _share(counts[:, _FUNCTION_WORDS], words), np.nan
        ),
    }
    tokens, letters = counts[:, _TOKENS].tolist(), counts[:, _ALPHA].tolist()
    for row, (text, low) in enumerate(zip(texts, lowered, strict=True)):  # what the pass leaves to Python
        if not text.isascii():
            values["mojibake_per_100_letters"][row] = signals.mojibake_per_100_letters(text, letters[row])
        values["dominant_script_share"][row] = signals.dominant_script_share(text)
        if "://" in text or "www." in low or "@" in text:
            values["url_token_share"][row] = signals.links(text, low) / tokens[row] if tokens[row] else 0.0
        if signals.has_boilerplate(text, low):
            values["boilerplate_line_share"][row] = signals.boilerplate_line_share(signals.ProseView(text))
    matrix = np.stack([values[name] for name in PROSE_SIGNAL_NAMES], axis=1)
    for row in np.flatnonzero(~foldable).tolist():  # words the pass cannot fold: the plain definitions, whole
        matrix[row] = signals.prose_signals(texts[row], langs[row], unsegmented_share, ngram_scale)
    return matrix

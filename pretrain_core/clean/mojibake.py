"""ftfy's mojibake pattern (`ftfy.badness`), scanned only where it can match.

ftfy's badness pattern is a long alternation, slow to search over text of any script (over the demo's non-ASCII
pieces and their non-ASCII runs, 1.59 CPU s searched whole, 0.35 by windows: `benchmarks/bench_clean.py`). Every
sequence it matches holds a character of one of its categories other than the common ones (Latin-1 punctuation,
Greek, Cyrillic), or "Ђ" (Windows-1251 mojibake of U+2000-range punctuation), and is at most `WIDTH` characters
long: so it lies inside the window of `WIDTH` characters either side of such a character, and text with none of
them holds no match. Windows are merged where they overlap, no match crosses from one to the next, and the pattern
has no look-around or end anchor (its start anchor holds only at the text's real start, which ``pos`` keeps):
searching and counting by windows give ftfy's answers (tests/clean/test_mojibake.py).

Every sequence it matches also holds two non-ASCII characters in a row or one of `LONE` (a test walks each
alternative of the parsed pattern): a window without them is skipped. In edited text of any Latin script accented
letters stand between ASCII ones, so most windows go (the 16x corpus's PII output: 1.33 -> 0.45 CPU s for 7.2 MB).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ftfy.badness import BADNESS_RE, MOJIBAKE_CATEGORIES

_COMMON = ("common", "lower_common", "upper_common")
WIDTH = 7  # the longest sequence the pattern matches (a test checks it with the regex parser)
_RARE = "".join(chars for name, chars in MOJIBAKE_CATEGORIES.items() if name not in _COMMON)
PRONE = re.compile(f"[{_RARE}\u0402]")
# The non-ASCII characters a match may hold with only ASCII ones beside them: C1 controls, "Â " after a letter, "œ".
LONE = "".join(map(chr, range(0x80, 0xA0))) + "ŒœÃÂ"
NEEDED = re.compile(f"[^\x00-\x7f][^\x00-\x7f]|[{LONE}]")


def _windows(text: str) -> Iterator[tuple[int, int]]:
    """Merged (start, end) windows around every `PRONE` character, in order, those without what `NEEDED` finds
    left out."""
    for start, end in _prone_windows(text):
        if NEEDED.search(text, start, end):
            yield start, end


def _prone_windows(text: str) -> Iterator[tuple[int, int]]:
    start = end = -1
    for match in PRONE.finditer(text):
        low, high = max(match.start() - WIDTH + 1, 0), match.start() + WIDTH
        if low <= end:
            end = high
            continue
        if end >= 0:
            yield start, end
        start, end = low, high
    if end >= 0:
        yield start, end


def badness(text: str) -> int:
    """`ftfy.badness.badness(text)`: how many sequences typical of mis-decoded text it holds."""
    return sum(len(BADNESS_RE.findall(text, start, end)) for start, end in _windows(text))


def is_bad(text: str) -> bool:
    """Whether `ftfy.badness` finds any such sequence (what makes ftfy try to repair a line's encoding)."""
    return any(BADNESS_RE.search(text, start, end) for start, end in _windows(text))

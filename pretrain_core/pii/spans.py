"""Matched spans: choosing one interpretation where detectors disagree, and writing placeholders into the text."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from typing import NamedTuple

from pretrain_core.pii.config import PII_TYPES, PiiType

# When two detectors claim the same characters, the longer span wins; between equal lengths this order decides.
# Validated identifiers outrank looser kinds (a Luhn-valid card is not also a phone number), and a checksummed
# national id outranks a card number, whose Luhn check passes one random digit run in ten.
TYPE_PRIORITY: tuple[PiiType, ...] = (
    "secret", "iban", "national_id", "card", "email", "ip", "phone", "address", "person"
)  # fmt: skip
if sorted(TYPE_PRIORITY) != sorted(PII_TYPES):
    raise ImportError("TYPE_PRIORITY must order every kind of PII_TYPES once")
_RANK: dict[str, int] = {kind: rank for rank, kind in enumerate(TYPE_PRIORITY)}


class Span(NamedTuple):
    start: int
    end: int
    type: str


def resolve_overlaps(spans: Iterable[Span]) -> list[Span]:
    """Non-overlapping spans in text order: longest first, then by type priority, then leftmost.

    Deterministic whatever order detectors report in, so reruns redact identically.
    """
    chosen: list[Span] = []  # kept sorted by start; chosen spans never overlap, so their ends are sorted too
    for span in sorted(set(spans), key=lambda s: (s.start - s.end, _RANK.get(s.type, len(_RANK)), s.start)):
        index = bisect.bisect_left(chosen, span)
        before_clear = index == 0 or chosen[index - 1].end <= span.start
        after_clear = index == len(chosen) or chosen[index].start >= span.end
        if before_clear and after_clear:
            chosen.insert(index, span)
    return chosen


def outside(spans: Iterable[Span], blockers: Iterable[Span]) -> list[Span]:
    """The parts of each span that no blocker covers (a span cut in two by a blocker gives two parts)."""
    cuts = sorted(blockers)
    parts: list[Span] = []
    for span in spans:
        start = span.start
        for blocker in cuts:
            if blocker.end <= start or blocker.start >= span.end:
                continue
            if blocker.start > start:
                parts.append(Span(start, blocker.start, span.type))
            start = max(start, blocker.end)
        if start < span.end:
            parts.append(Span(start, span.end, span.type))
    return parts


def redact(text: str, spans: list[Span], placeholder: Callable[[str], str]) -> str:
    """Replace each (non-overlapping, sorted) span with its type's placeholder."""
    parts: list[str] = []
    cursor = 0
    for span in spans:
        parts.append(text[cursor : span.start])
        parts.append(placeholder(span.type))
        cursor = span.end
    parts.append(text[cursor:])
    return "".join(parts)

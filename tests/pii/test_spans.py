"""Overlap resolution and placeholder redaction."""

from __future__ import annotations

import itertools

from pretrain_core.pii.spans import Span, outside, redact, resolve_overlaps


def test_longest_span_wins_and_order_of_detectors_does_not_matter() -> None:
    spans = [Span(0, 10, "phone"), Span(0, 19, "card"), Span(20, 30, "email"), Span(25, 28, "person")]
    results = {tuple(resolve_overlaps(list(order))) for order in itertools.permutations(spans)}
    assert results == {(Span(0, 19, "card"), Span(20, 30, "email"))}


def test_equal_spans_keep_the_validated_kind() -> None:
    assert resolve_overlaps([Span(5, 21, "phone"), Span(5, 21, "card")]) == [Span(5, 21, "card")]
    assert resolve_overlaps([Span(0, 18, "card"), Span(0, 18, "national_id")]) == [Span(0, 18, "national_id")]


def test_touching_spans_both_survive() -> None:
    assert resolve_overlaps([Span(0, 5, "person"), Span(5, 9, "email")]) == [Span(0, 5, "person"), Span(5, 9, "email")]


def test_redact_writes_typed_placeholders() -> None:
    text = "Mail bob@example.org or call 030 12345678."
    spans = [Span(5, 20, "email"), Span(29, 41, "phone")]
    assert redact(text, spans, lambda kind: f"<{kind.upper()}>") == "Mail <EMAIL> or call <PHONE>."
    assert redact(text, [], lambda kind: "") == text


def test_outside_cuts_spans_around_blockers() -> None:
    spans = [Span(0, 30, "address"), Span(40, 50, "person")]
    blockers = [Span(10, 15, "phone"), Span(25, 35, "iban")]
    assert outside(spans, blockers) == [Span(0, 10, "address"), Span(15, 25, "address"), Span(40, 50, "person")]
    assert outside([Span(10, 15, "person")], [Span(5, 20, "phone")]) == []

"""The batch pass (`prose_batch.prose_signal_matrix`) gives every document exactly what the plain definitions
(`signals.prose_signals`, one document at a time) give, bit for bit: on the labelled quality set, the shipped
reference, and random text built from what lines, words and n-grams are cut by."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.quality.prose_batch import prose_signal_matrix
from pretrain_core.quality.reference import shipped_records
from pretrain_core.quality.signals import prose_signals
from pretrain_core.signal_names import PROSE_SIGNAL_NAMES
from tests.quality.conftest import _labelled_items

_LANGS = ["en", "de", "ru", "zh", "ja", "xx"]


def _assert_plain(texts: list[str], langs: list[str]) -> None:
    batch = prose_signal_matrix(texts, langs)
    assert batch.shape == (len(texts), len(PROSE_SIGNAL_NAMES))
    for row, (text, lang) in enumerate(zip(texts, langs, strict=True)):
        plain = prose_signals(text, lang)
        same = (batch[row] == plain) | (np.isnan(batch[row]) & np.isnan(plain))
        wrong = [(name, batch[row, j], plain[j]) for j, name in enumerate(PROSE_SIGNAL_NAMES) if not same[j]]
        assert not wrong, (wrong, text[:120])


def test_the_labelled_set_and_the_shipped_reference_get_the_plain_values() -> None:
    items = [item for item in _labelled_items() if item.get("domain") != "code"]
    records = list(shipped_records("prose"))
    texts = [item["text"] for item in items] + [record["text"] for record in records]
    langs = [item["lang"] for item in items] + [record["lang"] for record in records]
    assert len(set(langs)) >= 5 and len(texts) > 100
    _assert_plain(texts, langs)


def test_an_ascii_batch_and_an_empty_one_get_the_plain_values() -> None:
    """An ASCII batch is scanned as bytes, a mixed one as code points: both widths give the same counts."""
    texts = ["", "Short.", "A line\r\nand another...\n\n\n- a bullet #tag\n1, 2, 3 %\n" * 3, "x" * 50]
    _assert_plain(texts, ["en"] * len(texts))
    assert prose_signal_matrix([], []).shape == (0, len(PROSE_SIGNAL_NAMES))


# Pieces that cut lines (every str.splitlines boundary, "\r\n" among them), strip them (Unicode spaces), mark them
# (bullets, terminal punctuation, ellipses, table characters), repeat words and lines, split unsegmented scripts,
# and fold words differently (capital sigma, "İ", punctuation at word edges).
_PIECES = st.sampled_from(
    [
        "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\n\n", " ", "\t",
        "\u3000", "\xa0", "• ", "- ", "* ", "...", "…", ".", "!", "»", "12", "3.5%", "(4)", "|", "#", "\ufffd",
        "the ", "The ", "and ", "of ", "lorem ipsum ", "Dolor ", "«Wort»", "“the”", "ΟΔΟΣ", "ΣΑ", "İstanbul",
        "日本語の文章です。", "中文", "ไทย", "https://example.com/a ", "www.Example.org", "a@b.co ",
        "privacy policy", "Cookie", "©", "word word word word ", "same line\n",
    ]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=24).map("".join), min_size=1, max_size=6),
    st.lists(st.sampled_from(_LANGS), min_size=6, max_size=6),
)
def test_random_documents_get_the_plain_values(texts: list[str], langs: list[str]) -> None:
    _assert_plain(texts, langs[: len(texts)])

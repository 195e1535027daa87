"""N-gram hashes over normalised text: the same n-gram hashes alike wherever it occurs and however it is cased or
punctuated; characters of unspaced scripts are units of their own; units line up with the original text."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pretrain_core.decontam.ngrams import ngram_hashes, normalised, unit_spans, units_of, window_ends
from pretrain_core.dedup.config import DEFAULT_IGNORE
from pretrain_core.dedup.normalize import normalize_text

PASSAGE = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat by the door"
JAPANESE = (
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。"
    "何でも薄暗いじめじめした所で泣いていた事だけは記憶している。"
)


def _hashes(*texts: str, ngram: int = 13) -> list[np.ndarray]:
    grams = ngram_hashes(normalised(pa.array(texts), DEFAULT_IGNORE), ngram, 1.5)
    return [grams.of(i) for i in range(len(texts))]


def test_an_ngram_hashes_alike_in_any_document_case_and_punctuation() -> None:
    alone, inside = _hashes(PASSAGE, f"Before it: {PASSAGE.upper().replace(' ', ', ', 4)}!! And after it, more.")
    assert alone.size == len(PASSAGE.split()) - 13 + 1
    assert set(alone.tolist()) <= set(inside.tolist())
    assert not set(_hashes(PASSAGE.replace("lazy", "sleepy"))[0].tolist()) >= set(alone.tolist())


def test_documents_shorter_than_one_ngram_have_none() -> None:
    short, exact = _hashes("only twelve words are in this sentence so it has no ngram", " ".join(["w"] * 13))
    assert short.size == 0 and exact.size == 1


def test_unspaced_characters_are_units_wherever_they_stand() -> None:
    """A Japanese passage pasted into English text is read the same as alone (13 words = 20 characters)."""
    alone, pasted = _hashes(JAPANESE, f"An English page quoting {JAPANESE} and going on in English.")
    units = [u for u in units_of(normalize_text(JAPANESE)) if u.strip()]
    assert all(len(u) == 1 for u in units) and alone.size == len(units) - 20 + 1
    assert set(alone.tolist()) <= set(pasted.tolist())


def test_window_ends_read_the_kernels_windows() -> None:
    """Mixed text: Python's windows (for redaction) start where the kernel's hashes do, as many of them."""
    text = f"Latin words first, then {JAPANESE} then Latin again for a while longer here."
    units = units_of(normalize_text(text))
    ends = window_ends(units, 13, 1.5)
    assert len(ends) == _hashes(text)[0].size
    weights = [2 if len(units[i]) == 1 and units[i] >= "\u3040" else 3 for i in range(len(units))]
    assert all(sum(weights[k:end]) >= 39 > sum(weights[k : end - 1]) for k, end in enumerate(ends))


def test_units_line_up_with_the_original_text() -> None:
    text = "Ｆｕｌｌ-width ＷＯＲＤＳ, then 日本語 and café!"
    units, spans = unit_spans(text, DEFAULT_IGNORE) or ([], [])
    assert units == units_of(normalize_text(text))
    assert [text[a:b] for a, b in spans] == ["Ｆｕｌｌ", "width", "ＷＯＲＤＳ", "then", "日", "本", "語", "and", "café"]


def test_text_whose_normal_form_moves_word_boundaries_is_not_lined_up() -> None:
    """㎏ is a symbol (no word) until NFKC makes it "kg": the caller drops what it cannot cut precisely."""
    assert unit_spans("weighs 5 ㎏ today", DEFAULT_IGNORE) is None

"""Quality signals on real text: each moves the way its heuristic says when the text is damaged that way."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pretrain_core.quality.signals import (
    code_signals,
    prose_signals,
)
from pretrain_core.signal_names import (
    CODE_SIGNAL_NAMES,
    GROUP_SIGNAL_NAMES,
    PERPLEXITY_SIGNAL_NAMES,
    PROSE_SIGNAL_NAMES,
    SIGNAL_FIELDS,
)


def _prose(text: str) -> dict[str, float]:
    return dict(zip(PROSE_SIGNAL_NAMES, prose_signals(text, "en").tolist(), strict=True))


def _code(text: str) -> dict[str, float]:
    return dict(zip(CODE_SIGNAL_NAMES, code_signals(text).tolist(), strict=True))


def test_names_are_unique_per_group_and_fields_hold_both(english: list[str]) -> None:
    assert len(set(PROSE_SIGNAL_NAMES)) == len(PROSE_SIGNAL_NAMES)
    assert len(set(CODE_SIGNAL_NAMES)) == len(CODE_SIGNAL_NAMES)
    every = {name for names in GROUP_SIGNAL_NAMES.values() for name in names}
    assert (
        set(SIGNAL_FIELDS) == every == set(PROSE_SIGNAL_NAMES) | set(CODE_SIGNAL_NAMES) | set(PERPLEXITY_SIGNAL_NAMES)
    )
    assert np.isfinite(prose_signals("", "en")).all() and np.isfinite(code_signals("")).all()
    unlisted = dict(zip(PROSE_SIGNAL_NAMES, prose_signals("Ceci est un texte.", "pl"), strict=True))
    assert np.isnan(unlisted["function_word_share"])  # a language without a word list: not applicable


def test_damage_moves_the_signal_that_measures_it(
    english: list[str], french: list[str], as_documents: Callable[[list[str], int], list[str]]
) -> None:
    text = as_documents(english, 1)[0]
    lines = text.splitlines()
    clean = _prose(text)
    repeated = _prose("\n".join(lines + [lines[0]] * 8))
    assert repeated["duplicate_line_char_share"] > clean["duplicate_line_char_share"] + 0.3
    french_text = as_documents(french, 1)[0]
    broken = _prose(french_text.encode("utf-8").decode("cp1252", errors="replace"))
    assert broken["mojibake_per_100_letters"] > _prose(french_text)["mojibake_per_100_letters"] + 0.5
    lorem = _prose("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n" * 3)
    assert lorem["lorem_word_share"] > 0.9 and clean["lorem_word_share"] < 0.1
    links = _prose("\n".join(f"Buy now https://shop{i}.example.com/deal?id={i}" for i in range(10)))
    assert links["url_token_share"] > 0.2 and clean["url_token_share"] == 0.0
    table = _prose("\n".join(f"{i}  {i * 3.7:.2f}  {i * 11}" for i in range(20)))
    assert table["digit_line_share"] == 1.0 and clean["digit_line_share"] < 0.2
    assert 0.5 < clean["terminal_line_share"] <= 1.0 and clean["alpha_token_share"] > 0.9
    shuffled = " ".join(sorted(text.split(), key=len))
    assert _prose(shuffled)["function_word_share"] == clean["function_word_share"] > 0.25


def test_code_signals_tell_minified_and_embedded_data_from_written_code(python_files: list[str]) -> None:
    source = python_files[0][:5000]
    written = _code(source)
    minified = _code(" ".join(line.strip() for line in source.splitlines() if line.strip()))
    assert minified["log_max_line_length"] > written["log_max_line_length"] + 1
    assert minified["indented_line_share"] == 0.0 < written["indented_line_share"]
    blob = _code(
        "data = [\n" + ",\n".join(", ".join(f"0x{b:02x}" for b in range(i, i + 12)) for i in range(0, 240, 12))
    )
    assert blob["hex_literal_share"] > 0.5 and written["hex_literal_share"] < 0.05

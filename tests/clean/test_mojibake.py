"""ftfy's mojibake pattern searched and counted only in the windows around the characters every match holds
(`pretrain_core/clean/mojibake.py`) gives ftfy's answers, on random and glued damage and on the labelled
quality set's mojibake items."""

from __future__ import annotations

import re._compiler
import re._parser
import string
from typing import Any

import ftfy.badness
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.clean import mojibake
from tests.quality.conftest import _labelled_items

_DAMAGED = "ÃÂâ€œ™Ã©Ã¨Ã Â Ð¿Ñ€Ð¸ Ã¼Ã¶Ã¤ ГўВЂВ. вЂ× ²³ √±≈°‚Ä ā€ Œx ÎÐ£ ╔═ ¢£¥ µ·»«–—´ aZ éè ÀÉ\n "

# Whole sequences of ftfy's pattern, its longest among them (7 characters), to be glued in any order.
_DAMAGED_PIECES = ["ГўВЂВ.a", "ГўВЂВ x", "‚Äì", "‚âà", "√±", "≈°", "βۀ™", "β€™", "ā€", "× ²", "à²", "Ã ", "Â ", "a Â (",
                   "ВЂВ", "Г€Р", "Œ1", "É°", "Ã©", "ÃÂ", "╔é", "\nÃ ", " ", "a", "é", "Ђ", "ВЂ"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.text(st.sampled_from(_DAMAGED) | st.characters(), max_size=200)
    | st.lists(st.sampled_from(_DAMAGED_PIECES), max_size=60).map("".join)
)
def test_windowed_search_and_count_give_what_ftfy_gives(text: str) -> None:
    assert mojibake.badness(text) == ftfy.badness.badness(text)
    assert mojibake.is_bad(text) == ftfy.badness.is_bad(text)


def test_real_mojibake_and_the_pattern_s_width() -> None:
    assert re._parser.parse(ftfy.badness.BADNESS_RE.pattern, ftfy.badness.BADNESS_RE.flags).getwidth()[1] <= 7
    items = [item["text"] for item in _labelled_items() if item.get("kind") == "mojibake"]
    assert items and sum(ftfy.badness.badness(t) for t in items) > 100
    assert [mojibake.badness(t) for t in items] == [ftfy.badness.badness(t) for t in items]
    assert [mojibake.is_bad(t) for t in items] == [ftfy.badness.is_bad(t) for t in items]
    assert any(mojibake.is_bad(t) for t in items)


def test_text_with_no_mojibake_prone_character_has_no_badness() -> None:
    common = "".join(ftfy.badness.MOJIBAKE_CATEGORIES[name] for name in ("common", "lower_common", "upper_common"))
    alphabet = string.printable + "\u00a0\u00ad·´–—―…’" + "ΑΒΓΔαβγάέ" + "ЁАБВГДЯабвгяўџ" + common[:8]
    rng = np.random.default_rng(0)
    for _ in range(20):
        text = "".join(rng.choice(list(alphabet), size=5000))
        assert not mojibake.PRONE.search(text) and ftfy.badness.badness(text) == 0 and not mojibake.is_bad(text)


def test_every_match_holds_two_non_ascii_characters_in_a_row_or_a_lone_one() -> None:
    """What lets `mojibake` skip a window: no alternative of ftfy's parsed pattern can match a sequence whose
    non-ASCII characters stand alone between ASCII ones, unless one of them is in `mojibake.LONE`."""
    pattern = ftfy.badness.BADNESS_RE
    parsed = re._parser.parse(pattern.pattern, pattern.flags)
    [(branch, (_, alternatives))] = parsed.data
    assert str(branch) == "BRANCH"
    everything = "".join(map(chr, range(0x110000)))
    lone = set(mojibake.LONE)

    def choices(item: tuple[Any, Any]) -> tuple[bool, bool]:
        """Whether the one-character item matches an ASCII character, and a non-ASCII one not in LONE."""
        single = re._parser.SubPattern(parsed.state, [item])
        matched = {m.start() for m in re._compiler.compile(single, pattern.flags).finditer(everything)}
        return any(c < 128 for c in matched), any(c >= 128 and chr(c) not in lone for c in matched)

    def step(states: set[bool], item: tuple[Any, Any]) -> set[bool]:
        ascii_ok, other_ok = choices(item)
        return ({False} if ascii_ok and states else set()) | ({True} if other_ok and False in states else set())

    def avoidable(items: list[tuple[Any, Any]]) -> bool:
        """Whether a match of the item sequence can have no two non-ASCII characters in a row and none of LONE."""
        states = {False}  # reachable: whether the character before was non-ASCII
        for op, value in items:
            if str(op) == "AT":
                continue  # zero width
            if str(op) == "MAX_REPEAT":
                low, high, [inner] = value
                assert (low, high) == (0, 1), value  # an optional character: with it or without it
                states = states | step(states, inner)
                continue
            assert str(op) in ("LITERAL", "IN", "ANY"), op
            states = step(states, (op, value))
        return bool(states)

    assert len(alternatives) > 30
    for alternative in alternatives:
        assert not avoidable(list(alternative.data)), alternative

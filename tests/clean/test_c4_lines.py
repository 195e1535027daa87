from __future__ import annotations

from collections.abc import Callable

from pretrain_core.clean.c4_lines import filter_lines
from pretrain_core.clean.config import C4LinesConfig

ON = C4LinesConfig(enabled=True)


def test_boilerplate_lines_go_and_sentences_stay(licence: Callable[[str], str]) -> None:
    sentences = [line.strip() for line in licence("GPL-3").splitlines() if line.strip().endswith(".")][:20]
    page = "\n".join(
        [
            "Home | About | Downloads",
            "This site uses cookies.",
            "Please enable JavaScript to view comments.",
            *sentences,
        ]
    )
    result = filter_lines(page, ON)
    assert result.reason is None
    assert result.text.splitlines() == [s for s in sentences if len(s.split()) >= 3]
    assert result.chars_removed > len("Home | About | Downloads")


def test_man_pages_lose_most_of_their_lines(man_page: Callable[..., str]) -> None:
    """Why the filter is off by default: option lists and synopses have no terminal punctuation."""
    page = man_page("chown.2")
    result = filter_lines(page, ON)
    assert len(result.text) < 0.6 * len(page)


def test_chinese_sentences_end_with_chinese_marks(udhr: dict[str, str]) -> None:
    text = "\n".join([udhr["zh"]] * 5)
    result = filter_lines(text, ON)
    assert result.reason is None and result.text == text


def test_page_level_drops(licence: Callable[[str], str], udhr: dict[str, str]) -> None:
    gpl = licence("GPL-3")
    assert filter_lines("Lorem ipsum dolor sit amet.\n" + gpl, ON).reason == "c4_lorem_ipsum"
    assert filter_lines(gpl, ON).reason is None
    assert filter_lines(
        gpl + "\nint main() { return 0; }", C4LinesConfig(enabled=True, drop_curly_brace=True)
    ).reason == ("c4_curly_brace")
    assert filter_lines(udhr["en"], ON).reason == "c4_too_few_sentences"
    assert filter_lines("NAME\nSYNOPSIS\nDESCRIPTION", ON).reason == "c4_no_lines_left"

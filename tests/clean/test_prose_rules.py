from __future__ import annotations

from collections.abc import Callable

import pytest

from pretrain_core.clean.config import GOPHER_ENGLISH_STOP_WORDS, ProseRulesConfig, ProseThresholds
from pretrain_core.clean.prose_rules import ProseDoc, first_failure

DEFAULT = ProseThresholds()
EN_STOP = frozenset(GOPHER_ENGLISH_STOP_WORDS)


def judge(text: str, stop_words: frozenset[str] = EN_STOP, thresholds: ProseThresholds = DEFAULT) -> str | None:
    return first_failure(ProseDoc(text, stop_words), thresholds)


@pytest.mark.parametrize("name", ["GPL-3", "Apache-2.0", "MPL-2.0", "Artistic", "BSD", "LGPL-2.1"])
def test_real_english_licences_pass(licence: Callable[[str], str], name: str) -> None:
    assert judge(licence(name)) is None


@pytest.mark.parametrize("page", ["chown.2", "strtol.3", "hosts.5", "futex.7"])
def test_real_man_pages_pass(man_page: Callable[..., str], page: str) -> None:
    assert judge(man_page(page)) is None


@pytest.mark.parametrize("codec", ["gb2312", "gb18030", "gbk", "big5", "euc_jp", "shift_jis"])
def test_real_chinese_and_japanese_prose_passes(cjk_text: Callable[[str], str], codec: str) -> None:
    """Whitespace would make these 5-20 'words' and their mean length 30; per-character counting passes them."""
    text = cjk_text(codec)
    doc = ProseDoc(text)
    assert doc.unsegmented and len(doc.words) >= 50 and len(text.split()) < len(doc.words) / 3
    assert first_failure(doc, DEFAULT) is None


@pytest.mark.parametrize("page", ["gprof.1", "flock.1"])
def test_japanese_repeated_terms_are_not_repeated_phrases(man_page: Callable[..., str], page: str) -> None:
    """Five characters are one or two Japanese words: n-gram rules scale n in unsegmented text."""
    text = man_page(page, "ja")
    assert judge(text, stop_words=frozenset()) is None
    unscaled = ProseDoc(text, unsegmented_ngram_scale=1)
    assert first_failure(unscaled, DEFAULT) == "duplicate_ngram_share"


def test_real_korean_prose_passes_with_the_korean_thresholds(cjk_text: Callable[[str], str]) -> None:
    text = cjk_text("euc_kr")
    assert first_failure(ProseDoc(text), ProseRulesConfig().thresholds_for("ko")) is None


@pytest.mark.parametrize(("lang", "page"), [("de", "diff3.1"), ("fr", "join.1"), ("zh_CN", "diff.1"), ("ja", "od.1")])
def test_translated_man_pages_pass_without_english_stop_words(
    man_page: Callable[..., str], lang: str, page: str
) -> None:
    text = man_page(page, lang)
    assert judge(text, stop_words=frozenset()) is None
    if lang != "ja":  # the Japanese page keeps GNU's English licence notice (the, to)
        assert judge(text) == "no_stop_words"  # which is why stop words are per language


def test_lorem_ipsum_filler_is_placeholder_text_whatever_the_page_around_it(licence: Callable[[str], str]) -> None:
    filler = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. " * 8
    page = licence("GPL-3")[:3000] + "\n\nLorem ipsum dolor sit amet, consectetur adipiscing elit.\n"
    assert judge(filler) == judge(page) == "placeholder_text"
    assert judge(page, thresholds=DEFAULT.model_copy(update={"placeholder_phrases": []})) is None


def test_repeated_lines_are_dropped(licence: Callable[[str], str]) -> None:
    lines = [line for line in licence("GPL-3").splitlines() if len(line.split()) > 8][:10]
    spam = "\n".join(lines + [lines[3]] * 6)
    assert judge("\n".join(lines * 3)) == "duplicate_lines"
    assert judge(spam) == "duplicate_lines"


def test_a_short_attribution_after_every_quote_is_structure_not_repetition(licence: Callable[[str], str]) -> None:
    lines = [line for line in licence("GPL-3").splitlines() if len(line.split()) > 8][:10]
    attributed = "\n".join(part for line in lines for part in (line, "-- GPL-3"))
    assert judge(attributed) is None
    assert judge(attributed, thresholds=ProseThresholds(min_duplicate_line_words=0)) == "duplicate_lines"
    proverbs = "\n".join(part for line in lines for part in (line, "--《谚语》"))  # two one-character words
    assert judge(proverbs) is None


def test_one_trailing_ellipsis_is_not_a_teaser_list(licence: Callable[[str], str]) -> None:
    second = [line for line in licence("GPL-3").splitlines() if len(line.split()) > 8][1]
    passage = " ".join(licence("GPL-3").split()[:80]) + " ...\n" + second
    assert judge(passage) is None
    assert judge(passage, thresholds=ProseThresholds(min_ellipsis_lines=1)) == "ellipsis_lines"


def test_repeated_paragraphs_are_dropped(licence: Callable[[str], str]) -> None:
    """A short notice between every paragraph: few repeated lines, but most paragraphs are repeats."""
    paragraphs = [p for p in licence("Apache-2.0").split("\n\n") if p.count("\n") >= 3][:6]
    notice = "Licensed under the Apache License, Version 2.0"
    text = "\n\n".join(part for paragraph in paragraphs for part in (paragraph, notice))
    doc = ProseDoc(text, EN_STOP)
    assert doc.paragraphs.count(notice) == 6
    assert judge(text) == "duplicate_paragraphs"
    assert judge("\n\n".join(paragraphs)) is None


def test_keyword_stuffing_is_dropped_by_ngram_shares(licence: Callable[[str], str]) -> None:
    words = licence("GPL-3").split()[:400]
    stuffed = " ".join(word + " free software" for word in words[:150])
    assert judge(stuffed, stop_words=frozenset()) == "top_ngram_share"
    copied = " ".join(words[:200] + words[50:120])  # a third of the text pasted again
    assert judge(copied) == "duplicate_ngram_share"


def test_word_lists_and_tag_spam_are_dropped(licence: Callable[[str], str]) -> None:
    vocabulary = sorted({word.strip(".,;:()\"'").lower() for word in licence("GPL-3").split()} - {""})
    assert judge("\n".join(f"• {word}" for word in vocabulary[:300])) == "bullet_lines"
    assert judge(" ".join(f"#{word}" for word in vocabulary[:300])) == "symbol_ratio"
    teasers = "\n".join(f"{' '.join(vocabulary[i : i + 12])} ..." for i in range(0, 360, 12))
    assert judge(teasers) in {"symbol_ratio", "ellipsis_lines"}


def test_number_tables_and_long_tokens_are_dropped(licence: Callable[[str], str]) -> None:
    gpl = licence("GPL-3")
    table = "\n".join(" ".join(f"{ord(c) / 7:.3f}" for c in line[:20]) for line in gpl.splitlines()[:40] if line)
    assert judge(table, stop_words=frozenset()) == "low_alpha_words"
    glued = " ".join("".join(line.split()) for line in gpl.splitlines()[:200] if line.strip())
    assert judge(glued) == "mean_word_length"


def test_word_count_bounds(licence: Callable[[str], str], udhr: dict[str, str]) -> None:
    assert judge(udhr["en"]) == "too_few_words"
    assert judge(licence("GPL-3"), thresholds=ProseThresholds(max_words=1000)) == "too_many_words"


def test_english_without_stop_words_is_dropped(licence: Callable[[str], str]) -> None:
    stop = set(GOPHER_ENGLISH_STOP_WORDS)
    stripped = " ".join(w for w in licence("GPL-3").split()[:500] if w.lower().strip(".,;:()") not in stop)
    assert judge(stripped) == "no_stop_words"
    assert judge(stripped, stop_words=frozenset()) is None

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import ftfy
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.clean.config import NormalizeConfig
from pretrain_core.clean.normalize import _PROSE_CONTROL, Normalizer, _code_fixer, _fix_by_runs, _Gate, _prose_fixer


def test_mojibake_in_real_text_is_repaired(udhr: dict[str, str]) -> None:
    for lang in ("de", "fr", "ru", "zh", "ja"):
        broken = udhr[lang].encode("utf-8").decode("windows-1252", errors="replace")
        if "\ufffd" in broken:  # bytes windows-1252 leaves undefined cannot round-trip: use latin-1 instead
            broken = udhr[lang].encode("utf-8").decode("latin-1")
        result = Normalizer(NormalizeConfig()).prose(broken)
        assert result.text == udhr[lang], lang
        assert result.ftfy_changed


def test_nfc_is_applied_and_reported(udhr: dict[str, str]) -> None:
    decomposed = unicodedata.normalize("NFD", udhr["fr"])
    assert decomposed != udhr["fr"]
    result = Normalizer(NormalizeConfig()).prose(decomposed)
    assert result.text == udhr["fr"] and result.form_changed
    untouched = Normalizer(NormalizeConfig(unicode_form="none")).prose(decomposed)
    assert untouched.text == decomposed


def test_cjk_fullwidth_punctuation_and_guillemets_survive(
    cjk_text: Callable[[str], str], man_page: Callable[..., str]
) -> None:
    chinese = cjk_text("gb2312")
    assert "（" in chinese and "，" in chinese
    assert Normalizer(NormalizeConfig()).prose(chinese).text == chinese
    german = man_page("diff3.1", "de")
    assert "»" in german or "„" in german
    assert Normalizer(NormalizeConfig()).prose(german).text.count("»") == german.count("»")


def test_control_characters_are_removed_but_line_structure_kept(licence: Callable[[str], str]) -> None:
    text = licence("GPL-3")[:2000]
    damaged = text.replace("\n", "\r\n").replace("GNU", "\x1b[1mGNU\x1b[0m").replace("software", "soft\x00ware")
    result = Normalizer(NormalizeConfig()).prose(damaged)
    assert result.text == text
    assert result.chars_removed == text.count("software")


def test_code_keeps_whitespace_exactly(stdlib_source: Callable[[str], str]) -> None:
    source = stdlib_source("email/_header_value_parser.py")
    with_layout = source.replace("\n", "\r\n", 50).replace("    ", "\t", 30) + "\f\n# end\v\n"
    result = Normalizer(NormalizeConfig()).code(with_layout)
    assert result.text == with_layout
    assert not result.ftfy_changed and result.chars_removed == 0


def test_code_gets_mojibake_fixed_without_other_changes(stdlib_source: Callable[[str], str]) -> None:
    source = stdlib_source("test/test_unicode_identifiers.py")
    assert not source.isascii()
    comment = "# Autor: Jürgen Müller — „Grüße“ &amp; café\r\n"
    broken = comment.encode("utf-8").decode("windows-1252")
    result = Normalizer(NormalizeConfig()).code(broken + source)
    assert result.text == comment + source
    assert result.ftfy_changed


def test_ftfy_can_be_switched_off(udhr: dict[str, str]) -> None:
    broken = udhr["de"].encode("utf-8").decode("windows-1252")
    assert Normalizer(NormalizeConfig(ftfy=False)).prose(broken).text == broken


def test_line_runs_give_ftfy_whole_result(man_page: Callable[..., str]) -> None:
    page = man_page("rename.2")
    assert not page.isascii() and any(line.isascii() for line in page.splitlines())
    cfg = NormalizeConfig()
    assert Normalizer(cfg).prose(page).text == ftfy.fix_text(page, _prose_fixer(cfg))


MOJIBAKE_PRONE = "aZ é€ÃÂ©®°·»«–—´¢£¥µ×²³Œœ‚„…†‡ˆ‰Š‹ŒŽ‘’“”•˜™š›žŸ ¡¿ÀÉØÙàâäçèêëìîïñòôöùûü═║╔ВГРСвЂΒΓΞΟβā€√≈"
TRIGGERS = "&\x1b[31m\r\n\u2028\u2029\x85\x80\x9fﬁﬂĳ\ud800\udc00"
OTHER = "人人生而自由カタカナ 한국어 Привет ﻿\t"


PIECES = ["&amp;", "&amp;amp;", "&lt;b&gt;", "&#x2019;", "\x1b[0m", "\x1b[31;1m", "\r\n", "\r", "\n", "Ã ", "Â ", "x"]


@settings(max_examples=400, deadline=None)
@given(
    st.text(st.sampled_from(MOJIBAKE_PRONE + TRIGGERS + OTHER + " \n"), max_size=60)
    | st.lists(st.sampled_from(PIECES + list("aé中 ")), max_size=30).map("".join)
)
def test_skipping_runs_ftfy_cannot_change_gives_ftfy_s_result(text: str) -> None:
    for cfg in (NormalizeConfig(), NormalizeConfig(unescape_html=True), NormalizeConfig(ftfy_mode="encoding_only")):
        normalizer = Normalizer(cfg)
        assert (
            normalizer.prose(text).text
            == normalizer._finish(text, ftfy.fix_text(text, _prose_fixer(cfg)), cfg.unicode_form, _PROSE_CONTROL).text
        )
    assert _fix_by_runs(text, _code_fixer(), _Gate(_code_fixer())) == ftfy.fix_text(text, _code_fixer())


def test_real_mojibake_is_sent_to_ftfy_and_clean_text_is_not(udhr: dict[str, str]) -> None:
    cfg = NormalizeConfig()
    gate = _Gate(_prose_fixer(cfg))
    anchored_and_other_fixers = ("Ã la carte", "été\nÃ la carte", "ok\nÂ bar", "日本\r\n語", "ﬁn", "x\u2028y")
    for broken in anchored_and_other_fixers:
        assert gate.may_change(broken)
        assert Normalizer(cfg).prose(broken).text == ftfy.fix_text(broken, _prose_fixer(cfg)) != broken
    for lang in ("de", "fr", "ru", "zh", "ja"):
        assert not gate.may_change(udhr[lang]), lang
        assert gate.may_change(udhr[lang].encode("utf-8").decode("latin-1")), lang


def test_ascii_text_gets_what_ftfy_gives_it() -> None:
    for cfg, text in (
        (NormalizeConfig(unescape_html=True), "a &amp; b &lt;tag&gt;"),  # entities, as in non-ASCII text
        (NormalizeConfig(), "a\r\x1b[0m\nb"),  # line breaks fixed before escapes, as ftfy orders them
    ):
        assert Normalizer(cfg).prose(text).text == ftfy.fix_text(text, _prose_fixer(cfg)) != text

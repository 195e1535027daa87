"""Reading real prose for the tagger: manual pages without markup, sentences, and their language."""

from __future__ import annotations

from pretrain_eval.pii_tagger.text_sources import (
    load_sentences,
    read_text,
    sentence_language,
    sentences_of,
    troff_to_text,
)
from tests.shipped_text import COREUTILS_MAN1, LICENCES, manual_pages


def test_troff_markup_is_removed_and_accents_resolved() -> None:
    source = (
        '.TH CHAGE 1\n.SH "BESCHREIBUNG"\n\\fBchage\\fR \\(:andert die Information\\&.\n.B chage\nund \\(`a la fin\n'
    )
    text = troff_to_text(source)
    assert "ändert die Information." in text
    assert "chage" in text and "à la fin" in text
    assert "\\f" not in text and ".TH" not in text


def test_real_manual_page_source_loses_its_markup() -> None:
    text = read_text(str(COREUTILS_MAN1 / "md5sum.1.gz"))
    assert text is not None and "Print or check MD5" in text
    assert ".TH" not in text and "\\f" not in text


def test_real_german_manual_page_gives_german_sentences() -> None:
    text = read_text(str(manual_pages("de", 1)[0]))
    assert text is not None
    langs = [sentence_language(s) for s in sentences_of(text)]
    assert "de" in langs


def test_sentence_language_by_script_and_stop_words() -> None:
    assert sentence_language("This is the end of the line and it is not a test.") == "en"
    assert sentence_language("Die Datei ist nicht vorhanden und wird mit dem Befehl erstellt.") == "de"
    assert sentence_language("Le fichier est dans le répertoire et vous pouvez le lire.") == "fr"
    assert sentence_language("这种语言具有非常简捷而清晰的语法特点。") == "zh"
    assert sentence_language("ファイルを開いてください。") == "ja"
    assert sentence_language("xz gzip bzip2") is None


def test_load_sentences_caps_each_source_and_is_sorted() -> None:
    found = load_sentences([str(LICENCES / "*")], per_pattern=50)
    assert 50 <= len(found["en"]) < 200
    assert found["en"] == sorted(found["en"])

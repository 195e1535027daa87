from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable

import pytest

from pretrain_core.clean.config import LangIdConfig
from pretrain_core.clean.langid import UNDETERMINED, detect_language, prose_sample, script_counts

CFG = LangIdConfig()


@pytest.mark.parametrize("lang", ["en", "de", "fr", "es", "ru", "zh", "ja", "ko"])
def test_udhr_article_1_is_identified(udhr: dict[str, str], lang: str) -> None:
    guess = detect_language(udhr[lang], CFG)
    assert guess.lang == lang
    assert CFG.min_confidence <= guess.score <= 1.0


@pytest.mark.parametrize(
    ("codec", "lang"),
    [("gb2312", "zh"), ("big5", "zh"), ("gb18030", "zh"), ("euc_jp", "ja"), ("shift_jis", "ja"), ("euc_kr", "ko")],
)
def test_cpython_cjk_texts_are_told_apart(cjk_text: Callable[[str], str], codec: str, lang: str) -> None:
    # big5 is traditional Chinese full of English terms ("fast prototyping"), euc_jp Japanese full of Han
    assert detect_language(cjk_text(codec), CFG).lang == lang


@pytest.mark.parametrize(
    ("lang", "page", "expected"),
    [("de", "diff3.1", "de"), ("fr", "join.1", "fr"), ("zh_CN", "diff.1", "zh"), ("ja", "od.1", "ja")],
)
def test_translated_man_pages(man_page: Callable[..., str], lang: str, page: str, expected: str) -> None:
    assert detect_language(man_page(page, lang), CFG).lang == expected


def test_command_synopsis_does_not_decide_the_language(man_page: Callable[..., str]) -> None:
    """Options and placeholders are letters without language (the shipped English pages have C synopses only)."""
    page = man_page("stty.1", "es")
    assert "stty [-F DISPOSITIVO | --file=DISPOSITIVO]" in page[:1000]
    assert "[-F DISPOSITIVO" not in prose_sample(page, CFG.prefix_chars, CFG.scan_chars)
    assert detect_language(page, CFG).lang == "es"


def test_undetermined_without_letters_or_evidence() -> None:
    assert detect_language("", CFG).lang == UNDETERMINED
    assert detect_language("3.14159 2.71828 1.41421 -- 42 %% 17", CFG).lang == UNDETERMINED
    assert detect_language("GNU GPL", CFG).lang == UNDETERMINED  # too few letters to be evidence of a language
    ambiguous = "Le gerarchie predefinite"  # Italian (catman(8)), but as likely Spanish or Portuguese by its n-grams
    guess = detect_language(ambiguous, CFG)
    assert guess.lang == UNDETERMINED and 0.0 < guess.score < CFG.min_confidence
    assert detect_language(ambiguous, LangIdConfig(min_confidence=0.0)).lang == "it"


def test_short_text_goes_to_the_common_language() -> None:
    """Plain langdetect calls this Dutch fragment (dpkg-maintscript-helper(1)) Afrikaans; the prior does not."""
    dutch = "Indien de omgeving niet"
    assert detect_language(dutch, CFG).lang == "nl"
    assert detect_language(dutch, LangIdConfig(prior={"af": 100.0, "nl": 1.0})).lang == "af"


def test_a_few_kana_or_hangul_words_decide_among_english_terms() -> None:
    # from the Debian handbook (ja) and passwd(5) (ko); langdetect says en and de
    assert detect_language("たとえば、x-window-manager", CFG).lang == "ja"
    assert detect_language("Dennis Ritchie는 말하기를,", CFG).lang == "ko"


def test_latin_abbreviations_do_not_pick_the_script() -> None:
    # ioctl_tty(2) in Russian: three Latin words, but most letters are Cyrillic
    assert detect_language("lb (mb, rb) обнуляются", CFG).lang == "ru"


def test_only_the_prefix_is_examined(udhr: dict[str, str], licence: Callable[[str], str]) -> None:
    english = licence("GPL-3")[:3000]
    chinese = udhr["zh"] * 200
    assert detect_language(english + chinese, CFG).lang == "en"
    assert detect_language(chinese + english, CFG).lang == "zh"


def test_scripts_are_counted_per_word(udhr: dict[str, str]) -> None:
    counts = script_counts(udhr["ja"])  # unsegmented: every Han and kana letter is a word
    assert counts.words["kana"] > 0 and counts.words["han"] > 0
    assert counts.total_words == counts.total_letters == counts.words["kana"] + counts.words["han"]
    counts = script_counts(udhr["ko"])
    assert set(counts.words) == {"hangul"} and counts.total_words == len(udhr["ko"].split())
    counts = script_counts("Dennis Ritchie는 말하기를,")
    assert counts.words == {"latin": 2, "hangul": 2} and counts.letters == {"latin": 13, "hangul": 5}


def test_same_answer_in_fresh_processes(udhr: dict[str, str], licence: Callable[[str], str]) -> None:
    """Plain langdetect draws random n-grams; our scoring uses all of them, so no process or order changes it."""
    gpl = licence("GPL-3")
    # Short and mixed texts are where langdetect's randomness shows (the last one is 'en' or 'de' by chance there).
    samples = [udhr["en"], udhr["de"], udhr["es"], gpl[5000:5300], "Ein kleiner Test with some English words mixed"]
    script = (
        "import json, sys\n"
        "from pretrain_core.clean.config import LangIdConfig\n"
        "from pretrain_core.clean.langid import detect_language\n"
        "texts = json.load(sys.stdin)\n"
        "print(json.dumps([[g.lang, g.score] for g in (detect_language(t, LangIdConfig()) for t in texts)]))\n"
    )
    answers = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps(samples),
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        ).stdout
        answers.add(out.strip())
    in_process = json.dumps([[g.lang, g.score] for g in (detect_language(t, CFG) for t in reversed(samples))][::-1])
    assert answers == {in_process}


def _rows_as_langdetect_makes_them(text: str) -> list[int]:
    """langdetect's own character-by-character n-gram loop, as the stage ran it before it worked per word."""
    from langdetect.utils.ngram import NGram

    from pretrain_core.clean.langid import _EMAIL, _URL, _profiles

    rows, ngram, found = _profiles().rows, NGram(), []
    for char in NGram.normalize_vi(_EMAIL.sub(" ", _URL.sub(" ", text))):
        ngram.add_char(char)
        if not ngram.capitalword:
            found += [rows[g] for g in (ngram.get(1), ngram.get(2), ngram.get(3)) if g and g in rows]
    return found


def test_ngram_rows_are_langdetects_in_its_order(udhr: dict[str, str], cjk_text: Callable[[str], str]) -> None:
    """Same rows in the same order (scores sum the same floats): the declaration of human rights in every
    language we ship it in, CJK prose, and random strings of capitals, spaces, kana, ideographs, punctuation and
    Romanian letters."""
    import random

    from pretrain_core.clean.langid import _profiles, _word_rows

    rng = random.Random(0)
    alphabet = "aB É\u3042\u30a2\u4e00 .,\nZZ-\u0219\u1ea1"
    samples = [t[:2000] for t in udhr.values()] + [cjk_text(codec)[:2000] for codec in ("gb2312", "euc_jp")]
    samples += ["", " ", "NATO and the USA.  x", "a", "a ", " a", "İstanbul"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    for text in samples:
        spaced, last = _profiles().words(text)
        rows = [row for word in spaced for row in _word_rows(word, True)] + list(_word_rows(last, False))
        assert rows == _rows_as_langdetect_makes_them(text), repr(text[:60])


def test_sums_of_word_sums_are_exact() -> None:
    """The premise that lets a text's score add up its words' sums in any order: every profile value is a float32
    whose magnitude is at least 1, so all are multiples of 2**-23 and no float64 partial sum of a text rounds."""
    import numpy as np

    from pretrain_core.clean.langid import _profiles

    values = np.abs(_profiles().log_probs)
    assert values.dtype == np.float32
    assert values.min() >= 1.0
    assert values.max() * 3 * 10**6 < 2.0**30  # three n-grams per character of a sample of a million characters


def test_word_sums_score_as_every_ngram_does(udhr: dict[str, str]) -> None:
    """The kept word sums give bit for bit the sum over every n-gram, for texts seen for the first time, again, and
    after the table started afresh."""
    import numpy as np

    from pretrain_core.clean import langid

    scores = langid._ScriptScores(langid._script_scores("latin")._log_probs)
    columns = [langid._profiles().columns[lang] for lang in langid.SHARED_SCRIPT_LANGUAGES["latin"]]
    log_probs = langid._profiles().log_probs[:, columns]
    long_word = "Donaudampfschifffahrtsgesellschaftskapitän"
    texts = [udhr[lang] for lang in ("en", "de", "fr", "es")] + [f"{long_word} words {long_word} words", "", "a "]
    for _ in range(2):
        for text in texts:
            spaced, last = langid._profiles().words(text)
            rows = [row for word in spaced for row in langid._word_rows(word, True)]
            rows += langid._word_rows(last, False)
            total, ngrams = scores.log_likelihood(spaced, last)
            assert ngrams == len(rows)
            assert np.array_equal(total, log_probs[rows].astype(np.float64).sum(axis=0))
        scores._filled = langid._CACHED_WORDS - 5  # the next text does not fit: the table starts afresh


def test_shard_tasks_in_threads_get_the_answers_of_one_thread(licence: Callable[[str], str]) -> None:
    """Threads share the word table (the stage's default runs shards in threads): answers must not depend on how
    their calls interleave, even while the table fills and starts afresh."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from pretrain_core.clean import langid

    texts = [
        text[start : start + 700]
        for name in ("GPL-3", "Apache-2.0", "Artistic", "MPL-2.0")
        for text in [licence(name)]
        for start in range(0, len(text) - 700, 350)
    ]
    langid._script_scores.cache_clear()
    expected = [detect_language(text, CFG) for text in texts]
    interval = sys.getswitchinterval()
    try:
        sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
        for cached_words in (langid._CACHED_WORDS, 300, langid._CACHED_WORDS, 300):  # 300: it fills again and again
            langid._script_scores.cache_clear()
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(langid, "_CACHED_WORDS", cached_words)
                with ThreadPoolExecutor(4) as pool:
                    answers = list(pool.map(lambda text: detect_language(text, CFG), texts))
            assert answers == expected
    finally:
        sys.setswitchinterval(interval)
        langid._script_scores.cache_clear()

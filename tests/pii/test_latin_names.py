"""Names in Latin-script running text: kinship and speech cues, further mentions of a name found once, and lone
capitalised words, which are names only in languages that write nouns in lower case."""

from __future__ import annotations

import pytest

from pretrain_core.pii.classifier import NameAddressTagger, lowercase_vocabulary
from pretrain_core.pii.latin_names import cued_names, further_mentions, lone_first_names
from pretrain_core.pii.name_lists import first_names_with_other_senses
from pretrain_core.pii.spans import Span

THRESHOLD = 0.8


def persons(tagger: NameAddressTagger, text: str, lang: str | None) -> list[str]:
    spans = tagger.find_spans([text], THRESHOLD, [lang])[0]
    return [text[s.start : s.end] for s in spans if s.type == "person"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("The letter was carried by the daughter of Ormund across the valley.", "Ormund"),
        ("When the council met, Tavish answered that the bridge would hold.", "Tavish"),
        ("Asked about the delay, Brannock commented that the parts had not arrived.", "Brannock"),
        ("At the gate the keeper said to Fenwick that the road was closed.", "Fenwick"),
        ("They sang a short song by Ysolde before the meeting.", "Ysolde"),
        ("Le registre nomme le fils de Gaspardin comme témoin.", "Gaspardin"),
        ("In the third year of Orlen king of Tavar the walls were rebuilt.", "Orlen"),  # a title in apposition
        ("The letter was read aloud by Brannock the scribe.", "Brannock"),
        ("Later that year Mirela Vostok commented on the plan.", "Mirela Vostok"),  # the whole name, cut at "year"
        ("Professor Ada J. Brannock said the parts were late.", "Ada J. Brannock"),  # an initial inside
        ("The hall was built for Senator Ormund Pell in the spring.", "Ormund Pell"),  # a title before the name
        ("President Mirela\n  E. Gray opened the meeting.", "Mirela\n  E. Gray"),  # a surname that is also a word
        ("They counted the offspring of Tavish among the guests.", "Tavish"),
        ("Brannock's long, strange cyberpunk novel sold well.", "Brannock"),  # an author's work, words between
    ],
)
def test_kinship_and_speech_cues_name_unknown_words(text: str, name: str) -> None:
    found = [text[s.start : s.end] for s in cued_names(text, lowercase_vocabulary())]
    assert found == [name]


def test_cue_words_before_common_words_find_nothing() -> None:
    text = "He said that the son of man is not a name, and it answered nothing."
    assert cued_names(text, lowercase_vocabulary()) == []


def test_a_title_before_common_words_names_nobody() -> None:
    text = "It ships under the GNU General Public License; King Arthur's court is a legend, King A. a letter."
    found = [text[s.start : s.end] for s in cued_names(text, lowercase_vocabulary())]
    assert found == ["Arthur"]


def test_the_end_of_a_quotation_before_an_inverted_speech_verb_is_no_speaker() -> None:
    text = "They will come to my holy mountain Ostrava, says the keeper of the gate."
    assert cued_names(text, lowercase_vocabulary()) == []
    assert [text[s.start : s.end] for s in cued_names(text.replace(", says", " says"), lowercase_vocabulary())] == [
        "Ostrava"  # without the comma it reads as the speaker
    ]


def test_a_capitalised_noun_after_an_article_is_no_name_before_a_cue() -> None:
    text = "She bought the field from the Moabitess, the wife of the dead man."
    assert cued_names(text, lowercase_vocabulary()) == []


def test_every_further_mention_of_a_found_name_is_marked() -> None:
    text = "Ormund Pell wrote the first draft. Two years later Ormund rewrote it; the Pell family kept it."
    first = Span(0, len("Ormund Pell"), "person")
    mentions = [text[s.start : s.end] for s in further_mentions(text, [first], lowercase_vocabulary())]
    assert mentions == ["Ormund", "Pell", "Ormund", "Pell"]  # the found span itself is among them


def test_a_lone_first_name_inside_an_english_sentence_is_a_name(tagger: NameAddressTagger) -> None:
    text = "It rained all day. Then Margaret went back to the house."
    assert persons(tagger, text, "en") == ["Margaret"]
    assert persons(tagger, text, None) == []  # no language known: no lone words


def test_a_first_name_alone_is_a_name_unless_it_is_a_common_word_or_has_another_sense(
    tagger: NameAddressTagger,
) -> None:
    text = (
        "On the day you buy the field from the hand of Naomi, the river Jordan is low. Did Mark write it in Ruby "
        "in June? Ask Saul or SAUL. Naomi went home."
    )
    first_names = tagger.featurizer.known_first_names
    assert {"naomi", "saul", "jordan", "ruby", "june", "mark"} <= first_names  # every word here could be a name
    found = lone_first_names(text, first_names, lowercase_vocabulary(), first_names_with_other_senses())
    # Jordan, Ruby and June have another sense, "mark" is a common word, "SAUL" is no name's spelling, and the
    # last Naomi starts a sentence.
    assert [text[s.start : s.end] for s in found] == ["Naomi", "Saul"]
    assert persons(tagger, text, "en") == ["Naomi", "Saul", "Naomi"]  # the last by further mention


def test_lone_words_are_names_only_where_nouns_are_written_in_lower_case(tagger: NameAddressTagger) -> None:
    text = "Es regnete den ganzen Tag. Dann ging Margaret zurück ins Haus."
    assert persons(tagger, text, "de") == []  # German capitalises every noun: a lone word proves nothing


def test_tagger_guesses_on_lines_of_classical_verse_are_dropped(tagger: NameAddressTagger) -> None:
    text = "危楼高百尺，手可摘星辰。\n不敢高声语，恐惊天上人。\n    -- 李白《夜宿山寺》"
    assert persons(tagger, text, "zh") == ["李白"]

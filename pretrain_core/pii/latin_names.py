"""Names in Latin-script prose found through the words around them, and every further mention of a name found once.

The tagger learns names from the contexts of its training frames; running text names people in others: kinship
("the son of Nebat", "la fille de Jaïre"), speech ("Naomi said", "Moses answered") and a name that recurs bare
after one confident mention ("Rachel ... Leah ... Rachel"). A cue next to a capitalised word that edited text
never writes in lower case is strong evidence on its own; a word already tagged as a name once in a document is
a name wherever else it stands there capitalised. Both only run where lone words may be names (languages that
write nouns in lower case, `classifier.NOUN_CAPITALISING`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from pretrain_core.pii.spans import Span

_NAME = r"([A-Z][a-zà-öø-ÿ]+(?:-[A-Z][a-zà-öø-ÿ]+)?)"
_KIN = (
    r"(?:son|daughter|wife|husband|brother|sister|father|mother|widow|grandson|granddaughter|nephew|niece|uncle"
    r"|aunt|cousin|friend|servant)"
)
# Cues with the name after them: kinship ("the son of Nebat", "le fils de Jaïre"; en, fr, es, it, pt, nl) and a
# possessive kinship word ("my brother Benjamin"). The scan looks for " of Name" / " brother Name" (a literal
# space first is what keeps it fast) and then reads the word before.
_CUE_THEN_NAME = re.compile(r" (?:(?:of|de|d[eo]s|di|del|van)\s+|" + _KIN + r" )" + _NAME)
_KIN_WORD_BEFORE = re.compile(
    r"(?<![\w-])(?:sons?|daughters?|wife|husband|brother|sister|father|mother|widow|grandson|granddaughter|nephew"
    r"|niece|offspring|descendants?|fils|fille|femme|mari|frère|sœur|père|mère|veuve|hij[oa]s?|espos[oa]"
    r"|herman[oa]|padre|madre|figli[oa]|moglie|marito|fratello|sorella|filh[oa]s?|irmã|irmão|zoon|dochter|vrouw"
    r"|broer|zuster)$"
)
# A title before a name ("President Paul E. Gray", "King Saul", "Professor Ada Brannock"); titles that also start
# names of places and things ("Prince Edward Island", "General Electric") are not among them.
_TITLE_THEN_NAME = re.compile(
    r"[PKQES](?<![\w-][PKQES])(?:resident|ing|ueen|mperor|rofessor|enator)\s+"  # the first letter first: fast
    r"((?:(?:[A-Z][a-zà-öø-ÿ]+|[A-Z]\.)\s+){0,2}" + _NAME + r")"
)
_POSSESSIVE_BEFORE = re.compile(r"(?<![\w-])(?:my|his|her|our|their|your)$", re.IGNORECASE)
# Cues with the name before them: apposition ("Jedidah the daughter of", "Pekahiah his son", "Azariah king of
# Judah", "Hilkiah the priest") and speech ("Naomi said"). The cue is searched for, then the words before it are
# read: scanning for the cue alone is several times faster than trying a name at every capital letter.
_CUE_AFTER_NAME = re.compile(
    r" (?:(?:the|his|her|their|whose) " + _KIN + r"|(?:king|queen|prince|princess|governor|emperor) of"
    r"|the (?:priest|prophet|prophetess|scribe|apostle)|(?P<speech>said|says|answered|replied|asked|wrote|writes"
    r"|told|cried|called|commented|added|explained|noted|remarked|exclaimed|shouted|whispered|dit|répondit"
    r"|demanda|dijo|respondió|disse|zei|antwoordde))\b"
)
# Speech addressed to someone ("said to Tobias", "wrote to Mirela") and authorship ("a poem by Mirela").
_SPEECH_TO_NAME = re.compile(
    r" (?:(?:said|spoke|wrote|replied|answered|cried|called|told) to|(?:written|composed|translated|poem|song|psalm"
    r"|letter|novel|story|essay|sermon|painting|photo|photograph) by) " + _NAME
)
# An author's possessive before a kind of work, up to three words between ("Stephenson's epic, comic cyberpunk
# novel", "Ysolde's last poems"). The scan looks for the work (rare words), then reads the possessive before it.
_WORK = re.compile(r" (?:novels?|poems?|plays?|essays?|songs?|stories|story|sermons?|symphony|paintings?)\b")
_AUTHOR_BEFORE = re.compile(r"(?<![\w@./'’-])" + _NAME + r"['’]s (?:[\w-]+,? ){0,3}$")
# Up to three capitalised words or initials right before a cue ("Derek Bok commented", "Paul E. Gray said"); the
# words that edited text writes in lower case are then cut from its front ("Then Naomi said").
_NAMES_BEFORE = re.compile(r"(?<![\w@./'’-])((?:(?:[A-Z][a-zà-öø-ÿ]+|[A-Z]\.)\s+){0,2}" + _NAME + r"),?$")
_NAME_BEFORE = re.compile(r"(?<![\w@./'’-])" + _NAME + r",?$")  # its last word alone: the cheap test first
# "the" right before a capitalised word: a title, a place or a noun ("the Sesame Street Songbook", "the Moabitess"),
# since English puts no article before a person's name; searched in the few characters before a candidate.
ARTICLE_BEFORE = re.compile(r"(?<![\w-])(?:the|The|THE)\s+$")
# `(?<![\w@./-])[A-Z][^\W\d_]+(?![\w@/-])`, first character first (see pii/detectors.py)
_CAPITALISED_WORD = re.compile(r"[A-Z](?<![\w@./-][A-Z])[^\W\d_]+(?![\w@/-])")
_TITLE_CASE_WORD = re.compile(r"[A-Z](?<![\w@./-][A-Z])[a-zà-öø-ÿ]+(?![\w@/-])")  # "Naomi", not "NAOMI" or "McKay"
_RELATION_STARTS = frozenset({"of", "de", "di", "va", "do"})  # " of X", " de X", " des X", " del X", " van X"
_LOOK_BACK = 40  # characters before a cue searched for the name


def cued_names(text: str, common: Collection[str]) -> list[Span]:
    """Capitalised words next to a kinship or speech cue that are not common words (`common`: lower-cased
    words edited text writes in lower case: "He said", "the son of God" are no names)."""
    spans = []
    for match in _CUE_THEN_NAME.finditer(text):
        before = _KIN_WORD_BEFORE if match.group(0)[1:3] in _RELATION_STARTS else _POSSESSIVE_BEFORE
        if before.search(text, max(0, match.start() - _LOOK_BACK), match.start()) is None:
            continue
        if match.group(1).lower() not in common:
            spans.append(Span(match.start(1), match.end(1), "person"))
    for match in _SPEECH_TO_NAME.finditer(text):
        if match.group(1).lower() not in common:
            spans.append(Span(match.start(1), match.end(1), "person"))
    for match in _WORK.finditer(text):
        author = _AUTHOR_BEFORE.search(text, max(0, match.start() - _LOOK_BACK), match.start() + 1)
        if author is not None and author.group(1).lower() not in common:
            spans.append(Span(author.start(1), author.end(1), "person"))
    for match in _CUE_AFTER_NAME.finditer(text):
        name = _name_before(text, match.start(), common, speech=match.group("speech") is not None)
        if name is not None:
            spans.append(name)
    for match in _TITLE_THEN_NAME.finditer(text):
        name = _name_after(match, common)
        if name is not None:
            spans.append(name)
    return sorted(set(spans), key=lambda s: (s.start, s.end))  # two cues can name one word


def _name_after(title: re.Match[str], common: Collection[str]) -> Span | None:
    """The capitalised words after a title when the first of them is not a common word ("King David"; "President
    Paul E. Gray", whose surname is also a word; not "General Public License")."""
    if title.group(1).split(maxsplit=1)[0].lower() in common:
        return None
    return Span(title.start(1), title.end(1), "person")


def _name_before(text: str, cue: int, common: Collection[str], speech: bool) -> Span | None:
    """The name that ends right before a cue: its capitalised words after the last common one, the last word
    itself not common, and no article before the name (a noun then: "the Moabitess, the wife of"). A comma may
    set off an apposition ("Azariah, king of") but not a speaker: "to my holy mountain Jerusalem, says Yahweh" ends
    a quotation, and the speaker follows the verb."""
    window = max(0, cue - _LOOK_BACK)
    last = _NAME_BEFORE.search(text, window, cue)  # most cues follow no capitalised word ("he said")
    if last is None or last.group(1).lower() in common or (speech and last.group().endswith(",")):
        return None
    found = _NAMES_BEFORE.search(text, window, cue)
    assert found is not None  # it ends with the word `last` found
    start = found.start(1)
    for word in re.finditer(r"\S+\s+", found.group(1)):
        if word.group().rstrip().lower() not in common:
            break
        start = found.start(1) + word.end()
    if ARTICLE_BEFORE.search(text, max(0, start - 8), start):
        return None
    return Span(start, found.end(2), "person")


def sentence_start(text: str, position: int) -> bool:
    """Whether `position` starts a sentence, a line or the text (behind opening quotes or brackets, or a run of
    blanks longer than the look-back), where every word is capitalised."""
    before = text[max(0, position - _LOOK_BACK) : position].rstrip(" \t\"'“‘([«")  # a window: no copy of the text
    return not before or before[-1] in ".!?:;\n…" or before.endswith(("--", "—"))


def lone_first_names(
    text: str, first_names: Collection[str], common: Collection[str], other_senses: Collection[str]
) -> list[Span]:
    """Capitalised first names standing alone inside a sentence ("the hand of Naomi", "even Moses"), where the
    tagger, which learnt names as first and last name together, is rarely sure: a person, unless edited text
    writes the word in lower case ("Will", "Mark") or it also names a well-known place, a programming language, a
    month or a weekday ("Jordan", "Ruby", "June"; `name_lists.first_names_with_other_senses`)."""
    return [
        Span(match.start(), match.end(), "person")
        for match in _TITLE_CASE_WORD.finditer(text)
        if (folded := match.group().lower()) in first_names
        and folded not in common
        and match.group() not in other_senses
        and not sentence_start(text, match.start())
    ]


def further_mentions(text: str, people: list[Span], common: Collection[str]) -> list[Span]:
    """Every other capitalised whole-word occurrence in `text` of a word of a found name that is not a common
    word, so that a name redacted once is not left readable two lines on."""
    words = {
        word
        for span in people
        for word in re.findall(r"[^\W\d_]+", text[span.start : span.end])
        if len(word) > 2 and word[0].isupper() and word.lower() not in common
    }
    if not words:
        return []
    return [Span(m.start(), m.end(), "person") for m in _CAPITALISED_WORD.finditer(text) if m.group() in words]

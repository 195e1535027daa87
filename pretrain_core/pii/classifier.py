"""The learned detector for what patterns miss: a token tagger for person names and street addresses.

A multinomial logistic regression over token, context and name-list features (`tokens.Featurizer`) labels each
candidate token as the first or a further token of a person or an address, or neither; runs of tagged tokens
become spans, which shape checks then vet. It is linear and small on purpose: it trains in seconds, and
prediction for a whole shard is one vocabulary lookup per token type plus a few numpy operations. The model is
trained once, offline (`python -m pretrain_eval.pii_tagger`), and shipped with the package as safetensors: the
arrays as tensors, the vocabularies and name lists as JSON metadata, so loading it runs no code from the file.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import safetensors.numpy
from safetensors import SafetensorError

from pretrain_core import storage
from pretrain_core.pii.address_patterns import find_addresses
from pretrain_core.pii.cjk_names import CjkNames, has_cjk_cue
from pretrain_core.pii.key_index import KeyIndex
from pretrain_core.pii.latin_names import (
    ARTICLE_BEFORE,
    cued_names,
    further_mentions,
    lone_first_names,
    sentence_start,
)
from pretrain_core.pii.name_lists import chinese_surnames, first_names_with_other_senses, japanese_names
from pretrain_core.pii.spans import Span
from pretrain_core.pii.token_spans import scan_token_spans
from pretrain_core.pii.tokens import Featurizer, lexical, token_texts
from pretrain_core.quality.reference import shipped_records

LABELS = ("O", "person", "address")
# Trained classes: the first token of a name or address is told apart from the rest, which separates "the
# word after a comma that starts an address" from "a word inside a name" far better than one class per kind.
CLASSES = ("O", "B-person", "I-person", "B-address", "I-address")
_CLASS_LABEL = np.array([0, 1, 1, 2, 2])
MODEL_FORMAT = 3  # 2: pickled (no longer read); 3: safetensors
# The model shipped with the package, built by `python -m pretrain_eval.pii_tagger`.
SHIPPED_MODEL = "pii_tagger.safetensors"
# Spans grow from tokens at the threshold through neighbours at this fraction of it (hysteresis), so a confident
# surname pulls in a less certain first name instead of leaving half a name unredacted.
_CONTINUE_FRACTION = 0.5
# Non-candidate tokens a span may bridge: at most this many, and for names only particles ("van", "de"), the
# dot of an initial ("J."), hyphens and the Japanese name separator.
_MAX_GAP = {"person": 2, "address": 5}
_NAME_CONNECTORS = {"・", "-", "'"}
_NAME_PARTICLES = {
    "van", "von", "der", "den", "de", "di", "da", "du", "la", "le", "del", "della", "dos", "das", "ten", "ter",
    "bin", "ibn", "al", "zu", "y",
}  # fmt: skip
# For addresses also lower-case words ("rue de la"), commas and the signs of flat and house numbers; not table
# rules or brackets, which chain unrelated cells together.
_ADDRESS_CONNECTORS = {",", ".", "-", "/", "#", "'", "°", "º", "、", "，"}
# Chinese and Japanese addresses name a province, city, district, street or block (Taiwan and Hong Kong write
# them in traditional characters: 縣, 區, 號, 樓).
_CJK_ADDRESS_MARK = re.compile(r"[省市区區县縣镇鎮乡鄉村路街道巷号號弄座楼樓室都府県郡町丁目番地]")
_CJK_TITLE = re.compile(
    r"先生|女士|小姐|老师|教授|博士|同学|经理|主任|医生|律师|同志|总监|师傅|さん|様|氏|君|ちゃん|部長|課長|社長|殿"
)
# Words no name starts with, though sentences often do ("Unsere Postanschrift", "Letzte Woche", "The Hurd"):
# articles, possessives, demonstratives and time adjectives in en, de and fr (not "a", "le" or "la", which
# are also initials and name particles).
_NOT_A_NAME_START = {
    "the", "an", "our", "your", "my", "his", "her", "their", "this", "that", "these", "those", "every", "last",
    "next", "der", "die", "das", "dem", "den", "des", "ein", "eine", "einen", "einem", "einer", "unsere", "unser",
    "ihre", "ihr", "meine", "mein", "deine", "dein", "seine", "sein", "diese", "dieser", "dieses", "jede", "jeder",
    "alle", "letzte", "nächste", "les", "un", "une", "notre", "nos", "votre", "vos", "mon", "ma",
    "mes", "son", "sa", "ses", "ce", "cette", "ces", "chaque",
}  # fmt: skip
_CLAUSE_BREAK = re.compile(r"[，。、；：！？,;:!?“”「」]")
_INNER_CAPITAL = re.compile(r".[a-z][A-Z]")
_ELISION = re.compile(r"^[A-Za-z][’']")
_CJK_CLASS = "[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]"
_CJK_CHAR = re.compile(_CJK_CLASS)
_CJK_NAME = re.compile(_CJK_CLASS + "+")  # no space, no Latin letter
_KANA_CHAR = re.compile(r"[\u3040-\u30ff]")
_WORD = re.compile(r"[^\W\d_]+")
_COMMON_WORD_COUNT = 3
_SEPARATORS = " \t\n,;:-–—'"
_DIGIT = re.compile(r"\d")
# After a street or town name: more address words, then a UK postcode, a US state and ZIP code, or a postcode.
_POSTCODE_AFTER = re.compile(
    r"(?:,\s*[A-Z][\w'-]*(?:\s[A-Z][\w'-]*){0,2}){0,2},\s*(?:GB-\w+\s)?"
    r"(?:[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|[A-Z]{2}\s\d{5}|\d{4,5})\b"
)
_LATIN_LETTER = re.compile(r"[A-Za-z]")
_KATAKANA_EDGE = re.compile(r"[\u30a1-\u30fa\u30fc]{2}")  # a span edge between two katakana cuts a word
# Three groups of four digits in a row: a card, account or reference number, never part of an address.
_DIGIT_GROUPS = re.compile(r"\b\d{4}[ -]\d{4}[ -]\d{4}\b")
# Words no name holds: company forms ("Canonical Ltd") and the endings of German and English common nouns
# ("Anweisung", "Personal Computern", "Spenden-Website"), which German capitalises like names.
_NOT_A_NAME_PART = re.compile(
    r"^(?:Ltd|Inc|Corp|LLC|GmbH|AG|SA|SAS|SARL|KG|plc|Co)$|.{5}(?:ung|heit|keit|schaft|tion|tät|ismus|site|ware)$|.{4}ics$"
)
# Languages that capitalise every noun: there a lone capitalised word inside a sentence is no sign of a name.
NOUN_CAPITALISING = frozenset({"de", "lb"})
_TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "herr", "frau", "m", "mme", "mlle", "monsieur", "madame"}


@dataclass(frozen=True)
class TaggedText:
    text: str
    starts: np.ndarray  # offsets of the text's tokens (`tokens.token_texts`)
    ends: np.ndarray
    candidates: np.ndarray  # token indices of the candidate tokens
    probabilities: np.ndarray  # (len(candidates), len(LABELS))

    def tokens(self, first: int, stop: int) -> list[str]:
        """The text of tokens first .. stop - 1 (only where decoding reads them: no string per token otherwise)."""
        first, stop = max(first, 0), min(stop, len(self.starts))
        return [self.text[self.starts[k] : self.ends[k]] for k in range(first, stop)]


class NameAddressTagger:
    """A featurizer, the feature keys it was trained on (sorted), their weights (row 0: unknown, zero) and bias."""

    def __init__(self, featurizer: Featurizer, keys: np.ndarray, weights: np.ndarray, bias: np.ndarray) -> None:
        if weights.shape != (len(keys) + 1, len(CLASSES)) or bias.shape != (len(CLASSES),):
            raise ValueError(f"tagger weights {weights.shape} / bias {bias.shape} do not fit {len(keys)} features")
        self.featurizer = featurizer
        single = [n for n in featurizer.last_names if len(n) == 1]
        family, given = japanese_names()
        self.cjk_names = CjkNames(
            [*chinese_surnames(), *single], [*family, *featurizer.cjk_family, *single], [*given, *featurizer.cjk_given]
        )
        self.keys = keys.astype(np.int64)
        self.index = KeyIndex.of(self.keys)
        self.weights = weights.astype(np.float32)
        self.bias = bias.astype(np.float32)

    def to_bytes(self) -> bytes:
        """The model as safetensors; equal models give equal bytes."""
        # One metadata entry: safetensors writes several in no fixed order, and equal models must give equal bytes.
        about = {"format": MODEL_FORMAT, "labels": list(CLASSES), "featurizer": self.featurizer.__getstate__()}
        metadata = {"pii_tagger": json.dumps(about, ensure_ascii=False)}
        tensors: dict[str, np.ndarray] = {"keys": self.keys, "weights": self.weights, "bias": self.bias}
        return bytes(safetensors.numpy.save(tensors, metadata=metadata))

    @classmethod
    def from_bytes(cls, data: bytes) -> NameAddressTagger:
        try:
            tensors = safetensors.numpy.load(data)
            header = json.loads(data[8 : 8 + int.from_bytes(data[:8], "little")])  # the format's JSON header
        except (SafetensorError, ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"not a PII tagger model (safetensors expected): {exc}") from None
        about = json.loads((header.get("__metadata__") or {}).get("pii_tagger", "{}"))
        if about.get("format") != MODEL_FORMAT or about.get("labels") != list(CLASSES):
            raise ValueError(
                f"not a PII tagger model of format {MODEL_FORMAT}: rebuild it (python -m pretrain_eval.pii_tagger)"
            )
        return cls(Featurizer(**about["featurizer"]), tensors["keys"], tensors["weights"], tensors["bias"])

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        """Label probabilities of every candidate token of every text, computed for the batch at once."""
        spans = scan_token_spans(list(texts))
        keys, candidates = self.featurizer.candidate_keys(texts, spans)
        rows = self.index.rows_of(keys)  # what feature_rows(self.keys, keys) gives, by hashing
        logits = np.tile(self.bias, (len(rows), 1))
        for kind in range(rows.shape[1]):  # one feature kind at a time: no (tokens x kinds x classes) array
            logits += self.weights[rows[:, kind]]
        logits -= logits.max(axis=1, keepdims=True)
        per_class = np.exp(logits)
        per_class /= per_class.sum(axis=1, keepdims=True)
        probabilities = np.zeros((len(per_class), len(LABELS)), dtype=np.float32)
        np.add.at(probabilities.T, _CLASS_LABEL, per_class.T)
        out, offset = [], 0
        for d, (text, indices) in enumerate(zip(texts, candidates, strict=True)):
            starts, ends = spans.of(d)
            chosen = probabilities[offset : offset + len(indices)]
            out.append(TaggedText(text, starts, ends, indices, chosen))
            offset += len(indices)
        return out

    def find_spans(
        self, texts: Sequence[str], threshold: float, langs: Sequence[str | None] | None = None
    ) -> list[list[Span]]:
        """Person and address spans per text: the tagger's (see `decode_spans`) less those shape and context
        checks reject (a lone capitalised word is a name only in a known language that writes nouns in lower
        case, see `_plausible`), names next to cues (`cjk_names`, `latin_names`) where the tagger found nothing,
        further mentions of names found, and addresses of regular shape (`address_patterns`), which replace
        whatever tagger spans they overlap."""
        found = []
        lone_words = [bool(lang) and lang not in NOUN_CAPITALISING for lang in langs or [None] * len(texts)]
        for tagged, lone in zip(self.tag(texts), lone_words, strict=True):
            spans = [
                s
                for s in decode_spans(tagged, threshold, self.featurizer.known_first_names if lone else frozenset())
                if self._named_by_family(tagged.text, s)
                and not _in_verse(tagged.text, s)
                and not _in_title_tail(tagged.text, s)
            ]
            if lone:
                spans = self._with_lone_first_names(tagged.text, spans)
            spans = _without_towns(
                tagged.text, _without_common_nouns(tagged.text, _without_articled(tagged.text, spans))
            )
            spans = self._without_leading_common_words(tagged.text, spans)
            spans = _without_address_lines(tagged.text, spans)
            if lone:
                spans = _with_latin_mentions(tagged.text, spans)
            if has_cjk_cue(tagged.text):
                spans += [t for t in self.cjk_names.find(tagged.text) if not any(_overlap(t, s) for s in spans)]
                spans = _with_cjk_mentions(tagged.text, spans)
            addresses = find_addresses(tagged.text)
            if addresses:
                spans = [s for s in spans if not any(_overlap(s, a) for a in addresses)] + addresses
            found.append(spans)
        return found

    def _without_leading_common_words(self, text: str, spans: list[Span]) -> list[Span]:
        """Latin-script person spans cut after their leading common words, dropped when nothing is left: a word
        edited text writes in lower case ("gewisse", "digital", "chief", "president") starts no name unless it
        is a known first name ("Bill", "Mark"); a single word left over must be a known name. German capitalises
        every noun and the adjective before it, which is how "Gewisse Programmpakete" or "Verfügbare IP-Adressen"
        looked like names."""
        common = lowercase_vocabulary()
        out = []
        for span in spans:
            covered = text[span.start : span.end]
            if span.type != "person" or _CJK_CHAR.search(covered):
                out.append(span)
                continue
            start = span.start
            for word in _WORD.finditer(covered):
                folded = word.group().lower()
                if folded not in common or folded in self.featurizer.known_first_names:
                    break
                start = span.start + word.end()
            else:
                continue  # every word common: no name
            if start == span.start:
                out.append(span)
                continue
            rest = text[start : span.end].lstrip(_SEPARATORS)
            words = _WORD.findall(rest)
            if len(words) == 1 and words[0].lower() not in self.featurizer.known_names:
                continue  # "Verfügbare IP-Adressen" leaves "Adressen": a noun, not a surname
            out.append(Span(span.end - len(rest), span.end, span.type))
        return out

    def _with_lone_first_names(self, text: str, spans: list[Span]) -> list[Span]:
        """The spans, plus first names standing alone where no span lies yet (`latin_names.lone_first_names`); the
        checks after it (an article before, a word the document also writes in lower case) apply to them too."""
        found = lone_first_names(
            text, self.featurizer.known_first_names, lowercase_vocabulary(), first_names_with_other_senses()
        )
        return sorted(spans + _free(found, spans), key=lambda s: (s.start, s.end)) if found else spans

    def _named_by_family(self, text: str, span: Span) -> bool:
        """A Chinese or Japanese name starts with a family name of the lists ("奔腾", a CPU, and "防火墙" cut in
        two do not), and does not cut a katakana word or mix in Latin letters ("パスワ|ード", "Mach マ")."""
        covered = text[span.start : span.end]
        if span.type != "person" or not _CJK_CHAR.search(covered):
            return True
        if _LATIN_LETTER.search(covered) or _KATAKANA_EDGE.fullmatch(text[max(0, span.start - 1) : span.start + 1]):
            return False
        if _KATAKANA_EDGE.fullmatch(text[span.end - 1 : span.end + 1]):
            return False
        return self.cjk_names.starts_with_family(covered, japanese=_KANA_CHAR.search(text) is not None)


@functools.cache
def lowercase_vocabulary() -> frozenset[str]:
    """Words the shipped quality reference (edited prose in seven languages, never the tagger's training text)
    writes in lower case at least `_COMMON_WORD_COUNT` times."""
    counts: Counter[str] = Counter()
    for record in shipped_records("prose"):
        counts.update(w for w in _WORD.findall(record["text"]) if w.islower())
    return frozenset(word for word, count in counts.items() if count >= _COMMON_WORD_COUNT)


def _with_latin_mentions(text: str, spans: list[Span]) -> list[Span]:
    """The spans, plus names next to kinship and speech cues, then further mentions of every name found so far
    (`latin_names`), each where no span lies yet."""
    common = lowercase_vocabulary()
    taken = list(spans)
    taken += _free(cued_names(text, common), taken)
    people = [s for s in taken if s.type == "person" and not _CJK_CHAR.search(text[s.start : s.end])]
    taken += _free(further_mentions(text, people, common), taken)
    return sorted(taken, key=lambda s: (s.start, s.end))


def _with_cjk_mentions(text: str, spans: list[Span]) -> list[Span]:
    """The spans, plus every further occurrence of a Chinese or Japanese name found once (two characters or more)
    where no span lies yet: a name redacted once must not stay readable two lines on, and in text without spaces
    between words an exact repeat of the characters is the same name."""
    names = {
        text[s.start : s.end]
        for s in spans
        if s.type == "person" and s.end - s.start >= 2 and _CJK_NAME.fullmatch(text[s.start : s.end])
    }
    if not names:
        return spans
    mentions = sorted(
        Span(match.start(), match.end(), "person") for name in names for match in re.finditer(re.escape(name), text)
    )
    return sorted(spans + _free(mentions, spans), key=lambda s: (s.start, s.end))


def _free(candidates: list[Span], taken: list[Span]) -> list[Span]:
    """The candidates that overlap neither a taken span nor an earlier candidate (a sorted list of intervals and
    a binary search per candidate: a long document can hold thousands of mentions)."""
    occupied: list[tuple[int, int]] = []  # the taken spans merged into disjoint intervals, sorted
    for start, end in sorted((s.start, s.end) for s in taken):
        if occupied and start < occupied[-1][1]:
            occupied[-1] = (occupied[-1][0], max(end, occupied[-1][1]))
        else:
            occupied.append((start, end))
    kept: list[Span] = []
    for span in candidates:
        at = bisect.bisect_left(occupied, (span.start, span.end))
        clash = (at > 0 and occupied[at - 1][1] > span.start) or (at < len(occupied) and occupied[at][0] < span.end)
        if not clash:
            bisect.insort(occupied, (span.start, span.end), lo=at)
            kept.append(span)
    return kept


def _without_articled(text: str, spans: list[Span]) -> list[Span]:
    """Latin-script "names" right after "the" are titles and places ("the Sesame Street Songbook", "the Colossal
    Cave Adventure Page"): English puts no article before a person's name."""
    return [
        s
        for s in spans
        if s.type != "person"
        or _CJK_CHAR.search(text[s.start : s.end])
        or not ARTICLE_BEFORE.search(text, max(0, s.start - 8), s.start)
    ]


def _without_common_nouns(text: str, spans: list[Span]) -> list[Span]:
    """Latin-script "names" every word of which the document also writes in lower case are capitalised common
    words ("Intellectual Property", "Major Component" in a licence that speaks of property and components)."""
    people = [s for s in spans if s.type == "person" and not _CJK_CHAR.search(text[s.start : s.end])]
    if not people:
        return spans
    common = {s for s in people if all(_written_lower(text, w) for w in _WORD.findall(text[s.start : s.end]))}
    return [s for s in spans if s not in common] if common else spans


def _written_lower(text: str, word: str) -> bool:
    """Whether the text holds `word` in lower case as a word of its own (not inside an email, a path or a longer
    word). Plain substring search and a look at the neighbours: no regex to compile per word."""
    lower = word.lower()
    if lower == word:
        return False
    position = text.find(lower)
    while position >= 0:
        end = position + len(lower)
        before = text[position - 1] if position else " "
        after = text[end : end + 2]
        inside_before = before.isalnum() or before in "_@.-/"
        inside_after = after[:1].isalnum() or after[:1] in "_@-/" or (after[:1] == "." and after[1:2].isalnum())
        if not inside_before and not inside_after:
            return True
        position = text.find(lower, position + 1)
    return False


def _without_towns(text: str, spans: list[Span]) -> list[Span]:
    """Names that follow an address on its line, after a comma, are its town ("12 Lowther Close, North
    Lynneville"): dropped as names (the address span or the town's own address tag hides them)."""
    addresses = [s for s in spans if s.type == "address"]
    if not addresses:
        return spans
    kept = []
    for span in spans:
        gaps = (text[a.end : span.start] for a in addresses if a.end <= span.start)
        if span.type == "person" and any(gap.strip() in (",", "") and "\n" not in gap for gap in gaps):
            continue
        kept.append(span)
    return kept


def _without_address_lines(text: str, spans: list[Span]) -> list[Span]:
    """Names on a line that has a number before them and a postcode after them are its street or town
    ("Flat 3, Lowther Close, North Ashby, LE6 2QT", "48 Cedar Ridge Parkway, Maple Falls, OR 97301")."""
    kept = []
    for span in spans:
        if span.type == "person" and not _CJK_CHAR.search(text[span.start : span.end]):
            line_start = text.rfind("\n", 0, span.start) + 1
            line_end = text.find("\n", span.end)
            before, after = text[line_start : span.start], text[span.end : len(text) if line_end < 0 else line_end]
            if _DIGIT.search(before) and _POSTCODE_AFTER.match(after):
                continue
        kept.append(span)
    return kept


_TITLE_PART_ENDS = frozenset("》·‧・-－")  # a title, or its first part, ends here (《玉楼春·戏林推》)


def _in_verse(text: str, span: Span) -> bool:
    """Whether a CJK span lies on a line of classical verse: two or more clauses of three to nine characters
    ("危楼高百尺，手可摘星辰。"), where every character is a word and many are also surnames; the tagger's
    guesses there are nearly always words. Names in verse are found through their cues (a byline's dash)."""
    if span.type != "person" or not _CJK_CHAR.search(text[span.start : span.end]):
        return False
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    clauses = [c for c in _CLAUSE_BREAK.split(text[line_start : len(text) if line_end < 0 else line_end]) if c.strip()]
    return len(clauses) >= 2 and all(3 <= len(c.strip()) <= 9 for c in clauses)


def _in_title_tail(text: str, span: Span) -> bool:
    """Whether a CJK span is the tail of a work's title: inside 《》, not at its start, ending where the title or
    its first part ends ("《玉楼春·戏林推》", "《庆宫春》": tune names of ci poems, whose characters are also
    surnames). A name in a title starts it ("《孔乙己》") or stands before what the work does ("《送陈君衡被召》")."""
    if span.type != "person" or not _CJK_CHAR.search(text[span.start : span.end]):
        return False
    opening = text.rfind("《", text.rfind("\n", 0, span.start) + 1, span.start)  # a title holds no line break
    if opening < 0 or opening == span.start - 1 or "》" in text[opening : span.start]:
        return False
    return text[span.end : span.end + 1] in _TITLE_PART_ENDS


def _overlap(a: Span, b: Span) -> bool:
    return a.start < b.end and b.start < a.end


def feature_rows(known: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Weight row of each key: 1 + its position among the known keys, 0 when unknown."""
    if not len(known):
        return np.zeros(keys.shape, dtype=np.int64)
    positions = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    return np.where(known[positions] == keys, positions + 1, 0)


def decode_spans(tagged: TaggedText, threshold: float, lone_words: Collection[str] = frozenset()) -> list[Span]:
    """Spans of one label: runs of candidate tokens that are part of a name or address with probability
    `_CONTINUE_FRACTION * threshold` or more (each labelled with the likelier of the two), bridging short
    connectors, that contain at least one token whose label reaches `threshold`. Texts with no such token cost
    nothing more."""
    weak = threshold * _CONTINUE_FRACTION
    probabilities = tagged.probabilities
    best = probabilities[:, 1:].argmax(axis=1) + 1  # person or address, whichever is likelier
    confidence = probabilities[np.arange(len(best)), best]
    tagged_rows = np.flatnonzero(1.0 - probabilities[:, 0] >= weak)
    if not len(tagged_rows) or confidence[tagged_rows].max() < threshold:
        return []
    starts, ends = tagged.starts, tagged.ends
    runs: list[tuple[str, int, int]] = []  # label, first and last token index of runs with a strong token
    run: list[int] = []
    run_label, run_strong, previous_row = "", False, -1
    for row in tagged_rows.tolist():
        index, label = int(tagged.candidates[row]), LABELS[best[row]]
        contiguous = row == previous_row + 1  # no untagged candidate in between
        if run and not (contiguous and label == run_label and _bridgeable(tagged, run[-1], index, label)):
            if run_strong:
                runs.append((run_label, run[0], run[-1]))
            run, run_strong = [], False
        run.append(index)
        run_label, previous_row = label, row
        run_strong = run_strong or confidence[row] >= threshold
    if run_strong:
        runs.append((run_label, run[0], run[-1]))
    spans = [Span(int(starts[first]), int(ends[last]), label) for label, first, last in runs]
    return [
        span for span, (_, first, _) in zip(spans, runs, strict=True) if _plausible(tagged, span, first, lone_words)
    ]


def _plausible(tagged: TaggedText, span: Span, first: int, lone_words: Collection[str]) -> bool:
    """Shape checks a linear tagger cannot learn.

    A Latin-script address has a number, a capitalised word and at least three tokens (a lone heading is not
    one, nor a row of an upper-case character table) and no sentence ends inside it; a CJK address names an
    administrative unit, has four CJK characters at least ("号 12345" is a number, not an address) and stays on
    one line. Tables of numbers and words chain into long runs, which are
    neither. A name has at most eight tokens, or two to six CJK characters (a single character is a word in
    classical prose), and a single Latin word is a name only after a title ("Dr. Weber"), since capitalised
    words start every sentence; and no name starts with an article, possessive or demonstrative, or holds a
    number ("Referenz 4092…", "Commit 1733634").
    """
    covered = tagged.text[span.start : span.end]
    words = token_texts(covered)
    cjk = any(lexical(t).shape in ("han", "kata") for t in words)
    if span.type == "address":
        if cjk:
            characters = sum(lexical(t).shape in ("han", "kata") for t in words)
            return (
                characters >= 4
                and 5 <= len(covered) <= 60
                and "\n" not in covered
                and bool(_CJK_ADDRESS_MARK.search(covered))
            )
        has_number = any(t[0].isdigit() for t in words)
        has_word = any(lexical(t).shape == "Xx" for t in words)
        grouped_digits = _DIGIT_GROUPS.search(covered) is not None  # "Referenz 5123 8876 0042": a reference
        return has_number and has_word and not grouped_digits and 3 <= len(words) <= 30 and ".\n" not in covered
    if cjk:
        return 2 <= len(covered.replace(" ", "").replace("\u3000", "")) <= 6
    if words[0].lower() in _NOT_A_NAME_START or any(word[0].isdigit() for word in words):
        return False
    if any(_NOT_A_NAME_PART.search(word) for word in words):
        return False
    if len(words) > 1:
        return len(words) <= 8
    if _INNER_CAPITAL.search(words[0]) or _ELISION.match(words[0]):
        return False  # "IndexError", "GitHub", "L'outil", "d'Apache": code names and elided articles
    before = tagged.tokens(first - 2, first)
    initial = len(before) == 2 and before[1] == "." and len(before[0]) == 1 and before[0].isupper()  # "L. Davis"
    titled = initial or any(word.lower() in _TITLES for word in before)
    return titled or (words[0].lower() in lone_words and not sentence_start(tagged.text, span.start))


def _bridgeable(tagged: TaggedText, last: int, index: int, label: str) -> bool:
    gap = tagged.tokens(last + 1, index)
    if len(gap) > _MAX_GAP[label]:
        return False
    if label == "address":
        return all(t in _ADDRESS_CONNECTORS or lexical(t).shape in ("x", "x_short", "hira") for t in gap)
    if "\n" in tagged.text[tagged.starts[last] : tagged.starts[index]]:
        return False
    previous = tagged.tokens(last, last + 1)[0]
    for token in gap:  # a particle ("van"), a hyphen or the Japanese separator, or the dot of an initial ("J.")
        is_initial_dot = token == "." and len(previous) == 1 and previous.isupper()
        if not (token.lower() in _NAME_PARTICLES or token in _NAME_CONNECTORS or is_initial_dot):
            return False
        previous = token
    return True


def model_bytes(url: str | None) -> bytes:
    """The tagger model at `url`, or the one shipped with the package when `url` is None."""
    if url is None:
        return (resources.files("pretrain_core") / "data" / SHIPPED_MODEL).read_bytes()
    return storage.read_bytes(url)


@functools.cache
def model_sha256(url: str | None) -> str:
    """The model's fingerprint, part of the PII stage's config hash: a new model invalidates its outputs."""
    return hashlib.sha256(model_bytes(url)).hexdigest()


def load_tagger(url: str | None) -> NameAddressTagger:
    return NameAddressTagger.from_bytes(model_bytes(url))

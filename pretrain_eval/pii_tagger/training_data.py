"""Labelled sentences for the name/address tagger, made from real prose and Faker's per-locale name and address data.

Real sentences come from text files (licences, manual pages, translated tutorials; see `text_sources`). A
sentence becomes a positive example by putting a fake person in place of a subject pronoun ("She presses x" ->
"Maria Weber presses x"), or by attaching it to a short frame ("According to {name}, ...", "Contact: {name},
{address}."). It stays a negative as it is, with a date attached (dates look like addresses to a tagger), or
with a frame filled by a capitalised phrase taken from real text, so the tagger has to learn what names look
like instead of trusting the frame. Real sentences that seem to contain a real name are left out: they would
teach it that names are not names.

Faker's first and last names are split by hash into train and test lists, so the held-out score measures names
the tagger never saw in an example, not memorised ones; a second held-out set uses invented names.
"""

from __future__ import annotations

import itertools
import random
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from faker import Faker

from pretrain_core.pii.name_lists import chinese_surnames, japanese_names
from pretrain_core.pii.spans import Span
from pretrain_eval.pii_tagger.names import LIST_LOCALES, faker_names
from pretrain_eval.pii_tagger.text_sources import LANGUAGES

# Faker locales whose addresses the examples use.
_ADDRESS_LOCALES = {"en": ("en_US", "en_GB"), "de": ("de_DE",), "fr": ("fr_FR",), "zh": ("zh_CN",), "ja": ("ja_JP",)}
_PRONOUNS = {
    "en": re.compile(r"\b(?:He|She|I|We|They|You|he|she|we|they|you)\b"),
    "de": re.compile(r"\b(?:Er|Sie|Ich|Wir|Du|er|wir|du)\b"),
    "fr": re.compile(r"\b(?:Il|Elle|Je|Nous|Vous|il|elle|nous|vous)\b"),
    "zh": re.compile(r"我们|你们|他们|她们|我|你|他|她"),
    "ja": re.compile(r"彼女|彼|私|あなた"),
}
_TITLES = {"en": ("Mr. ", "Ms. ", "Dr. "), "de": ("Herr ", "Frau ", "Dr. "), "fr": ("M. ", "Mme ", "Dr ")}
_MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"),
    "de": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
           "November", "Dezember"),
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
           "novembre", "décembre"),
}  # fmt: skip
_DATE_FRAMES = {
    "en": ("{s} Last updated: {date}.", "On {date}, {s_lower}", "{s} ({date})"),
    "de": ("{s} Stand: {date}.", "Am {date} gilt: {s}", "{s} ({date})"),
    "fr": ("{s} Mis à jour le {date}.", "Le {date}, {s_lower}", "{s} ({date})"),
    "zh": ("{date}，{s}", "{s}（更新于{date}）"),
    "ja": ("{date}、{s}", "{s}（{date}更新）"),
}
# Frames around a real sentence {s} ({s_lower}: its first letter lower-cased). Names appear after commas, in
# lists and as subjects, and addresses also stand alone, so that no single cue (a comma, "at") decides the label.
_FRAMES = {
    "en": (
        "{name} wrote: {s}",
        "{s} ({name})",
        "According to {name}, {s_lower}",
        "Yesterday, {name} said that {s_lower}",
        "{s} Thanks to {name} and {name2} for the review.",
        "{name}, who maintains this package, notes: {s}",
        "{s} Please contact {name} at {address}.",
        "However, {name} disagrees: {s}",
        "{s} Present: {name}, {name2}, {name3}.",
        "{name} lives at {address}. {s}",
        "Dear {name}, {s_lower}",
        "{s} Ship to: {name}{sep}{address}",
        "Our office has moved to {address}. {s}",
        "{s} Send the forms to {address}.",
        "{s}\n\nCheers,\n{name}",
        "{s}\n\nKind regards,\n{name}\n{address}",
        "Author: {name}\n\n{s}",
        "{s} — {name}",
        "{name} commented on the issue: {s}",
        "{s} Photo by {name}.",
        "cc: {name}, {name2}\n{s}",
        "{s} The package is maintained by {name}.",
        "My colleague {name} tried this last year. {s}",
        "{s} I spoke to {name} about it yesterday.",
        "{name}: {s}",
        "{s} Written by {name} and {name2}.",
        "Visit us at {address}. {s}",
        "{s} Address: {address}",
        "{name}\n{address}\n\n{s}",
        "{s} The shop is at {address}, next to the station.",
    ),
    "de": (
        "{name} schreibt: {s}",
        "{s} ({name})",
        "Laut {name} gilt: {s}",
        "Gestern sagte {name}: {s}",
        "{s} Dank an {name} und {name2} für die Durchsicht.",
        "{name}, der das Paket betreut, merkt an: {s}",
        "{s} Kontakt: {name}{sep}{address}.",
        "Allerdings widerspricht {name}: {s}",
        "{s} Anwesend: {name}, {name2}, {name3}.",
        "{name} wohnt in der {address}. {s}",
        "Hallo {name}, {s}",
        "{s} Lieferadresse: {name}{sep}{address}",
        "Unser Büro ist umgezogen: {address}. {s}",
        "{s} Bitte senden Sie die Unterlagen an {address}.",
        "{s}\n\nBeste Grüße,\n{name}",
        "{s}\n\nHerzliche Grüße\n{name}\n{address}",
        "Autor: {name}\n\n{s}",
        "{s} — {name}",
        "{name} kommentierte: {s}",
        "{s} Foto: {name}.",
        "cc: {name}, {name2}\n{s}",
        "{s} Das Paket wird von {name} betreut.",
        "Mein Kollege {name} hat das letztes Jahr ausprobiert. {s}",
        "{s} Ich habe gestern mit {name} darüber gesprochen.",
        "{name}: {s}",
        "{s} Geschrieben von {name} und {name2}.",
        "Besuchen Sie uns in der {address}. {s}",
        "{s} Anschrift: {address}",
        "{name}\n{address}\n\n{s}",
        "{s} Der Laden liegt in der {address}, direkt am Bahnhof.",
    ),
    "fr": (
        "{name} écrit : {s}",
        "{s} ({name})",
        "Selon {name}, {s_lower}",
        "Hier, {name} a déclaré : {s}",
        "{s} Merci à {name} et {name2} pour la relecture.",
        "{name}, qui maintient ce paquet, précise : {s}",
        "{s} Contact : {name}{sep}{address}.",
        "Cependant, {name} n'est pas d'accord : {s}",
        "{s} Présents : {name}, {name2}, {name3}.",
        "{name} habite au {address}. {s}",
        "Bonjour {name}, {s_lower}",
        "{s} Adresse de livraison : {name}{sep}{address}",
        "Nos bureaux ont déménagé au {address}. {s}",
        "{s} Envoyez les formulaires au {address}.",
        "{s}\n\nAmicalement,\n{name}",
        "{s}\n\nSincères salutations,\n{name}\n{address}",
        "Auteur : {name}\n\n{s}",
        "{s} — {name}",
        "{name} a commenté : {s}",
        "{s} Photo : {name}.",
        "cc : {name}, {name2}\n{s}",
        "{s} Le paquet est maintenu par {name}.",
        "Mon collègue {name} l'a essayé l'an dernier. {s}",
        "{s} J'en ai parlé hier avec {name}.",
        "{name} : {s}",
        "{s} Écrit par {name} et {name2}.",
        "Retrouvez-nous au {address}. {s}",
        "{s} Adresse : {address}",
        "{name}\n{address}\n\n{s}",
        "{s} La boutique se trouve au {address}, près de la gare.",
    ),
    "zh": (
        "{name}说：{s}",
        "{s}（{name}）",
        "据{name}介绍，{s}",
        "昨天，{name}表示：{s}",
        "{s}感谢{name}和{name2}的审阅。",
        "{s}联系人：{name}，地址：{address}。",
        "{s}出席：{name}、{name2}、{name3}。",
        "{name}住在{address}。{s}",
        "{name}你好，{s}",
        "{s}收货地址：{address}，收件人：{name}",
        "我们的办公室已搬到{address}。{s}",
        "{s}\n\n谢谢！\n{name}",
        "{s}\n\n顺祝商祺\n{name}\n{address}",
        "作者：{name}\n\n{s}",
        "{s}（文／{name}）",
        "{name}评论道：{s}",
        "{s}摄影：{name}。",
        "抄送：{name}、{name2}\n{s}",
        "{s}该软件包由{name}维护。",
        "我的同事{name}去年试过这个方法。{s}",
        "{s}昨天我和{name}老师讨论过这个问题。",
        "{name}：{s}",
        "{s}{name}博士和{name2}同学共同撰写了本文。",
        "{name}经理指出，{s}",
        "欢迎来访：{address}。{s}",
        "{s}地址：{address}",
        "{name}\n{address}\n\n{s}",
        "{s}店铺位于{address}，紧邻车站。",
    ),
    "ja": (
        "{name}さんによると、{s}",
        "{s}（{name}）",
        "昨日、{name}さんは次のように述べた：{s}",
        "{s}{name}さんと{name2}さんに感謝します。",
        "{name}さんは{address}に住んでいます。{s}",
        "{s}連絡先：{name}、{address}。",
        "{s}出席者：{name}、{name2}、{name3}。",
        "{name}様、{s}",
        "{s}お届け先：{address} {name}様",
        "事務所は{address}に移転しました。{s}",
        "{s}\n\nよろしくお願いします。\n{name}",
        "{s}\n\n敬具\n{address}\n{name}",
        "著者：{name}\n\n{s}",
        "{s}（文：{name}）",
        "{name}さんのコメント：{s}",
        "{s}写真：{name}",
        "CC：{name}様、{name2}様\n{s}",
        "{s}このパッケージは{name}氏がメンテナンスしています。",
        "同僚の{name}君が去年これを試しました。{s}",
        "{s}昨日{name}部長とこの件について話しました。",
        "{name}：{s}",
        "{s}{name}教授と{name2}さんの共著です。",
        "{name}先生は、{s}",
        "所在地：{address}。{s}",
        "{s}住所：{address}",
        "{address}\n{name}\n\n{s}",
        "{s}店舗は{address}にあり、駅のすぐ隣です。",
    ),
}
_HAN_PAIR = re.compile(r"[\u4e00-\u9fff]{2}")
_HAN_CHAR = re.compile(r"[\u4e00-\u9fff]")
_CAPITALISED_RUN = re.compile(r"(?<=[^\W\d_] )[A-ZÀ-Ý][^\W\d_]+(?: [A-ZÀ-Ý][^\W\d_]+){0,2}")
# Addresses per locale and split: Faker formats an address slowly, so a pool is drawn from.
_ADDRESS_POOL = 200
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Example:
    text: str
    spans: tuple[Span, ...]  # gold person/address spans
    lang: str


class _Lexicon:
    """First and last names for one language, the part of each list that belongs to one split: Faker's names of
    the language's list locales, and for Japanese also IPADIC's family and given names.

    Chinese surnames are not split: they are a closed set of a few hundred characters that any Chinese name
    starts with, so a held-out name has a known surname and an unseen given name, as in real text.
    """

    def __init__(self, lang: str, split: str) -> None:
        first: set[str] = set()
        last: set[str] = set()
        for locale in LIST_LOCALES[lang]:
            first_names, last_names = faker_names(locale)
            first.update(n for n in first_names if _split_of(n) == split)
            last.update(n for n in last_names if lang == "zh" or _split_of(n) == split)
        if lang == "zh":
            last.update(chinese_surnames())
        if lang == "ja":
            family, given = japanese_names()
            first.update(n for n in given if _split_of(n) == split)
            last.update(n for n in family if _split_of(n) == split)
        self.first, self.last = sorted(first), sorted(last)


def _split_of(name: str) -> str:
    return "test" if zlib.crc32(name.encode()) % 5 == 0 else "train"


def _all_first_names(lang: str) -> set[str]:
    return {name for locale in LIST_LOCALES[lang] for name in faker_names(locale)[0]}


class _Generator:
    """Makes examples of one language and split from real sentences; every random choice comes from `rng`."""

    def __init__(
        self, lang: str, split: str, sentences: list[str], rng: random.Random, seed: int, invent_rate: float
    ) -> None:
        self.lang, self.rng, self.sentences, self.invent_rate = lang, rng, sentences, invent_rate
        self.lexicon = _Lexicon(lang, split)
        self.han = sorted({c for sentence in sentences for c in _HAN_CHAR.findall(sentence)})
        # Faker builds street and town names from person names ("Port Michael"): training addresses must not
        # contain held-out names, or the tagger learns those names as address words.
        held_out = set(_Lexicon(lang, "test").first + _Lexicon(lang, "test").last) if split == "train" else set()
        self.addresses: list[str] = []
        for locale in _ADDRESS_LOCALES[lang]:
            fake = Faker(locale)
            fake.seed_instance(seed * 7919 + zlib.crc32(f"{locale}/{split}".encode()))
            pool = (str(fake.address()) for _ in range(_ADDRESS_POOL))
            self.addresses += [a for a in pool if not held_out.intersection(_WORD.findall(a))]
        self.fillers = _capitalised_phrases(sentences, lang)
        self.month_names = _MONTHS.get(lang, ())

    def example(self, sentence: str) -> Example:
        roll = self.rng.random()
        if roll < 0.3:
            return Example(sentence, (), self.lang)
        if roll < 0.4:
            return self._dated(sentence)
        if roll < 0.65 and _PRONOUNS[self.lang].search(sentence):
            return self._pronoun_replaced(sentence)
        return self._framed(sentence)

    def _dated(self, sentence: str) -> Example:
        """A negative with a date in it: day, month name and year look like a house number, street and postcode."""
        frame = self.rng.choice(_DATE_FRAMES[self.lang])
        lowered = sentence[0].lower() + sentence[1:] if self.lang in ("en", "fr") else sentence
        values: dict[str, list[tuple[str, str | None]]] = {"s": [(sentence, None)], "s_lower": [(lowered, None)]}
        values["date"] = [(self._date(), None)]
        return _fill(frame, values, self.lang)

    def _date(self) -> str:
        day, month, year = self.rng.randint(1, 28), self.rng.randint(1, 12), self.rng.randint(1950, 2030)
        if self.lang in ("zh", "ja"):
            return f"{year}年{month}月{day}日"
        name = self.month_names[month - 1]
        if self.lang == "en":
            return self.rng.choice((f"{day} {name} {year}", f"{name} {day}, {year}", f"{name} {year}"))
        return f"{day}. {name} {year}" if self.lang == "de" else f"{day} {name} {year}"

    def _pronoun_replaced(self, sentence: str) -> Example:
        match = self.rng.choice(list(_PRONOUNS[self.lang].finditer(sentence)))
        prefix, name = self._person()
        start = match.start() + len(prefix)
        suffix = "さん" if self.lang == "ja" and self.rng.random() < 0.5 else ""
        text = sentence[: match.start()] + prefix + name + suffix + sentence[match.end() :]
        return Example(text, (Span(start, start + len(name), "person"),), self.lang)

    def _framed(self, sentence: str) -> Example:
        frame = self.rng.choice(_FRAMES[self.lang])
        lowered = sentence[0].lower() + sentence[1:] if self.lang in ("en", "fr") else sentence
        values: dict[str, list[tuple[str, str | None]]] = {"s": [(sentence, None)], "s_lower": [(lowered, None)]}
        values["sep"] = [(self.rng.choice((", ", " — ", "\n", "; ")), None)]
        for field in ("name", "name2", "name3"):
            if self.fillers and self.rng.random() < 0.3:
                values[field] = [(self.rng.choice(self.fillers), None)]
            else:
                prefix, name = self._person()
                values[field] = [(prefix, None), (name, "person")]
        values["address"] = [(self._address(), "address")]
        return _fill(frame, values, self.lang)

    def _person(self) -> tuple[str, str]:
        """A (title, name) pair; the title is context, not part of the name. Chinese names are a surname and a
        given name of one or two characters; Japanese ones a family name, a separator (often none) and a given
        name, or the family name alone, as it stands before さん or 氏."""
        rng, first, last = self.rng, self.lexicon.first, self.lexicon.last
        if self.lang == "zh":
            given = self._cjk_name(first)
            return "", rng.choice(last) + (given[:1] if rng.random() < 0.2 else given)
        if self.lang == "ja":
            if rng.random() < 0.12:
                return "", rng.choice(last)
            return "", rng.choice(last) + rng.choice(("", "", " ", "\u3000")) + self._cjk_name(first)
        if rng.random() < 0.2:
            return rng.choice(_TITLES[self.lang]), self._latin_name(last)
        middle = f" {rng.choice(first)[0]}." if self.lang == "en" and rng.random() < 0.15 else ""
        return "", f"{self._latin_name(first)}{middle} {self._latin_name(last)}"

    def _latin_name(self, names: list[str]) -> str:
        """A name from the list, or (at `invent_rate`) a blend of two ("Mich" + "elle"): a name in no list, so
        the tagger also learns the contexts and shapes that make a name, not only the names it was given."""
        name = self.rng.choice(names)
        if self.rng.random() >= self.invent_rate or len(name) < 4:
            return name
        other = self.rng.choice(names)
        return name[: len(name) // 2] + other[len(other) // 2 :]

    def _cjk_name(self, names: list[str]) -> str:
        """A given name from the list, or (at `invent_rate`) one or two Han characters taken from the real text:
        given names are an open set, so the tagger must learn to take whatever follows a family name in a name's
        place, not only the given names it knows."""
        if not self.han or self.rng.random() >= self.invent_rate:
            return self.rng.choice(names)
        return "".join(self.rng.choice(self.han) for _ in range(self.rng.randint(1, 2)))

    def _address(self) -> str:
        return self.rng.choice(self.addresses).replace("\n", self.rng.choice((", ", " ", "\n")))


def _fill(frame: str, values: dict[str, list[tuple[str, str | None]]], lang: str) -> Example:
    """Format a frame whose fields are lists of (text, label) segments, recording where labelled segments land."""
    text, spans = "", []
    for part in re.split(r"(\{\w+\})", frame):
        segments = values[part[1:-1]] if part.startswith("{") and part.endswith("}") else [(part, None)]
        for segment, label in segments:
            if label is not None:
                spans.append(Span(len(text), len(text) + len(segment), label))
            text += segment
    return Example(text, tuple(spans), lang)


def _capitalised_phrases(sentences: list[str], lang: str) -> list[str]:
    """Capitalised words and runs of up to three inside real sentences (Han character pairs for zh/ja): hard
    negatives for frames, from about a thousand sentences spread over the pool, which is plenty."""
    pattern = _HAN_PAIR if lang in ("zh", "ja") else _CAPITALISED_RUN
    spread = sentences[:: max(1, len(sentences) // 1000)]
    return sorted({phrase for sentence in spread for phrase in pattern.findall(sentence)})


def _mentions_a_name(sentence: str, first_names: set[str]) -> bool:
    """A known first name followed by a capitalised word: probably a real person, unlabeled."""
    words = _WORD.findall(sentence)
    return any(a in first_names and b[0].isupper() for a, b in itertools.pairwise(words))


# Example sets: (name split, share of invented names, size relative to `per_language`).
_EXAMPLE_SETS = {
    "train": ("train", 0.3, 1.0),
    "test": ("test", 0.0, 0.25),  # held-out sentences, names from the lists but never trained on as words
    "test_unlisted": ("test", 1.0, 0.25),  # held-out sentences, names in no list at all
}


def build_examples(sentences: dict[str, list[str]], per_language: int, seed: int) -> dict[str, list[Example]]:
    """Training and held-out example sets: sentences and Faker names are split, so no test sentence and no test
    name is trained on; `test_unlisted` uses invented names, which no name list knows either.

    Each language gets `per_language` training examples and a quarter as many per test set, cycling through its
    sentences (with new names each pass) when it has fewer.
    """
    sets: dict[str, list[Example]] = {name: [] for name in _EXAMPLE_SETS}
    for lang in LANGUAGES:
        first_names = _all_first_names(lang) if lang in ("en", "de", "fr") else set()
        usable = [s for s in sentences.get(lang, []) if not _mentions_a_name(s, first_names)]
        for set_name, (split, invent_rate, share) in _EXAMPLE_SETS.items():
            pool = [s for s in usable if _split_of(s) == split]
            if not pool:
                continue
            rng = random.Random(zlib.crc32(f"{seed}/{lang}/{set_name}".encode()))
            generator = _Generator(lang, split, pool, rng, seed, invent_rate)
            sets[set_name].extend(generator.example(s) for s in _cycle(pool, int(per_language * share), rng.shuffle))
    return sets


def _cycle(pool: list[str], count: int, shuffle: Callable[[list[str]], None]) -> Iterator[str]:
    order: list[str] = []
    for _ in range(count):
        if not order:
            order = list(pool)
            shuffle(order)
        yield order.pop()

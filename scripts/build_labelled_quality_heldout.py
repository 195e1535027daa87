#!/usr/bin/env python3
r"""Build the held-out kinds of the labelled quality set in data/labelled/quality/heldout/.

These are low-quality kinds that nothing in the quality stage was tuned on: neither the classifier's training
generators (pretrain_eval/quality_classifier/training_data.py) nor the main set's builder
(scripts/build_labelled_quality.py) makes anything like them, and their text comes from other sources: Faker's
word lists and providers (a different generator of text altogether) and the repo's eval-only real text (licence
texts and Vim's tutors in data/reference, which no reference passage comes from). They are judged against the
main set's good items. The kinds, after what Gopher, C4, FineWeb and RedPajama-V2 describe:

- `random_word_filler`: Faker's `paragraph()` in the language: grammatical-looking sentences of random real words
  (machine-generated filler, the SEO-spam kind of word salad that keeps its punctuation).
- `lorem_ipsum`: Faker's Latin placeholder paragraphs (`la` locale; not the classic opening phrase).
- `character_noise`: real eval-only text with OCR-like damage: 8-15 % of letters replaced by a look-alike or a
  neighbouring key, spaces dropped or doubled, stray symbols (RedPajama's "non-alphabetic noise").
- `link_spam`: lines of calls to action, Faker URLs, e-mail addresses and product-like phrases.
- `listing_template`: directory-page records (name, company, address, phone, web site) from Faker's providers in
  the language, the same labels over and over (C4's templated pages).
- `truncated_snippets`: search-result or teaser pages: 8-14 lines, each a real eval-only sentence cut after 6-12
  words and ended with an ellipsis (Gopher's ellipsis-line rule).
- code `repetitive_generated`: generated accessor and constant files (the same line template filled with Faker
  words dozens of times) in Python, C and JavaScript, without a "generated" marker for the clean rules to see.

Determinism: Faker and `random.Random` seeded per item from a SHA-1 of the item id, gzip without time or name.

    python scripts/build_labelled_quality_heldout.py            # writes data/labelled/quality/heldout/
    python scripts/build_labelled_quality_heldout.py --check    # rebuilds elsewhere and compares bytes
"""

from __future__ import annotations

import hashlib
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from faker import Faker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rebuild import build_or_check, gzip_jsonl

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "data" / "labelled" / "quality" / "heldout"
REFERENCE_DIR = REPO / "data" / "reference"
PER_KIND = 12  # per language, or per programming language
LANGS = ("en", "de", "fr", "es", "ru", "ja", "zh")
FAKER_LOCALES = {"en": "en_US", "de": "de_DE", "fr": "fr_FR", "es": "es_ES", "ru": "ru_RU", "ja": "ja_JP"}
FAKER_LOCALES["zh"] = "zh_CN"
# Eval-only real text per language: Vim's tutors and the licence texts (data/reference/README.md).
REAL_TEXT = {
    "en": ["vim-tutor/tutor.utf-8", "licences/GPL-3", "licences/Apache-2.0", "licences/MPL-2.0"],
    "de": ["vim-tutor/tutor.de.utf-8"],
    "fr": ["vim-tutor/tutor.fr.utf-8"],
    "ja": ["vim-tutor/tutor.ja.utf-8"],
    "zh": ["vim-tutor/tutor.zh_cn.utf-8", "vim-tutor-traditional/tutor.zh_tw.utf-8"],
}
CJK = ("ja", "zh")
CALLS_TO_ACTION = {
    "en": ["Click here", "Buy now", "Best price", "Free shipping", "Limited offer", "Order today"],
    "de": ["Hier klicken", "Jetzt kaufen", "Bester Preis", "Gratis Versand", "Nur heute"],
    "fr": ["Cliquez ici", "Acheter maintenant", "Meilleur prix", "Livraison gratuite", "Offre limitée"],
    "es": ["Haga clic aquí", "Compre ahora", "Mejor precio", "Envío gratis", "Oferta limitada"],
    "ru": ["Нажмите здесь", "Купить сейчас", "Лучшая цена", "Бесплатная доставка", "Только сегодня"],
    "ja": ["こちらをクリック", "今すぐ購入", "最安値", "送料無料", "期間限定"],
    "zh": ["点击这里", "立即购买", "最低价格", "免费送货", "限时优惠"],
}
LISTING_LABELS = {
    "en": ("Name", "Company", "Address", "Phone", "Website"),
    "de": ("Name", "Firma", "Adresse", "Telefon", "Webseite"),
    "fr": ("Nom", "Société", "Adresse", "Téléphone", "Site web"),
    "es": ("Nombre", "Empresa", "Dirección", "Teléfono", "Sitio web"),
    "ru": ("Имя", "Компания", "Адрес", "Телефон", "Сайт"),
    "ja": ("名前", "会社", "住所", "電話", "ウェブサイト"),
    "zh": ("姓名", "公司", "地址", "电话", "网站"),
}
LOOK_ALIKES = {"l": "1", "o": "0", "e": "c", "a": "o", "i": "l", "m": "rn", "n": "h", "s": "5", "b": "6", "g": "9"}
NOISE_SYMBOLS = "~^|#*_=+<>"


@dataclass(frozen=True)
class Item:
    id: str
    group: str
    lang: str
    kind: str
    source: str
    text: str

    def record(self) -> dict[str, object]:
        domain = "code" if self.group == "code" else "general"
        return {
            "id": self.id,
            "group": self.group,
            "lang": self.lang,
            "kind": self.kind,
            "label": 0,
            "domain": domain,
            "source": self.source,
            "text": self.text,
        }


def seed_of(item_id: str) -> int:
    return int(hashlib.sha1(f"pretrain-quality-heldout-v1:{item_id}".encode()).hexdigest()[:12], 16)


def faker_for(lang: str, item_id: str) -> Faker:
    fake = Faker(FAKER_LOCALES[lang] if lang != "la" else "la")
    fake.seed_instance(seed_of(item_id))
    return fake


def real_sentences(lang: str) -> list[str]:
    """Sentences of the language's eval-only real text (lines joined into paragraphs, split at full stops)."""
    sentences: list[str] = []
    for name in REAL_TEXT[lang]:
        text = (REFERENCE_DIR / name).read_text(encoding="utf-8")
        for paragraph in re.split(r"\n\s*\n", text):
            joined = " ".join(line.strip() for line in paragraph.splitlines() if line.strip())
            pattern = r"(?<=[。！？])" if lang in CJK else r"(?<=[.!?])\s+"
            sentences += [s.strip() for s in re.split(pattern, joined) if len(s.strip()) >= (15 if lang in CJK else 40)]
    return sentences


def random_word_filler(lang: str, item_id: str, rng: random.Random) -> str:
    fake = faker_for(lang, item_id)
    return "\n".join(fake.paragraph(nb_sentences=rng.randint(4, 8)) for _ in range(rng.randint(3, 6)))


def lorem_ipsum(lang: str, item_id: str, rng: random.Random) -> str:
    fake = faker_for("la", item_id)
    return "\n".join(fake.paragraph(nb_sentences=rng.randint(4, 8)) for _ in range(rng.randint(3, 6)))


def character_noise(lang: str, item_id: str, rng: random.Random) -> str:
    sentences = real_sentences(lang)
    start = rng.randrange(max(1, len(sentences) - 12))
    text = " ".join(sentences[start : start + rng.randint(6, 12)])
    rate = rng.uniform(0.08, 0.15)
    out = []
    for ch in text:
        roll = rng.random()
        if ch == " " and roll < 0.3:
            out.append("" if roll < 0.2 else "  ")
        elif ch.isalpha() and roll < rate:
            out.append(
                LOOK_ALIKES.get(ch.lower(), rng.choice(NOISE_SYMBOLS)) if lang not in CJK else rng.choice("口日曰目")
            )
        elif roll > 0.985:
            out.append(ch + rng.choice(NOISE_SYMBOLS))
        else:
            out.append(ch)
    return "".join(out)


def link_spam(lang: str, item_id: str, rng: random.Random) -> str:
    fake = faker_for(lang, item_id)
    lines = []
    for _ in range(rng.randint(8, 16)):
        call = rng.choice(CALLS_TO_ACTION[lang])
        lines.append(
            rng.choice(
                [
                    f"{call}: {fake.url()}",
                    f"{fake.sentence(nb_words=4)} {fake.uri()}",
                    f"{call} >>> {fake.email()}",
                    f"{fake.word()} {fake.word()} {call}!!! {fake.url()}",
                ]
            )
        )
    return "\n".join(lines)


def listing_template(lang: str, item_id: str, rng: random.Random) -> str:
    fake = faker_for(lang, item_id)
    name, company, address, phone, site = LISTING_LABELS[lang]
    blocks = []
    for _ in range(rng.randint(4, 8)):
        blocks.append(
            "\n".join(
                [
                    f"{name}: {fake.name()}",
                    f"{company}: {fake.company()}",
                    f"{address}: {fake.address().replace(chr(10), ', ')}",
                    f"{phone}: {fake.phone_number()}",
                    f"{site}: {fake.url()}",
                ]
            )
        )
    return "\n\n".join(blocks)


def truncated_snippets(lang: str, item_id: str, rng: random.Random) -> str:
    sentences = real_sentences(lang)
    lines = []
    for sentence in rng.sample(sentences, min(len(sentences), rng.randint(8, 14))):
        if lang in CJK:
            lines.append(sentence[: rng.randint(8, 18)] + "…")
        else:
            lines.append(" ".join(sentence.split()[: rng.randint(6, 12)]) + " ...")
    return "\n".join(lines)


def repetitive_generated(lang: str, item_id: str, rng: random.Random) -> str:
    fake = faker_for("en", item_id)
    words = [re.sub(r"\W", "", fake.word()) or "field" for _ in range(rng.randint(40, 80))]
    if lang == "python":
        body = [f"    def get_{w}_{i}(self):\n        return self._{w}_{i}\n" for i, w in enumerate(words)]
        return "class Record:\n" + "\n".join(body)
    if lang == "c":
        body = [f"#define {w.upper()}_{i}_OFFSET {rng.randint(0, 65535)}" for i, w in enumerate(words)]
        return "#pragma once\n" + "\n".join(body) + "\n"
    body = [f'export const {w}{i} = "{w}{i}";' for i, w in enumerate(words)]
    return "\n".join(body) + "\n"


PROSE_KINDS: dict[str, tuple[Callable[[str, str, random.Random], str], Sequence[str], str]] = {
    "random_word_filler": (random_word_filler, LANGS, "faker"),
    "lorem_ipsum": (lorem_ipsum, ("la",), "faker"),
    "character_noise": (character_noise, tuple(REAL_TEXT), "eval-only real text"),
    "link_spam": (link_spam, LANGS, "faker"),
    "listing_template": (listing_template, LANGS, "faker"),
    "truncated_snippets": (truncated_snippets, tuple(REAL_TEXT), "eval-only real text"),
}
CODE_LANGS = ("python", "c", "javascript")


def items() -> list[Item]:
    out = []
    for kind, (make, langs, source) in PROSE_KINDS.items():
        for lang in langs:
            count = PER_KIND * 3 if lang == "la" else PER_KIND
            for n in range(count):
                item_id = f"heldout/prose/{lang}/{kind}/{n:03d}"
                out.append(
                    Item(item_id, "prose", lang, kind, source, make(lang, item_id, random.Random(seed_of(item_id))))
                )
    for lang in CODE_LANGS:
        for n in range(PER_KIND):
            item_id = f"heldout/code/{lang}/repetitive_generated/{n:03d}"
            text = repetitive_generated(lang, item_id, random.Random(seed_of(item_id)))
            out.append(Item(item_id, "code", lang, "repetitive_generated", "faker", text))
    return out


def readme(built: list[Item]) -> str:
    counts = Counter((item.kind, item.lang) for item in built)
    lines = [
        "# Held-out kinds of the labelled quality set",
        "",
        "Low-quality kinds nothing in the quality stage was tuned on, from other generators and sources (Faker, and",
        "the eval-only licence texts and Vim tutors of data/reference). Built by",
        "`scripts/build_labelled_quality_heldout.py` (its docstring says how each kind is made; `--check` verifies",
        "the bytes). `items.jsonl.gz` has the fields of `../eval.jsonl.gz`; every item is bad (label 0) and is judged",
        "against the main set's good items.",
        "",
        "| kind | items | languages |",
        "| --- | ---: | --- |",
    ]
    for kind in [*PROSE_KINDS, "repetitive_generated"]:
        langs = sorted(lang for k, lang in counts if k == kind)
        lines.append(f"| {kind} | {sum(counts[(kind, lang)] for lang in langs)} | {', '.join(langs)} |")
    lines += [
        "",
        "Licences: Faker is MIT-licensed (its word lists and providers generate the text); the licence texts and",
        "Vim's tutor: see data/reference/README.md.",
        "",
    ]
    return "\n".join(lines)


def build(out: Path) -> None:
    built = items()
    out.mkdir(parents=True, exist_ok=True)
    (out / "items.jsonl.gz").write_bytes(gzip_jsonl(item.record() for item in built))
    (out / "README.md").write_text(readme(built), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    return build_or_check(build, OUT, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())

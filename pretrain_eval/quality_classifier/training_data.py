"""Training documents of the quality classifier, all made from the shipped reference
(pretrain_core/data/quality_reference): real documents as curated text, and low-quality documents made from them
by the generators below, each named after the labelled-set kind it imitates so that an evaluation can leave a
kind out.

These generators are written apart from the labelled set's builder (scripts/build_labelled_quality.py) and draw
only on reference text, which the labelled set's eval items never share a page with. Kinds the labelled set has
and no generator here imitates (machine templates, and every held-out kind) are what the classifier never saw.
"""

from __future__ import annotations

import base64
import keyword
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from pretrain_core.quality.reference import shipped_records
from pretrain_core.quality.signals import LOREM_WORDS

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
WORD = re.compile(r"\w{4,}")
PROSE_CHARS, CJK_CHARS, CODE_CHARS = (500, 1800), (200, 800), 5000


@dataclass(frozen=True)
class TrainingDoc:
    group: str  # prose | code
    lang: str
    source: str  # the reference source the text comes from
    kind: str  # good, or the generator's kind
    text: str

    @property
    def label(self) -> int:
        return int(self.kind == "good")


def good_prose() -> list[TrainingDoc]:
    """Consecutive reference records of one language and source joined into documents of the labelled set's
    sizes (500-1,800 characters, 200-800 for Chinese and Japanese)."""
    docs: list[TrainingDoc] = []
    current: list[str] = []
    key: tuple[str, str] | None = None
    for record in shipped_records("prose"):
        record_key = (record["lang"], record["source"])
        low, high = CJK_CHARS if record["lang"] in ("zh", "ja") else PROSE_CHARS
        if key != record_key or sum(map(len, current)) + len(record["text"]) > high:
            if key is not None and sum(map(len, current)) >= low:
                docs.append(TrainingDoc("prose", key[0], key[1], "good", "\n".join(current)))
            current, key = [], record_key
        current.append(record["text"])
    return docs


def good_code() -> list[TrainingDoc]:
    """Each reference file cut at line ends into pieces of about 5,000 characters."""
    docs = []
    for record in shipped_records("code"):
        piece: list[str] = []
        for line in record["text"].splitlines(keepends=True):
            piece.append(line)
            if sum(map(len, piece)) >= CODE_CHARS:
                docs.append(TrainingDoc("code", record["lang"], record["source"], "good", "".join(piece)))
                piece = []
        if sum(map(len, piece)) >= CODE_CHARS // 5:
            docs.append(TrainingDoc("code", record["lang"], record["source"], "good", "".join(piece)))
    return docs


def _tokens(text: str, lang: str) -> list[str]:
    if lang in ("zh", "ja"):
        return [text[i : i + 2] for i in range(0, len(text), 2)]
    return text.split()


def word_salad(doc: TrainingDoc, rng: random.Random) -> str:
    """Every line's tokens in random order."""
    lines = []
    for line in doc.text.splitlines():
        tokens = _tokens(line, doc.lang)
        rng.shuffle(tokens)
        lines.append(("" if doc.lang in ("zh", "ja") else " ").join(tokens))
    return "\n".join(lines)


def repeated_lines(doc: TrainingDoc, rng: random.Random) -> str:
    """A line of the document inserted again and again at random places."""
    lines = doc.text.splitlines()
    repeated = rng.choice(lines)
    for _ in range(rng.randint(3, 8)):
        lines.insert(rng.randint(0, len(lines)), repeated)
    return "\n".join(lines)


def keyword_stuffing(doc: TrainingDoc, rng: random.Random) -> str:
    """The document's opening line, then comma lists of its most frequent long words."""
    words = [w for w, _ in Counter(WORD.findall(doc.text.lower())).most_common(8)] or doc.text.split()[:8]
    lines = [doc.text.splitlines()[0]]
    for _ in range(rng.randint(4, 10)):
        lines.append(", ".join(rng.choice(words) for _ in range(rng.randint(5, 12))))
    return "\n".join(lines)


def boilerplate(doc: TrainingDoc, rng: random.Random) -> str:
    """A page's chrome: menus of short phrases from the text, a sign-in line, a copyright footer."""
    words = [w for w in _tokens(doc.text, doc.lang) if len(w) > 1]
    menu = [" ".join(rng.sample(words, min(len(words), 2))) for _ in range(rng.randint(6, 14))]
    lines = [" | ".join(menu[i : i + 4]) for i in range(0, len(menu), 4)]
    lines += [f"Home > {menu[0]} > {menu[-1]}", "Sign in  Register  Search", f"© {rng.randint(1998, 2024)} {menu[1]}"]
    rng.shuffle(lines)
    return "\n".join(lines)


_WRONG_DECODINGS = (("utf-8", "latin-1"), ("utf-8", "cp1252"), ("utf-8", "cp1251"), ("cp1252", "utf-8"))


def mojibake(doc: TrainingDoc, rng: random.Random) -> str:
    """The text encoded one way and decoded another (what a wrong charset header does)."""
    encode, decode = rng.choice(_WRONG_DECODINGS)
    return doc.text.encode(encode, errors="replace").decode(decode, errors="replace")


def number_table(doc: TrainingDoc, rng: random.Random) -> str:
    """The document's first line over rows of random figures."""
    rows = [
        "  ".join(f"{rng.uniform(0, 10 ** rng.randint(1, 6)):.{rng.randint(0, 3)}f}" for _ in range(rng.randint(3, 7)))
        for _ in range(rng.randint(12, 30))
    ]
    return "\n".join([doc.text.splitlines()[0][:80], *rows])


def minified(doc: TrainingDoc, rng: random.Random) -> str:
    """Comments and blank lines gone, each line's indentation and inner runs of spaces collapsed, joined."""
    kept = [re.sub(r"\s+", " ", line.strip()) for line in doc.text.splitlines()]
    kept = [line for line in kept if line and not line.startswith(("#", "//", "/*", "*"))]
    width = rng.choice((0, 300, 1000))
    joined = " ".join(kept) if doc.lang != "python" else "\n".join(kept)
    return "\n".join(joined[i : i + width] for i in range(0, len(joined), width)) if width else joined


_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(
    [
        "auto",
        "break",
        "case",
        "char",
        "const",
        "continue",
        "default",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "goto",
        "int",
        "long",
        "register",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
        "include",
        "define",
        "ifdef",
        "ifndef",
        "endif",
        "var",
        "let",
        "function",
        "this",
        "new",
        "typeof",
        "instanceof",
        "delete",
        "catch",
        "throw",
        "require",
        "module",
        "exports",
    ]
)


def obfuscated(doc: TrainingDoc, rng: random.Random) -> str:
    """Every identifier of three or more characters renamed to a short random one; layout kept."""
    names: dict[str, str] = {}
    alphabet = "abcdefghijklmnopqrstuvwxyz"

    def rename(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in _KEYWORDS:
            return word
        if word not in names:
            names[word] = rng.choice(alphabet) + "".join(rng.choice(alphabet + "0123456789") for _ in range(3))
        return names[word]

    return _IDENT.sub(rename, doc.text)


def generated(doc: TrainingDoc, rng: random.Random) -> str:
    """Random bytes embedded as a hex array or a base64 string, under the file's first lines."""
    data = rng.randbytes(rng.randint(1500, 4000))
    head = "\n".join(doc.text.splitlines()[:3])
    if rng.random() < 0.5:
        rows = [", ".join(f"0x{b:02x}" for b in data[i : i + 12]) for i in range(0, len(data), 12)]
        return head + "\nstatic const unsigned char blob[] = {\n    " + ",\n    ".join(rows) + "\n};\n"
    encoded = base64.b64encode(data).decode()
    return (
        head + '\nBLOB = (\n    "' + '"\n    "'.join(encoded[i : i + 76] for i in range(0, len(encoded), 76)) + '"\n)\n'
    )


# The words of the lorem-ipsum passage, as its generators draw them (Faker, used by the held-out set, has its own).
_PLACEHOLDER_WORDS = sorted(LOREM_WORDS)


def _sentences(words: list[str], rng: random.Random, cjk: bool) -> str:
    """Paragraphs of sentences of words drawn at random, capitalised and stopped like prose."""
    paragraphs = []
    for _ in range(rng.randint(3, 5)):
        sentences = []
        for _ in range(rng.randint(3, 6)):
            picked = [rng.choice(words) for _ in range(rng.randint(5, 10))]
            sentences.append("".join(picked) + "。" if cjk else " ".join(picked).capitalize() + ".")
        paragraphs.append(("" if cjk else " ").join(sentences))
    return "\n".join(paragraphs)


def lorem_ipsum(doc: TrainingDoc, rng: random.Random) -> str:
    """Placeholder text: sentences of the lorem-ipsum passage's words in random order."""
    return _sentences(_PLACEHOLDER_WORDS, rng, cjk=False)


def random_word_filler(doc: TrainingDoc, rng: random.Random) -> str:
    """Machine filler: sentences of the document's own words drawn at random (two-character pieces for Chinese
    and Japanese), each capitalised and stopped, so that every word is real and every line ends like prose."""
    words = _tokens(doc.text, doc.lang)
    return _sentences([w.strip(".,;:!?()。、，") or w for w in words], rng, cjk=doc.lang in ("zh", "ja"))


Generator = Callable[[TrainingDoc, random.Random], str]
PROSE_GENERATORS: dict[str, Generator] = {
    "word_salad": word_salad,
    "repeated_lines": repeated_lines,
    "keyword_stuffing": keyword_stuffing,
    "boilerplate": boilerplate,
    "mojibake": mojibake,
    "number_table": number_table,
    "lorem_ipsum": lorem_ipsum,
    "random_word_filler": random_word_filler,
}
PLACEHOLDER_LANGUAGE = "la"  # what language id makes of lorem ipsum at best: no language with a word list
CODE_GENERATORS: dict[str, Generator] = {"minified": minified, "obfuscated": obfuscated, "generated": generated}


def training_docs(seed: int = 0) -> list[TrainingDoc]:
    """Every good document, and for each one bad document of a generator chosen in turn (a seeded shuffle)."""
    rng = random.Random(seed)
    docs = []
    for good, generators in ((good_prose(), PROSE_GENERATORS), (good_code(), CODE_GENERATORS)):
        kinds = list(generators)
        docs += good
        for index, doc in enumerate(good):
            kind = kinds[index % len(kinds)]
            text = generators[kind](doc, rng)
            lang = PLACEHOLDER_LANGUAGE if kind == "lorem_ipsum" else doc.lang
            docs.append(TrainingDoc(doc.group, lang, doc.source, kind, text))
    return docs

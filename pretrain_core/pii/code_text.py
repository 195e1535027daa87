"""The prose inside source code: comments and string literals, where names and addresses are written (authors,
maintainers, example data), found by Pygments' lexer for the file's language.

The name and address tagger reads prose; run over a whole source file it would take identifiers for names.
Over these regions alone it reads what people wrote in the file's natural language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, Name, String, _TokenType
from pygments.util import ClassNotFound

from pretrain_core.pii.spans import Span

_PROSE_TOKENS = (Comment, String.Doc, String.Double, String.Single, String.Heredoc, String.Backtick)
_MIN_LETTERS = 8  # a region shorter than this holds no name worth a tagger pass ("'utf-8'", a lint marker)


@cache
def _lexer(code_language: str) -> Lexer | None:
    try:
        return get_lexer_by_name(code_language, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return None


def can_lex(code_language: str | None) -> bool:
    """Whether Pygments knows the language, so `code_prose` can find a file's comments and strings."""
    return code_language is not None and _lexer(code_language) is not None


@cache
def _token_kind(token: _TokenType) -> tuple[bool, bool]:
    """Whether a Pygments token type is a name, and whether it is prose (asked once per type: a file has
    thousands of tokens of a few dozen types, and each `in` walks the type's ancestry)."""
    return token in Name, any(token in kind for kind in _PROSE_TOKENS)


_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_NAME_PREFIXES = ("Mc", "Mac", "O'", "D'", "De", "Di", "Van", "Von", "La", "Le")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class CodeProse:
    """The comment and string regions of a source file, and the identifiers its code uses."""

    regions: list[tuple[int, int]]
    identifiers: frozenset[str]

    def is_identifier_like(self, words: str) -> bool:
        """A candidate name with a word the code uses as an identifier (`KeyError` in "Raise KeyError") or
        shaped like one (an inner capital, as in `DocTest`, that no name prefix such as Mc- explains)."""
        for word in _WORD.findall(words):
            if word in self.identifiers:
                return True
            if _INNER_CAPITAL.search(word) and not word.startswith(_NAME_PREFIXES):
                return True
        return False

    def names_outside_code(self, text: str, spans: list[Span]) -> list[Span]:
        return [span for span in spans if not self.is_identifier_like(text[span.start : span.end])]


def code_prose(text: str, code_language: str | None) -> CodeProse:
    """The comments and string literals of `text` (character offsets, adjacent ones merged) and the identifiers
    of its code; nothing for a language Pygments does not know."""
    lexer = _lexer(code_language) if code_language else None
    if lexer is None:
        return CodeProse([], frozenset())
    regions: list[tuple[int, int]] = []
    identifiers: set[str] = set()
    for index, token, value in lexer.get_tokens_unprocessed(text):
        is_name, is_prose = _token_kind(token)
        if is_name:
            identifiers.add(value)
        if not is_prose:
            continue
        end = index + len(value)
        if regions and regions[-1][1] >= index:
            regions[-1] = (regions[-1][0], end)
        else:
            regions.append((index, end))
    kept = [(start, end) for start, end in regions if sum(ch.isalpha() for ch in text[start:end]) >= _MIN_LETTERS]
    return CodeProse(kept, frozenset(identifiers))

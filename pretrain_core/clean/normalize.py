"""Text repair before any judgement: mojibake, Unicode normal form, stray control characters.

ftfy is thorough but slow (1-3 MB/s), and most lines of a corpus are text it leaves as it is. So a run of lines
goes to ``ftfy.fix_text`` only when ftfy could change one of its lines (`_Gate`): its mojibake repair starts only
on a line its own badness pattern matches (never on ASCII), and each other enabled fixer only on a line with a
character it replaces (an entity's "&", a terminal escape, a carriage return, a ligature, ...). ftfy works line by
line itself, so the result is ftfy's, several times faster on clean text of any script.

Code is repaired more narrowly: only broken encodings are fixed, and every whitespace character (\\r\\n, tabs,
form feeds) survives, because layout is part of a program.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from typing import ClassVar, Literal

import ftfy
from ftfy import chardata

from pretrain_core.clean import mojibake
from pretrain_core.clean.config import NormalizeConfig

# C0 controls except \t \n \f \r, DEL, C1 controls, the BOM and the characters ftfy also deems never intended.
_PROSE_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u206a-\u206f\ufeff\ufff9-\ufffc]+")
# Code keeps every whitespace control (\t \n \v \f \r): only non-whitespace C0, DEL and the BOM go.
_CODE_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f\ufeff]+")


@dataclass(frozen=True)
class Normalized:
    """Repaired text and what changed, for the stage's statistics."""

    text: str
    ftfy_changed: bool
    form_changed: bool
    chars_removed: int


def _prose_fixer(cfg: NormalizeConfig) -> ftfy.TextFixerConfig:
    full = cfg.ftfy_mode == "full"
    return ftfy.TextFixerConfig(
        unescape_html=cfg.unescape_html,
        remove_terminal_escapes=full,
        fix_c1_controls=full,
        fix_latin_ligatures=full,
        fix_character_width=False,  # would turn CJK fullwidth punctuation （，） into ASCII
        uncurl_quotes=False,  # curly quotes are correct text, not damage
        fix_line_breaks=full,
        fix_surrogates=True,
        remove_control_chars=False,  # done below, identically for the ASCII fast path
        normalization=None,  # done below, with the configured form
        explain=False,
    )


def _code_fixer() -> ftfy.TextFixerConfig:
    return ftfy.TextFixerConfig(
        unescape_html=False,
        remove_terminal_escapes=False,
        fix_c1_controls=False,
        fix_latin_ligatures=False,
        fix_character_width=False,
        uncurl_quotes=False,
        fix_line_breaks=False,
        fix_surrogates=True,
        remove_control_chars=False,
        normalization=None,
        explain=False,
    )


class _Gate:
    """Whether ``ftfy.fix_text`` with a given configuration could change any line of a text.

    Mojibake repair (`fix_encoding`) leaves a line alone unless ``ftfy.badness.is_bad`` finds a match in it
    (`mojibake.is_bad`: the same answer, searched only where it can match); that pattern has no look-around and
    one anchor (a line starting "Ã " or "Â "), so a match in a line is a match in a text holding it, and the anchor
    is checked at every line start. Each other fixer the configuration enables changes only lines holding a
    character it replaces (`_TRIGGERS`); a test holds this against ftfy itself.
    """

    _LINE_START = re.compile("(?:^|\n)[ÃÂ] ")
    _TRIGGERS: ClassVar[dict[str, str]] = {
        "unescape_html": "&",
        "remove_terminal_escapes": "\x1b",
        "fix_c1_controls": "\x80-\x9f",
        "fix_latin_ligatures": "".join(re.escape(chr(point)) for point in sorted(chardata.LIGATURES)),
        "fix_line_breaks": "\r\u2028\u2029\x85",
        "fix_surrogates": "\ud800-\udfff",
    }
    _NEVER_GATED = ("fix_character_width", "uncurl_quotes", "remove_control_chars", "normalization")

    def __init__(self, config: ftfy.TextFixerConfig) -> None:
        if any(getattr(config, name) for name in self._NEVER_GATED):
            raise ValueError(f"the ftfy gate does not know when {self._NEVER_GATED} change text; leave them off")
        classes = "".join(chars for name, chars in self._TRIGGERS.items() if getattr(config, name))
        self._triggers = re.compile(f"[{classes}]") if classes else None
        self._encoding = config.fix_encoding

    def may_change(self, text: str) -> bool:
        if self._triggers is not None and self._triggers.search(text):
            return True
        if not self._encoding or text.isascii():  # every sequence the badness pattern matches holds a non-ASCII one
            return False
        return mojibake.is_bad(text) or bool(self._LINE_START.search(text))


def _fix_by_runs(text: str, fixer: ftfy.TextFixerConfig, gate: _Gate) -> str:
    """ftfy on the runs of ASCII and of non-ASCII lines it could change; each line keeps its newline."""
    if not gate.may_change(text):
        return text
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + [pieces[-1]]
    runs = ("".join(group) for _, group in itertools.groupby(lines, key=str.isascii))
    return "".join(ftfy.fix_text(run, fixer) if gate.may_change(run) else run for run in runs)


class Normalizer:
    """Applies one NormalizeConfig to prose and code; holds the prepared ftfy settings."""

    def __init__(self, cfg: NormalizeConfig) -> None:
        self.cfg = cfg
        self._prose_fixer = _prose_fixer(cfg)
        self._code_fixer = _code_fixer()
        self._prose_gate = _Gate(self._prose_fixer)
        self._code_gate = _Gate(self._code_fixer)

    def prose(self, text: str) -> Normalized:
        """Repair a natural-language document."""
        if not self.cfg.ftfy:
            return self._finish(text, text, self.cfg.unicode_form, _PROSE_CONTROL)
        fixed = _fix_by_runs(text, self._prose_fixer, self._prose_gate)
        return self._finish(text, fixed, self.cfg.unicode_form, _PROSE_CONTROL)

    def code(self, text: str) -> Normalized:
        """Repair a source file: broken encodings only, whitespace byte for byte."""
        fixed = _fix_by_runs(text, self._code_fixer, self._code_gate) if self.cfg.ftfy else text
        return self._finish(text, fixed, self.cfg.code_unicode_form, _CODE_CONTROL)

    def _finish(
        self, original: str, fixed: str, form: Literal["NFC", "NFKC", "none"], controls: re.Pattern[str]
    ) -> Normalized:
        ftfy_changed = fixed != original
        formed = fixed
        if form != "none" and not fixed.isascii() and not unicodedata.is_normalized(form, fixed):
            formed = unicodedata.normalize(form, fixed)
        cleaned = formed
        if self.cfg.remove_control_chars and controls.search(formed):
            cleaned = controls.sub("", formed)
        return Normalized(cleaned, ftfy_changed, formed != fixed, len(formed) - len(cleaned))

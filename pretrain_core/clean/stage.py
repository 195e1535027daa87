"""The cleaning stage: normalise each document, label its language, and drop what fails the heuristics.

Prose (domains other than code) is repaired with ftfy, labelled by `langid.detect_language`, gated by the
language allow-list, optionally trimmed by C4's line filters, and judged by the Gopher rules with its language's
thresholds. Code keeps its layout, is labelled "code" with score 1.0 (its comments' language is not worth a
langdetect call: the code domain is mixed by file, not by natural language) and is judged by the code rules.
Dropped documents keep their original text, so the quarantine can be audited and restored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import schema as contract
from pretrain_core.clean import code_rules, prose_rules
from pretrain_core.clean.c4_lines import filter_lines
from pretrain_core.clean.config import CleanConfig, ProseThresholds
from pretrain_core.clean.langid import UNDETERMINED, LangGuess, detect_language
from pretrain_core.clean.normalize import Normalized, Normalizer
from pretrain_core.stage import ShardOutput

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

CODE_LANG = "code"


@dataclass(frozen=True)
class Cleaned:
    """One document after cleaning: its new text, language, and drop reason (None when kept)."""

    text: str
    lang: str
    lang_score: float
    reason: str | None
    normalized: Normalized | None = None
    c4_chars_removed: int = 0


class CleanStage:
    """Per-shard cleaning; holds only its config and derived tables, so it pickles to any worker."""

    name = "clean"
    schema = contract.CLEAN

    def __init__(self, cfg: CleanConfig) -> None:
        self.cfg = cfg
        self._normalizer = Normalizer(cfg.normalize)
        self._stop_words = {lang: frozenset(w.lower() for w in words) for lang, words in cfg.prose.stop_words.items()}
        self._thresholds: dict[str, ProseThresholds] = {}

    def process(self, table: pa.Table) -> ShardOutput:
        texts = table.column("text").to_pylist()
        domains = table.column("domain").to_pylist()
        code_languages = table.column("code_language").to_pylist()
        results = [
            self.clean_code(text, code_language) if domain == "code" else self.clean_prose(text)
            for text, domain, code_language in zip(texts, domains, code_languages, strict=True)
        ]
        keep = pa.array([r.reason is None for r in results], pa.bool_())
        kept = _with_clean_columns(table.filter(keep), [r for r in results if r.reason is None], new_text=True)
        dropped_results = [r for r in results if r.reason is not None]
        dropped = _with_clean_columns(table.filter(pc.invert(keep)), dropped_results, new_text=False)
        dropped = dropped.append_column(
            contract.DROP_REASON, pa.array([r.reason for r in dropped_results], pa.string())
        )
        return ShardOutput(kept, dropped, _stats(results))

    def clean_prose(self, text: str) -> Cleaned:
        """Normalise, identify the language, and apply the prose rules to one document."""
        normalized = self._normalizer.prose(text)
        if not normalized.text.strip():
            return Cleaned(normalized.text, UNDETERMINED, 0.0, "empty_after_normalisation", normalized)
        guess = detect_language(normalized.text, self.cfg.langid)
        reason = self._language_gate(guess)
        if reason is not None:
            return Cleaned(normalized.text, guess.lang, guess.score, reason, normalized)
        cleaned, c4_removed = normalized.text, 0
        if self.cfg.prose.c4_lines.enabled:
            c4 = filter_lines(cleaned, self.cfg.prose.c4_lines)
            cleaned, c4_removed = c4.text, c4.chars_removed
            if c4.reason is not None:
                return Cleaned(cleaned, guess.lang, guess.score, c4.reason, normalized, c4_removed)
        doc = prose_rules.ProseDoc(
            cleaned,
            self._stop_words.get(guess.lang, frozenset()),
            self.cfg.prose.unsegmented_share,
            self.cfg.prose.unsegmented_ngram_scale,
        )
        reason = prose_rules.first_failure(doc, self._thresholds_for(guess.lang))
        return Cleaned(cleaned, guess.lang, guess.score, reason, normalized, c4_removed)

    def clean_code(self, text: str, code_language: str | None) -> Cleaned:
        """Normalise (layout intact) and apply the code rules to one source file."""
        too_large = code_rules.file_size(code_rules.CodeDoc(text, code_language), self.cfg.code)
        if too_large is not None:
            return Cleaned(text, CODE_LANG, 1.0, too_large)
        normalized = self._normalizer.code(text)
        if not normalized.text.strip():
            return Cleaned(normalized.text, CODE_LANG, 1.0, "empty_after_normalisation", normalized)
        doc = code_rules.CodeDoc(normalized.text, code_language)
        return Cleaned(normalized.text, CODE_LANG, 1.0, code_rules.first_failure(doc, self.cfg.code), normalized)

    def _language_gate(self, guess: LangGuess) -> str | None:
        if guess.lang == UNDETERMINED:
            return None if self.cfg.langid.keep_undetermined else "language_undetermined"
        allowed = self.cfg.langid.allowed
        return "language_not_allowed" if allowed and guess.lang not in allowed else None

    def _thresholds_for(self, lang: str) -> ProseThresholds:
        if lang not in self._thresholds:
            self._thresholds[lang] = self.cfg.prose.thresholds_for(lang)
        return self._thresholds[lang]


def _with_clean_columns(table: pa.Table, results: list[Cleaned], new_text: bool) -> pa.Table:
    """Add lang and lang_score; kept documents also carry their cleaned text."""
    if new_text:
        index = table.schema.get_field_index("text")
        table = table.set_column(index, contract.CLEAN.field("text"), pa.array([r.text for r in results], pa.string()))
    table = table.append_column(contract.CLEAN.field("lang"), pa.array([r.lang for r in results], pa.string()))
    return table.append_column(
        contract.CLEAN.field("lang_score"), pa.array([r.lang_score for r in results], pa.float32())
    )


def _stats(results: list[Cleaned]) -> dict[str, float]:
    """Kept documents per language, and how much normalisation and the C4 filters changed."""
    stats: Counter[str] = Counter()
    for result in results:
        if result.reason is None:
            stats[f"lang_{result.lang}"] += 1
        if result.normalized is not None:
            stats["docs_changed_by_ftfy"] += result.normalized.ftfy_changed
            stats["docs_changed_by_unicode_form"] += result.normalized.form_changed
            stats["control_chars_removed"] += result.normalized.chars_removed
        stats["chars_removed_by_c4"] += result.c4_chars_removed
    return {key: float(value) for key, value in sorted(stats.items())}


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"clean": cfg.clean}


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> CleanStage:
    return CleanStage(cfg.clean)

"""The PII stage: per shard detect, redact and drop PII-dense documents, with the shipped name/address tagger.

Redaction replaces each match with a typed placeholder (`<EMAIL>`), so a model trained on the output learns that
such things occur without learning anyone's data. Documents above the density limit are dropped instead
(reason `pii_density`), and their quarantined copy is redacted too: the quarantine is for auditing the filter,
not a second copy of the personal data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import schema as contract
from pretrain_core.clean.config import LangIdConfig
from pretrain_core.clean.langid import UNDETERMINED, detect_language
from pretrain_core.pii.classifier import NameAddressTagger, load_tagger, model_sha256
from pretrain_core.pii.code_text import can_lex, code_prose
from pretrain_core.pii.config import CLASSIFIER_TYPES, PiiConfig
from pretrain_core.pii.detectors import find_structured
from pretrain_core.pii.spans import Span, outside, redact, resolve_overlaps
from pretrain_core.pii.tokens import token_texts
from pretrain_core.stage import ShardOutput

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

# Characters of text tagged per batch: bounds the feature arrays (about 300 bytes per candidate token, and in
# Chinese nearly every character is one) on large shards.
_TAGGER_BATCH_CHARS = 1_000_000
_SEPARATORS = " \t\n,;:()<>[]"
_LANGID = LangIdConfig()  # the clean stage's defaults, for documents that arrive without a language


class PiiStage:
    """Per-shard PII detection and redaction; picklable (config plus the tagger's arrays)."""

    name = "pii"
    schema = contract.PII

    def __init__(self, cfg: PiiConfig) -> None:
        self.cfg = cfg
        self.tagger: NameAddressTagger | None = load_tagger(cfg.classifier_model) if cfg.uses_classifier() else None

    def detect(
        self,
        texts: list[str],
        is_code: list[bool],
        langs: list[str],
        stats: Counter[str] | None = None,
        code_languages: list[str | None] | None = None,
    ) -> list[list[Span]]:
        """Non-overlapping PII spans per document: patterns everywhere, the tagger where its kinds are wanted
        and the document is in one of its languages (detected here when unknown), and over the comments and
        strings of code. `stats` counts the documents whose language was detected, those the tagger could not
        run on, and the code documents whose comments it read."""
        stats = Counter() if stats is None else stats
        found = [
            find_structured(text, self._types(code), self.cfg.keep_private_ips)
            for text, code in zip(texts, is_code, strict=True)
        ]
        if self.tagger is not None and code_languages is not None:
            self._tag_code_prose(texts, is_code, code_languages, found, stats)
        if self.tagger is not None:
            wants_tagger = [bool(self._types(code) & set(CLASSIFIER_TYPES)) for code in is_code]
            langs = self._known_languages(texts, langs, wants_tagger, stats)
            eligible = [i for i, lang in enumerate(langs) if wants_tagger[i] and lang in self.cfg.classifier_langs]
            stats["pii_tagger_not_run"] += sum(wants_tagger) - len(eligible)
            for batch in _batches(eligible, texts):
                tagged = self.tagger.find_spans(
                    [texts[i] for i in batch], self.cfg.classifier_threshold, [langs[i] for i in batch]
                )
                for index, spans in zip(batch, tagged, strict=True):
                    wanted = self._types(is_code[index])
                    learned = [s for s in spans if s.type in wanted]
                    found[index] += _kept_learned(texts[index], learned, found[index])
        return [resolve_overlaps(spans) for spans in found]

    def _tag_code_prose(
        self,
        texts: list[str],
        is_code: list[bool],
        code_languages: list[str | None],
        found: list[list[Span]],
        stats: Counter[str],
    ) -> None:
        """Names in the comments and string literals of code documents, added to `found` in place."""
        wanted = set(self.cfg.code_tagger_types) & set(self.cfg.types)
        if not wanted or self.tagger is None:
            return
        for index in (i for i, code in enumerate(is_code) if code):
            if not can_lex(code_languages[index]):  # no language (a path field would give one), or one unknown
                stats["pii_code_prose_not_run"] += 1
                continue
            prose = code_prose(texts[index], code_languages[index])
            chunks = [texts[index][start:end] for start, end in prose.regions]
            if not chunks or detect_language("\n".join(chunks), _LANGID).lang not in self.cfg.classifier_langs:
                continue
            stats["pii_code_prose_tagged"] += 1
            for (start, _), spans in zip(
                prose.regions, self.tagger.find_spans(chunks, self.cfg.classifier_threshold), strict=True
            ):
                shifted = [Span(start + s.start, start + s.end, s.type) for s in spans if s.type in wanted]
                names = prose.names_outside_code(texts[index], shifted)
                found[index] += _kept_learned(texts[index], names, found[index])

    def _known_languages(
        self, texts: list[str], langs: list[str], wants_tagger: list[bool], stats: Counter[str]
    ) -> list[str]:
        """Languages with 'und' replaced by a detected one where the tagger would run on the document."""
        if not self.cfg.detect_language:
            return langs
        known = list(langs)
        for i, lang in enumerate(langs):
            if wants_tagger[i] and (not lang or lang == UNDETERMINED):
                known[i] = detect_language(texts[i], _LANGID).lang
                stats["pii_lang_detected"] += 1
        return known

    def _types(self, is_code: bool) -> set[str]:
        wanted: set[str] = set(self.cfg.types)
        return wanted & set(self.cfg.code_types) if is_code else wanted

    def process(self, table: pa.Table) -> ShardOutput:
        table = table.select(contract.DEDUP.names)
        texts = table.column("text").to_pylist()
        domains = table.column("domain").to_pylist()
        code_languages = table.column("code_language").to_pylist()
        is_code = [d == "code" or c is not None for d, c in zip(domains, code_languages, strict=True)]
        stats: Counter[str] = Counter()
        all_spans = self.detect(texts, is_code, table.column("lang").to_pylist(), stats, code_languages)

        out_texts, counts, kinds, reasons = [], [], [], []
        for text, spans in zip(texts, all_spans, strict=True):
            out_texts.append(text if self.cfg.action == "tag" else redact(text, spans, self.cfg.placeholder))
            counts.append(len(spans))
            kinds.append(sorted({s.type for s in spans}))
            reasons.append(self._drop_reason(len(text), spans))
            stats.update(f"pii_{s.type}" for s in spans)
            stats["pii_documents"] += bool(spans)

        annotated = (
            table.set_column(table.schema.get_field_index("text"), "text", pa.array(out_texts, pa.string()))
            .append_column(contract.PII_FIELDS[0], pa.array(counts, pa.int32()))
            .append_column(contract.PII_FIELDS[1], pa.array(kinds, pa.list_(pa.string())))
        )
        keep = pa.array([reason is None for reason in reasons], pa.bool_())
        dropped = annotated.filter(pc.invert(keep))
        dropped = dropped.append_column(contract.DROP_REASON, pa.array([r for r in reasons if r], pa.string()))
        return ShardOutput(annotated.filter(keep), dropped, {k: float(v) for k, v in sorted(stats.items())})

    def _drop_reason(self, length: int, spans: list[Span]) -> str | None:
        cfg = self.cfg
        count = sum(span.type in cfg.density_types for span in spans)
        if cfg.max_count is not None and count > cfg.max_count:
            return "pii_density"
        dense = cfg.max_per_1000_chars is not None and count * 1000 > cfg.max_per_1000_chars * max(length, 1)
        if dense and count >= cfg.density_min_count:
            return "pii_density"
        if cfg.action == "drop" and spans:
            return "contains_pii"
        return None


def _kept_learned(text: str, learned: list[Span], structured: list[Span]) -> list[Span]:
    """The tagger's spans outside the pattern matches: a validated identifier is more certain than a name or
    address run that grew over it ("Tel. 030 1234567" after an address). What is left of a cut span is kept only
    when it still holds two words or more (not a lone "Tel." or "In")."""
    kept = []
    for part in outside(learned, structured):
        if part in learned:
            kept.append(part)
            continue
        covered = text[part.start : part.end]
        start = part.start + len(covered) - len(covered.lstrip(_SEPARATORS))
        end = part.end - (len(covered) - len(covered.rstrip(_SEPARATORS)))
        if len(token_texts(text[start:end])) >= 2:
            kept.append(Span(start, end, part.type))
    return kept


def _batches(indices: list[int], texts: list[str]) -> Iterator[list[int]]:
    batch: list[int] = []
    size = 0
    for index in indices:
        batch.append(index)
        size += len(texts[index])
        if size >= _TAGGER_BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    """The PII settings and the tagger model's hash: a rebuilt tagger invalidates the stage's outputs."""
    tagger = model_sha256(cfg.pii.classifier_model) if cfg.pii.uses_classifier() else None
    return {"pii": cfg.pii, "tagger_sha256": tagger}


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> PiiStage:
    return PiiStage(cfg.pii)

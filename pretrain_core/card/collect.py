"""Gather a build's data card from what the build already wrote: each stage's manifest (counts, drop reasons and
the per-shard statistics of `card.stats`, summed), the mixture's plan summary, the tokenizer's card and the quality
cut-offs of the config, plus a few dropped documents per reason read from the head of the quarantine files."""

from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.card.stats import (
    BYTES_BY_LANGUAGE,
    CLUSTER_SIZE,
    QUALITY_SCORE,
    SCORE_BINS,
    TOKENS_BY_LANGUAGE,
    TOKENS_BY_LICENCE,
    TOKENS_BY_SOURCE,
    family,
)
from pretrain_core.config import PipelineConfig
from pretrain_core.config_base import ConfigError
from pretrain_core.licences import NOASSERTION
from pretrain_core.manifest import StageManifest
from pretrain_core.pii.config import PATTERN_TYPES, PII_TYPES
from pretrain_core.pii.detectors import find_structured
from pretrain_core.pii.spans import redact, resolve_overlaps
from pretrain_core.pipeline import CORPUS_STAGES, CorpusPipeline
from pretrain_core.schema import DOMAINS

CARD_DIR = "card"  # under the root; with storage.layout by_config, card-<the tokenize stage's config hash>
EXAMPLES_PER_REASON = 2
EXAMPLE_CHARS = 200
EXAMPLE_FILES = 32  # quarantine files read at most per stage, from the first
EXAMPLE_ROWS = 100_000  # and rows: a reason not met by then shows no example
LANGUAGE_PREFIX = "lang_"  # clean's kept documents per language


class SourceFacts(BaseModel):
    name: str
    domain: str
    format: str
    licence: str
    attribution: str | None
    url: str | None
    documents_ingested: int
    tokens: float  # document tokens in the token shards, copies counted


class StageFacts(BaseModel):
    name: str
    docs_in: int
    docs_out: int
    dropped: dict[str, int]
    examples: dict[str, list[str]]  # drop reason → a few dropped texts, structured PII redacted, cut short
    config_hash: str
    code_version: str


class MixtureShare(BaseModel):
    target: float
    realised: float
    tokens: int
    epochs: float


class DataCard(BaseModel):
    """Everything the card shows, as data (`card.json`): the renderers and `--compare` read only this."""

    name: str
    root: str
    folder: str  # where its files go
    config_hash: str
    code_version: str
    sources: list[SourceFacts]
    stages: list[StageFacts]
    tokens_by_domain: dict[str, float]
    tokens_by_language: dict[str, float]
    tokens_by_source: dict[str, float]
    tokens_by_licence: dict[str, float]  # realised in the mixture, copies counted
    mixture: dict[str, MixtureShare]
    sequences: dict[str, int]  # per split
    languages: dict[str, float]  # documents kept by cleaning, per language
    cluster_sizes: dict[str, float]  # kept documents per size of their duplicate cluster
    pii_by_type: dict[str, float]
    decontamination: dict[str, dict[str, float]] = {}  # evaluation set -> documents, n-grams, redacted documents
    quality_histogram: dict[str, list[float]]  # per domain, SCORE_BINS counts over [0, 1]
    quality_cutoffs: list[float]  # tail below the first, head from the second
    quality_kept_buckets: dict[str, list[str]]
    bytes_per_token: dict[str, float]  # per language
    tokenizer: dict[str, Any]


def collect_card(cfg: PipelineConfig) -> DataCard:
    """The card of the build ``cfg`` describes; every stage must have finished (a clear error names the first that
    has not)."""
    pipeline = CorpusPipeline(cfg)
    manifests: dict[str, StageManifest] = {}
    for name in CORPUS_STAGES:
        manifest = pipeline.recorded(name)
        if manifest is None:
            raise ConfigError(
                f"the build under {cfg.storage.root} has not finished stage {name} under these settings: run "
                "`pretrain corpus` with them, or name the build's own root and config (--set storage.root=ROOT, "
                "--config FILE)"
            )
        manifests[name] = manifest
    stats = {name: manifest.stats for name, manifest in manifests.items()}
    tokenize = stats["tokenize"]
    return DataCard(
        name=cfg.name,
        root=cfg.storage.root,
        folder=card_folder(cfg, pipeline),
        config_hash=cfg.hash(),
        code_version=manifests["tokenize"].code_version,
        sources=_sources(cfg, manifests),
        stages=[_stage(name, manifest, pipeline.root(name)) for name, manifest in manifests.items()],
        tokens_by_domain={d: stats["mixture"].get(f"tokens_{d}", 0.0) for d in DOMAINS},
        tokens_by_language=_descending(family(tokenize, TOKENS_BY_LANGUAGE)),
        tokens_by_source=_descending(family(tokenize, TOKENS_BY_SOURCE)),
        tokens_by_licence=_descending(family(stats["mixture"], TOKENS_BY_LICENCE)),
        mixture=_mixture(manifests["mixture"]),
        sequences={split: int(tokenize.get(f"sequences_{split}", 0)) for split in ("train", "validation", "test")},
        languages=_descending(
            {
                key.removeprefix(LANGUAGE_PREFIX): v
                for key, v in stats["clean"].items()
                if key.startswith(LANGUAGE_PREFIX)
            }
        ),
        cluster_sizes=dict(sorted(family(stats["dedup"], CLUSTER_SIZE).items(), key=lambda kv: _size_order(kv[0]))),
        pii_by_type={kind: stats["pii"].get(f"pii_{kind}", 0.0) for kind in PII_TYPES},
        decontamination=_decontamination(stats["decontaminate"], manifests["decontaminate"]),
        quality_histogram=_histograms(family(stats["quality"], QUALITY_SCORE)),
        quality_cutoffs=list(cfg.quality.score_cutoffs),
        quality_kept_buckets={domain: list(buckets) for domain, buckets in cfg.quality.keep_buckets.items()},
        bytes_per_token=_bytes_per_token(tokenize),
        tokenizer=_tokenizer(manifests["tokenize"]),
    )


def card_folder(cfg: PipelineConfig, pipeline: CorpusPipeline) -> str:
    """`<root>/card`; under `storage.layout: by_config`, where builds share a root, one folder per build."""
    if cfg.storage.layout == "flat":
        return storage.join(cfg.storage.root, CARD_DIR)
    return storage.join(cfg.storage.root, f"{CARD_DIR}-{pipeline.config_hash('tokenize')[:16]}")


def _decontamination(stats: dict[str, float], manifest: StageManifest) -> dict[str, dict[str, float]]:
    """Per evaluation set, the training documents found overlapping it, their n-grams, those redacted and dropped."""
    found = family(stats, "contaminated_docs")
    ngrams, redacted = family(stats, "contaminated_ngrams"), family(stats, "redacted_docs")
    return {
        name: {
            "documents": documents,
            "ngrams": ngrams.get(name, 0.0),
            "redacted": redacted.get(name, 0.0),
            "dropped": float(manifest.dropped.get(f"contaminated:{name}", 0)),
        }
        for name, documents in sorted(found.items())
    }


def _descending(values: dict[str, float]) -> dict[str, float]:
    return dict(sorted(values.items(), key=lambda kv: (-kv[1], kv[0])))


def _size_order(bucket: str) -> int:
    return int(bucket.split("-")[0])


def _sources(cfg: PipelineConfig, manifests: dict[str, StageManifest]) -> list[SourceFacts]:
    ingested: dict[str, int] = {}
    for shard in manifests["ingest"].shards:
        source = shard.key.rsplit("-", 1)[0]
        ingested[source] = ingested.get(source, 0) + shard.docs_out
    tokens = family(manifests["tokenize"].stats, TOKENS_BY_SOURCE)
    return [
        SourceFacts(
            name=s.name,
            domain=s.domain,
            format=s.format,
            licence=s.licence or (f"per record ({s.licence_field})" if s.licence_field else NOASSERTION),
            attribution=s.attribution,
            url=s.url,
            documents_ingested=ingested.get(s.name, 0),
            tokens=tokens.get(s.name, 0.0),
        )
        for s in cfg.sources
    ]


def _stage(name: str, manifest: StageManifest, root: str) -> StageFacts:
    return StageFacts(
        name=name, docs_in=manifest.docs_in, docs_out=manifest.docs_out, dropped=dict(manifest.dropped),
        examples=dropped_examples(storage.join(root, "dropped"), set(manifest.dropped)),
        config_hash=manifest.config_hash, code_version=manifest.code_version,
    )  # fmt: skip


def dropped_examples(dropped_root: str, reasons: set[str]) -> dict[str, list[str]]:
    """Up to EXAMPLES_PER_REASON texts per reason from the first rows of the first quarantine files (batch by
    batch, so a large quarantine is never read whole), their structured PII (emails, phones, cards …) redacted,
    cut to EXAMPLE_CHARS."""
    examples: dict[str, list[str]] = {reason: [] for reason in sorted(reasons)}
    scanned = 0
    if not reasons or not storage.exists(dropped_root):
        return examples
    for url in sorted(storage.list_files(dropped_root, suffix=".parquet"))[:EXAMPLE_FILES]:
        fs, path = storage.filesystem(url)
        with fs.open(path, "rb") as handle:
            parquet = pq.ParquetFile(handle)
            if "text" not in parquet.schema_arrow.names:
                return examples  # token shards' quarantine holds ids, not text
            for batch in parquet.iter_batches(batch_size=1024, columns=["text", "drop_reason"]):
                for text, reason in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True):
                    if reason in examples and len(examples[reason]) < EXAMPLES_PER_REASON and text.strip():
                        examples[reason].append(_redacted(text))
                scanned += batch.num_rows
                if scanned >= EXAMPLE_ROWS or all(len(found) >= EXAMPLES_PER_REASON for found in examples.values()):
                    return examples
    return examples


def _redacted(text: str) -> str:
    short = " ".join(text[: EXAMPLE_CHARS * 2].split())  # one line: runs of whitespace as one space
    spans = resolve_overlaps(find_structured(short, PATTERN_TYPES))
    cleaned = redact(short, spans, lambda kind: f"<{kind.upper()}>")
    return cleaned[:EXAMPLE_CHARS] + ("…" if len(cleaned) > EXAMPLE_CHARS else "")


def _mixture(manifest: StageManifest) -> dict[str, MixtureShare]:
    summary = storage.read_json(manifest.artifacts["mixture_summary"])
    return {
        domain: MixtureShare(
            target=facts["target_share"],
            realised=facts["realised_share"],
            tokens=facts["realised_tokens"],
            epochs=facts["epochs"],
        )
        for domain, facts in summary["domains"].items()
    }


def _histograms(counts: dict[str, float]) -> dict[str, list[float]]:
    histograms: dict[str, list[float]] = {}
    for key, value in counts.items():
        domain, index = key.rsplit("/", 1)
        histograms.setdefault(domain, [0.0] * SCORE_BINS)[int(index)] += value
    return dict(sorted(histograms.items()))


def _bytes_per_token(stats: dict[str, float]) -> dict[str, float]:
    tokens = family(stats, TOKENS_BY_LANGUAGE)
    return {
        language: round(size / tokens[language], 3)
        for language, size in _descending(family(stats, BYTES_BY_LANGUAGE)).items()
        if tokens.get(language)
    }


def _tokenizer(manifest: StageManifest) -> dict[str, Any]:
    url = manifest.artifacts.get("tokenizer_card")
    facts = storage.read_json(url) if url else {}
    return {key: facts[key] for key in ("model_type", "vocab_size", "sha256") if key in facts}

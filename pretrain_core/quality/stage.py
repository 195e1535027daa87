"""The quality stage: fit reference models and per-language cut-offs once, then score every shard.

`fit_quality` trains, per domain group, a multilingual model on the group's reference text and (for prose) a
model per language with enough reference and sample documents, each a lexical and a skeleton n-gram model; it
scores a seeded sample of the input under the same models to place the cut-offs. When the reference is the input
itself ("self"), each model's n-gram counts are cross-fitted in two folds so that no document is scored by counts
that include it (a memorised document would look like the best text in the corpus); each model also records
where held-out reference text lies under it (`_reference_levels`). `QualityStage` measures every document's
perplexity and signals (signals.py), asks the shipped classifier (classifier.py), combines both into
`quality_score` (score.py), buckets it by the fixed `score_cutoffs` and drops the buckets its domain does not keep,
with reason `quality_bucket_<bucket>`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from pretrain_core import schema, storage
from pretrain_core.card.stats import score_histogram
from pretrain_core.config_base import ConfigError
from pretrain_core.cores import usable_cores
from pretrain_core.quality import sample_scores
from pretrain_core.quality.classifier import SIGNAL_NAMES, SignalClassifier, shipped_classifiers
from pretrain_core.quality.config import BUCKETS, QualityConfig
from pretrain_core.quality.corpus import CorpusSample, scan_corpus
from pretrain_core.quality.cutoffs import (
    CODE,
    GLOBAL,
    PROSE,
    QualityIndex,
    bucket_key,
    group_of,
    percentile_cutoffs,
)
from pretrain_core.quality.languages import known_languages
from pretrain_core.quality.model_cache import FittedModel, ModelCache, model_key
from pretrain_core.quality.ngram import NgramLM
from pretrain_core.quality.prose_batch import prose_signal_matrix
from pretrain_core.quality.reference import ReferenceRecord, train_lm, train_skeleton_tokenizer, train_tokenizer
from pretrain_core.quality.sample_scores import SampleScores
from pretrain_core.quality.sampling import fold_of
from pretrain_core.quality.score import combined_scores, perplexity_positions, score_buckets
from pretrain_core.quality.scoring import Components, FoldedModel, ReferenceModel, Skeleton
from pretrain_core.quality.signals import code_signals
from pretrain_core.quality.skeleton import SkeletonTokenizer
from pretrain_core.quality.tokenizers import Tokenizer, TokenizerKind, load_tokenizer
from pretrain_core.schema import DROP_REASON, QUALITY
from pretrain_core.signal_names import CODE_SIGNAL_NAMES, PERPLEXITY_SIGNAL_NAMES, SIGNAL_FIELDS
from pretrain_core.stage import ShardOutput

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

CUTOFFS = "cutoffs"
MODEL_CACHE_DIR = "cache/quality-models"  # under the storage root: reference models reused across builds
# The shipped reference's models, built by `make setup` (`python -m pretrain_core.quality.prebuild`); read only.
PREBUILT_MODELS = Path(__file__).resolve().parent.parent / "data" / "quality-models"
SCORED_SAMPLE = "scored_sample"
# Text more predictable than reference text usually is says nothing better about it (templated and monotone
# text is the most predictable of all): distances below this count as this.
MOST_FAMILIAR = -1.0
_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}")  # model names become file names: only plain ISO codes get a model
_TOKENIZER_SUFFIX = {"sentencepiece": "spm", "characters": "chars.json"}


@dataclass(frozen=True)
class _ModelPlan:
    kind: TokenizerKind
    records: list[ReferenceRecord]

    def part_texts(self, cross_fit: bool) -> list[list[str]]:
        """Training texts per part: with cross-fitting, part f leaves out the input documents of fold f."""
        folds = [[r.text for r in self.records if r.fold != fold] for fold in (0, 1)]
        if not cross_fit or all(r.fold is None for r in self.records) or not all(folds):
            return [[r.text for r in self.records]]
        return folds


def fit_quality(
    input_urls: list[str],
    cfg: QualityConfig,
    artifact_dir: str,
    cache_url: str | None = None,
    prebuilt_url: str | None = None,
) -> dict[str, str]:
    """Train the reference models and measure the cut-offs; write them under ``artifact_dir`` (same inputs and
    config give the same bytes) and return artifact name -> URL: `cutoffs`, and per model `<model>.tokenizer`
    and `<model>.skeleton` (the skeleton's kept words), and per part `<model>.fold<i>.lm` and
    `<model>.fold<i>.skeleton.lm`. With ``cache_url``, a model already fitted on the same reference and settings
    is copied from there instead of trained (`model_cache`); so is one in ``prebuilt_url``, read only (what
    `make setup` builds for the shipped reference: `prebuilt_models`)."""
    corpus = scan_corpus(input_urls, cfg)
    plans, routes = _plan_models(corpus, cfg)
    cache = ModelCache(cache_url) if cache_url else None
    prebuilt = ModelCache(prebuilt_url) if prebuilt_url else None
    fit_settings = _fit_settings(cfg)
    models: dict[str, FoldedModel] = {}
    artifacts: dict[str, str] = {}
    model_info: dict[str, dict[str, Any]] = {}
    for name, plan in plans.items():
        key = model_key(name, plan.kind, plan.records, fit_settings)
        fitted = next((found for c in (prebuilt, cache) if c is not None and (found := c.get(key))), None)
        if fitted is None:
            fitted = _fit_model(plan, cfg)
            if cache is not None:
                cache.put(key, fitted)
        for suffix, (file_suffix, data) in fitted.files.items():
            artifacts[f"{name}.{suffix}"] = url = storage.join(artifact_dir, "models", f"{name}.{file_suffix}")
            storage.write_bytes(url, data)
        contents = {suffix: data for suffix, (_, data) in fitted.files.items()}
        models[name] = folded_model(fitted.info, contents.__getitem__, cfg)
        model_info[name] = fitted.info
    cutoffs, scored_sample = _measure_cutoffs(corpus, models, routes, cfg)
    index = QualityIndex(
        percentiles=cfg.bucket_percentiles,
        models=model_info,
        routes=routes,
        cutoffs=cutoffs,
        sample=_sample_sizes(corpus),
    )
    artifacts[CUTOFFS] = storage.join(artifact_dir, "cutoffs.json")
    storage.write_json(artifacts[CUTOFFS], index.to_json())
    artifacts[SCORED_SAMPLE] = storage.join(artifact_dir, "scored_sample.parquet")
    storage.write_parquet(artifacts[SCORED_SAMPLE], scored_sample)
    return dict(sorted(artifacts.items()))


def _fit_model(plan: _ModelPlan, cfg: QualityConfig) -> FittedModel:
    """One model's tokenisers and per-part n-gram models, as the bytes the fit writes, and its facts."""
    # One tokeniser per model, trained on all its reference text: a held-out document's effect on the piece
    # vocabulary is negligible, unlike its effect on n-gram counts, which is why only the counts are folded.
    all_texts = [r.text for r in plan.records]
    tokenizer = train_tokenizer(all_texts, plan.kind, cfg)
    skeleton_tokenizer = train_skeleton_tokenizer(all_texts, cfg)
    files: dict[str, tuple[str, bytes]] = {"tokenizer": (_TOKENIZER_SUFFIX[plan.kind], tokenizer.to_bytes())}
    if skeleton_tokenizer is not None:
        files["skeleton"] = ("skeleton.json", skeleton_tokenizer.to_bytes())
    parts, part_info = [], []
    for part, texts in enumerate(plan.part_texts(cfg.cross_fit)):
        lm = train_lm(texts, tokenizer, cfg.order)
        files[f"fold{part}.lm"] = (f"fold{part}.lm", lm.to_bytes())
        info = {
            "reference_docs": len(texts),
            "reference_chars": sum(map(len, texts)),
            "n_grams": lm.n_grams,
            "discounts": [round(d, 6) for d in lm.discounts],
        }
        skeleton = None
        if skeleton_tokenizer is not None:
            skeleton_lm = train_lm(texts, skeleton_tokenizer, cfg.skeleton_order)
            files[f"fold{part}.skeleton.lm"] = (f"fold{part}.skeleton.lm", skeleton_lm.to_bytes())
            skeleton = Skeleton(skeleton_tokenizer, skeleton_lm, cfg.skeleton_weight)
            info["skeleton_n_grams"] = skeleton_lm.n_grams
        parts.append(ReferenceModel(tokenizer, lm, skeleton))
        part_info.append(info)
    levels = _reference_levels(plan, FoldedModel(tuple(parts), cfg.seed), tokenizer, skeleton_tokenizer, cfg)
    facts = {
        "tokenizer": plan.kind,
        "vocab_size": tokenizer.vocab_size,
        "order": cfg.order,
        "skeleton_words": len(skeleton_tokenizer.words) if skeleton_tokenizer is not None else 0,
        "skeleton_order": cfg.skeleton_order,
        "folds": len(parts),
        "reference_docs": len(plan.records),
        "parts": part_info,
        "levels": levels,
    }
    return FittedModel(files, facts)


def folded_model(info: dict[str, Any], read: Callable[[str], bytes], cfg: QualityConfig) -> FoldedModel:
    """A fitted model from its facts and its files (``read``: artifact suffix → bytes), as the fit wrote them."""
    tokenizer = load_tokenizer(info["tokenizer"], read("tokenizer"))
    skeleton_tokenizer = SkeletonTokenizer.from_bytes(read("skeleton")) if info["skeleton_words"] else None
    parts = []
    for part in range(int(info["folds"])):
        lm = NgramLM.from_bytes(read(f"fold{part}.lm"))
        skeleton = None
        if skeleton_tokenizer is not None:
            skeleton_lm = NgramLM.from_bytes(read(f"fold{part}.skeleton.lm"))
            skeleton = Skeleton(skeleton_tokenizer, skeleton_lm, cfg.skeleton_weight)
        parts.append(ReferenceModel(tokenizer, lm, skeleton))
    return FoldedModel(tuple(parts), cfg.seed)


def _reference_levels(
    plan: _ModelPlan,
    model: FoldedModel,
    tokenizer: Tokenizer,
    skeleton_tokenizer: SkeletonTokenizer | None,
    cfg: QualityConfig,
) -> dict[str, list[float]]:
    """Where reference text itself lies under the model: median and robust spread (IQR / 1.349) of the log10
    lexical and skeleton perplexities of reference documents, each scored by counts that never saw it. Cross-fitted
    models have such parts already; otherwise two half models are counted for this alone. A document's distance
    from these levels (`*_perplexity_z`) means the same whatever the input holds, unlike a percentile of it."""
    if len(model.parts) == 2:  # cross-fitted on input documents: part f never saw fold f
        records, halves = [r for r in plan.records if r.fold is not None], model
    else:
        records = plan.records
        folds = [fold_of(cfg.seed, r.key) for r in records]
        parts = []
        for fold in (0, 1):
            texts = [r.text for r, f in zip(records, folds, strict=True) if f != fold]
            half_skeleton = None
            if skeleton_tokenizer is not None:
                half_lm = train_lm(texts, skeleton_tokenizer, cfg.skeleton_order)
                half_skeleton = Skeleton(skeleton_tokenizer, half_lm, 0.0)
            parts.append(ReferenceModel(tokenizer, train_lm(texts, tokenizer, cfg.order), half_skeleton))
        halves = FoldedModel(tuple(parts), cfg.seed)
    scored = halves.components([r.key for r in records], [r.text for r in records], cfg.batch_chars)
    return {"lexical": _level(scored.lexical), "skeleton": _level(scored.skeleton)}


def _level(values: np.ndarray) -> list[float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return [0.0, 1.0]
    low, median, high = np.percentile(values, [25, 50, 75])
    return [round(float(median), 6), round(max(float(high - low) / 1.349, 1e-3), 6)]


def _sample_sizes(corpus: CorpusSample) -> dict[str, dict[str, dict[str, int]]]:
    sizes: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for (group, key), population in corpus.population.items():
        sizes[group][key] = {"docs": len(corpus.cutoff[(group, key)]), "population": population}
    return dict(sizes)


def _plan_models(corpus: CorpusSample, cfg: QualityConfig) -> tuple[dict[str, _ModelPlan], dict[str, dict[str, str]]]:
    """Which models to train on which records, and which bucket keys route to a model of their own."""
    plans: dict[str, _ModelPlan] = {}
    routes: dict[str, dict[str, str]] = {}
    for group in sorted({group for group, _ in corpus.population}):
        records = corpus.reference[group]
        if not records:
            reference = getattr(cfg, f"{group}_reference")
            named = f"sources {', '.join(reference.sources)} of domains" if reference.sources else "domains"
            raise ConfigError(
                f"quality: the input has {group} documents but no {group} reference text (quality.{group}_reference "
                f"takes {named} {', '.join(reference.domains)} from urls {', '.join(reference.urls)}); "
                f"name the input's reference sources, --set quality.{group}_reference.sources=[] to use all of "
                f"its {'/'.join(reference.domains)} documents, or point quality.{group}_reference.urls at files"
            )
        plans[group] = _ModelPlan("sentencepiece", records)
        if group != PROSE or not cfg.per_language_models:
            continue
        for lang, plan in _language_plans(records, cfg).items():
            if (group, lang) in corpus.population and _own_cutoffs(corpus, group, lang, cfg):
                plans[f"{group}.{lang}"] = plan
                routes.setdefault(group, {})[lang] = f"{group}.{lang}"
    return plans, routes


def _language_plans(records: list[ReferenceRecord], cfg: QualityConfig) -> dict[str, _ModelPlan]:
    """A model per language with enough reference records (plain ISO codes only: names become file names)."""
    by_lang: dict[str, list[ReferenceRecord]] = defaultdict(list)
    for record in records:
        if record.lang and _LANGUAGE_CODE.fullmatch(record.lang):
            by_lang[record.lang].append(record)
    plans = {}
    for lang, lang_records in sorted(by_lang.items()):
        if len(lang_records) >= cfg.min_reference_docs_per_language:
            kind: TokenizerKind = "characters" if lang in cfg.character_languages else "sentencepiece"
            plans[lang] = _ModelPlan(kind, lang_records)
    return plans


def _fit_settings(cfg: QualityConfig) -> dict[str, Any]:
    """What a reference model's bytes depend on besides its records: the config less what only scoring reads."""
    return cfg.model_dump(mode="json", exclude=set(SCORING_SETTINGS))


def prebuilt_models() -> str | None:
    """Where `make setup` put the shipped reference's models, when it did."""
    return str(PREBUILT_MODELS) if PREBUILT_MODELS.is_dir() else None


def prebuild_reference_models(cfg: QualityConfig, cache_url: str) -> list[str]:
    """Train into the cache at `cache_url` every model the configured reference files can give: each group's, and
    each language's with enough records, whatever languages an input will hold. Only file references count (an
    input's own documents, "self", differ per input). Returns the models' keys; those already there are kept."""
    reference = scan_corpus([], cfg).reference
    cache = ModelCache(cache_url)
    keys = []
    for group, records in reference.items():
        if not records:
            continue
        plans = {group: _ModelPlan("sentencepiece", records)}
        if group == PROSE and cfg.per_language_models:
            plans |= {f"{group}.{lang}": plan for lang, plan in _language_plans(records, cfg).items()}
        for name, plan in plans.items():
            key = model_key(name, plan.kind, plan.records, _fit_settings(cfg))
            if cache.get(key) is None:
                cache.put(key, _fit_model(plan, cfg))
            keys.append(key)
    return keys


def _measure_cutoffs(
    corpus: CorpusSample, models: dict[str, FoldedModel], routes: dict[str, dict[str, str]], cfg: QualityConfig
) -> tuple[dict[str, dict[str, tuple[float, float]]], pa.Table]:
    """Per key under the model that will score it; plus each group model's population-weighted global cut-offs.
    Also the sample's scores under the model that will score each document (`sample_scores`)."""
    cutoffs: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    pooled: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = defaultdict(lambda: ([], []))
    scored = [sample_scores.SCHEMA.empty_table()]

    def score(item: tuple[tuple[str, str], list[tuple[str, str]]]) -> tuple[Components, Components]:
        (group, key), docs = item
        ids, texts = [doc_id for doc_id, _ in docs], [text for _, text in docs]
        under_group = models[group].components(ids, texts, cfg.batch_chars)
        model = routes.get(group, {}).get(key, group)
        return under_group, under_group if model == group else models[model].components(ids, texts, cfg.batch_chars)

    # each key's documents scored on its own thread (the n-gram lookups and SentencePiece release the GIL), the
    # results taken in key order: the same bytes whatever the threads
    with ThreadPoolExecutor(max_workers=usable_cores()) as threads:
        components = list(threads.map(score, corpus.cutoff.items()))
    for ((group, key), docs), (group_components, own_components) in zip(corpus.cutoff.items(), components, strict=True):
        ids, texts = [doc_id for doc_id, _ in docs], [text for _, text in docs]
        under_group = group_components.combined(models[group].parts[0].skeleton)
        values, weights = pooled[group]
        values.append(under_group)
        weights.append(np.full(len(docs), corpus.population[(group, key)] / len(docs)))
        model = routes.get(group, {}).get(key, group)
        scored.append(sample_scores.sample_table(model, ids, texts, own_components))
        if _own_cutoffs(corpus, group, key, cfg):
            under_own = own_components.combined(models[model].parts[0].skeleton)
            cutoffs[model][key] = percentile_cutoffs(under_own, cfg.bucket_percentiles)
    for group, (values, weights) in pooled.items():
        cutoffs[group][GLOBAL] = percentile_cutoffs(
            np.concatenate(values), cfg.bucket_percentiles, np.concatenate(weights)
        )
    fitted = {model: dict(sorted(by_key.items())) for model, by_key in sorted(cutoffs.items())}
    return fitted, pa.concat_tables(scored).sort_by([("model", "ascending"), ("id", "ascending")])


def _own_cutoffs(corpus: CorpusSample, group: str, key: str, cfg: QualityConfig) -> bool:
    """Whether a key is population enough for cut-offs of its own (else its model's pooled ones apply)."""
    population = corpus.population[(group, key)]
    in_group = sum(count for (other, _), count in corpus.population.items() if other == group)
    return population >= cfg.min_docs_per_language and population >= cfg.min_language_share * in_group


class QualityStage:
    """Scores, buckets and filters one shard. Models load on first use; pickling ships only config, URLs and any
    classifiers given in place of the shipped ones."""

    name = "quality"
    schema = QUALITY

    def __init__(
        self, cfg: QualityConfig, artifacts: dict[str, str], classifiers: dict[str, SignalClassifier] | None = None
    ) -> None:
        """`classifiers`: the signal classifiers to score with; None means the shipped ones."""
        self.cfg = cfg
        self.artifacts = dict(artifacts)
        self.classifiers = classifiers
        self._index: QualityIndex | None = None
        self._models: dict[str, FoldedModel] = {}
        self._sample_scores: SampleScores | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"cfg": self.cfg, "artifacts": self.artifacts, "classifiers": self.classifiers}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.cfg, self.artifacts, self.classifiers = state["cfg"], state["artifacts"], state["classifiers"]
        self._index, self._models, self._sample_scores = None, {}, None

    @property
    def index(self) -> QualityIndex:
        if self._index is None:
            self._index = QualityIndex.from_json(storage.read_json(self.artifacts[CUTOFFS]))
        return self._index

    def model(self, name: str) -> FoldedModel:
        if name not in self._models:
            info = self.index.models[name]
            self._models[name] = folded_model(info, partial(self._artifact_bytes, name), self.cfg)
        return self._models[name]

    def _artifact_bytes(self, model: str, suffix: str) -> bytes:
        return storage.read_bytes(self.artifacts[f"{model}.{suffix}"])

    @property
    def fit_scores(self) -> SampleScores:
        """The scores the fit computed for its cut-off sample."""
        if self._sample_scores is None:
            url = self.artifacts.get(SCORED_SAMPLE)  # absent from fits made before it was kept
            table = storage.read_parquet(url) if url else sample_scores.SCHEMA.empty_table()
            self._sample_scores = SampleScores.from_table(table)
        return self._sample_scores

    def _components(self, model_name: str, ids: list[str], texts: list[str]) -> Components:
        """The documents' components under the model: the fit's where it scored them for the cut-offs, computed
        for the rest."""
        found, components = self.fit_scores.take(model_name, ids, texts)
        rest = np.flatnonzero(~found).tolist()
        if rest:
            scored = self.model(model_name).components(
                [ids[r] for r in rest], [texts[r] for r in rest], self.cfg.batch_chars
            )
            for column, values in zip(components, scored, strict=True):
                column[rest] = values
        return components

    def process(self, table: pa.Table) -> ShardOutput:
        ids, texts = table.column("id").to_pylist(), table.column("text").to_pylist()
        domains = table.column("domain").to_pylist()
        groups = [group_of(domain, self.cfg.code_domains) for domain in domains]
        langs, detected = table.column("lang").to_pylist(), 0
        if self.cfg.detect_language:
            langs, detected = known_languages(langs, texts.__getitem__, [group == PROSE for group in groups])
        keys = [
            bucket_key(group, lang, code_language)
            for group, lang, code_language in zip(groups, langs, table.column("code_language").to_pylist(), strict=True)
        ]
        by_model: dict[str, list[int]] = defaultdict(list)
        for row, (group, key) in enumerate(zip(groups, keys, strict=True)):
            by_model[self.index.model_for(group, key)].append(row)
        perplexity = np.zeros(len(texts), dtype=np.float32)
        position = np.zeros(len(texts), dtype=np.float64)
        distance = np.full((len(texts), len(PERPLEXITY_SIGNAL_NAMES)), np.nan)
        for model_name, rows in sorted(by_model.items()):
            model = self.model(model_name)
            scored = self._components(model_name, [ids[r] for r in rows], [texts[r] for r in rows])
            perplexity[rows] = scored.combined(model.parts[0].skeleton)
            distance[rows] = _distances(scored, self.index.models[model_name])
            for key in sorted({keys[r] for r in rows}):
                in_key = [r for r in rows if keys[r] == key]
                position[in_key] = perplexity_positions(perplexity[in_key], *self.index.thresholds(model_name, key))
        signals = document_signals(texts, groups, langs, distance)
        logits = np.zeros(len(texts), dtype=np.float64)
        if self.cfg.classifier:
            classifiers = self.classifiers if self.classifiers is not None else shipped_classifiers()
            for group, rows in _rows_by(groups).items():
                logits[rows] = classifiers[group].logits(signals[group], SIGNAL_NAMES[group])
        capped = np.array([group in self.cfg.cap_familiarity for group in groups], dtype=bool)
        score = combined_scores(logits, position, self.cfg.perplexity_weight, capped).astype(np.float32)
        buckets = score_buckets(score, self.cfg.score_cutoffs)
        keep = np.array(
            [
                bucket in self.cfg.keep_buckets.get(domain, BUCKETS)
                for bucket, domain in zip(buckets, domains, strict=True)
            ],
            dtype=bool,
        )
        probability = 1.0 / (1.0 + np.exp(-logits))
        scored = (
            table.append_column("perplexity", pa.array(perplexity, pa.float32()))
            .append_column("quality_signals", signal_column(signals, groups))
            .append_column("quality_classifier", pa.array(probability.astype(np.float32), pa.float32()))
            .append_column("quality_score", pa.array(score, pa.float32()))
            .append_column("quality_bucket", pa.array(buckets.tolist(), pa.string()))
        )
        dropped = scored.filter(pa.array(~keep))
        reasons = [f"quality_bucket_{bucket}" for bucket in buckets[~keep]]
        dropped = dropped.append_column(DROP_REASON, pa.array(reasons, pa.string()))
        stats = _stats(groups, keys, perplexity, buckets) | {"quality_lang_detected": float(detected)}
        stats |= score_histogram(score, domains)  # every scored document, kept or cut, for the card
        return ShardOutput(scored.filter(pa.array(keep)), dropped, stats)


def _rows_by(groups: list[str]) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = defaultdict(list)
    for row, group in enumerate(groups):
        rows[group].append(row)
    return dict(rows)


def _distances(scored: Components, info: dict[str, Any]) -> np.ndarray:
    """The perplexity signals: each log10 perplexity's distance from the model's reference level (see
    `_reference_levels`), in robust standard deviations, and the skeleton's kept-word share (NaN for a model
    without a skeleton)."""
    (lex_median, lex_scale), (skel_median, skel_scale) = info["levels"]["lexical"], info["levels"]["skeleton"]
    distances = np.stack(
        [(scored.lexical - lex_median) / lex_scale, (scored.skeleton - skel_median) / skel_scale], axis=1
    )
    return np.concatenate([np.maximum(distances, MOST_FAMILIAR), scored.kept_share[:, None]], axis=1)


def document_signals(
    texts: list[str], groups: list[str], langs: list[str], distances: np.ndarray
) -> dict[str, np.ndarray]:
    """Per group, the signal matrix of its documents (rows in input order, columns `SIGNAL_NAMES[group]`): the
    group's text signals, then the perplexity signals (`distances`, a row per document)."""
    out = {}
    for group, rows in _rows_by(groups).items():
        if group == CODE:
            matrix = [code_signals(texts[r]) for r in rows]
            text_signals = np.array(matrix, dtype=np.float64).reshape(len(rows), len(CODE_SIGNAL_NAMES))
        else:
            text_signals = prose_signal_matrix([texts[r] for r in rows], [langs[r] for r in rows])
        out[group] = np.concatenate([text_signals, distances[rows]], axis=1)
    return out


def signal_column(signals: dict[str, np.ndarray], groups: list[str]) -> pa.StructArray:
    """The `quality_signals` struct: each document's group's signals, null in the other group's fields."""
    columns = {name: np.full(len(groups), np.nan, dtype=np.float32) for name in SIGNAL_FIELDS}
    rows = _rows_by(groups)
    for group, matrix in signals.items():
        for j, name in enumerate(SIGNAL_NAMES[group]):
            columns[name][rows[group]] = matrix[:, j]
    arrays = [pa.array(values, pa.float32(), mask=np.isnan(values)) for values in columns.values()]
    return pa.StructArray.from_arrays(arrays, fields=list(schema.QUALITY_SIGNALS_TYPE))


def _stats(groups: list[str], keys: list[str], perplexity: np.ndarray, buckets: np.ndarray) -> dict[str, float]:
    """Summable per-shard counts (the manifest adds shard stats): bucket sizes, and perplexity sums and document
    counts per group and key, from which `mean_perplexities` derives the means."""
    stats: Counter[str] = Counter(f"bucket_{bucket}" for bucket in buckets)
    for group, key, value in zip(groups, keys, perplexity.tolist(), strict=True):
        stats[f"docs_{group}_{key}"] += 1
        stats[f"perplexity_sum_{group}_{key}"] += value
    return {name: float(value) for name, value in sorted(stats.items())}


def mean_perplexities(stats: dict[str, float]) -> dict[str, float]:
    """Mean perplexity per `<group>_<key>` from (possibly shard-summed) stage stats."""
    prefix = "perplexity_sum_"
    return {
        name[len(prefix) :]: total / stats[f"docs_{name[len(prefix) :]}"]
        for name, total in sorted(stats.items())
        if name.startswith(prefix) and stats.get(f"docs_{name[len(prefix) :]}")
    }


# Settings that only change how shards are scored with the fitted models: changing them reruns the shards, not
# the fit (the reference models and cut-offs).
SCORING_SETTINGS = frozenset({"classifier", "perplexity_weight", "cap_familiarity", "score_cutoffs", "keep_buckets"})


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"quality": cfg.quality}


def fit_settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"quality": _fit_settings(cfg.quality)}


def fit_stage(inputs: list[str], cfg: PipelineConfig, shared: dict[str, str], artifact_dir: str) -> dict[str, str]:
    cache = storage.join(cfg.storage.root, MODEL_CACHE_DIR)
    return fit_quality(inputs, cfg.quality, artifact_dir, cache, prebuilt_models())


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> QualityStage:
    return QualityStage(cfg.quality, artifacts)

"""One streaming pass over the stage input (plus any reference files) collecting what the fit needs: the
reference sample of each domain group, the cut-off sample of each (group, bucket key), and how many documents
each (group, key) has, so the global cut-offs can weight every key by its real share."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pretrain_core import storage
from pretrain_core.quality.config import SELF, QualityConfig, ReferenceConfig
from pretrain_core.quality.cutoffs import CODE, PROSE, bucket_key, group_of
from pretrain_core.quality.languages import known_languages
from pretrain_core.quality.reference import ReferenceRecord, read_reference_file, reference_files
from pretrain_core.quality.sampling import HashSample, fold_of, seeded_hash

INPUT_COLUMNS = ["id", "text", "source", "domain", "lang", "code_language"]
REFERENCE_PURPOSE, CUTOFF_PURPOSE = "quality-ref", "quality-cutoff"


@dataclass(frozen=True)
class CorpusSample:
    reference: dict[str, list[ReferenceRecord]]  # group -> reference records in hash order
    cutoff: dict[tuple[str, str], list[tuple[str, str]]]  # (group, key) -> sampled (id, text) in hash order
    population: dict[tuple[str, str], int]  # (group, key) -> documents in the input


def scan_corpus(input_urls: list[str], cfg: QualityConfig) -> CorpusSample:
    references = {PROSE: cfg.prose_reference, CODE: cfg.code_reference}
    reference = {group: HashSample[ReferenceRecord](ref.max_chars) for group, ref in references.items()}
    cutoff: dict[tuple[str, str], HashSample[tuple[str, str]]] = {}
    population: Counter[tuple[str, str]] = Counter()
    for url in input_urls:
        table = storage.read_parquet(url, columns=INPUT_COLUMNS)
        columns = {name: table.column(name).to_pylist() for name in INPUT_COLUMNS if name != "text"}
        texts: list[str] | None = None
        if cfg.detect_language:
            prose = [group_of(domain, cfg.code_domains) == PROSE for domain in columns["domain"]]
            texts = table.column("text").to_pylist()
            columns["lang"], _ = known_languages(columns["lang"], texts.__getitem__, prose)
        for row, (doc_id, source, domain, lang, code_language) in enumerate(
            zip(*(columns[c] for c in ("id", "source", "domain", "lang", "code_language")), strict=True)
        ):
            group = group_of(domain, cfg.code_domains)
            key = (group, bucket_key(group, lang, code_language))
            population[key] += 1
            sample = cutoff.setdefault(key, HashSample[tuple[str, str]](cfg.cutoff_sample_docs))
            cut_hash = seeded_hash(cfg.seed, CUTOFF_PURPOSE, doc_id)
            if sample.wants(cut_hash):
                texts = texts if texts is not None else table.column("text").to_pylist()
                sample.offer(cut_hash, doc_id, 1, (doc_id, texts[row]))
            if not _self_reference(references[group], domain, source):
                continue
            ref_hash = seeded_hash(cfg.seed, REFERENCE_PURPOSE, doc_id)
            if reference[group].wants(ref_hash):
                texts = texts if texts is not None else table.column("text").to_pylist()
                text = texts[row]
                record = ReferenceRecord(doc_id, text, lang, fold_of(cfg.seed, doc_id))
                reference[group].offer(ref_hash, doc_id, len(text), record)
    for group, ref in references.items():
        for file_url in reference_files(ref):
            for record in read_reference_file(file_url, ref):
                ref_hash = seeded_hash(cfg.seed, REFERENCE_PURPOSE, record.text)
                reference[group].offer(ref_hash, record.key, len(record.text), record)
    return CorpusSample(
        reference={group: sample.items() for group, sample in reference.items()},
        cutoff={key: cutoff[key].items() for key in sorted(cutoff)},
        population=dict(sorted(population.items())),
    )


def _self_reference(ref: ReferenceConfig, domain: str, source: str) -> bool:
    return SELF in ref.urls and domain in ref.domains and (not ref.sources or source in ref.sources)

"""Settings of the dedup stage: what counts as a duplicate, how candidates are found and checked."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import MAX_BUCKET_PAIRS, MAX_FAN_IN, MAX_PERMUTATIONS

# What normalisation may ignore: letter case, punctuation (words only, split at anything else), digit values.
Ignorable = Literal["case", "punctuation", "digits"]
DEFAULT_IGNORE: tuple[Ignorable, ...] = ("case", "punctuation")


class DedupConfig(StrictModel):
    """Exact and near-duplicate removal.

    Jaccard is measured on shingle sets, so edits cost more than their share of words: with 5-word shingles,
    each isolated edited word breaks up to 5 shingles, and 2% of words edited at random already takes a
    document to Jaccard ~0.8. Edits that come in runs (a rewritten sentence, a changed header) cost far less.
    """

    exact: bool = Field(
        default=True,
        description="Drop documents whose normalised text is identical to a kept one (reason exact_duplicate).",
    )
    method: Literal["minhash", "simhash", "none"] = Field(
        default="minhash",
        description="Near-duplicate detection: MinHash + LSH (Jaccard), SimHash + banded lookup (near-identical "
        "only, cheaper), or none.",
    )
    scope: Literal["global", "domain"] = Field(
        default="global",
        description="Where duplicates are looked for: across the whole corpus, or only within each domain (a text "
        "in two domains is then kept once per domain).",
    )
    shingle: Literal["auto", "word", "char"] = Field(
        default="auto",
        description="Shingle kind: word n-grams, character n-grams, or per document: character n-grams when the "
        "text is mostly in scripts written without spaces (CJK, Thai, ...), word n-grams otherwise.",
    )
    word_ngram: int = Field(default=5, ge=1, le=32, description="Words per word shingle.")
    char_ngram: int = Field(default=5, ge=1, le=64, description="Characters per character shingle.")
    min_unspaced_share: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="With shingle=auto: share of non-space characters from unspaced scripts from which a document "
        "gets character shingles.",
    )
    num_perm: int = Field(default=128, ge=16, le=1024, description="MinHash permutations (signature width).")
    threshold: float = Field(
        default=0.8,
        gt=0.0,
        lt=1.0,
        description="Jaccard similarity (of shingle sets of the text normalised as `ignore` says: by default case "
        "and punctuation ignored) from which two documents are near-duplicates.",
    )
    ignore: list[Ignorable] = Field(
        default=list(DEFAULT_IGNORE),
        description="What normalisation folds away before exact hashing and shingling: 'case', 'punctuation' "
        "(words only) and 'digits' (every number the same). Default case and punctuation, as datatrove; [] keeps "
        "both, so punctuation-only edits make documents differ.",
    )
    lsh_false_negative_weight: float = Field(
        default=0.98,
        gt=0.0,
        lt=1.0,
        description="Weight of missed pairs against false candidates when datasketch derives bands and rows from "
        "`threshold`. Verified candidates cost only a similarity check, so misses weigh more: at 0.98, 128 "
        "permutations and threshold 0.8 (17 bands of 7 rows) a pair right at the threshold is found 98% of the "
        "time (at 0.5: 40%), and a pair at Jaccard 0.5 becomes a candidate 12% of the time, to be verified away.",
    )
    bands: int | None = Field(
        default=None,
        ge=2,
        le=MAX_PERMUTATIONS,
        description="LSH bands; with `rows`, overrides the bands datasketch derives from `threshold`.",
    )
    rows: int | None = Field(
        le=MAX_PERMUTATIONS, default=None, ge=1, description="LSH rows per band; set together with `bands`."
    )
    verify_candidates: bool = Field(
        default=True,
        description="Check each candidate pair's similarity before linking it, so LSH false positives never join "
        "clusters.",
    )
    verify_with: Literal["jaccard", "sketch"] = Field(
        default="jaccard",
        description="Similarity used to verify pairs and guard clusters: exact Jaccard of the shingle sets (held in "
        "memory, 16 bytes per shingle), or the sketch's own estimate (MinHash agreement, or SimHash Hamming "
        "distance against simhash_max_hamming) which needs only the sketches.",
    )
    guard_margin: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="Every cluster member must be at least (threshold - guard_margin) similar to its "
        "representative; clusters chained further apart are split. 0: no document is removed unless it is at "
        "least `threshold` similar to the one kept (counted as `near_below_threshold` in the summary, 0 then); "
        "a positive margin also removes the far ends of chains of copies.",
    )
    partitions: int = Field(
        default=8,
        ge=1,
        le=4096,
        description="Parts the fit's reduce splits documents, band values, pairs and clusters into (by hash): each "
        "reduce job holds one part, so a part's share of the corpus must fit a worker's memory (about 1 kB per "
        "document). The clusters do not depend on it; the stage's outputs are the same for any value.",
    )
    shuffle_fan_in: int = Field(
        default=64,
        ge=2,
        le=MAX_FAN_IN,
        description="The most senders a reduce job reads a shuffled table from: with more (input shards, or "
        "partitions), a merge round goes between, so a shuffle costs about 2 x receivers x sqrt(senders) ranged "
        "reads (requests, on object storage) instead of senders x receivers. The clusters do not depend on it.",
    )
    previous_index: str | None = Field(
        default=None,
        description="URL of an earlier build's dedup index (its fit directory's index.json, under "
        "<root>/dedup/artifacts/fits/<hash>/): documents that duplicate a text of that build are dropped, their "
        "dup_cluster naming the earlier document, whose signatures are reused, not recomputed. The earlier build "
        "must key, shingle, sketch and partition texts the same way (checked). This build's index holds both.",
    )
    full_pairs_limit: int = Field(
        default=64,
        ge=2,
        le=MAX_BUCKET_PAIRS,
        description="Buckets up to this size are verified pair by pair; larger ones only against their "
        "best-ranked member, to keep big families of copies linear.",
    )
    simhash_bits: Literal[32, 64] = Field(default=64, description="SimHash fingerprint width.")
    simhash_max_hamming: int = Field(
        default=3,
        ge=0,
        le=16,
        description="SimHash: fingerprints at most this many bits apart are candidates; the lookup uses "
        "simhash_max_hamming + 1 bands, so larger values make the bands short and unselective.",
    )
    seed: Seed = Field(default=1, description="Seed of the MinHash permutations.")
    representative: Literal["longest", "smallest_id"] = Field(
        default="longest",
        description="Which cluster member is kept: the longest text (ties by smallest id), or the smallest id.",
    )

    @model_validator(mode="after")
    def _check_bands(self) -> Self:
        if (self.bands is None) != (self.rows is None):
            raise ValueError("set both `bands` and `rows`, or neither")
        if self.bands is not None and self.rows is not None and self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands * rows = {self.bands * self.rows} exceeds num_perm = {self.num_perm}")
        return self

    @property
    def lsh_params(self) -> tuple[int, int] | None:
        return (self.bands, self.rows) if self.bands is not None and self.rows is not None else None

    @property
    def similarity_threshold(self) -> float:
        """The bar pairs must clear, in the units of the verification measure."""
        if self.method == "simhash" and self.verify_with == "sketch":
            return 1.0 - self.simhash_max_hamming / self.simhash_bits
        return self.threshold

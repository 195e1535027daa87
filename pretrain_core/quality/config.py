"""Settings of the quality stage: reference corpus, language models, classifier, score and buckets.

Each document is scored by two n-gram models fitted on the same reference: a lexical one over SentencePiece pieces
(or characters for Chinese and Japanese), which says how familiar the text is, and a skeleton one over its frequent
words and the shapes of the rest (quality/skeleton.py), which says whether its words come in an order the
reference's syntax allows. The stored perplexity is their weighted geometric mean. Its place between its
language's CCNet cut-offs (documents below the 30th perplexity percentile of their language would be `head`,
below the 60th `middle`) is combined with the shipped classifier's judgement of the document's quality signals
into `quality_score` (quality/score.py), and the buckets are fixed thresholds on that score.

What is dropped is decided per domain. The default drops the `tail` of the `general` domain only: that is where
web-crawled boilerplate, spam and broken extraction sit, and dropping it is the practice of CCNet-derived corpora
(RedPajama kept head+middle). `specialist` and `code` keep every bucket: curated specialist text is legitimately
unlike the reference (that is why it is specialist), and for code the bucket is a label for the mixture stage to
weight by, not a filter. Domains not listed keep all. Code is bucketed within its programming language. A
language with few documents in the input is placed by its model's pooled cut-offs, not its own.

The default reference is the one the library ships (`shipped:prose`, `shipped:code`: edited prose in seven
languages and hand-written Python, C and JavaScript, pretrain_core/data/quality_reference/), so the stage runs on
any input and never learns what "typical" means from the input's own junk. "self" takes a seeded sample of the
input's own documents instead: name the curated sources in `sources` so that crawled text is scored against edited
text rather than against itself. `urls` may also point at an external corpus such as Wikipedia.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import MAX_DOCS, MAX_SAMPLE_CHARS, MAX_SHARD_BYTES

Bucket = Literal["head", "middle", "tail"]
BUCKETS: tuple[Bucket, ...] = ("head", "middle", "tail")
SELF = "self"
SHIPPED_PREFIX = "shipped:"  # shipped:<name> is pretrain_core/data/quality_reference/<name>.jsonl.gz
SHIPPED_REFERENCES = ("prose", "code")
REFERENCE_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".parquet")


class ReferenceConfig(StrictModel):
    """Where one domain group's reference text comes from: the shipped reference, the stage's own input ("self")
    and/or files."""

    urls: list[str] = Field(
        min_length=1,
        description=(
            'Reference inputs: "shipped:prose" or "shipped:code" (the reference the library ships), "self" (a '
            "seeded sample of the stage's own input documents) and/or fsspec URLs or globs of .jsonl, .jsonl.gz, "
            ".jsonl.zst or .parquet files with a text field (e.g. a Wikipedia dump)."
        ),
    )
    domains: list[str] = Field(
        min_length=1, description='For "self": the input domains whose documents may serve as reference.'
    )
    sources: list[str] = Field(
        default=[],
        description=(
            'For "self": only documents of these sources (name the curated ones, e.g. an encyclopedia); '
            "empty means every source of the listed domains."
        ),
    )
    text_field: str = Field(default="text", min_length=1, description="For files: the field holding the text.")
    lang_field: str = Field(
        default="lang",
        min_length=1,
        description="For files: the field holding the ISO 639-1 language, if present (enables per-language models).",
    )
    max_chars: int = Field(
        default=10_000_000,
        gt=0,
        le=1_000_000_000,
        description="Reference text budget: documents are taken in seeded-hash order until this many characters.",
    )


_DEFAULT_REFERENCES: dict[str, dict[str, Any]] = {
    "prose_reference": {"urls": [f"{SHIPPED_PREFIX}prose"], "domains": ["general", "specialist"]},
    "code_reference": {"urls": [f"{SHIPPED_PREFIX}code"], "domains": ["code"]},
}


class QualityConfig(StrictModel):
    """Reference LM, tokenisation, smoothing and bucketing of the quality stage (see the module docstring)."""

    prose_reference: ReferenceConfig = Field(
        default_factory=lambda: ReferenceConfig(**_DEFAULT_REFERENCES["prose_reference"]),
        description="Reference text of the prose model(s), against which non-code documents are scored.",
    )
    code_reference: ReferenceConfig = Field(
        default_factory=lambda: ReferenceConfig(**_DEFAULT_REFERENCES["code_reference"]),
        description="Reference text of the code model, against which code documents are scored.",
    )
    code_domains: list[str] = Field(
        default=["code"], description="Domains scored by the code model; every other domain is prose."
    )
    order: int = Field(default=3, ge=2, le=8, description="N-gram order of the lexical reference language model.")
    vocab_size: int = Field(
        default=4000,
        ge=64,
        le=262_144,
        description=(
            "SentencePiece unigram vocabulary (a soft limit: smaller when the reference is small; raised when the "
            "reference needs more distinct characters to reach `character_coverage`). Character models keep every "
            "character of their reference, whatever this says."
        ),
    )
    tokenizer_max_chars: int = Field(
        default=1_000_000,
        gt=0,
        le=MAX_SAMPLE_CHARS,
        description=(
            "SentencePiece trains on the first this many reference characters (in sample order), which bounds its "
            "single-threaded training time; the n-gram model is counted over the whole reference."
        ),
    )
    character_coverage: float = Field(
        default=0.9995,
        gt=0.9,
        le=1.0,
        description="Share of reference characters SentencePiece must cover.",
    )
    per_language_models: bool = Field(
        default=True,
        description=(
            "Train a prose model per language that has enough reference and sample documents (CCNet's way); "
            "other languages are scored by the multilingual prose model."
        ),
    )
    skeleton_words: int = Field(
        default=150,
        ge=0,
        le=100_000,
        description=(
            "Most frequent reference words kept as themselves in the skeleton model, which sees every other word "
            "only as its shape (see quality/skeleton.py); 0 scores by the lexical model alone."
        ),
    )
    skeleton_order: int = Field(default=3, ge=2, le=8, description="N-gram order of the skeleton model.")
    skeleton_weight: float = Field(
        default=2.0,
        ge=0.0,
        le=10.0,
        description=(
            "Weight of the skeleton model in the document's perplexity: the stored perplexity is the weighted "
            "geometric mean lexical^(1/(1+w)) * skeleton^(w/(1+w)) of the two models' perplexities."
        ),
    )
    character_languages: list[str] = Field(
        default=["zh", "ja"],
        description="Languages whose own models tokenise into characters instead of SentencePiece pieces.",
    )
    min_reference_docs_per_language: int = Field(
        le=MAX_DOCS, default=50, ge=1, description="Reference documents a language needs for its own model."
    )
    bucket_percentiles: tuple[float, float] = Field(
        default=(30.0, 60.0),
        description="Perplexity percentiles separating head from middle and middle from tail (CCNet: 30, 60).",
    )
    min_docs_per_language: int = Field(
        default=100,
        ge=1,
        le=MAX_DOCS,
        description=(
            "Documents a language (programming language for code) needs in the input for cut-offs of its own; "
            "with fewer its documents are bucketed by their model's pooled cut-offs. A handful of documents is no "
            "population to take percentiles of: lorem ipsum detected as Catalan would be 30 % head."
        ),
    )
    min_language_share: float = Field(
        default=0.01,
        ge=0.0,
        le=1.0,
        description="Share of its group's documents a language needs, beside `min_docs_per_language`, for cut-offs "
        "of its own.",
    )
    cutoff_sample_docs: int = Field(
        default=2000,
        ge=10,
        le=1_000_000,
        description="Documents sampled per language (seeded) to estimate the cut-offs.",
    )
    classifier: bool = Field(
        default=True,
        description=(
            "Add the shipped classifier's log-odds (over the quality signals) to the score; off, the score ranks "
            "by perplexity alone (see quality/score.py)."
        ),
    )
    perplexity_weight: float = Field(
        default=4.0,
        ge=0.0,
        le=50.0,
        description=(
            "Log-odds the score gains per cut-off width of lower perplexity: quality_score = sigmoid(classifier "
            "log-odds + perplexity_weight * (1 - position)), position 0 at the head/middle perplexity cut-off and "
            "1 at the middle/tail one. 0 scores by the classifier alone."
        ),
    )
    cap_familiarity: list[Literal["prose", "code"]] = Field(
        default=["prose"],
        description=(
            "Domain groups where perplexity below the head/middle cut-off earns no more than at the cut-off: in "
            "prose the most predictable text is monotone (word lists, templated filler), not the best. In code "
            "familiarity keeps counting (hand-written code is the typical code)."
        ),
    )
    score_cutoffs: tuple[float, float] = Field(
        default=(0.3, 0.7),
        description="quality_score thresholds: below the first is `tail`, from the second `head`, between `middle`.",
    )
    keep_buckets: dict[str, list[Bucket]] = Field(
        default={"general": ["head", "middle"], "specialist": list(BUCKETS), "code": list(BUCKETS)},
        description="Buckets kept per domain; documents in other buckets are dropped. Unlisted domains keep all.",
    )
    cross_fit: bool = Field(
        default=True,
        description=(
            'With a "self" reference, train each model twice, each time without one half (by seeded hash) of the '
            "input documents, and score every document with the half that never saw it. Without this, reference "
            "documents score as memorised text, which matters when the reference is a large share of the input."
        ),
    )
    detect_language: bool = Field(
        default=True,
        description=(
            "Give prose documents without a language ('und', as plain JSONL run alone has) one, with the clean "
            "stage's language id at its defaults, so they reach their language's model and cut-offs. Counted in "
            "stat 'quality_lang_detected'."
        ),
    )
    seed: Seed = Field(default=0, description="Seed of the reference and cut-off samples.")
    batch_chars: int = Field(
        default=4_000_000,
        ge=10_000,
        le=MAX_SHARD_BYTES,
        description="Characters scored per batch (bounds memory while scoring).",
    )

    @model_validator(mode="before")
    @classmethod
    def _complete_references(cls, data: Any) -> Any:
        """A reference given in part (`--set quality.prose_reference.urls=[self]`) keeps its group's other
        defaults instead of losing them."""
        if isinstance(data, dict):
            for name, defaults in _DEFAULT_REFERENCES.items():
                if isinstance(data.get(name), dict):
                    data = {**data, name: {**defaults, **data[name]}}
        return data

    @model_validator(mode="after")
    def _check(self) -> Self:
        low, high = self.bucket_percentiles
        if not 0.0 < low < high < 100.0:
            raise ValueError(f"bucket_percentiles must satisfy 0 < low < high < 100, got {self.bucket_percentiles}")
        tail, head = self.score_cutoffs
        if not 0.0 < tail <= head < 1.0:
            raise ValueError(f"score_cutoffs must satisfy 0 < tail <= head < 1, got {self.score_cutoffs}")
        if overlap := set(self.prose_reference.domains) & set(self.code_domains):
            raise ValueError(f"prose_reference.domains include code domains {sorted(overlap)}")
        if outside := set(self.code_reference.domains) - set(self.code_domains):
            raise ValueError(f"code_reference.domains {sorted(outside)} are not in code_domains")
        for ref in (self.prose_reference, self.code_reference):
            if ref.sources and SELF not in ref.urls:
                raise ValueError(f'reference sources {ref.sources} are for a "self" reference, but urls are {ref.urls}')
            for url in ref.urls:
                if url.startswith(SHIPPED_PREFIX):
                    if url.removeprefix(SHIPPED_PREFIX) not in SHIPPED_REFERENCES:
                        shipped = ", ".join(SHIPPED_PREFIX + name for name in SHIPPED_REFERENCES)
                        raise ValueError(f"reference {url!r}: the shipped references are {shipped}")
                elif url != SELF and not url.endswith(REFERENCE_SUFFIXES) and not url.endswith("*"):
                    raise ValueError(f"reference {url!r} must end with one of {REFERENCE_SUFFIXES} (or be a glob)")
        for domain, buckets in self.keep_buckets.items():
            if not buckets:
                raise ValueError(f"keep_buckets[{domain!r}] is empty: that would drop the whole domain")
        return self

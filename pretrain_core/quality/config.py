"""Settings of the perplexity-based quality stage (CCNet-style): reference corpus, language models, buckets.

Each document is scored by two n-gram models fitted on the same reference: a lexical one over SentencePiece pieces
(or characters for Chinese and Japanese), which says how familiar the text is, and a skeleton one over its frequent
words and the shapes of the rest (quality/skeleton.py), which says whether its words come in an order the
reference's syntax allows. The stored perplexity is their weighted geometric mean.

Bucketing follows CCNet: within each language, documents below the 30th perplexity percentile are `head`,
below the 60th `middle`, the rest `tail`. What is dropped is decided per domain. The default drops the `tail` of
the `general` domain only: that is where web-crawled boilerplate, spam and broken extraction sit, and dropping it
is the practice of CCNet-derived corpora (RedPajama kept head+middle). `specialist` and `code` keep every bucket:
curated specialist text is legitimately unlike the reference (that is why it is specialist), and perplexity of
code against a code n-gram model separates generated or minified files from hand-written ones only weakly, so
for them the bucket is a label for the mixture stage to weight by, not a filter. Domains not listed keep all.
Code is bucketed within its programming language rather than its natural language.

The default reference is "self": a seeded sample of the input's general and specialist documents (code for the
code model). Name the curated sources in `prose_reference.sources` so that crawled text is scored against
edited text rather than against itself, or point `urls` at an external corpus such as Wikipedia.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from pretrain_core.config_base import StrictModel

Bucket = Literal["head", "middle", "tail"]
BUCKETS: tuple[Bucket, ...] = ("head", "middle", "tail")
SELF = "self"
REFERENCE_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".parquet")


class ReferenceConfig(StrictModel):
    """Where one domain group's reference text comes from: the stage's own input ("self") and/or files."""

    urls: list[str] = Field(
        default=[SELF],
        min_length=1,
        description=(
            'Reference inputs: "self" (a seeded sample of the stage\'s own input documents) and/or fsspec URLs or '
            "globs of .jsonl, .jsonl.gz, .jsonl.zst or .parquet files with a text field (e.g. a Wikipedia dump)."
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


class QualityConfig(StrictModel):
    """Reference LM, tokenisation, smoothing and bucketing of the quality stage (see the module docstring)."""

    prose_reference: ReferenceConfig = Field(
        default_factory=lambda: ReferenceConfig(domains=["general", "specialist"]),
        description="Reference text of the prose model(s), against which non-code documents are scored.",
    )
    code_reference: ReferenceConfig = Field(
        default_factory=lambda: ReferenceConfig(domains=["code"]),
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
        default=50, ge=1, description="Reference documents a language needs for its own model."
    )
    bucket_percentiles: tuple[float, float] = Field(
        default=(30.0, 60.0),
        description="Perplexity percentiles separating head from middle and middle from tail (CCNet: 30, 60).",
    )
    min_docs_per_language: int = Field(
        default=25,
        ge=1,
        description="Sampled documents a language needs for its own cut-offs; others use the model's global ones.",
    )
    cutoff_sample_docs: int = Field(
        default=2000,
        ge=10,
        le=1_000_000,
        description="Documents sampled per language (seeded) to estimate the cut-offs.",
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
    seed: int = Field(default=0, ge=0, le=2**63 - 1, description="Seed of the reference and cut-off samples.")
    batch_chars: int = Field(
        default=4_000_000, ge=10_000, description="Characters scored per batch (bounds memory while scoring)."
    )

    @model_validator(mode="after")
    def _check(self) -> Self:
        low, high = self.bucket_percentiles
        if not 0.0 < low < high < 100.0:
            raise ValueError(f"bucket_percentiles must satisfy 0 < low < high < 100, got {self.bucket_percentiles}")
        if overlap := set(self.prose_reference.domains) & set(self.code_domains):
            raise ValueError(f"prose_reference.domains include code domains {sorted(overlap)}")
        if outside := set(self.code_reference.domains) - set(self.code_domains):
            raise ValueError(f"code_reference.domains {sorted(outside)} are not in code_domains")
        for ref in (self.prose_reference, self.code_reference):
            for url in ref.urls:
                if url != SELF and not url.endswith(REFERENCE_SUFFIXES) and not url.endswith("*"):
                    raise ValueError(f"reference {url!r} must end with one of {REFERENCE_SUFFIXES} (or be a glob)")
        for domain, buckets in self.keep_buckets.items():
            if not buckets:
                raise ValueError(f"keep_buckets[{domain!r}] is empty: that would drop the whole domain")
        return self

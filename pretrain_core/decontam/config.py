"""Settings of the decontaminate stage: the evaluation sets to keep out of training, the n-gram length, what to do
with a document that overlaps one, and the memory the index's filter may take."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from pretrain_core.config_base import StrictModel, repeated

HELDOUT_SET = "heldout"  # the corpus's own validation and test split, always checked unless `heldout` is off


class EvalSetConfig(StrictModel):
    """One evaluation set given as a file: JSONL or Parquet records (the fields named joined), or text whose items
    are separated by blank lines (lm-eval task documents exported to JSONL work as they are)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="Name counted in manifests and the card.")
    path: str = Field(description="fsspec URL or local path (relative to the config file that names it).")
    format: Literal["auto", "jsonl", "parquet", "text"] = Field(
        default="auto", description="auto: by suffix (.jsonl/.json[l].gz, .parquet, anything else text)."
    )
    text_fields: list[str] = Field(
        default=["text"],
        min_length=1,
        description="Record fields whose values make an item's text, joined by newlines (lists joined too): "
        "say question, choices and answer for a multiple-choice task. Records holding none of them are refused.",
    )

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, name: str) -> str:
        if name == HELDOUT_SET:
            raise ValueError(f"{HELDOUT_SET!r} names the corpus's own validation and test split")
        return name


class DecontamConfig(StrictModel):
    enabled: bool = Field(default=True, description="Off: documents pass untouched (the stage still runs).")
    ngram: int = Field(
        default=13,
        ge=4,
        le=64,
        description="Words per n-gram (GPT-3, OLMo: 13), over text normalised as dedup.ignore says; in scripts "
        "written without spaces (Chinese, Japanese, Thai) each character is a unit worth a fraction of a word.",
    )
    unspaced_chars_per_word: float = Field(
        default=1.5,
        ge=1.0,
        le=4.0,
        description="Characters of a script written without spaces that make one word's worth of an n-gram (a "
        "Chinese word is 1.5 characters on average: 13 words are 20 characters).",
    )
    action: Literal["drop", "redact"] = Field(
        default="drop",
        description="drop: a document overlapping an evaluation set goes to the quarantine; redact: the overlapping "
        "spans (and redact_margin_chars either side) are cut out and the rest kept.",
    )
    redact_margin_chars: int = Field(
        default=200, ge=0, le=100_000, description="Characters cut either side of a redacted overlap (GPT-3: 200)."
    )
    min_remaining_chars: int = Field(
        default=200,
        ge=0,
        le=1_000_000,
        description="A redacted document left with fewer characters is dropped instead.",
    )
    heldout: bool = Field(
        default=True,
        description="Also keep the corpus's validation and test split (which the zero-shot tasks are built from) "
        "out of the training documents.",
    )
    heldout_boilerplate_docs: int | None = Field(
        default=3,
        ge=1,
        le=1_000_000,
        description="A held-out n-gram found in more than this many training documents of one shard is boilerplate "
        "of its domain (translation credits, licence footers, site navigation), not a leak, and is ignored; null "
        "counts every overlap. Counted per shard: shards of one source hold that source's boilerplate.",
    )
    eval_sets: list[EvalSetConfig] = Field(default=[], description="Evaluation sets to keep out of training.")
    false_positive_rate: float = Field(
        default=1e-3,
        gt=0,
        lt=0.5,
        description="The index's Bloom filter: the share of n-grams it passes on to the exact check.",
    )
    max_filter_bytes: int = Field(
        default=256 * 2**20,
        ge=2**10,
        le=2**36,
        description="Most memory the filter takes in each worker; past it the filter passes more n-grams on to "
        "the exact check (slower, never wrong). At the default rate 100 M n-grams take 256 MiB (the filter "
        "rounds up to a power of two; benchmarks/bench_decontam.py).",
    )

    @field_validator("eval_sets")
    @classmethod
    def _unique_names(cls, sets: list[EvalSetConfig]) -> list[EvalSetConfig]:
        clashes = repeated([s.name for s in sets])
        if clashes:
            raise ValueError(f"evaluation set names must be unique, repeated: {clashes}")
        return sets

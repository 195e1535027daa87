"""Ingestion settings: what each source is, and the limits every reader applies to what it finds."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from pretrain_core.config_base import StrictModel
from pretrain_core.licences import LicencePolicy, normalize_licence
from pretrain_core.limits import (
    MAX_DOC_CHARS,
    MAX_DOCS_PER_SHARD,
    MAX_LINE_CHARS,
    MAX_LINES,
    MAX_PREVIEW_CHARS,
    MAX_SHARD_BYTES,
)
from pretrain_core.schema import Domain

SourceFormat = Literal["jsonl", "parquet", "text", "code", "warc", "wet"]


class SourceConfig(StrictModel):
    """One input source: where its files are, how to read them, and which domain its documents belong to."""

    name: str = Field(
        pattern=r"^[a-z0-9_]+$",
        max_length=64,
        description="Short unique name; prefixes shard keys and enters every document id, so keep it stable.",
    )
    domain: Domain = Field(description="Domain of every document of the source.")
    format: SourceFormat = Field(
        description=(
            "jsonl: one JSON object per line (.gz/.zst inferred); parquet: one row per document; text: one document "
            "per text file of a tree; code: one document per source file of a tree, language from the extension; "
            "warc / wet: WARC response records (HTML, main text extracted) and WET conversion records."
        )
    )
    path: str = Field(
        min_length=1,
        description=(
            "fsspec URL of a file, a directory (read recursively) or a glob ('**' allowed). Local relative paths "
            "are relative to the current directory. Locations, and so ids, are relative to the part before the "
            "first wildcard, so moving the corpus root keeps every id."
        ),
    )
    text_field: str = Field(default="text", min_length=1, description="jsonl/parquet: the field holding the text.")
    id_field: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "jsonl/parquet: a field holding a stable record id; the document id is then derived from it instead of "
            "the record's position, so re-splitting the input files keeps ids."
        ),
    )
    path_field: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "jsonl/parquet, code sources: a field holding each record's file path or name (The Stack's "
            "max_stars_repo_path); the record's language comes from its extension as in a code tree (code_extensions "
            "apply), so later stages can lex it. Unset, code records have no language: the PII stage cannot read "
            "their comments and strings for names (it counts them as pii_code_prose_not_run)."
        ),
    )
    licence: str | None = Field(
        default=None,
        max_length=1000,
        description="SPDX licence expression of the source's documents (e.g. MIT, GPL-2.0-or-later OR "
        "CC-BY-SA-3.0, LicenseRef-<name> for other terms); it travels with every document into the token shards. "
        "Unset: NOASSERTION, which ingest.licences.unknown decides on.",
    )
    licence_field: str | None = Field(
        default=None,
        min_length=1,
        description="jsonl/parquet: a field holding each record's own SPDX licence (The Stack's per-file "
        "licences), which overrides `licence`; an unreadable one counts as licence_unreadable and is NOASSERTION.",
    )
    attribution: str | None = Field(
        default=None, max_length=1000, description="Who made the source's text, as its licence asks to credit them."
    )
    url: str | None = Field(default=None, max_length=1000, description="Where the source comes from (its homepage).")
    include_hidden: bool = Field(
        default=False, description="Also read files under names starting with '.' (e.g. .git/ is skipped by default)."
    )
    code_extensions: dict[str, str] = Field(
        default_factory=dict,
        description="code: extra or overriding file-extension → language entries, e.g. {'.svelte': 'svelte'}.",
    )

    @field_validator("licence")
    @classmethod
    def _spdx(cls, licence: str | None) -> str | None:
        return normalize_licence(licence) if licence is not None else None


class IngestConfig(StrictModel):
    """Limits and heuristics shared by every reader; a document that breaks one is quarantined with a reason."""

    licences: LicencePolicy = Field(
        default_factory=LicencePolicy,
        description="Which licences the build accepts; refused documents are dropped here, counted by reason.",
    )

    max_doc_bytes: int = Field(
        default=1_000_000,
        ge=1,
        le=1 << 30,
        description=(
            "Documents (or raw records: a JSON line, an HTTP body) larger than this are dropped as `too_large`, "
            "read only up to this size so a huge one costs bounded memory."
        ),
    )
    min_doc_chars: int = Field(
        default=1,
        ge=1,
        le=MAX_DOC_CHARS,
        description="Documents with fewer characters, surrounding whitespace aside, are dropped as `empty`.",
    )
    docs_per_shard: int = Field(
        default=2000,
        ge=1,
        le=MAX_DOCS_PER_SHARD,
        description=(
            "Files of a text or code tree grouped per output shard. Record files (jsonl, parquet, WARC) make one "
            "shard per file, so a file with more records makes a bigger shard: split such inputs upstream."
        ),
    )
    bytes_per_shard: int = Field(
        default=256 * 1024 * 1024,
        ge=1,
        le=MAX_SHARD_BYTES,
        description="Text or code tree files are also grouped so one shard reads at most this many bytes.",
    )
    preview_chars: int = Field(
        default=2000,
        ge=0,
        le=MAX_PREVIEW_CHARS,
        description="Characters of a dropped document kept in the quarantine for inspection.",
    )
    code_max_line_chars: int = Field(
        le=MAX_LINE_CHARS, default=1000, ge=1, description="A code file with a longer line is dropped as `minified`."
    )
    code_max_mean_line_chars: float = Field(
        default=100.0,
        gt=0,
        le=MAX_LINE_CHARS,
        description="A code file whose mean line length exceeds this is dropped as `minified`.",
    )
    code_vendored_dirs: tuple[str, ...] = Field(
        default=(
            "vendor",
            "vendors",
            "node_modules",
            "bower_components",
            "third_party",
            "third-party",
            "thirdparty",
            "site-packages",
            "dist-packages",
            "venv",
            "Pods",
        ),
        description="Code files under a directory of one of these names are dropped as `vendored`.",
    )
    code_generated_markers: tuple[str, ...] = Field(
        default=(
            "do not edit",
            "@generated",
            "autogenerated",
            "auto-generated",
            "automatically generated",
            "code generated by",
            "this file was generated",
            "this file is generated",
            "# generated by",
            "// generated by",
            "/* generated by",
            "-- generated by",
        ),
        description=(
            "Case-insensitive phrases that mark a code file as `generated` when found in its first lines; a bare "
            "'generated by' only after a comment sign, since docstrings use it in its plain sense."
        ),
    )
    code_generated_header_lines: int = Field(
        default=10,
        ge=1,
        le=MAX_LINES,
        description="How many leading lines of a code file are searched for generated markers.",
    )
    code_generated_files: tuple[str, ...] = Field(
        default=(
            "*_pb2.py",
            "*_pb2_grpc.py",
            "*.pb.go",
            "*.pb.cc",
            "*.pb.h",
            "*.min.js",
            "*.min.css",
            "*.bundle.js",
            "package-lock.json",
            "yarn.lock",
            "pnpm-lock.yaml",
            "poetry.lock",
            "Pipfile.lock",
            "Cargo.lock",
            "Gemfile.lock",
            "composer.lock",
            "go.sum",
            "uv.lock",
        ),
        description="File-name globs of generated files and lockfiles, dropped as `generated` without reading.",
    )
    html_favor: Literal["precision", "balanced", "recall"] = Field(
        default="balanced", description="trafilatura's trade-off between dropping boilerplate and keeping text."
    )
    html_include_tables: bool = Field(default=True, description="Keep the text of HTML tables.")
    html_include_comments: bool = Field(default=False, description="Keep user comments below the main content.")
    html_fast: bool = Field(
        default=False,
        description=(
            "Skip trafilatura's second-opinion extractors (readability, jusText): about 1.7x faster per page, "
            "slightly lower recall on unusual layouts."
        ),
    )
    html_fallback_all_text: bool = Field(
        default=True,
        description=(
            "When main-text extraction finds nothing, keep all visible text of the page instead of dropping it "
            "(counted in the `html_fallback` stat); later quality stages judge it."
        ),
    )

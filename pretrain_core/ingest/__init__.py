"""Ingestion: read raw sources (JSONL, Parquet, text and code trees, WARC/WET) into the INGEST schema.

Every record read becomes either a document with a stable id or a quarantined row with its drop reason.
"""

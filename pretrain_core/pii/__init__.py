"""PII detection and redaction: validated patterns for structured data, a small learned tagger for names and
addresses, typed placeholders, and a density limit above which documents are dropped."""

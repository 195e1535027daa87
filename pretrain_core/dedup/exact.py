"""Exact-duplicate keys: a 128-bit hash of the normalised text, so case, punctuation and spacing don't matter."""

from __future__ import annotations

import hashlib


def exact_key(normalized_utf8: bytes, text: str, namespace: str = "") -> bytes:
    """BLAKE2b-128 of ``namespace`` and the normalised text's UTF-8 (`CodePoints.utf8`).

    A text that normalises to nothing (only punctuation or symbols) is keyed by its raw form instead, so that
    "!!!" and "???" are not duplicates of each other. ``namespace`` separates scopes (e.g. one per domain).
    """
    body = normalized_utf8 if normalized_utf8 else ("\x00raw\x00" + text).encode("utf-8", errors="surrogatepass")
    digest = hashlib.blake2b(digest_size=16)
    digest.update(namespace.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(body)
    return digest.digest()

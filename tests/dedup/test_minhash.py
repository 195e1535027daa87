from __future__ import annotations

from collections.abc import Callable

import numpy as np
from datasketch import MinHash, MinHashLSH

from pretrain_core.dedup.minhash import SCHEME, estimated_jaccard, minhash_signatures
from pretrain_core.dedup.normalize import normalize_texts
from pretrain_core.dedup.shingles import ShingleSets, shingle_sets
from tests.dedup.oracle import lean_minhash, lsh_buckets


def _sets(texts: list[str]) -> ShingleSets:
    return shingle_sets(normalize_texts(texts), "auto", 5, 5, 0.3)


def test_signatures_equal_datasketch_fed_the_same_shingle_hashes(
    licence: Callable[[str], str], tutor: Callable[[str], str]
) -> None:
    sets = _sets([licence("GPL-2"), licence("BSD"), tutor("zh_cn")])
    signatures = minhash_signatures(sets, num_perm=64, seed=7)
    assert signatures.shape == (3, 64) and signatures.dtype == np.uint32
    for doc in range(3):
        reference = MinHash(num_perm=64, seed=7, scheme=SCHEME, hashfunc=lambda h: int(h) & 0xFFFFFFFF)
        reference.update_batch(sets.of(doc).tolist())
        assert np.array_equal(reference.hashvalues, signatures[doc])
        assert lean_minhash(signatures[doc], seed=7).jaccard(reference) == 1.0


def test_empty_document_keeps_the_initial_signature() -> None:
    signatures = minhash_signatures(_sets(["", "three real words"]), num_perm=32, seed=1)
    assert (signatures[0] == 0xFFFFFFFF).all() and not (signatures[1] == 0xFFFFFFFF).all()


def test_estimate_tracks_exact_jaccard(licence: Callable[[str], str]) -> None:
    sets = _sets([licence("GFDL-1.2"), licence("GFDL-1.3"), licence("LGPL-2"), licence("LGPL-2.1")])
    signatures = minhash_signatures(sets, num_perm=256, seed=1)
    for a, b in ((0, 1), (2, 3), (0, 3)):
        exact = sets.jaccard(a, np.array([b]))[0]
        assert abs(estimated_jaccard(signatures, a, np.array([b]))[0] - exact) < 0.08, (a, b, exact)


def test_lsh_buckets_an_edited_copy_with_its_original_only(
    licence: Callable[[str], str], edit_words: Callable[..., str]
) -> None:
    gpl2, apache = licence("GPL-2"), licence("Apache-2.0")
    texts = [gpl2, edit_words(gpl2, 0.05, donor=apache), apache, licence("MPL-2.0")]
    signatures = minhash_signatures(_sets(texts), num_perm=128, seed=1)
    buckets, (bands, rows) = lsh_buckets(
        signatures, np.arange(4), threshold=0.8, false_negative_weight=0.9, params=None
    )
    assert (bands, rows) == (14, 9)
    assert {tuple(b.tolist()) for b in buckets} == {(0, 1)}
    _, params = lsh_buckets(signatures, np.arange(4), 0.8, 0.9, params=(16, 8))
    assert params == (16, 8)


def test_lsh_buckets_are_datasketchs_minhashlsh_buckets(
    licence: Callable[[str], str], edit_words: Callable[..., str]
) -> None:
    """Banding in numpy groups exactly the documents datasketch's own index puts in one bucket."""
    texts = [licence(name) for name in ("GPL-2", "GPL-3", "Apache-2.0", "MPL-2.0", "LGPL-2.1")]
    texts += [edit_words(text, share, donor=texts[2]) for text in texts[:2] for share in (0.02, 0.05, 0.1)]
    signatures = minhash_signatures(_sets(texts), num_perm=128, seed=1)
    docs = np.arange(len(texts))[::-1]  # any order of documents
    ours, (bands, rows) = lsh_buckets(signatures, docs, threshold=0.7, false_negative_weight=0.5, params=None)
    lsh = MinHashLSH(threshold=0.7, num_perm=128, params=(bands, rows))
    for doc in docs.tolist():
        lsh.insert(doc, lean_minhash(signatures[doc], seed=1))
    theirs = {
        tuple(sorted(table.get(key))) for table in lsh.hashtables for key, n in table.itemcounts().items() if n > 1
    }
    assert {tuple(b.tolist()) for b in ours} == theirs and len(theirs) > 1

import numpy as np
import pyarrow as pa
import pytest

from pretrain_core.tokenize.encode import encode_batch, load_tokenizer
from pretrain_core.tokenize.pack import concatenate_documents, pack_stream


@pytest.fixture(scope="module")
def encoded(tokenizer_artifacts: dict[str, str], documents: list[dict[str, str]]) -> pa.ListArray:
    tokenizer = load_tokenizer(tokenizer_artifacts["tokenizer"])
    return encode_batch(tokenizer, [d["text"] for d in documents[:40]])


def test_documents_are_framed_by_bos_and_eos(encoded: pa.ListArray) -> None:
    stream, offsets = concatenate_documents(encoded, bos=1, eos=2)
    docs = encoded.to_pylist()
    assert stream.tolist() == [t for doc in docs for t in [1, *doc, 2]]
    assert offsets.tolist() == np.cumsum([0] + [len(d) + 2 for d in docs]).tolist()
    bare, bare_offsets = concatenate_documents(encoded, bos=None, eos=None)
    assert bare.tolist() == [t for doc in docs for t in doc] and bare_offsets[-1] == len(bare)


@pytest.mark.parametrize("seq_len", [16, 128, 1000])
def test_windows_overlap_by_one_and_account_for_every_token(encoded: pa.ListArray, seq_len: int) -> None:
    stream, offsets = concatenate_documents(encoded, bos=1, eos=2)
    packed = pack_stream(stream, offsets, seq_len)
    windows = packed.windows.to_pylist()
    assert len(windows) == (len(stream) - 1) // seq_len
    assert all(len(w) == seq_len + 1 for w in windows)
    for w, window in enumerate(windows):
        assert window == stream[w * seq_len : w * seq_len + seq_len + 1].tolist()
    covered = len(windows) * seq_len + 1
    assert packed.tail_tokens == len(stream) - covered < seq_len
    starts, ends = offsets[:-1], offsets[1:]
    for w, members in enumerate(packed.doc_indices.to_pylist()):
        lo, hi = w * seq_len, w * seq_len + seq_len
        assert members == [d for d in range(len(starts)) if starts[d] <= hi and ends[d] > lo]
    assert packed.tail_docs.tolist() == [d for d in range(len(starts)) if starts[d] >= covered]


def test_a_stream_shorter_than_one_window_is_all_tail(encoded: pa.ListArray) -> None:
    stream, offsets = concatenate_documents(encoded.slice(0, 2), bos=1, eos=2)
    packed = pack_stream(stream, offsets, seq_len=len(stream))
    assert len(packed.windows) == 0 and len(packed.doc_indices) == 0
    assert packed.tail_tokens == len(stream) and packed.tail_docs.tolist() == [0, 1]


def test_each_window_names_the_document_with_most_of_its_ids() -> None:
    import numpy as np
    import pyarrow as pa

    from pretrain_core.tokenize.pack import concatenate_documents, dominant_documents, pack_stream

    docs = pa.array([[1] * 3, [2] * 10, [3] * 2, [4] * 2], pa.list_(pa.int32()))
    stream, offsets = concatenate_documents(docs, None, 0)  # lengths with EOS: 4, 11, 3, 3 → offsets 0 4 15 18 21
    packed = pack_stream(stream, offsets, 8)  # windows over positions [0, 8] and [8, 16]
    assert packed.doc_indices.to_pylist() == [[0, 1], [1, 2]]
    # window 0: doc 0 holds 4 ids, doc 1 holds 5; window 1: doc 1 holds 7, doc 2 holds 2
    assert dominant_documents(packed, offsets, 8).tolist() == [1, 1]
    tie = pack_stream(*concatenate_documents(pa.array([[5] * 3, [6] * 4], pa.list_(pa.int32())), None, 0), 7)
    assert dominant_documents(tie, np.array([0, 4, 9]), 7).tolist() == [0]  # 4 ids each: the earlier document

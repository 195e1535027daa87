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

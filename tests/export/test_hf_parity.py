"""The Hugging Face export reads text as training did: the demo's own tokenizer, exported, gives our ids for documents
of every demo source (Chinese, Japanese, code, whitespace runs, emoji), and transformers' `generate` continues a
prompt with our tokens and our log-probabilities."""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm
import torch

from pretrain_core.config import load_config
from pretrain_core.export import hf_format
from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.decode import generate
from pretrain_core.ingest.listing import list_source_files
from pretrain_core.ingest.stage import ingest_files
from pretrain_core.train.model.args import ModelArgs
from pretrain_core.train.model.gpt import GPT

transformers = pytest.importorskip("transformers", reason="the check loads the export with transformers (dev extra)")

# The demo build's tokenizer (`make demo` at 017cdeb+: outputs/demo/corpus/tokenizer/tokenizer.model, 8,000 pieces,
# byte fallback, no dummy prefix), shipped so the test needs no corpus build.
DEMO_TOKENIZER = Path(__file__).parent / "data" / "demo_tokenizer.model"
DOCUMENTS_PER_SOURCE = 6
EDGE_CASES = [
    "The licensee may",
    "Hello world",
    " leading space",
    "trailing space ",
    "two  spaces,\tthen a tab,\n\n\nthen blank lines\r\n",
    "        indented(code)\n\t\treturn x  # 😀 done",
    "😀🎉 emoji 👩‍👩‍👧 and a flag 🇯🇵",
    "这是一个中文句子。",
    "日本語のテキストです。カタカナも。",
    "",
]


@pytest.fixture(scope="module")
def demo_texts() -> list[str]:
    """The first documents of every demo source as ingest reads them, and the edge cases above."""
    texts = []
    for source in load_config().sources:
        files = list_source_files(source)[:2]
        output, _, _ = ingest_files([file.url for file in files], source, load_config().ingest)
        texts += [text[:3000] for text in output.kept.column("text").to_pylist()[:DOCUMENTS_PER_SOURCE]]
    return texts + EDGE_CASES


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GPT, spm.SentencePieceProcessor]:
    """A Llama-block model over the demo tokenizer's vocabulary (weights seeded, not trained: parity is about the
    reading, not the quality), written as the HF export."""
    ours = spm.SentencePieceProcessor(model_file=str(DEMO_TOKENIZER))
    torch.manual_seed(0)
    args = ModelArgs(vocab_size=ours.get_piece_size(), n_layer=2, n_head=4, n_kv_head=2, d_model=64, max_seq_len=64,
                     block="llama")  # fmt: skip
    model = GPT(args).eval()
    output = tmp_path_factory.mktemp("hf-parity")
    hf_format.write(model, DEMO_TOKENIZER.read_bytes(), str(output), {"source": "test"})
    return output, model, ours


def test_the_demo_texts_cover_what_tokenizers_disagree_on(demo_texts: list[str]) -> None:
    joined = "".join(demo_texts)
    assert len(demo_texts) > 40
    for what, present in {
        "Chinese": any("\u4e00" <= c <= "\u9fff" for c in joined),
        "Japanese kana": any("\u3040" <= c <= "\u30ff" for c in joined),
        "code": "def " in joined or "#include" in joined,
        "whitespace runs": "  " in joined and "\t" in joined and "\n\n" in joined,
        "emoji": any(ord(c) >= 0x1F300 for c in joined),
    }.items():
        assert present, what


@pytest.mark.parametrize("use_fast", [False, True])
def test_the_exported_tokenizer_gives_our_ids_for_every_demo_text(
    demo_texts: list[str], export: tuple[Path, GPT, spm.SentencePieceProcessor], use_fast: bool
) -> None:
    output, _, ours = export
    theirs = transformers.AutoTokenizer.from_pretrained(output, use_fast=use_fast)
    wrong = [text[:40] for text in demo_texts if theirs.encode(text, add_special_tokens=False) != ours.encode(text)]
    assert not wrong, f"{len(wrong)} of {len(demo_texts)} texts tokenized differently: {wrong[:5]}"
    assert all(theirs.decode(ours.encode(text)) == text for text in demo_texts)


def test_a_tokenizer_json_saved_from_the_export_gives_our_ids(
    demo_texts: list[str], export: tuple[Path, GPT, spm.SentencePieceProcessor], tmp_path: Path
) -> None:
    """What serving stacks that read tokenizer.json alone (the `tokenizers` library) get from the export."""
    from tokenizers import Tokenizer

    output, _, ours = export
    transformers.AutoTokenizer.from_pretrained(output).save_pretrained(tmp_path)
    theirs = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert all(theirs.encode(text, add_special_tokens=False).ids == ours.encode(text) for text in demo_texts)


def test_transformers_generate_continues_with_our_tokens_and_log_probs(
    export: tuple[Path, GPT, spm.SentencePieceProcessor],
) -> None:
    output, model, ours = export
    tokenizer = transformers.AutoTokenizer.from_pretrained(output)
    hf_model = transformers.LlamaForCausalLM.from_pretrained(output).eval()
    for prompt in ("The licensee may", "这是一个中文句子。", "def main():\n    "):
        ids = tokenizer.encode(prompt, add_special_tokens=False)
        assert ids == ours.encode(prompt)
        settings = GenerationConfig(strategy="greedy", max_new_tokens=8, stop_at_eos=False, repetition_penalty=1.0)
        mine = generate(model, ids, settings)
        with torch.no_grad():
            theirs = hf_model.generate(
                torch.tensor([ids]), do_sample=False, max_new_tokens=8, output_logits=True,
                return_dict_in_generate=True, pad_token_id=ours.eos_id(),
            )  # fmt: skip
        new = theirs.sequences[0, len(ids) :].tolist()
        assert new == mine.ids, prompt
        steps = zip(theirs.logits, new, strict=True)
        logprobs = [torch.log_softmax(step[0].float(), -1)[token].item() for step, token in steps]
        assert logprobs == pytest.approx(mine.token_logprobs, abs=1e-5), prompt

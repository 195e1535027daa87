"""`pretrain export --format hf`: a Llama-block model as a LlamaForCausalLM directory that transformers loads with
our logits and our tokenization; what Llama cannot express is refused in one line each."""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm

from pretrain_core import storage
from pretrain_core.export.exporter import export_model
from pretrain_core.export.hf_format import hf_problems
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.args import ModelArgs
from pretrain_core.train.trainer import train
from tests.train.token_corpus import build_token_data

transformers = pytest.importorskip("transformers", reason="the check loads the export with transformers (dev extra)")


@pytest.fixture(scope="module")
def llama_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("hf")
    data = build_token_data(str(root / "tokens"), seq_len=32)
    config = TrainConfig(
        model=None, n_layer=2, n_head=4, n_kv_head=2, d_model=64, block="llama", seq_len=32, micro_batch_size=4,
        max_steps=3, warmup_steps=1, eval_every=3, checkpoint_every=3, num_threads=1, peak_flops_per_device=1e11,
        rope_scaling="llama3", rope_scaling_factor=2.0, rope_original_seq_len=16,
        tokens_url=data.tokens_url, tokenizer_url=data.tokenizer_url, output_url=str(root / "run"),
    )  # fmt: skip
    train(config)
    return config.output_url, str(root / "hf")


def test_transformers_loads_the_export_with_our_logits_and_tokens(llama_run: tuple[str, str]) -> None:
    run, output = llama_run
    report = export_model(run, "hf", output)
    assert report.verified_by == "transformers" and report.max_abs_logit_diff < 1e-4
    config = storage.read_json(str(Path(output) / "config.json"))
    assert config["num_key_value_heads"] == 2 and config["rope_scaling"]["rope_type"] == "llama3"
    tokenizer = transformers.AutoTokenizer.from_pretrained(output)
    ours = spm.SentencePieceProcessor(model_file=str(Path(output) / "tokenizer.model"))
    text = "The licensee may copy it.\n\tdef main():"
    assert tokenizer.encode(text, add_special_tokens=False) == ours.encode(text)


def test_what_llama_cannot_express_is_refused_one_line_each() -> None:
    args = ModelArgs(vocab_size=10, n_layer=1, n_head=2, d_model=16, max_seq_len=8, position_encoding="alibi",
                     causal=False, parametrization="mup", rope_scaling="yarn")  # fmt: skip
    problems = hf_problems(args)
    assert len(problems) == 5 and all("\n" not in line for line in problems)
    assert hf_problems(ModelArgs(vocab_size=10, n_layer=1, n_head=2, d_model=16, max_seq_len=8, block="llama")) == []

"""Generation speed: our decoding with the key/value cache against re-reading the whole context every step (the
baseline: how samples were generated before the cache), and against Hugging Face's GPT-2 of the same shape with
its own cache when `transformers` is installed (`pip install 'pretrain[bench]'`).

Every row writes --new-tokens tokens after a --prompt-tokens prompt from random weights (speed does not depend on
them; the end-of-document id is ignored so every run writes the same count), one thread, CPU seconds of this
process, so rates are per core. Beam search counts the tokens of the text it returns (each step extends every
beam, so it does --beams times the work).

    python benchmarks/bench_generate.py --presets tiny small --new-tokens 200

With --model (a checkpoint, training output or export) it also measures what the repetition penalty does to that
model's greedy text: the repeated 3-gram rate (share of a text's 3-grams seen earlier in it) and distinct-2 over
continuations of the evaluation's default prompts and of the first sentence of each shipped bias-probe template.

    python benchmarks/bench_generate.py --presets tiny --model outputs/demo/train/<run> --penalties 1.0 1.2 1.5
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import importlib.util
from collections.abc import Callable

import torch
from timing import cpu_time

from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.decode import generate
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.sections.model import MODEL_PRESETS


def hf_greedy(args: ModelArgs, prompt: list[int], new_tokens: int) -> Callable[[], int] | None:
    """Greedy decoding by transformers' GPT-2 of the same width, depth, heads and vocabulary (its KV cache on)."""
    if importlib.util.find_spec("transformers") is None:
        return None
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=args.vocab_size, n_positions=args.max_seq_len, n_embd=args.d_model, n_layer=args.n_layer,
        n_head=args.n_head, bos_token_id=0, eos_token_id=0, pad_token_id=0,
    )  # fmt: skip
    model = GPT2LMHeadModel(config).eval()
    ids = torch.tensor([prompt])

    def run() -> int:
        with torch.no_grad():
            out = model.generate(
                ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                do_sample=False, use_cache=True,
            )  # fmt: skip
        return int(out.shape[1] - ids.shape[1])

    return run


def ours(model: GPT, prompt: list[int], cfg: GenerationConfig) -> Callable[[], int]:
    return lambda: len(generate(model, prompt, cfg).ids)


def bench_preset(preset: str, options: argparse.Namespace) -> None:
    n_layer, n_head, d_model = MODEL_PRESETS[preset]
    window = options.prompt_tokens + options.new_tokens
    args = ModelArgs(options.vocab_size, n_layer, n_head, d_model, max_seq_len=window)
    torch.manual_seed(0)
    model = GPT(args).eval()
    prompt = torch.randint(1, args.vocab_size, (options.prompt_tokens,)).tolist()
    greedy = GenerationConfig(strategy="greedy", max_new_tokens=options.new_tokens, stop_at_eos=False)
    rows = {
        "greedy, re-read context (baseline)": ours(model, prompt, greedy.model_copy(update={"use_cache": False})),
        "greedy, KV cache": ours(model, prompt, greedy),
        "sample top-k 40 top-p 0.9, KV cache": ours(
            model, prompt, greedy.model_copy(update={"strategy": "sample", "top_p": 0.9})
        ),
        f"beam {options.beams}, KV cache": ours(
            model, prompt, greedy.model_copy(update={"strategy": "beam", "beams": options.beams})
        ),
    }
    peer = hf_greedy(args, prompt, options.new_tokens)
    if peer is not None:
        rows["transformers GPT-2 greedy, its KV cache (peer)"] = peer
    print(
        f"\n{preset}: {n_layer} layers, {n_head} heads, d_model {d_model}, vocab {args.vocab_size}, "
        f"{model.num_params() / 1e6:.1f}M parameters; {options.prompt_tokens} prompt + {options.new_tokens} new tokens"
    )
    print(f"  {'decoding':<48} {'tokens':>7} {'CPU s':>8} {'tokens/s':>10} {'vs base':>8}")
    baseline = None
    for name, run in rows.items():
        seconds, tokens = cpu_time(run, options.repeat)
        rate = tokens / seconds
        baseline = baseline or rate
        print(f"  {name:<48} {tokens:>7} {seconds:>8.3f} {rate:>10.1f} {rate / baseline:>7.2f}x")


def repetition(source: str, penalties: list[float], new_tokens: int) -> None:
    from pretrain_core.evaluate.probes import bias_pairs
    from pretrain_core.export.bundle import load_bundle
    from pretrain_core.generate.text_metrics import distinct_n, repeated_ngram_rate
    from pretrain_core.train.config import DEFAULT_PROMPTS

    bundle = load_bundle(source)
    prompts = [*DEFAULT_PROMPTS, *(pairs[0][0].split(" a ")[0] for _, pairs in bias_pairs().values())]
    print(f"\nrepetition penalty, greedy, {len(prompts)} prompts x {new_tokens} tokens: {bundle.source_url}")
    print(f"  {'penalty':>8} {'repeated 3-grams':>17} {'distinct-2':>11}")
    for penalty in penalties:
        cfg = GenerationConfig(strategy="greedy", max_new_tokens=new_tokens, repetition_penalty=penalty)
        texts = [generate(bundle.model, bundle.tokenizer.encode(p), cfg, bundle.eos_id).ids for p in prompts]
        rate = sum(repeated_ngram_rate(ids, 3) for ids in texts) / len(texts)
        print(f"  {penalty:>8.2f} {rate:>17.3f} {distinct_n(texts, 2):>11.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["tiny", "small"], choices=sorted(MODEL_PRESETS))
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--prompt-tokens", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=200)
    parser.add_argument("--beams", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2, help="best of N runs")
    parser.add_argument("--model", help="a trained model: also measure the repetition penalty on its text")
    parser.add_argument("--penalties", type=float, nargs="+", default=[1.0, 1.2, 1.5])
    options = parser.parse_args()
    torch.set_num_threads(1)
    for preset in options.presets:
        bench_preset(preset, options)
    if options.model:
        repetition(options.model, options.penalties, options.new_tokens)


if __name__ == "__main__":
    main()

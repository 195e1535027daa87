"""Training throughput of our GPT against a plain `nn.TransformerEncoder` causal LM of the same size, and
against Hugging Face's GPT-2 when `transformers` is installed (`pip install 'pretrain[bench]'`).

Both models get the same width, depth, heads, 4x MLP, tied embeddings and the same vocabulary, and are timed on
full training steps (forward, cross-entropy, backward, AdamW) at one thread by default. The baseline is
post-2017 stock PyTorch (pre-norm LayerNorm, learned positions, a causal mask); ours adds RoPE and RMSNorm and
uses `F.scaled_dot_product_attention` with `is_causal`. Token ids are random: the step cost does not depend on
the text. Times are CPU seconds of this process, so rates are per core whatever --threads is.

Tokens/s become docs/s and MB/s of text at the demo corpus's average tokens per document and UTF-8 bytes per
token, measured (not timed) with a --vocab-size tokenizer trained on the corpus as ingest hands it on (else on
real text on this machine, see corpus.py).

    python benchmarks/bench_train.py --preset tiny --seq-len 128 --batch-size 16
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import importlib.util
import tempfile
import time

import torch
from corpus import load_documents, megabytes, stage_table
from timing import Rate, print_rates
from torch import nn

from pretrain_core import schema, storage
from pretrain_core.tokenize.config import TokenizerConfig
from pretrain_core.tokenize.encode import load_tokenizer
from pretrain_core.tokenize.train import fit_tokenizer
from pretrain_core.train.allocator import keep_freed_memory
from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.sections.model import MODEL_PRESETS


class EncoderLM(nn.Module):
    """The baseline: embeddings + learned positions + nn.TransformerEncoder with a causal mask + tied head."""

    mask: torch.Tensor

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.embed = nn.Embedding(args.vocab_size, args.d_model)
        self.positions = nn.Embedding(args.max_seq_len, args.d_model)
        layer = nn.TransformerEncoderLayer(
            args.d_model, args.n_head, 4 * args.d_model, dropout=0.0, activation="gelu", batch_first=True,
            norm_first=True,
        )  # fmt: skip
        self.encoder = nn.TransformerEncoder(layer, args.n_layer, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(args.d_model)
        self.head = nn.Linear(args.d_model, args.vocab_size, bias=False)
        self.head.weight = self.embed.weight
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(args.max_seq_len))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.embed(idx) + self.positions(torch.arange(t, device=idx.device))
        x = self.encoder(x, mask=self.mask[:t, :t], is_causal=True)
        return self.head(self.norm(x))


class HFGPT2(nn.Module):
    """The peer: Hugging Face's GPT-2 at the same width, depth, heads and vocabulary (learned positions,
    LayerNorm, SDPA attention, tied head), built from a config: no download. Needs `pip install 'pretrain[bench]'`."""

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(
            vocab_size=args.vocab_size, n_positions=args.max_seq_len, n_embd=args.d_model, n_layer=args.n_layer,
            n_head=args.n_head, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
        )  # fmt: skip
        config._attn_implementation = "sdpa"  # transformers' own attention choice; set on the config it reads
        self.model = GPT2LMHeadModel(config)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=idx).logits


def parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def text_per_token(vocab_size: int, reference: bool) -> tuple[float, float, str]:
    """(tokens per document, UTF-8 bytes per token) of the corpus under a tokenizer trained on it; its origin."""
    docs, origin = load_documents(reference)
    texts = [doc.text for doc in docs]
    with tempfile.TemporaryDirectory() as workdir:
        shard = f"{workdir}/part-00000.parquet"
        storage.write_parquet(shard, stage_table(docs, schema.QUALITY))
        artifacts = fit_tokenizer([shard], TokenizerConfig(vocab_size=vocab_size), f"{workdir}/tokenizer")
        tokens = sum(map(len, load_tokenizer(artifacts["tokenizer"]).encode(texts)))
    return tokens / len(texts), megabytes(texts) * 1e6 / tokens, origin


def training_seconds(model: nn.Module, batch: torch.Tensor, steps: int, warmup: int) -> float:
    """CPU seconds of ``steps`` full training steps after ``warmup`` untimed ones."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    elapsed = 0.0
    for step in range(warmup + steps):
        started = time.process_time()
        loss = cross_entropy(model(batch[:, :-1]), batch[:, 1:])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step >= warmup:
            elapsed += time.process_time() - started
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(MODEL_PRESETS), default="tiny", help="Model size preset.")
    parser.add_argument("--vocab-size", type=int, default=8000, help="Vocabulary (the demo tokenizer's is 8000).")
    parser.add_argument("--seq-len", type=int, default=128, help="Tokens per sequence.")
    parser.add_argument("--batch-size", type=int, default=16, help="Sequences per step.")
    parser.add_argument("--steps", type=int, default=10, help="Timed steps per model.")
    parser.add_argument("--warmup", type=int, default=2, help="Untimed steps first (allocator, caches).")
    parser.add_argument("--reference", action="store_true", help="measure text per token on the repo's reference text")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads.")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    keep_freed_memory()  # as the trainer does: both models get the same allocator
    n_layer, n_head, d_model = MODEL_PRESETS[args.preset]
    model_args = ModelArgs(args.vocab_size, n_layer, n_head, d_model, args.seq_len)
    torch.manual_seed(0)
    batch = torch.randint(0, args.vocab_size, (args.batch_size, args.seq_len + 1))
    ours, baseline = GPT(model_args), EncoderLM(model_args)
    peers: list[tuple[str, nn.Module]] = [("baseline: nn.TransformerEncoder", baseline)]
    if importlib.util.find_spec("transformers") is not None:
        peers.append(("peer: Hugging Face GPT2LMHeadModel", HFGPT2(model_args)))
    print(f"preset {args.preset}: {n_layer} layers, {n_head} heads, d_model {d_model}, vocab {args.vocab_size}, "
          f"seq_len {args.seq_len}, batch {args.batch_size}, {args.threads} thread(s)")  # fmt: skip
    sizes = ", ".join(f"{name.split(':')[0]} {parameters(model) / 1e6:.2f}M" for name, model in peers)
    print(f"parameters: ours {ours.num_params() / 1e6:.2f}M, {sizes}")
    tokens = args.steps * args.batch_size * args.seq_len
    per_doc, per_token, origin = text_per_token(args.vocab_size, args.reference)
    print(f"text: {origin}; {per_doc:.0f} tokens per document, {per_token:.2f} bytes per token")
    rates = [
        Rate(name, training_seconds(model, batch, args.steps, args.warmup), tokens / per_doc, tokens * per_token / 1e6)
        for name, model in (("ours: GPT, RoPE, RMSNorm, SDPA", ours), *peers)
    ]
    for peer in rates[1:]:
        print_rates(f"{args.steps} training steps, {tokens} tokens per model", [rates[0], peer], peer)
    print("  tokens/s: " + ", ".join(f"{r.name.split(':')[0]} {tokens / r.seconds:.0f}" for r in rates))


if __name__ == "__main__":
    main()

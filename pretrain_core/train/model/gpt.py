"""A GPT-style decoder in the spirit of nanoGPT: small enough to read in one sitting.

Pre-norm blocks (RMSNorm → causal self-attention → RMSNorm → GELU MLP), tied input/output embeddings, no biases.
Where positions come from is one setting (`ModelArgs.position_encoding`): rotary (RoPE, rotating queries and
keys), ALiBi (a per-head penalty growing with distance, added to attention scores), or learned or sinusoidal
absolute embeddings added to the token embeddings. Dropout (embeddings, attention probabilities, residual writes)
is off by default: pretraining on deduplicated data rarely needs it; the source articles use 0.1. Shapes in the
comments use B = batch, T = time, C = d_model, H = heads, D = head dim, V = vocab.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from pretrain_core.train.model.args import ModelArgs
from pretrain_core.train.model.kv_cache import KVCache
from pretrain_core.train.model.moe import MixtureOfExperts, moe_layers
from pretrain_core.train.model.rope_scaling import scaled_frequencies
from pretrain_core.train.parallel.context_parallel import (
    SequenceShard,
    active_shard,
    sharded_attention,
    sharded_sequences,
)
from pretrain_core.train.parallel.rng import heads_region

INIT_STD = 0.02  # GPT-2's weight init


def rope_tables(args: ModelArgs) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin tables (T, D/2) for rotating query/key pairs by position-dependent angles, under the args' scaling
    (float64 angles: positions in the thousands times frequencies lose digits in float32)."""
    original = args.rope_original_seq_len or args.max_seq_len
    inv_freq, magnitude = scaled_frequencies(
        args.head_dim, args.rope_base, args.rope_scaling, args.rope_scaling_factor, original
    )
    angles = torch.outer(torch.arange(args.max_seq_len, dtype=torch.float64), inv_freq)
    return (magnitude * angles.cos()).float(), (magnitude * angles.sin()).float()


def apply_rope(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, start: int = 0, positions: torch.Tensor | None = None
) -> torch.Tensor:
    """Rotate (B, H, T, D) at positions start..start+T-1 (or at the given ``positions``, a context-parallel
    shard's); pairs are the two halves of D (GPT-NeoX layout)."""
    t = x.shape[-2]
    at = positions if positions is not None else slice(start, start + t)
    cos, sin = cos[at].to(x.dtype), sin[at].to(x.dtype)  # (T, D/2)
    x1, x2 = x.chunk(2, dim=-1)  # (B, H, T, D/2) each
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def alibi_slopes(n_head: int) -> torch.Tensor:
    """Per-head slopes of ALiBi (Press et al. 2022): a geometric sequence from 2^(-8/n); for a head count that is
    not a power of two, the closest power's slopes plus every other slope of the next power."""

    def powers(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    closest = 2 ** math.floor(math.log2(n_head))
    slopes = powers(closest) + powers(2 * closest)[0::2][: n_head - closest]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(slopes: torch.Tensor, t: int, causal: bool = True, start: int = 0) -> torch.Tensor:
    """(H, T, start+T) additive attention bias of queries at start..start+T-1 over keys 0..start+T-1:
    -slope x distance to each key; causal: -inf on later keys."""
    keys = torch.arange(start + t, device=slopes.device)
    distance = (keys[start:, None] - keys[None, :]).float()  # (T, start+T): query i, key j → i - j
    bias = -slopes[:, None, None] * distance.abs()  # (H, T, T)
    return bias.masked_fill(distance < 0, float("-inf")) if causal else bias


def sinusoidal_table(max_seq_len: int, d_model: int) -> torch.Tensor:
    """(T, C) fixed position embeddings of "Attention Is All You Need": sin on even, cos on odd channels."""
    positions = torch.arange(max_seq_len, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_seq_len, d_model)
    table[:, 0::2] = torch.sin(positions * freq)
    table[:, 1::2] = torch.cos(positions * freq[: d_model // 2])
    return table


class CausalSelfAttention(nn.Module):
    def __init__(self, args: ModelArgs, layer: int = 0) -> None:
        super().__init__()
        self.layer = layer  # its place in a key/value cache
        self.head_dim = args.head_dim
        self.dropout = args.dropout
        self.causal = args.causal
        self.scale = args.attention_scale
        # three projections, not one fused (C, 3C): split column-wise, each tensor-parallel rank gets whole heads
        self.q = nn.Linear(args.d_model, args.d_model, bias=False)
        self.k = nn.Linear(args.d_model, args.kv_heads * args.head_dim, bias=False)
        self.v = nn.Linear(args.d_model, args.kv_heads * args.head_dim, bias=False)
        self.proj = nn.Linear(args.d_model, args.d_model, bias=False)

    def forward(
        self,
        x: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor] | None,
        bias: torch.Tensor | None,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        """Under context parallelism (`sharded_sequences`), ``x`` is this rank's tokens and ``bias`` ALiBi's slopes
        (H,), if any."""
        shard = active_shard()
        b, t, _ = x.shape
        start = cache.length if cache is not None else 0
        # (B, T, C) → (B, H, T, D); under tensor parallelism H is this rank's share of the heads
        q, k, v = (proj(x).view(b, t, -1, self.head_dim).transpose(1, 2) for proj in (self.q, self.k, self.v))
        positions = shard.positions if shard is not None else None
        if rope is not None:
            q, k = apply_rope(q, *rope, start, positions), apply_rope(k, *rope, start, positions)
        if shard is not None:
            y = sharded_attention(q, k, v, shard, self.causal, bias, self.scale)
            return self.proj(y.transpose(1, 2).reshape(b, t, -1))
        if cache is not None:
            k, v = cache.update(self.layer, k, v)  # (B, H_kv, start + T, D): the cache holds the shared heads only
        if k.shape[1] != q.shape[1]:  # grouped-query attention: each key/value head serves a group of queries
            k, v = (x.repeat_interleave(q.shape[1] // k.shape[1], dim=1) for x in (k, v))
        p = self.dropout if self.training else 0.0
        with heads_region(p):  # each tensor-parallel rank its own masks for its own heads
            if bias is not None:  # ALiBi: the causal mask, if any, is inside the bias
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype), dropout_p=p, scale=self.scale)
            elif start == 0 or not self.causal:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal, dropout_p=p, scale=self.scale)
            elif t == 1:  # one new token after cached ones: it may see every key
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, scale=self.scale)
            else:  # several new tokens after cached ones: query i sees keys up to start + i
                keys = torch.arange(start + t, device=x.device)
                allowed = keys[None, :] <= keys[start:, None]
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, dropout_p=p, scale=self.scale)
        return self.proj(y.transpose(1, 2).reshape(b, t, -1))  # (B, T, C)


class MLP(nn.Module):
    def __init__(self, args: ModelArgs, hidden: int | None = None) -> None:
        super().__init__()
        hidden = hidden or args.ffn_hidden
        self.up = nn.Linear(args.d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, args.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))  # (B, T, C) → (B, T, 4C) → (B, T, C)


class SwiGLU(nn.Module):
    """Llama's MLP: a SiLU-gated linear unit (Shazeer 2020), down(silu(gate(x)) * up(x))."""

    def __init__(self, args: ModelArgs, hidden: int | None = None) -> None:
        super().__init__()
        hidden = hidden or args.ffn_hidden
        self.gate = nn.Linear(args.d_model, hidden, bias=False)
        self.up = nn.Linear(args.d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, args.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, args: ModelArgs, layer: int = 0) -> None:
        super().__init__()
        self.attn_norm = nn.RMSNorm(args.d_model, eps=args.norm_eps)
        self.attn = CausalSelfAttention(args, layer)
        self.mlp_norm = nn.RMSNorm(args.d_model, eps=args.norm_eps)
        dense: type[MLP | SwiGLU] = SwiGLU if args.block == "llama" else MLP
        self.mlp: nn.Module = MixtureOfExperts(args, dense) if args.moe_experts else dense(args)
        self.drop = nn.Dropout(args.dropout)

    def forward(
        self,
        x: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor] | None,
        bias: torch.Tensor | None,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        x = x + self.drop(self.attn(self.attn_norm(x), rope, bias, cache))
        return x + self.drop(self.mlp(self.mlp_norm(x)))


class GPT(nn.Module):
    # buffers of the position encodings (only the configured one's exist)
    rope_cos: torch.Tensor
    rope_sin: torch.Tensor
    alibi_slopes: torch.Tensor
    sinusoids: torch.Tensor

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        if args.d_model % args.n_head or args.head_dim % 2:
            raise ValueError(f"d_model {args.d_model} must split into {args.n_head} heads of even size")
        self.args = args
        self.activation_checkpointing = False  # recompute each block's activations in backward instead of storing
        self.embed: nn.Embedding | None = nn.Embedding(args.vocab_size, args.d_model)
        self.drop = nn.Dropout(args.dropout)
        # keyed by layer number ("0", "1", ...): a pipeline stage keeps its blocks' names (`pipeline.model_part`)
        self.blocks = nn.ModuleDict({str(layer): Block(args, layer) for layer in range(args.n_layer)})
        self.norm: nn.RMSNorm | None = nn.RMSNorm(args.d_model, eps=args.norm_eps)
        self.lm_head: nn.Linear | None = nn.Linear(args.d_model, args.vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight  # tied: one (V, C) matrix reads and writes tokens
        self.pos_embed = nn.Embedding(args.max_seq_len, args.d_model) if args.position_encoding == "learned" else None
        if args.position_encoding == "rope":
            cos, sin = rope_tables(args)
            self.register_buffer("rope_cos", cos, persistent=False)
            self.register_buffer("rope_sin", sin, persistent=False)
        elif args.position_encoding == "alibi":
            self.register_buffer("alibi_slopes", alibi_slopes(args.n_head), persistent=False)
        elif args.position_encoding == "sinusoidal":
            # at the token embeddings' scale (init std 0.02): unscaled, the +-1 waves would drown the tokens
            table = INIT_STD * sinusoidal_table(args.max_seq_len, args.d_model)
            self.register_buffer("sinusoids", table, persistent=False)
        self.apply(self._init_weights)
        hidden_std = INIT_STD / math.sqrt(args.width_mult)  # µP: hidden weights' init shrinks with fan-in
        if args.parametrization == "mup":  # rescaled, not redrawn: the same draws as the standard model
            with torch.no_grad():
                for module in self.blocks.modules():
                    if isinstance(module, nn.Linear):
                        module.weight.mul_(hidden_std / INIT_STD)
        for name, param in self.named_parameters():
            if name.endswith(("attn.proj.weight", "down.weight")):  # every MLP's and expert's down projection
                # GPT-2: scale residual writes so the residual stream's variance does not grow with depth.
                nn.init.normal_(param, mean=0.0, std=hidden_std / math.sqrt(2 * args.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=INIT_STD)

    def num_params(self) -> int:
        """Parameter count; the tied embedding is counted once."""
        return sum(p.numel() for p in self.parameters())

    def non_embedding_params(self) -> int:
        """Parameters outside the (tied) token embedding that a token passes through: what the FLOPs per token
        count (Kaplan et al.); a mixture of experts counts the k experts a token visits, not all it holds (under
        expert parallelism, a rank holds some)."""
        idle = 0
        for layer in moe_layers(self):
            expert = next(iter(layer.experts.values()))
            idle += sum(p.numel() for p in expert.parameters()) * (len(layer.experts) - self.args.moe_top_k)
        return self.num_params() - self.args.vocab_size * self.args.d_model - idle

    def forward(self, idx: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """Token ids (B, T) → next-token logits (B, T, V). With a cache, the ids follow the ``cache.length``
        positions it holds (generation: the prompt once, then one token at a time), and their keys join it.

        A pipeline stage without the embedding takes hidden states (B, T, C) instead of ids, and one without the
        head returns them. Under context parallelism (`sharded_sequences`), ``idx`` is this rank's tokens of each
        sequence."""
        shard = active_shard()
        t = idx.shape[1]
        start = cache.length if cache is not None else 0
        length = start + t if shard is None else shard.group_positions.numel()
        if length > self.args.max_seq_len:
            raise ValueError(f"sequence of {length} tokens exceeds max_seq_len {self.args.max_seq_len}")
        positions = shard.positions if shard is not None else None
        x = self.embed_tokens(idx, start, positions) if self.embed is not None else idx  # (B, T, C)
        rope = (self.rope_cos, self.rope_sin) if self.args.position_encoding == "rope" else None
        bias = None
        if self.args.position_encoding == "alibi":  # a shard's attention takes the slopes, its keys are elsewhere
            bias = self.alibi_slopes if shard is not None else alibi_bias(self.alibi_slopes, t, self.args.causal, start)
        for block in self.blocks.values():
            if self.activation_checkpointing and self.training and torch.is_grad_enabled():
                x = checkpoint(_recomputable, block, shard, x, rope, bias, use_reentrant=False)
            else:
                x = block(x, rope, bias, cache)
        if cache is not None:
            cache.advance(t)
        if self.lm_head is None or self.norm is None:
            return x
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        # µP's output multiplier: the readout's input grows with width, the logits must not
        return logits / self.args.width_mult if self.args.parametrization == "mup" else logits

    def embed_tokens(self, idx: torch.Tensor, start: int = 0, positions: torch.Tensor | None = None) -> torch.Tensor:
        """Token ids (B, T) at positions start.. (or ``positions``) → the blocks' input (B, T, C), absolute
        positions added."""
        assert self.embed is not None
        t = idx.shape[1]
        at = positions if positions is not None else slice(start, start + t)
        x = self.embed(idx)
        if self.pos_embed is not None:
            x = x + self.pos_embed.weight[at]
        elif self.args.position_encoding == "sinusoidal":
            x = x + self.sinusoids[at].to(x.dtype)
        return self.drop(x)

    def new_cache(self) -> KVCache:
        """An empty key/value cache the size of this model's window."""
        return KVCache(self.args.n_layer, self.args.max_seq_len)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """Next-token loss in fp32 whatever the autocast dtype: (B, T, V) logits vs (B, T) targets."""
    loss = F.cross_entropy(logits.float().flatten(0, 1), targets.flatten(), reduction=reduction)
    return loss.view(targets.shape) if reduction == "none" else loss


def _recomputable(block: Block, shard: SequenceShard | None, *inputs: torch.Tensor | None) -> torch.Tensor:
    """A block run again in backward under activation checkpointing sees the sequence shard it saw forward:
    the recomputation may happen outside the `sharded_sequences` context, or on another thread."""
    with sharded_sequences(shard):
        return block(*inputs)

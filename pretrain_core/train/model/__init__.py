"""The network: the GPT model, its arguments, mixture of experts, KV cache, RoPE scaling, objectives."""

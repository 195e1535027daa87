"""Our models under EleutherAI's lm-evaluation-harness: `PretrainLM`, registered as model type "pretrain".

    import pretrain_eval.lm_eval_adapter  # registers the model type
    lm_eval.simple_evaluate(model="pretrain", model_args="source=outputs/demo/train/corpus-<hash>", tasks=[...])

or `lm_eval.simple_evaluate(model=PretrainLM(source=...), ...)`. Any source `pretrain generate` takes (checkpoint,
training output, safetensors export). Scoring reads through the same code as our own zero-shot tasks
(`pretrain_core/evaluate/zero_shot.py`), and generation through `pretrain_core/generate`; requests run one at a
time (the models this targets are small; batching is left out).
"""

from __future__ import annotations

from typing import Any

import torch
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm import tqdm

from pretrain_core.evaluate.zero_shot import continuation_scores, document_logprob, score_tokens
from pretrain_core.export.bundle import load_bundle
from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.decode import generate


@register_model("pretrain")
class PretrainLM(LM):
    def __init__(self, source: str, max_gen_toks: int = 128, threads: int | None = None, seed: int = 1234) -> None:
        super().__init__()
        if threads is not None:
            torch.set_num_threads(int(threads))
        self.bundle = load_bundle(source, "cuda" if torch.cuda.is_available() else "cpu")
        self.max_gen_toks = int(max_gen_toks)
        self.seed = int(seed)

    @property
    def _start_id(self) -> int:
        """What every document follows in training: the end-of-document id."""
        return max(self.bundle.tokenizer.eos_id(), 0)

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        results = []
        for request in tqdm(requests, disable=disable_tqdm, desc="loglikelihood"):
            context, continuation = request.args
            if context:
                result = continuation_scores(self.bundle.model, self.bundle.tokenizer, context, continuation)
            else:
                ids = [self._start_id, *self.bundle.tokenizer.encode(continuation)]
                result = score_tokens(self.bundle.model, ids, 1)
            results.append(result)
        return results

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        """Every token of the string predicted once, each window with as much context as the model takes."""
        results = []
        for request in tqdm(requests, disable=disable_tqdm, desc="loglikelihood_rolling"):
            (text,) = request.args
            results.append(document_logprob(self.bundle.model, [self._start_id, *self.bundle.tokenizer.encode(text)]))
        return results

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        results = []
        for request in tqdm(requests, disable=disable_tqdm, desc="generate_until"):
            context, gen_kwargs = request.args
            settings = self._settings(dict(gen_kwargs))
            until = gen_kwargs.get("until") or []
            stops = [until] if isinstance(until, str) else list(until)
            prompt = self.bundle.tokenizer.encode(context)
            out = generate(self.bundle.model, prompt, settings, self.bundle.eos_id)
            text = self.bundle.tokenizer.decode(prompt + out.ids)[len(self.bundle.tokenizer.decode(prompt)) :]
            cut = min((text.find(stop) for stop in stops if stop and stop in text), default=len(text))
            results.append(text[:cut])
        return results

    def _settings(self, gen_kwargs: dict[str, Any]) -> GenerationConfig:
        sample = bool(gen_kwargs.get("do_sample", False)) and float(gen_kwargs.get("temperature", 1.0)) > 0
        return GenerationConfig(
            strategy="sample" if sample else "greedy",
            max_new_tokens=int(gen_kwargs.get("max_gen_toks", self.max_gen_toks)),
            temperature=float(gen_kwargs.get("temperature", 1.0)) if sample else 0.0,
            top_k=gen_kwargs.get("top_k"),
            top_p=gen_kwargs.get("top_p"),
            seed=self.seed,
        )

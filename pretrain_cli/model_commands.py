"""`pretrain generate | evaluate | export | serve`: a trained model put to use, from a checkpoint directory, a
training output (its latest checkpoint) or an export."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any, get_args

from pretrain_core.config_base import ConfigError
from pretrain_core.generate.config import GenerationConfig
from pretrain_core.train.config import EvalConfig
from pretrain_core.train.launch.flags import add_config_flags, config_from_args
from pretrain_core.train.model.args import RopeScaling
from pretrain_core.train.precision import PRECISIONS
from pretrain_eval.harness import HarnessModel

MODEL_COMMANDS = ("generate", "evaluate", "export", "serve")
SOURCE_HELP = "a checkpoint directory, a training output (its latest checkpoint) or a safetensors export (any URL)"


def add_model_commands(commands: Any) -> None:
    generate = commands.add_parser(
        "generate",
        help="continue a prompt with a trained model (greedy, sampling or beam search, KV-cached)",
        description="Continue a prompt. Strategies: greedy, sample (temperature, top-k, top-p) and beam; "
        "--repetition-penalty curbs loops; --temperature 0 is greedy. Text streams to stdout as it is chosen "
        "(beam search prints at the end); --json prints the tokens with the model's log-probability of each.",
    )
    generate.add_argument("source", help=SOURCE_HELP)
    generate.add_argument("--prompt", required=True, help="the text to continue ('' starts a new document)")
    generate.add_argument("--json", action="store_true", help="print one JSON object (text, ids, log-probs)")
    generate.add_argument(
        "--threads", type=int, default=None,
        help="torch threads (default: the cores other work leaves free now, sampled for 0.1 s)",
    )  # fmt: skip
    add_config_flags(generate, GenerationConfig)

    evaluate = commands.add_parser(
        "evaluate",
        help="per-domain perplexity, bits per byte and samples of a checkpoint (the Prefect task's code)",
        description="Per-domain loss, perplexity and bits per byte of a checkpoint on the held-out splits of its token "
        "shards, zero-shot tasks, probes and samples; writes eval.json beside it and under <run>/evaluations/; an "
        "evaluated checkpoint returns its recorded result unless --reevaluate. Progress by part and a summary go to "
        "stderr, the whole result as JSON to stdout.",
    )
    evaluate.add_argument("source", help="a checkpoint directory or a training output (its latest checkpoint)")
    evaluate.add_argument("--tokens-url", help="token shards root (default: the ones it was trained on)")
    evaluate.add_argument("--tokenizer-url", help="SentencePiece model (default: the checkpoint's)")
    evaluate.add_argument("--reevaluate", action="store_true", help="replace a recorded evaluation")
    evaluate.add_argument(
        "--long-context", action="store_true",
        help="instead: held-out loss by position and passkey retrieval by context length and depth, past the "
        "trained length (writes long_context-<scaling>-x<factor>.json and .png beside the checkpoint)",
    )  # fmt: skip
    evaluate.add_argument("--lengths", type=int, nargs="+", default=[256, 512, 1024, 2048], help="--long-context")
    evaluate.add_argument("--rope-scaling", choices=get_args(RopeScaling), help="--long-context")
    evaluate.add_argument("--rope-factor", type=float, help="--long-context: the scaling's factor")
    evaluate.add_argument(
        "--lm-eval", nargs="+", metavar="TASK",
        help="instead: these tasks of EleutherAI's lm-evaluation-harness (writes lm_eval-<model>.json beside the "
        "checkpoint); the harness reads its datasets from the Hugging Face cache or --lm-eval-include's YAMLs",
    )  # fmt: skip
    evaluate.add_argument(
        "--lm-eval-model", choices=get_args(HarnessModel), default="hf",
        help="hf (default): the checkpoint exported as Hugging Face Llama and scored by the harness's own hf "
        "model (Llama-block models only); pretrain: our adapter, for every model",
    )  # fmt: skip
    evaluate.add_argument("--lm-eval-include", metavar="DIR", help="--lm-eval: a folder of task YAMLs of your own")
    evaluate.add_argument("--limit", type=int, help="--lm-eval: at most this many examples per task")
    add_config_flags(evaluate, EvalConfig)

    export = commands.add_parser(
        "export",
        help="write a model as safetensors, ONNX, int8 ONNX or Hugging Face Llama, checked against the original",
        description="safetensors: weights + config.json + tokenizer.model, loadable without pickle (by generate "
        "and serve too); onnx: the graph (ids -> logits) through torch's dynamo exporter, checked with ONNX "
        "Runtime; int8: that graph with int8 weights (ONNX Runtime dynamic quantisation), its size, speed and "
        "held-out perplexity beside fp32; hf: a LlamaForCausalLM directory transformers loads "
        "(train.model.block=llama, "
        "RoPE; the logits checked through transformers when installed). The report is printed and written to "
        "export.json.",
    )
    export.add_argument("source", help=SOURCE_HELP)
    export.add_argument("--format", required=True, choices=("safetensors", "onnx", "int8", "hf"), dest="format")
    export.add_argument("--output", required=True, metavar="URL", help="output directory (any fsspec URL)")
    export.add_argument("--dtype", default="fp32", choices=PRECISIONS, help="safetensors weights")
    export.add_argument("--tokens-url", help="token shards for int8's perplexity (default: the training ones)")
    export.add_argument("--heldout", type=int, default=16, metavar="N", help="validation sequences for perplexity")

    serve = commands.add_parser(
        "serve",
        help="serve a model over HTTP: POST /generate (JSON or streamed events), GET /health",
        description="A FastAPI app under uvicorn, bound to 127.0.0.1 by default: POST /generate (JSON, or "
        'server-sent events with "stream": true) and GET /health. Requests past a limit get a '
        "4xx with the reason. Generation flags set the defaults a request may override. See docs/serving.md.",
    )
    serve.add_argument("source", help=SOURCE_HELP)
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1, loopback only)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    serve.add_argument("--max-prompt-tokens", type=int, default=1024)
    serve.add_argument("--max-tokens-limit", type=int, default=256, help="max_new_tokens a request may ask for")
    serve.add_argument("--concurrency", type=int, default=2, help="generations at once; more get 429")
    add_config_flags(serve, GenerationConfig)


def run_model_command(args: argparse.Namespace) -> int:
    try:
        return _COMMANDS[args.command](args)
    except ValueError as error:  # a missing file is main's to report
        raise ConfigError(str(error)) from None


def _generate(args: argparse.Namespace) -> int:
    import torch

    from pretrain_core.cores import free_cores
    from pretrain_core.export.bundle import load_bundle
    from pretrain_core.generate.decode import generate
    from pretrain_core.generate.text_stream import TextStream

    settings = config_from_args(GenerationConfig, args)
    torch.set_num_threads(args.threads or free_cores())
    bundle = load_bundle(args.source, "cuda" if torch.cuda.is_available() else "cpu")
    ids = bundle.tokenizer.encode(args.prompt)
    stream = TextStream(bundle.tokenizer, ids)
    live = not args.json and settings.effective_strategy != "beam"

    def show(token: int) -> None:
        if piece := stream.push(token):
            print(piece, end="", flush=True)

    if live:
        print(args.prompt, end="", flush=True)
    out = generate(bundle.model, ids, settings, bundle.eos_id, show if live else stream.push)
    if settings.effective_strategy == "beam":
        for token in out.ids:
            stream.push(token)
    summary = f"{len(out.ids)} tokens in {out.seconds:.2f} s ({out.tokens_per_second:.1f} tokens/s), "
    summary += f"log-prob {out.logprob:.2f}, {'stopped at end of document' if out.stopped_at_eos else 'length limit'}"
    if args.json:
        pieces = [bundle.tokenizer.id_to_piece(i) for i in out.ids]
        record = {
            "prompt": args.prompt,
            "text": stream.text(),
            "ids": out.ids,
            "tokens": pieces,
            "token_logprobs": out.token_logprobs,
            "logprob": out.logprob,
            "stopped_at_eos": out.stopped_at_eos,
            "seconds": out.seconds,
            "settings": settings.model_dump(),
            "source": bundle.source_url,
            "step": bundle.step,
        }
        print(json.dumps(record, ensure_ascii=False, indent=2))
    else:
        if not live:
            print(args.prompt + stream.text(), end="")
        print()
        print(summary, file=sys.stderr)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from pretrain_core.evaluate.evaluator import evaluate_checkpoint, phases_of, summary_lines

    if args.long_context:
        return _long_context(args)
    if args.lm_eval:
        return _lm_eval(args)

    cfg = config_from_args(EvalConfig, args)
    if not args.verbose:  # the bar shows the parts the evaluator logs
        logging.getLogger("pretrain_core.evaluate.evaluator").setLevel(logging.WARNING)
    with tqdm(total=len(phases_of(cfg)), unit="part", file=sys.stderr) as bar:
        heard: list[str] = []

        def on_phase(name: str) -> None:
            heard.append(name)
            bar.total = max(bar.total, bar.n + 1)  # a masked-objective model skips the generating parts
            if bar.desc:
                bar.update()
            bar.set_description(name)

        result = evaluate_checkpoint(args.source, args.tokens_url, args.tokenizer_url, cfg, args.reevaluate, on_phase)
        bar.update(bar.total - bar.n)
    print(result.model_dump_json(indent=2))
    print("\n".join(summary_lines(result)), file=sys.stderr)
    if not heard:
        print("  (an earlier evaluation's record: --reevaluate runs it again)", file=sys.stderr)
    return 0


def _long_context(args: argparse.Namespace) -> int:
    from pretrain_core.evaluate.long_context import evaluate_checkpoint_long_context

    result, url = evaluate_checkpoint_long_context(
        args.source, args.lengths, args.rope_scaling, args.rope_factor, args.tokens_url
    )
    print(
        f"trained at {result.trained_length} tokens, RoPE scaling {result.rope_scaling} x{result.rope_scaling_factor:g}"
    )
    print(f"{'context':>8} {'last bucket':>12} {'loss':>7}  passkey accuracy by depth 0/25/50/75/100 %")
    for length in args.lengths:
        last = [p for p in result.positions if p.length == length][-1:]
        cells = [f"{c.accuracy:.0%}" for c in result.passkey if c.length == length]
        bucket = f"{last[0].start}-{last[0].end}" if last else "-"
        loss = f"{last[0].loss:.3f}" if last else "-"
        print(f"{length:>8} {bucket:>12} {loss:>7}  {' '.join(cells)}")
    print(f"figures: {url}")
    return 0


def _lm_eval(args: argparse.Namespace) -> int:
    from pretrain_eval.harness import harness_table, run_harness

    try:
        scores, url = run_harness(args.source, args.lm_eval, args.lm_eval_model, args.lm_eval_include, args.limit)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"--lm-eval needs the eval extra ({exc.name} is missing): pip install 'pretrain[eval]'"
        ) from None
    print(harness_table(scores))
    print(f"results: {url}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from pretrain_core.export.exporter import export_model

    try:
        report = export_model(args.source, args.format, args.output, args.dtype, args.tokens_url, args.heldout)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{args.format} needs the export extra ({exc.name} is missing): pip install 'pretrain[export]'"
        ) from None
    print(report.model_dump_json(indent=2))
    return 0


def _serve(args: argparse.Namespace) -> int:
    from pretrain_core.serve.app import ServerLimits
    from pretrain_core.serve.server import build_server

    limits = ServerLimits(
        max_new_tokens=args.max_tokens_limit, max_prompt_tokens=args.max_prompt_tokens, concurrency=args.concurrency
    )
    defaults = config_from_args(GenerationConfig, args)
    build_server(args.source, args.host, args.port, defaults, limits, args.threads).run()
    return 0


_COMMANDS = {"generate": _generate, "evaluate": _evaluate, "export": _export, "serve": _serve}

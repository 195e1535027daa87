"""`pretrain`: the command line. Whole runs go through Prefect flows; single stages run in-process."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Any

import yaml

from pretrain_cli.card_command import add_card_command, run_card
from pretrain_cli.config_migrate import migrate_config_file
from pretrain_cli.model_commands import MODEL_COMMANDS, add_model_commands, run_model_command
from pretrain_cli.plan_command import add_plan_command, run_plan
from pretrain_cli.sweep_commands import add_sweep_commands, run_coord_check, run_sweep
from pretrain_core.config import ConfigError, PipelineConfig, load_config
from pretrain_core.ingest.records import MISSING_TEXT_FIELD
from pretrain_core.schema import DOMAINS
from pretrain_core.stages import CORPUS
from pretrain_eval.stage_quality import PARTS

EPILOG = """\
examples:
  pretrain run                                  # the whole DAG on the bundled demo corpus
  pretrain run --config my.yaml --set train.max_steps=2000 --set storage.root=s3://bucket/run1
  pretrain dask-certs --output tls --host 10.0.0.5   # mutual-TLS files for the Dask cluster
  pretrain corpus --set execution.dask_address=tls://10.0.0.5:8786 --set execution.dask_tls.ca_file=tls/ca.pem \
      --set execution.dask_tls.cert_file=tls/cert.pem --set execution.dask_tls.key_file=tls/key.pem
  pretrain stage dedup --input docs.jsonl.gz --output out/dedup
  pretrain config show --set "mixture.weights={general: 0.6, specialist: 0.2, code: 0.2}"
  pretrain stage-report                         # every data stage on its labelled set, against baselines
  pretrain generate outputs/demo/train --prompt "The licence" --strategy beam
  pretrain export outputs/demo/train --format safetensors --output outputs/demo/export
  pretrain serve outputs/demo/export --port 8000  # POST /generate on 127.0.0.1
  pretrain ablate                               # raw vs curated proxy models on the demo corpus, 3 seeds each
  pretrain card                                 # the demo build's data card: sources, licences, what each stage did
  pretrain card --compare OLD_ROOT NEW_ROOT     # what changed between two builds
"""


def _add_config_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", metavar="FILE", help="pipeline YAML (default: the embedded demo config on pretrain_core/data/demo)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="dotted override, repeatable, value parsed as YAML (e.g. --set dedup.threshold=0.7)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pretrain",
        description="LLM pretraining pipeline: raw text -> clean, deduplicated, PII-free, quality-scored, "
        "mixed and tokenized shards -> a trained and evaluated checkpoint.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="debug logging, and the traceback of a missing-file error"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="run the whole DAG (corpus stages, training, evaluation) as a Prefect flow",
        description="Run every corpus stage, train a model under torchrun and evaluate its checkpoints. "
        "Finished stages and shards are skipped, so a rerun after a crash redoes only what is missing.",
    )
    _add_config_args(run)

    corpus = commands.add_parser(
        "corpus",
        help="run the corpus stages only (ingest ... tokenize) as a Prefect flow",
        description="Rebuild the corpus from the configured sources into packed token shards. Shards run in "
        "worker processes, one per core this process may use (affinity and cgroup quota; execution.processes: "
        "auto), or in threads for sources under execution.small_corpus_bytes; --set execution.processes=N (0: "
        "threads) or a Dask cluster (execution.dask_address, execution.dask_local_workers) change that. Fits run "
        "in the flow's process.",
    )
    _add_config_args(corpus)

    train = commands.add_parser(
        "train",
        help="train (and evaluate) on the token shards of a finished corpus run, as a Prefect flow",
        description="Launch training under torchrun on the corpus's token shards, then evaluate each checkpoint. "
        "--from starts from another run's weights: with --set pack.seq_len=N (the shards packed longer) and --set "
        "train.model.rope_scaling=yarn --set train.model.rope_scaling_factor=F it extends a model's context.",
    )
    _add_config_args(train)
    train.add_argument(
        "--from", dest="init_from", metavar="CHECKPOINT",
        help="start from this checkpoint's weights (a checkpoint or a training output): train.checkpoint.init_from",
    )  # fmt: skip

    stage = commands.add_parser(
        "stage",
        help="run one corpus stage by itself on JSONL or Parquet files (no Prefect)",
        description="Run one stage on the given files. Raw input is ingested first: JSONL (.gz/.zst), Parquet "
        "with a text column and WARC/WET, told from their bytes; text files (.txt, .md, .rst) and source files, "
        "one document each; a directory or glob of any of these. Outputs, quarantined documents and the manifest "
        "go under --output. Shards run in worker processes on every core this process may use "
        "(execution.processes: auto; in this process for inputs under execution.small_corpus_bytes, or with 0); a "
        "Dask cluster is for `pretrain corpus`.\n\nstages:\n"
        + "\n".join(f"  {spec.name:<13} {spec.help}" for spec in CORPUS.stages),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stage.add_argument("name", choices=CORPUS.names, help="the stage to run")
    stage.add_argument(
        "--input", nargs="+", required=True, metavar="URL", help="input files, directories or globs (fsspec URLs)"
    )
    stage.add_argument("--output", required=True, metavar="URL", help="output directory (fsspec URL)")
    stage.add_argument(
        "--domain",
        default="general",
        choices=DOMAINS,
        help="domain of raw inputs (default: general)",
    )
    stage.add_argument("--text-field", default="text", help="text field of raw JSONL/Parquet (default: text)")
    stage.add_argument(
        "--path-field",
        help="with --domain code: the field of raw JSONL/Parquet holding each file's path, whose extension gives "
        "its language (so PII reads its comments for names)",
    )
    _add_config_args(stage)

    report = commands.add_parser(
        "stage-report",
        help="measure each data stage on its labelled set (data/labelled) beside a well-known baseline",
        description="Run dedup, PII, quality, language id, mixture and tokenizer on labelled real text and print "
        "precision/recall/F1, ROC-AUC, accuracy and the other figures, ours beside a baseline run on the same "
        "items, each of ours against its bar. Exits 1 when one of our figures misses its bar.",
    )
    report.add_argument("--stage", dest="parts", action="append", choices=PARTS, help="only this part (repeatable)")
    report.add_argument("--limit", type=int, metavar="N", help="a deterministic slice of N items per set (quick check)")
    report.add_argument(
        "--sets", default="data/labelled", metavar="DIR", help="root of the labelled sets (default: data/labelled)"
    )
    report.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown to FILE")

    add_model_commands(commands)
    add_card_command(commands, _add_config_args)
    add_plan_command(commands)
    add_sweep_commands(commands)

    ablate = commands.add_parser(
        "ablate",
        help="train proxy models on several curation settings (arms) and show which corpus gives the better model",
        description="Build every arm's corpus (arms share the stages they agree on), train the same proxy model on "
        "the same number of tokens for each, several seeds, score all on one shared held-out set (bits per byte, "
        "zero-shot tasks) and write ablation.md, results.parquet and curves.png under the output root, as a "
        "Prefect flow. Without --arms: the CPU preset (raw vs curated vs no quality filter on the demo corpus, "
        "about 20 minutes on 2 cores). See docs/ablation.md.",
    )
    ablate.add_argument("--arms", metavar="FILE", help="ablation YAML (default: the shipped CPU preset)")
    ablate.add_argument("--output-root", metavar="URL", help="override the file's output_root")
    ablate.add_argument("--seeds", type=int, help="override the file's seeds per arm")

    certs = commands.add_parser(
        "dask-certs",
        help="make the TLS certificates of a Dask cluster for the data stages",
        description="Write a private CA (ca.pem, ca-key.pem) and one certificate it signs (cert.pem, key.pem) into "
        "--output. The scheduler, every worker and the pipeline's client present that certificate and refuse a peer "
        "without one: a Dask scheduler runs whatever a client sends, so an open one is code execution on every "
        "worker. Copy ca.pem, cert.pem and key.pem to each host (key.pem is the credential: keep it like a "
        "password), start the cluster with infra/dask/start-cluster.sh and give the pipeline execution.dask_tls. "
        "See docs/infra.md.",
    )
    certs.add_argument("--output", required=True, metavar="DIR", help="folder to write the four files to (new)")
    certs.add_argument(
        "--host", action="append", default=[], metavar="NAME_OR_IP",
        help="a host name or address the scheduler is reached by (repeatable; loopback is always included)",
    )  # fmt: skip
    certs.add_argument("--days", type=int, default=365, help="validity in days (default 365)")

    commands.add_parser(
        "env",
        help="print the versions and devices training would run on (recorded in every checkpoint too)",
        description="Python, torch, CUDA, cuDNN and NCCL versions, the GPUs with their driver and compute "
        "capability, and the CPU with whether it computes bf16 natively: what to quote with a result and match "
        "when reproducing it. Training warns at start when the precision or the model's shapes miss the device's "
        "fast paths (see docs/training.md).",
    )

    config = commands.add_parser(
        "config",
        help="show, validate or migrate a pipeline config",
        description="show: print the resolved YAML; validate: check it; migrate FILE: print FILE with the train "
        "config's old flat keys (train.lr, train.tensor_parallel) moved into their sections (train.optimizer.lr, "
        "train.parallelism.tensor_parallel), or rewrite it with --write. Comments are not kept.",
        epilog="example:\n  pretrain config migrate old.yaml --write",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    config.add_argument("action", choices=("show", "validate", "migrate"), help="what to do with the config")
    config.add_argument("file", nargs="?", metavar="FILE", help="migrate: the YAML file to migrate")
    config.add_argument("--write", action="store_true", help="migrate: rewrite FILE in place instead of printing")
    _add_config_args(config)
    return parser


def _load(args: argparse.Namespace) -> PipelineConfig:
    return load_config(args.config, args.overrides)


def _load_for_run(args: argparse.Namespace, reads_sources: bool = True) -> None:
    """Refuse a bad config, a storage root that cannot be used (no bucket, an unreachable endpoint, missing or
    refused credentials) or a source that is not there, with one line before Prefect starts."""
    from pretrain_core.ingest.listing import missing_local_sources
    from pretrain_core.pipeline import configure_storage

    cfg = _load(args)
    configure_storage(cfg)
    missing = missing_local_sources(list(cfg.sources)) if reads_sources else []
    if missing:
        raise ConfigError(f"sources with nothing at their path: {'; '.join(missing)}")


def _print_manifests(manifests: dict[str, Any]) -> None:
    print(f"{'stage':<13} {'in':>8} {'out':>8}  dropped")
    for name, manifest in manifests.items():
        print(f"{name:<13} {manifest.docs_in:>8} {manifest.docs_out:>8}  {json.dumps(manifest.dropped)}")


def _run_stage(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from pretrain_core.standalone import RawInputs, run_standalone

    cfg = _load(args)
    if cfg.execution.dask_address or cfg.execution.dask_local_workers:
        print(
            "pretrain: warning: `pretrain stage` runs without Prefect or Dask, so execution.dask_* is ignored here: "
            "--set execution.processes=N uses N local cores, `pretrain corpus` a Dask cluster",
            file=sys.stderr,
        )
    with tqdm(desc=args.name, unit="shard") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        raw_inputs = RawInputs(args.domain, args.text_field, args.path_field)
        manifests = run_standalone(cfg, args.name, args.input, args.output, raw_inputs, progress)
    _print_manifests(manifests)
    print(f"manifest: {args.output.rstrip('/')}/manifest.json")
    ingest = manifests.get("ingest")
    if ingest is not None and ingest.docs_out == 0 and ingest.dropped.get(MISSING_TEXT_FIELD):
        print(
            f"pretrain: warning: {ingest.dropped[MISSING_TEXT_FIELD]} of {ingest.docs_in} input records have no "
            f"{args.text_field!r} field and nothing else was kept: --text-field names the field that holds the text",
            file=sys.stderr,
        )


def _stage_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    if not Path(args.sets).is_dir():
        raise ConfigError(f"no labelled sets at {args.sets}: run from a checkout of the repo or pass --sets DIR")
    try:
        from pretrain_eval.stage_quality.report import evaluate_part, misses, render_markdown, render_text
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"stage-report needs the eval extra ({exc.name} is missing): pip install 'pretrain[eval]'"
        ) from None

    figures = []
    for part in args.parts or PARTS:
        result = evaluate_part(part, Path(args.sets), args.limit)
        print(f"{part}: {len(result.figures)} figures in {result.seconds:.1f} s", file=sys.stderr)
        figures += result.figures
    print(render_text(figures))
    if args.markdown:
        Path(args.markdown).write_text(render_markdown(figures) + "\n", encoding="utf-8")
    missed = misses(figures)
    for figure in missed:
        print(f"below the bar: {figure.stage} {figure.metric} {figure.group} = {figure.value:.4f} ({figure.bar})")
    return 1 if missed else 0


def _ablate(args: argparse.Namespace) -> int:
    from pretrain_core.ablation.spec import CPU_PRESET, load_ablation

    spec = load_ablation(args.arms or CPU_PRESET)
    updates = {"output_root": args.output_root, "seeds": args.seeds}
    spec = spec.model_validate({**spec.model_dump(), **{k: v for k, v in updates.items() if v is not None}})
    from flows.ablation import ablation

    report = ablation(spec)
    print(f"report: {report.report_url}\nresults: {report.results_url}")
    return 0


def _dask_certs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pretrain_core.cluster_certs import make_certificates

    try:
        tls = make_certificates(Path(args.output), args.host, args.days)
    except FileExistsError as exc:
        print(f"pretrain: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {tls.ca_file}, {tls.cert_file} and {tls.key_file} (and the CA's key, which signs new certificates)")
    print(f"pipeline: --set execution.dask_tls.ca_file={tls.ca_file} --set execution.dask_tls.cert_file={tls.cert_file}"
          f" --set execution.dask_tls.key_file={tls.key_file}")  # fmt: skip
    return 0


class _QuietCompletions(logging.Filter):
    """Drops Prefect's "Finished in state Completed()" line of every task run from the terminal (over half of a
    run's lines, one per shard): the Prefect UI still has each, and failures still print."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "prefect.task_runs" and record.getMessage() == "Finished in state Completed()")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(message)s")
    if not args.verbose:
        for handler in logging.getLogger().handlers:
            handler.addFilter(_QuietCompletions())
    for chatty in ("httpx", "botocore", "aiobotocore"):  # their INFO lines ("Found credentials ...") are noise here
        logging.getLogger(chatty).setLevel(logging.DEBUG if args.verbose else logging.WARNING)
    # Offline defaults: no telemetry, and a patient start for the ephemeral API on a busy 2-core machine.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    try:
        if args.command == "config" and args.action == "migrate":
            return migrate_config_file(args.file, args.write)
        if args.command == "config":
            cfg = _load(args)
            if args.action == "show":
                print(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False, allow_unicode=True), end="")
            print(f"# config hash: {cfg.hash()}")
        elif args.command == "stage":
            _run_stage(args)
        elif args.command == "stage-report":
            return _stage_report(args)
        elif args.command in MODEL_COMMANDS:
            return run_model_command(args)
        elif args.command == "card":
            return run_card(args)
        elif args.command == "ablate":
            return _ablate(args)
        elif args.command == "dask-certs":
            return _dask_certs(args)
        elif args.command == "plan":
            return run_plan(args)
        elif args.command == "sweep":
            return run_sweep(args)
        elif args.command == "coord-check":
            return run_coord_check(args)
        elif args.command == "env":
            from pretrain_core.train.observe.environment import environment

            print(yaml.safe_dump(environment(), sort_keys=False), end="")
        elif args.command == "corpus":
            _load_for_run(args)
            from flows.corpus_rebuild import corpus_rebuild

            _print_manifests(corpus_rebuild(args.config, args.overrides))
        elif args.command == "train":
            from flows.train import train

            if args.init_from:
                args.overrides = [*(args.overrides or []), f"train.checkpoint.init_from={args.init_from}"]
            _load_for_run(args, reads_sources=False)
            train(args.config, args.overrides)
        else:
            _load_for_run(args)
            from flows.pipeline import pretrain_pipeline

            pretrain_pipeline(args.config, args.overrides)
    except ConfigError as exc:
        print(f"pretrain: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:  # an input, reference or checkpoint that is not there: the user's to fix
        if args.verbose:
            raise
        print(f"pretrain: {exc} (-v shows where)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

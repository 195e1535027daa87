from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_cli.main import build_parser, main
from pretrain_core import storage
from tests.infra.processes import free_port
from tests.shipped_text import REPO_ROOT


@pytest.mark.parametrize("command", ["run", "corpus", "train", "stage", "config"])
def test_every_subcommand_explains_itself(command: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pretrain_cli", command, "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert "--config" in result.stdout and "--set" in result.stdout
    assert len(result.stdout.splitlines()) > 5


def test_top_level_help_lists_commands_and_examples() -> None:
    text = build_parser().format_help()
    for command in ("run", "corpus", "train", "stage", "config"):
        assert command in text
    assert "examples:" in text


def test_bad_config_value_exits_2_with_the_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "validate", "--set", "mixture.weights={general: 0.5, specialist: 0.3, code: 0.1}"]) == 2
    assert "mixture.weights" in capsys.readouterr().err


def test_config_show_prints_resolved_yaml_and_hash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "show", "--set", "train.max_steps=5"]) == 0
    out = capsys.readouterr().out
    assert "max_steps: 5" in out and "# config hash: " in out


def test_env_prints_the_versions_a_checkpoint_records(capsys: pytest.CaptureFixture[str]) -> None:
    import torch
    import yaml

    assert main(["env"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["torch"] == str(torch.__version__) and {"cuda", "cudnn", "nccl", "gpus", "cpu"} <= set(printed)


def test_stage_runs_alone_on_raw_jsonl_and_quarantines_bad_lines(
    tmp_path: Path, real_texts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "docs.jsonl.gz"
    lines = [json.dumps({"text": t}) for t in real_texts] + ['{"text": "broken', json.dumps({"text": real_texts[0]})]
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    out = tmp_path / "dedup"

    assert main(["stage", "dedup", "--input", str(path), "--output", str(out)]) == 0

    manifest = storage.read_json(str(out / "manifest.json"))
    ingest = storage.read_json(str(out / "_ingest" / "manifest.json"))
    assert ingest["dropped"] == {"malformed_json": 1}
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:3]]
    assert rows == ["ingest", "dedup"]  # what ingest quarantined is shown beside the stage's own counts
    assert manifest["docs_in"] == len(real_texts) + 1
    # The licence directory itself holds identical texts under several names, plus the repeated line above.
    assert manifest["dropped"]["exact_duplicate"] == len(real_texts) + 1 - len(set(real_texts))
    assert manifest["docs_out"] + sum(manifest["dropped"].values()) == manifest["docs_in"]


def test_pii_alone_on_plain_jsonl_redacts_names_and_counts_detected_languages(tmp_path: Path) -> None:
    path = tmp_path / "people.jsonl"
    texts = [
        "Yesterday, Michael Johnson said the plan was ready.",
        "Gestern hat Anna Schmidt den Vertrag unterschrieben.",
    ]
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    out = tmp_path / "pii"

    assert main(["stage", "pii", "--input", str(path), "--output", str(out)]) == 0

    manifest = storage.read_json(str(out / "manifest.json"))
    kept = [
        t
        for u in storage.list_files(str(out / "data"), ".parquet")
        for t in storage.read_parquet(u)["text"].to_pylist()
    ]
    assert all("<PERSON>" in t for t in kept) and len(kept) == 2
    assert manifest["stats"]["pii_lang_detected"] == 2


def test_quality_alone_on_plain_jsonl_scores_against_the_shipped_reference(
    tmp_path: Path, real_texts: list[str]
) -> None:
    """With no --set, as a new user runs it: the shipped reference scores the input, whose languages are detected."""
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in real_texts), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["stage", "quality", "--input", str(path), "--output", str(out)]) == 0
    manifest = storage.read_json(str(out / "manifest.json"))
    tables = [storage.read_parquet(u) for u in storage.list_files(str(out / "data"), ".parquet")]
    perplexities = [p for t in tables for p in t["perplexity"].to_pylist()]
    assert len(perplexities) + sum(manifest["dropped"].values()) == len(real_texts) and all(
        p > 1.0 for p in perplexities
    )
    assert manifest["stats"]["quality_lang_detected"] == len(real_texts)


def test_pii_alone_reads_names_in_code_comments_when_a_path_field_gives_the_language(
    tmp_path: Path,
) -> None:
    code = (
        "# Maintainer: Margaret Hamilton\n# Reviewed by Katherine Johnson\ndef launch(stage):\n    return stage + 1\n"
    )
    path = tmp_path / "code.jsonl"
    path.write_text(json.dumps({"content": code, "path": "apollo/guidance.py"}) + "\n", encoding="utf-8")
    args = ["stage", "pii", "--input", str(path), "--domain", "code", "--text-field", "content"]

    assert main([*args, "--output", str(tmp_path / "blind")]) == 0
    blind = storage.read_json(str(tmp_path / "blind" / "manifest.json"))
    assert blind["stats"]["pii_code_prose_not_run"] == 1 and "pii_person" not in blind["stats"]

    assert main([*args, "--output", str(tmp_path / "read"), "--path-field", "path"]) == 0
    read = storage.read_json(str(tmp_path / "read" / "manifest.json"))
    assert read["stats"]["pii_code_prose_tagged"] == 1 and read["stats"]["pii_person"] == 2
    (text,) = storage.read_parquet(str(tmp_path / "read" / "data" / "input_0-00000.parquet")).column("text").to_pylist()
    assert text.startswith("# Maintainer: <PERSON>\n# Reviewed by <PERSON>\n")


def test_quality_with_a_self_reference_the_input_lacks_is_one_line_and_exit_2(
    tmp_path: Path, real_texts: list[str]
) -> None:
    """A fresh process, as a user runs it: the error is one line, and the process exits cleanly (no abort from
    Arrow's background reads at interpreter shutdown)."""
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in real_texts), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pretrain_cli.main", "stage", "quality", "--input", str(path), "--output",
         str(tmp_path / "out"), "--set", "quality.prose_reference.urls=[self]",
         "--set", "quality.prose_reference.sources=[encyclopedia]"],
        capture_output=True, text=True, timeout=300, cwd=REPO_ROOT,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr[-2000:]
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("pretrain: quality: the input has prose documents but no prose reference text")
    assert "quality.prose_reference.sources=[]" in last and "Traceback" not in run.stderr


def test_a_missing_input_is_one_line_and_exit_2_and_verbose_shows_the_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["stage", "clean", "--input", str(tmp_path / "absent.jsonl"), "--output", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == f"pretrain: source 'input_0': nothing at {tmp_path / 'absent.jsonl'} (-v shows where)"
    with pytest.raises(FileNotFoundError, match="nothing at"):
        main(["-v", *args])


def test_input_without_the_text_field_warns_which_option_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "docs.parquet"
    storage.write_parquet(str(path), pa.table({"body": ["a document in another column"] * 3}))
    assert main(["stage", "clean", "--input", str(path), "--output", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert 'ingest               3        0  {"missing_text_field": 3}' in captured.out
    assert captured.err.strip().splitlines()[-1] == (
        "pretrain: warning: 3 of 3 input records have no 'text' field and nothing else was kept: "
        "--text-field names the field that holds the text"
    )
    assert (
        main(["stage", "clean", "--input", str(path), "--output", str(tmp_path / "body"), "--text-field", "body"]) == 0
    )
    assert "warning" not in capsys.readouterr().err


def test_a_dask_setting_on_a_standalone_stage_is_named_as_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"text": "one document"}) + "\n", encoding="utf-8")
    args = ["stage", "ingest", "--input", str(path), "--output", str(tmp_path / "out")]
    assert main([*args, "--set", "execution.dask_local_workers=2"]) == 0
    assert "execution.dask_* is ignored here" in capsys.readouterr().err


def test_a_source_with_nothing_at_its_path_is_refused_before_prefect_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources = tmp_path / "sources.yaml"
    sources.write_text(
        "- {name: web, domain: general, format: jsonl, path: missing.jsonl}\n"
        "- {name: remote, domain: general, format: jsonl, path: 's3://bucket/x.jsonl'}\n"
        "- {name: crawl, domain: general, format: warc, path: 'crawl/*.warc.gz'}\n",
        encoding="utf-8",
    )
    args = ["--set", f"sources_file={sources}", "--set", f"storage.root={tmp_path / 'root'}"]
    for command in ("corpus", "run"):
        assert main([command, *args]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"pretrain: sources with nothing at their path: web: {tmp_path / 'missing.jsonl'}"
    assert not (tmp_path / "root").exists()  # nothing ran: remote and glob paths are left to ingest to list


def test_an_override_that_is_not_yaml_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "show", "--set", "dedup.threshold=[0.7"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pretrain: override 'dedup.threshold=[0.7': the value is not valid YAML") and "\n" not in err


def _pretrain(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pretrain_cli.main", *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=180,
    )  # fmt: skip


def _no_aws_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment without any AWS credentials or config the host may have."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {
        **env,
        "PYTHONPATH": str(REPO_ROOT),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


# `stage` writes to --output; `corpus` and `train` to storage.root, checked before Prefect starts
_COMMANDS = {
    "stage": ["stage", "ingest", "--input", "in.jsonl", "--output", "s3://pretrain-test/out"],
    "corpus": ["corpus", "--set", "storage.root=s3://pretrain-test/out"],
    "train": ["train", "--set", "storage.root=s3://pretrain-test/out"],
}


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_an_unreachable_object_store_is_one_line_naming_the_endpoint(tmp_path: Path, command: str) -> None:
    (tmp_path / "in.jsonl").write_text(json.dumps({"text": "a document"}) + "\n")
    dead = f"http://127.0.0.1:{free_port()}"
    env = {**_no_aws_env(tmp_path), "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
    done = _pretrain([*_COMMANDS[command], "--set", f"storage.endpoint_url={dead}"], env, tmp_path)
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"pretrain: cannot reach the object store at {dead} for s3://pretrain-test/out")
    )
    assert "storage.endpoint_url" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_missing_credentials_are_one_line_saying_what_to_set(tmp_path: Path, s3_endpoint: str, command: str) -> None:
    (tmp_path / "in.jsonl").write_text(json.dumps({"text": "a document"}) + "\n")
    done = _pretrain(
        [*_COMMANDS[command], "--set", f"storage.endpoint_url={s3_endpoint}"], _no_aws_env(tmp_path), tmp_path
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("pretrain: no usable credentials for s3://pretrain-test/out: set AWS_ACCESS_KEY_ID")
    assert "Traceback" not in done.stderr and "Starting temporary server" not in done.stderr  # refused before Prefect


def test_a_table_with_some_contract_columns_but_not_all_is_refused_naming_them(
    tmp_path: Path, real_texts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard that lost `licence` (written by an older build, or edited) is not re-read as raw text with new ids."""
    rows = len(real_texts)
    shard = {"id": [f"d{i}" for i in range(rows)], "text": real_texts, "source": ["s"] * rows,
             "domain": ["general"] * rows, "location": [f"f:{i}" for i in range(rows)],
             "code_language": [None] * rows}  # fmt: skip
    path = tmp_path / "shard.parquet"
    storage.write_parquet(str(path), pa.table(shard))
    assert main(["stage", "clean", "--input", str(path), "--output", str(tmp_path / "out")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pretrain:")]
    assert len(errors) == 1 and "lacks ['licence']" in errors[0] and str(path) in errors[0]
    raw = tmp_path / "raw.parquet"  # a raw dataset's usual columns: read as raw text, as before
    storage.write_parquet(str(raw), pa.table({"id": shard["id"], "text": real_texts, "source": shard["source"]}))
    assert main(["stage", "ingest", "--input", str(raw), "--output", str(tmp_path / "raw-out")]) == 0


@pytest.mark.slow
def test_task_completion_lines_stay_out_of_the_terminal(tmp_path: Path) -> None:
    """One "Finished in state Completed()" per task run made over half of a run's lines: the CLI's terminal drops
    them (the Prefect UI keeps each), the flow's own still prints, and so does a task's failure."""
    probe = """
from pretrain_cli.main import main
main(["config", "validate"])
from prefect import flow, task

@task
def echo(x: int) -> int:
    return x

@task(retries=0)
def fail() -> None:
    raise RuntimeError("planted")

@flow
def probe() -> None:
    [echo(i) for i in range(4)]
    fail(return_state=True)

probe()
"""
    env = {**os.environ, "PREFECT_HOME": str(tmp_path), "PREFECT_API_URL": "", "PREFECT_LOGGING_LEVEL": "INFO"}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    lines = result.stderr.splitlines()
    assert result.returncode == 0, result.stderr[-2000:]
    assert sum(line.endswith("Finished in state Completed()") for line in lines) == 1  # the flow's
    assert any("Finished in state Failed(" in line for line in lines)  # the failing task's

"""The lm-eval-harness adapter run by the harness itself on local task files (no downloads): a multiple-choice
task made from our own zero-shot items, a rolling-perplexity task and a generation task."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pretrain_core.evaluate.zero_shot import TaskItem, build_items, continuation_scores
from tests.evaluate import conftest as evaluate_fixtures
from tests.evaluate.test_zero_shot import held_out_texts

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output

TASKS = """
task: pretrain_continuation
dataset_path: json
dataset_kwargs:
  data_files:
    test: {items}
test_split: test
output_type: multiple_choice
target_delimiter: ""
doc_to_text: "{{{{context}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: answer
metric_list:
  - metric: acc
---
task: pretrain_rolling
dataset_path: json
dataset_kwargs:
  data_files:
    test: {texts}
test_split: test
output_type: loglikelihood_rolling
doc_to_text: "{{{{text}}}}"
doc_to_target: "{{{{text}}}}"
metric_list:
  - metric: word_perplexity
  - metric: bits_per_byte
---
task: pretrain_generate
dataset_path: json
dataset_kwargs:
  data_files:
    test: {texts}
test_split: test
output_type: generate_until
doc_to_text: "{{{{text[:40]}}}}"
doc_to_target: "{{{{text[40:60]}}}}"
generation_kwargs:
  until: ["\\n\\n"]
  max_gen_toks: 8
metric_list:
  - metric: exact_match
"""


@pytest.fixture
def offline_harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The harness's datasets cache in a temporary directory, and every Hugging Face download refused."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def local_tasks(folder: Path, choice_chars: int | None = None) -> tuple[Path, list[TaskItem]]:
    """The three tasks' YAMLs under ``folder`` / tasks, their data beside them; and the multiple-choice items (each
    choice cut to ``choice_chars`` when given)."""
    items = [i for i in build_items(held_out_texts(), per_group=6, seed=5) if i.task == "continuation"]
    rows = [{"context": i.context, "choices": [c[:choice_chars] for c in i.choices], "answer": i.answer} for i in items]
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    texts = [{"text": t[:400]} for t in held_out_texts()[:4]]
    (folder / "texts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in texts), encoding="utf-8")
    tasks_dir = folder / "tasks"
    tasks_dir.mkdir()
    for i, body in enumerate(TASKS.split("---")):
        filled = body.format(items=folder / "items.jsonl", texts=folder / "texts.jsonl")
        (tasks_dir / f"task{i}.yaml").write_text(filled, encoding="utf-8")
    return tasks_dir, items


def test_the_harness_scores_our_model_on_local_tasks(trained_output: str, offline_harness: Path) -> None:
    import lm_eval
    from lm_eval.tasks import TaskManager

    from pretrain_eval.lm_eval_adapter import PretrainLM

    tasks_dir, items = local_tasks(offline_harness)
    model = PretrainLM(source=trained_output, threads=1)
    results = lm_eval.simple_evaluate(
        model=model,
        tasks=["pretrain_continuation", "pretrain_rolling", "pretrain_generate"],
        task_manager=TaskManager(include_path=str(tasks_dir)),
        bootstrap_iters=0,
        log_samples=False,
    )
    assert results is not None
    scores = results["results"]
    # the harness's accuracy is our model's argmax of summed log-probs, choice by choice (target_delimiter "": the
    # harness hands each choice over as it is, not after a space of its own)
    ours = sum(
        max(
            range(len(i.choices)),
            key=lambda c: continuation_scores(model.bundle.model, model.bundle.tokenizer, i.context, i.choices[c])[0],
        )
        == i.answer
        for i in items
    ) / len(items)
    assert scores["pretrain_continuation"]["acc,none"] == pytest.approx(ours)
    rolling = scores["pretrain_rolling"]
    assert math.isfinite(rolling["word_perplexity,none"]) and 0 < rolling["bits_per_byte,none"] < 16
    assert 0 <= scores["pretrain_generate"]["exact_match,none"] <= 1


def test_rolling_windows_score_every_token_once(trained_output: str) -> None:
    from lm_eval.api.instance import Instance

    from pretrain_core.evaluate.zero_shot import score_tokens
    from pretrain_eval.lm_eval_adapter import PretrainLM

    model = PretrainLM(source=trained_output, threads=1)
    text = held_out_texts()[0][:1500]  # several windows of the test model
    ids = [model.bundle.tokenizer.eos_id(), *model.bundle.tokenizer.encode(text)]
    assert len(ids) > 3 * model.bundle.model.args.max_seq_len
    (rolled,) = model.loglikelihood_rolling([Instance("loglikelihood_rolling", {}, (text,), 0)], disable_tqdm=True)
    # token by token, each with the longest context the window allows
    window = model.bundle.model.args.max_seq_len
    expected = sum(
        score_tokens(model.bundle.model, ids[max(0, i - window) : i + 1], min(i, window))[0] for i in range(1, len(ids))
    )
    assert rolled < 0 and rolled == pytest.approx(expected, rel=0.05)

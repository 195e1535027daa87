from __future__ import annotations

from pretrain_core.evaluate.evaluator import evaluate_checkpoint
from pretrain_core.train.checkpoint.catalog import read_meta
from pretrain_core.train.config import EvalConfig
from tasks.training import evaluation_markdown
from tests.evaluate import conftest as evaluate_fixtures

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output
fresh_run = evaluate_fixtures.fresh_run


def test_the_checkpoint_report_shows_tasks_probes_and_samples(fresh_run: str) -> None:
    cfg = EvalConfig(batches_per_split=1, batch_size=4, max_new_tokens=4, num_threads=1, zero_shot_items=5)
    result = evaluate_checkpoint(fresh_run, cfg=cfg)
    markdown = evaluation_markdown(result)
    assert f"# Step {result.step}" in markdown and "| task | items | accuracy ± s.e. |" in markdown
    for name, task in result.tasks.items():
        assert f"| {name} | {task.items} | {task.accuracy:.3f} ± {task.stderr:.3f} |" in markdown
    assert (
        "distinct-2" in markdown
        and "Bias pairs (en, He/She, 48)" in markdown
        and "Bias pairs (zh, 他/她, 48)" in markdown
    )
    assert markdown.count("**greedy**") == len(cfg.prompts) == markdown.count("**sample**")
    bill = read_meta(result.checkpoint_url)["data"]["bill"]
    assert result.fed["bill"] == bill  # kept in the evaluation record: the checkpoint may be pruned right after
    assert f"{bill['tokens']:,} tokens fed in {bill['sequences']:,} sequences" in markdown
    for domain, tokens in bill["by"]["domain"].items():
        assert f"| {domain} | {tokens:,} | {100 * tokens / bill['tokens']:.1f} % |" in markdown

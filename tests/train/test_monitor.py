"""The supervisor's reading of torchrun output: progress lines round-trip, time left, the worker's real error."""

from __future__ import annotations

from pretrain_core.train.observe.monitor import TrainingMonitor, format_progress, parse_progress

# What torchrun printed when a worker failed (trimmed): the worker's traceback, then the launcher's own summary.
FAILED_RUN = """\
2026-12-04 10:00:01,000 rank0 INFO pretrain_core.train.trainer: resuming from /x/step-00000002 at step 2
Traceback (most recent call last):
  File "/repo/pretrain_core/train/trainer.py", line 85, in __init__
    train_rows = load_sequences(config.tokens_url, "train", config.seq_len).ids
ValueError: no train rows under /x/tokens: run the tokenize stage first
E1204 10:00:02.000000 123 torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: 1) local_rank: 0
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/distributed/run.py", line 901, in main
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
pretrain_core.train FAILED
"""


def test_a_progress_line_reads_back_whatever_the_log_prefix() -> None:
    values = {"loss": 3.2145, "lr": 0.0003, "grad_norm": 0.91, "tokens_per_s": 1640.2}
    line = "2026-12-04 10:00:00,000 rank0 INFO pretrain_core.train.observe.metrics: " + format_progress(40, 100, values)
    point = parse_progress(line)
    assert point is not None and (point.step, point.max_steps) == (40, 100)
    assert point.values == {"loss": 3.215, "lr": 0.0003, "grad_norm": 0.91, "tokens_per_s": 1640}
    assert parse_progress("checkpoint /x/step-00000040") is None
    assert parse_progress("the step 4/10 we took") is None


def test_time_left_follows_the_step_rate_and_the_summary_shows_it() -> None:
    now = [100.0]
    monitor = TrainingMonitor(max_steps=100, clock=lambda: now[0])
    monitor.feed(format_progress(10, 100, {"loss": 5.0, "tokens_per_s": 2000}))
    assert monitor.eta_s() is None  # one point gives no rate
    now[0] = 120.0
    monitor.feed(format_progress(20, 100, {"loss": 4.0, "tokens_per_s": 2100}))
    monitor.feed(format_progress(20, 100, {"val_loss": 4.5, "val_ppl": 90.0}))
    assert monitor.eta_s() == 160.0  # 10 steps per 20 s, 80 to go
    assert monitor.summary() == "step 20/100 · loss 4 · val loss 4.5 · 2,100 tokens/s · 2m40s left"
    # the health figures of the progress line: memory, a GPU's utilisation, data waits once they matter
    monitor.feed(format_progress(20, 100, {"memory_mb": 1812.4, "gpu_util": 97.0, "data_share": 0.02}))
    assert "tokens/s · 1,812 MB · GPU 97% · 2m40s left" in monitor.summary()
    monitor.feed(format_progress(20, 100, {"data_share": 0.31}))
    assert "GPU 97% · 31% waiting for data · 2m40s left" in monitor.summary()
    assert monitor.train_losses == [(10, 5.0), (20, 4.0)] and monitor.validation_losses == [(20, 4.5)]


def test_the_failure_is_the_workers_exception_not_the_launchers() -> None:
    monitor = TrainingMonitor(max_steps=10)
    for line in FAILED_RUN.splitlines():
        monitor.feed(line)
    assert monitor.failure() == "ValueError: no train rows under /x/tokens: run the tokenize stage first"
    tail = TrainingMonitor(max_steps=10, tail_lines=3)
    for line in ["a", "b", "", "Killed"]:
        tail.feed(line)
    assert tail.tail() == ["b", "", "Killed"] and tail.failure() == "Killed"

from __future__ import annotations

import logging
import math
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import completed_checkpoints, read_meta
from pretrain_core.train.checkpoint.records import evaluation_url
from pretrain_core.train.checkpoint.resume import completed_run
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.torchrun import write_config
from pretrain_core.train.observe import environment as environment_module
from pretrain_core.train.parallel.distributed import cleanup_distributed, init_distributed
from pretrain_core.train.step import PHASES
from pretrain_core.train.trainer import Trainer, train
from tests.train.token_corpus import TokenData, documents, train_tokenizer


# fp16: the loss scaler's state resumes too; background: saves written while training goes on
@pytest.mark.parametrize(("precision", "background"), [("fp32", False), ("fp16", False), ("fp32", True)])
def test_interrupted_and_resumed_run_matches_an_uninterrupted_one(
    tiny_config: Callable[..., TrainConfig], memory_url: str, precision: str, background: bool
) -> None:
    full = train(tiny_config(output_url=f"{memory_url}/full-{precision}", precision=precision))
    assert full.status == "completed" and sorted(full.losses) == [1, 2, 3, 4, 5, 6]

    # checkpoint_every only decides when to save; the run's math is the same as `full`'s
    config = tiny_config(
        output_url=f"{memory_url}/resumed-{precision}-{background}", checkpoint_every=2, precision=precision,
        async_checkpoints=background,
    )  # fmt: skip
    stop, saved = threading.Event(), []

    def stop_after_first_checkpoint(url: str, step: int) -> None:
        saved.append(step)
        stop.set()  # as SIGTERM would: ranks agree at the end of the next step, checkpoint there, exit

    first = train(config, on_checkpoint=[stop_after_first_checkpoint], stop=stop)
    # a background save completes (and calls back) a step or more after it started: the stop comes later
    assert first.status == "stopped" and saved[0] == 2 and saved[-1] == first.step
    assert background or saved == [2, 3]
    second = train(config)
    assert second.status == "completed" and sorted(second.losses) == list(range(first.step + 1, 7))
    # bitwise: same data order, same optimizer moments, same lr, same RNG
    assert {**first.losses, **second.losses} == full.losses
    assert second.summary["final_validation_loss"] == full.summary["final_validation_loss"]
    assert second.summary["initial_validation_loss"] == full.summary["initial_validation_loss"]


def test_summary_checkpoints_and_tensorboard_land_under_the_output(
    tiny_config: Callable[..., TrainConfig], memory_url: str
) -> None:
    output = f"{memory_url}/outputs"
    # nobody evaluates this run: pruning must not wait for evaluations
    result = train(
        tiny_config(output_url=output, max_steps=8, keep_last_checkpoints=2, prune_waits_for_evaluation=False)
    )
    summary = storage.read_json(storage.join(output, "train_summary.json"))
    assert summary == result.summary
    assert summary["steps"] == 8 and summary["tokens_seen"] == 8 * 32 * 4 * 2
    assert summary["final_validation_perplexity"] < summary["initial_validation_perplexity"]
    assert summary["initial_validation_perplexity"] == pytest.approx(math.exp(summary["initial_validation_loss"]))
    assert summary["tokens_per_second"] > 0
    assert [step for step, _ in completed_checkpoints(output)] == [6, 8]  # every 3 steps + the end, last 2 kept
    meta = read_meta(summary["checkpoint_url"])
    assert meta["data"]["position"] == 8 * 2 * 4 and meta["model_args"]["vocab_size"] == 512
    assert meta["environment"]["torch"] == str(torch.__version__) and "cpu" in meta["environment"]
    assert TrainConfig.model_validate(meta["config"]) == tiny_config(
        output_url=output, max_steps=8, prune_waits_for_evaluation=False
    )
    # TensorBoard logged to a temp dir and uploaded, since memory:// is not a local path
    assert storage.list_files(storage.join(output, "tensorboard"), suffix="")[0].split("/")[-1].startswith("events.")


def test_rerunning_a_finished_run_does_no_more_steps(tiny_config: Callable[..., TrainConfig], memory_url: str) -> None:
    config = tiny_config(output_url=f"{memory_url}/done", max_steps=3)
    train(config)
    again = train(config)
    assert again.status == "completed" and again.losses == {} and again.step == 3
    assert [step for step, _ in completed_checkpoints(config.output_url)] == [3]


def test_resuming_with_another_tokenizer_is_refused(tiny_config: Callable[..., TrainConfig], memory_url: str) -> None:
    config = tiny_config(output_url=f"{memory_url}/tokenizer", max_steps=3)
    train(config)
    copy = f"{memory_url}/tokenizer-copy/tokenizer.model"
    storage.write_bytes(copy, storage.read_bytes(config.data.tokenizer_url))
    assert train(config.updated(**{"tokenizer_url": copy})).step == 3  # same bytes elsewhere: fine
    other = f"{memory_url}/tokenizer-other/tokenizer.model"
    storage.write_bytes(other, train_tokenizer([text for _, _, text in documents()[:10]], vocab_size=600))
    with pytest.raises(ValueError, match="another tokenizer"):
        train(config.updated(**{"tokenizer_url": other, "max_steps": 4}))


def test_bf16_autocast_trains_with_fp32_weights(tiny_config: Callable[..., TrainConfig], memory_url: str) -> None:
    result = train(tiny_config(output_url=f"{memory_url}/bf16", precision="bf16", max_steps=6))
    assert all(math.isfinite(loss) for loss in result.losses.values())
    assert result.summary["final_validation_loss"] < result.summary["initial_validation_loss"]
    model, _ = load_model(result.summary["checkpoint_url"])
    assert model.embed.weight.dtype == torch.float32


def test_fp16_scales_the_loss_skips_overflowed_steps_and_still_learns(
    tiny_config: Callable[..., TrainConfig], memory_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="pretrain_core.train.trainer")
    overflowing = {"precision": "fp16", "loss_scale_init": 2.0**24, "max_steps": 20, "eval_every": 20}
    result = train(tiny_config(output_url=f"{memory_url}/fp16", **overflowing))
    skipped = result.summary["overflow_steps"]
    assert 1 <= skipped < 20  # scaled by 2**24 the gradients overflow fp16 until the scale has backed off
    assert caplog.text.count("fp16 gradients overflowed, update skipped") == skipped
    assert all(math.isfinite(loss) for loss in result.losses.values())
    assert result.summary["final_validation_loss"] < result.summary["initial_validation_loss"]
    meta = read_meta(result.summary["checkpoint_url"])
    assert meta["overflow_steps"] == skipped and meta["grad_scaler"]["scale"] == 2.0 ** (24 - skipped)


def test_bf16_without_native_support_is_warned_about(
    tiny_config: Callable[..., TrainConfig], memory_url: str, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(environment_module, "native_bf16", lambda device: False)  # this CPU has it: pretend not
    caplog.set_level(logging.WARNING, logger="pretrain_core.train.trainer")
    train(tiny_config(output_url=f"{memory_url}/bf16-slow", precision="bf16", max_steps=1))
    assert "without native bf16" in caplog.text and "25-45x slower than fp32" in caplog.text


def test_a_completed_run_is_recognised_only_under_the_same_config(
    tiny_config: Callable[..., TrainConfig], memory_url: str
) -> None:
    config = tiny_config(output_url=f"{memory_url}/completed", max_steps=3)
    assert completed_run(config) is None
    write_config(config)
    train(config)
    summary = completed_run(config)
    assert summary is not None and summary["steps"] == 3
    assert completed_run(config.updated(**{"max_steps": 5})) is None  # longer run: resume, not skip


def test_a_slow_run_also_checkpoints_by_wall_clock_time(
    tiny_config: Callable[..., TrainConfig], memory_url: str
) -> None:
    saved: list[int] = []
    config = tiny_config(
        output_url=f"{memory_url}/timed", max_steps=4, checkpoint_every=1000, checkpoint_every_minutes=1e-7,
        keep_last_checkpoints=10, prune_waits_for_evaluation=False,
    )  # fmt: skip
    train(config, on_checkpoint=[lambda url, step: saved.append(step)])
    assert saved == [1, 2, 3, 4]  # every step outlasts the 6 µs interval; by steps alone only step 4 would save
    hourly = tiny_config(output_url=f"{memory_url}/hourly", max_steps=4, checkpoint_every=1000)
    saved.clear()
    train(hourly, on_checkpoint=[lambda url, step: saved.append(step)])
    assert hourly.checkpoint.checkpoint_every_minutes == 60 and saved == [4]


def test_non_finite_steps_are_skipped_then_rolled_back_with_a_lower_lr(
    tiny_config: Callable[..., TrainConfig], memory_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="pretrain_core.train.trainer")
    config = tiny_config(output_url=f"{memory_url}/diverging", max_steps=6, checkpoint_every=2, max_nonfinite_steps=2)
    train(config.updated(**{"max_steps": 2}))  # a checkpoint at step 2 to come back to
    env = init_distributed(config.launch.backend)
    try:
        trainer = Trainer(config, env)
        peak = list(trainer.scheduler.base_lrs)
        with torch.no_grad():
            trainer.model.embed.weight.fill_(float("nan"))  # what a blown-up update leaves behind
        result = trainer.fit(threading.Event())
    finally:
        cleanup_distributed()
    assert (trainer.nonfinite_steps, trainer.rollbacks) == (2, 1)
    assert caplog.text.count("non-finite gradient") == 2 and "rolled back to" in caplog.text
    assert trainer.scheduler.base_lrs == pytest.approx([lr * 0.5 for lr in peak])
    assert result.status == "completed" and all(math.isfinite(result.losses[s]) for s in range(3, 7))
    assert read_meta(result.summary["checkpoint_url"])["rollbacks"] == 1 and result.summary["nonfinite_steps"] == 2


def test_without_a_checkpoint_a_diverged_run_stops_with_advice(
    tiny_config: Callable[..., TrainConfig], memory_url: str
) -> None:
    config = tiny_config(output_url=f"{memory_url}/no-checkpoint", max_steps=6, max_nonfinite_steps=2)
    env = init_distributed(config.launch.backend)
    try:
        trainer = Trainer(config, env)
        with torch.no_grad():
            trainer.model.embed.weight.fill_(float("nan"))
        with pytest.raises(FloatingPointError, match="no checkpoint to roll back to: lower lr"):
            trainer.fit(threading.Event())
    finally:
        cleanup_distributed()


def test_the_gradient_check_runs_on_schedule_and_passes(
    tiny_config: Callable[..., TrainConfig], memory_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pretrain_core.train.trainer")
    train(tiny_config(output_url=f"{memory_url}/grad-check", max_steps=4, grad_check_every=2))
    checks = [r.getMessage() for r in caplog.records if "gradient check" in r.getMessage()]
    assert [m.split(":")[0] for m in checks] == ["gradient check at step 2", "gradient check at step 4"]
    assert all(float(m.rsplit(" ", 1)[1]) < 1e-2 for m in checks)


def test_tensorboard_gets_loss_and_health_every_step_mfu_and_no_step_twice_after_a_crash(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pretrain_core.train")  # the trainer's and its observer's records
    output = str(tmp_path / "monitored")
    unevaluated = {"prune_waits_for_evaluation": False, "keep_last_checkpoints": 5}
    config = tiny_config(
        output_url=output, max_steps=6, log_every=3, peak_flops_per_device=None, straggler_check_every=2, **unevaluated
    )
    train(config)
    # as if the run had crashed after logging step 6 but before saving it: the rerun redoes steps 4-6
    storage.remove(storage.join(output, "checkpoints", "step-00000006"))
    storage.remove(storage.join(output, "train_summary.json"))
    assert sorted(train(config).losses) == [4, 5, 6] and "measured peak" in caplog.text
    events = EventAccumulator(str(Path(output) / "tensorboard"))
    events.Reload()
    steps = {tag: [e.step for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}
    assert steps["train/loss"] == [1, 2, 3, 4, 5, 6]  # the first attempt's 4-6 purged, not shown twice
    assert steps["train/mfu"] == [3, 6]
    every_step = ["memory/cpu_rss_mb", "time/data_share"] + [f"time/{p}_seconds" for p in PHASES]
    assert all(steps[tag] == [1, 2, 3, 4, 5, 6] for tag in every_step), steps
    assert steps["health/step_seconds_max"] == [2, 4, 6] and steps["health/slowest_rank"] == [2, 4, 6]
    assert 0 < events.Scalars("train/mfu")[-1].value < 1
    assert all(0 <= e.value < 1 for e in events.Scalars("time/data_share"))
    assert steps["val/train_perplexity_ratio"] == [3, 6]
    for split in ("train", "validation"):  # what mixing does to each domain, at each validation
        assert all(steps[f"{split}_loss_by_domain/{d}"] == [0, 3, 6] for d in ("general", "specialist", "code")), steps


def test_validation_far_above_training_perplexity_raises_the_overfit_alarm(
    tiny_config: Callable[..., TrainConfig], memory_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="pretrain_core.train.trainer")
    env = init_distributed("auto")
    try:
        trainer = Trainer(tiny_config(output_url=f"{memory_url}/overfit"), env)
        trainer.observer.last_train_loss = 0.5  # as if it had memorised its training text: perplexity 1.6
        loss = trainer.validate()  # the untrained model on held-out text: perplexity in the hundreds
    finally:
        cleanup_distributed()
    assert loss is not None and loss - 0.5 > math.log(1.3)
    assert "validation perplexity is" in caplog.text and "may be memorising its training data" in caplog.text


def test_a_resume_with_another_global_batch_or_other_data_is_refused_unless_asked(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, token_data: TokenData, caplog: pytest.LogCaptureFixture
) -> None:
    config = tiny_config(output_url=str(tmp_path / "run"), max_steps=2)
    train(config)
    longer = {"max_steps": 4}
    with pytest.raises(ValueError, match=r"global batch went from 256 to 512 tokens per step.*resume_despite_changes"):
        train(config.updated(**{**longer, "micro_batch_size": 8}))
    fewer = tmp_path / "fewer-tokens"
    shutil.copytree(token_data.tokens_url, fewer)
    first_shard = sorted((fewer / "data").glob("*.parquet"))[0]
    first_shard.unlink()  # a shard lost (or a corpus rebuilt) under the same URL
    with pytest.raises(ValueError, match=r"training sequences under .* are not the ones it was trained on"):
        train(config.updated(**{**longer, "tokens_url": str(fewer)}))
    caplog.set_level(logging.WARNING, logger="pretrain_core.train.trainer")
    forced = train(config.updated(**{**longer, "micro_batch_size": 8, "resume_despite_changes": True}))
    assert forced.status == "completed" and sorted(forced.losses) == [3, 4] and "despite changes" in caplog.text


def test_a_compiled_run_matches_an_uncompiled_one_and_a_failing_compile_falls_back(
    tiny_config: Callable[..., TrainConfig], memory_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pretrain_core.train")
    plain = train(tiny_config(output_url=f"{memory_url}/plain", max_steps=3))
    # aot_eager traces and runs the same kernels as eager, without inductor's code generation (seconds, not a minute)
    compiled = train(
        tiny_config(output_url=f"{memory_url}/compiled", max_steps=3, compile=True, compile_backend="aot_eager")
    )
    assert "model forward compiled" in caplog.text
    assert compiled.losses == pytest.approx(plain.losses, rel=1e-4)
    broken = train(tiny_config(output_url=f"{memory_url}/broken", max_steps=3, compile=True, compile_backend="nope"))
    assert "torch.compile (backend nope) failed, training uncompiled: InvalidBackend" in caplog.text
    assert broken.losses == plain.losses  # the probe left nothing behind: the very same run


def test_periodic_saves_are_skipped_while_evaluation_lags_so_disk_stays_bounded(
    tiny_config: Callable[..., TrainConfig], memory_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Nobody evaluates: after `max_unevaluated_checkpoints` saves the periodic ones are skipped (logged), the
    final one is still written, and nothing unevaluated is pruned: keep_last + N + 1 at most."""
    config = tiny_config(output_url=f"{memory_url}/lagging", checkpoint_every=1, max_unevaluated_checkpoints=2)
    with caplog.at_level(logging.WARNING, logger="pretrain_core.train.trainer"):
        train(config)
    assert [step for step, _ in completed_checkpoints(config.output_url)] == [1, 2, 6]
    skipped = [r.getMessage() for r in caplog.records if "checkpoint skipped" in r.getMessage()]
    assert [m.split(":")[0] for m in skipped] == ["step 3", "step 4", "step 5"]

    kept_up = config.updated(**{"output_url": f"{memory_url}/kept-up"})

    def evaluate(url: str, step: int) -> None:  # an evaluator that keeps up with training
        storage.write_json(evaluation_url(kept_up.output_url, step), {"step": step})

    train(kept_up, on_checkpoint=[evaluate])
    assert [step for step, _ in completed_checkpoints(kept_up.output_url)] == [5, 6]  # every save made, then pruned


def test_ephemeral_saves_are_resumable_never_announced_and_gone_once_a_newer_save_completes(
    tiny_config: Callable[..., TrainConfig], memory_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = f"{memory_url}/ephemeral"
    config = tiny_config(output_url=output, max_steps=9, checkpoint_every=6, ephemeral_checkpoint_every=2)
    full = train(config.updated(**{"output_url": f"{memory_url}/full"}))
    validate = Trainer.validate

    def killed_at_the_last_step(self: Trainer) -> float | None:
        if self.step == 9:  # after step 9 trained, before it is saved: as if the process died there
            raise RuntimeError("killed")
        return validate(self)

    monkeypatch.setattr(Trainer, "validate", killed_at_the_last_step)
    announced: list[int] = []
    with pytest.raises(RuntimeError, match="killed"):
        train(config, on_checkpoint=[lambda url, step: announced.append(step)])
    assert announced == [6]  # the ephemeral saves at 2, 4 and 8 are for recovery: never announced
    assert [step for step, _ in completed_checkpoints(output)] == [6]
    assert [step for step, _ in completed_checkpoints(output, ephemeral=True)] == [6, 8]  # 2, 4 deleted at 6
    monkeypatch.undo()
    resumed = train(config)
    assert sorted(resumed.losses) == [9] and resumed.losses[9] == full.losses[9]  # from step 8, bitwise
    assert [step for step, _ in completed_checkpoints(output, ephemeral=True)] == [6, 9]

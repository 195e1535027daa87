"""The layout planner: memory estimates against measured peaks, layouts the trainer accepts, and the CLI."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pretrain_cli.main import main
from pretrain_core.config import load_config
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.parallel.layout import Layout
from pretrain_core.train.parallel.memory_probe import measure_peak_memory
from pretrain_core.train.parallel.planner import (
    Candidate,
    Hardware,
    Workload,
    candidate_of,
    check_fits,
    estimate_memory,
    plan,
    settings_of,
    workload_of,
)
from pretrain_core.train.sections.model import MODEL_PRESETS

# shapes unlike the two the constants were read from (6 x 128 with an 8k vocabulary; 6 x 256 at 128 tokens)
HELD_OUT = [
    (Workload(8, 8, 256, 2000, 512, 4, "fp32"), False),
    (Workload(8, 8, 256, 2000, 512, 4, "fp32"), True),
    (Workload(3, 2, 64, 12000, 128, 16, "fp32"), False),
    (Workload(12, 4, 128, 1000, 256, 8, "fp32"), True),
]


@pytest.mark.parametrize(("workload", "checkpointing"), HELD_OUT)
def test_memory_estimates_are_within_15_percent_of_the_measured_peak(workload: Workload, checkpointing: bool) -> None:
    batch = workload.global_batch
    measured = measure_peak_memory(workload, batch, checkpointing)
    estimated = estimate_memory(workload, Candidate(Layout(1), batch, 1, checkpointing)).peak
    print(f"{workload} checkpointing={checkpointing}: measured {measured / 2**20:.1f} MiB, estimated "
          f"{estimated / 2**20:.1f} MiB ({estimated / measured - 1:+.1%})")  # fmt: skip
    assert abs(estimated / measured - 1) < 0.15


def test_checkpointing_and_pipelines_cut_the_activations_the_estimate_counts() -> None:
    workload = Workload(24, 16, 1536, 32000, 2048, 64)
    whole = estimate_memory(workload, Candidate(Layout(1), 8, 8, False))
    checkpointed = estimate_memory(workload, Candidate(Layout(1), 8, 8, True))
    gpipe = estimate_memory(workload, Candidate(Layout(4, pp=4), 16, 4, False, "gpipe", 16))
    one_f_one_b = estimate_memory(workload, Candidate(Layout(4, pp=4), 16, 4, False, "1f1b", 16))
    assert checkpointed.activations < whole.activations / 3  # the head's fp32 log-softmax stays
    assert one_f_one_b.activations < gpipe.activations / 2  # 1F1B holds 4 microbatches in flight, GPipe 16
    fsdp = estimate_memory(workload, Candidate(Layout(8), 1, 8, False))
    ddp = estimate_memory(workload, Candidate(Layout(8), 1, 8, False, strategy="ddp"))
    assert fsdp.optimizer == ddp.optimizer // 8


def test_every_planned_row_s_set_line_configures_that_layout(capsys: pytest.CaptureFixture[str]) -> None:
    """Each row's --set line, read by the pipeline config as `pretrain train` reads it, gives back the row's layout,
    strategy and batch split (ddp and fsdp rows alike), and the trainer's memory estimate of that config is the
    row's."""
    arguments = ["plan", "--model", "tiny", "--gpus", "4", "--global-batch", "16", "--seq-len", "32",
                 "--vocab-size", "8000", "--precision", "fp32", "--gpu-memory-gib", "1", "--top", "100"]  # fmt: skip
    assert main(arguments) == 0
    lines = capsys.readouterr().out.splitlines()
    set_lines = [line.split() for line in lines if line.startswith("    --set ")]
    workload = Workload(4, 4, 128, 8000, 32, 16, "fp32")
    plans = plan(workload, 4, Hardware(gpu_memory_gib=1.0))
    assert len(set_lines) == len(plans) and {found.candidate.strategy for found in plans} == {"ddp", "fsdp"}
    layouts = {(p.candidate.layout.pp, p.candidate.layout.cp, p.candidate.layout.tp) for p in plans}
    assert {(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2)} <= layouts
    for found, words in zip(plans, set_lines, strict=True):
        config = load_config(None, [word for word in words if word != "--set"]).train
        assert candidate_of(config) == found.candidate
        assert config.tokens_per_step == workload.global_batch * workload.seq_len
        assert estimate_memory(workload_of(config, 8000), candidate_of(config)) == found.memory


def test_settings_spread_many_gpus_over_whole_nodes() -> None:
    candidate = Candidate(Layout(32, tp=8), 1, 4, False, strategy="fsdp")
    assert settings_of(candidate, gpus_per_node=8)["nnodes"] == 4
    assert settings_of(candidate, gpus_per_node=8)["nproc_per_node"] == 8
    odd = settings_of(Candidate(Layout(12), 1, 1, False), gpus_per_node=8)
    assert odd["nnodes"] * odd["nproc_per_node"] == 12 and odd["nproc_per_node"] <= 8


def test_a_run_whose_layout_cannot_fit_its_gpus_is_refused_with_the_estimate(
    tiny_config: Callable[..., TrainConfig],
) -> None:
    config = tiny_config(model="124m", n_layer=None, n_head=None, d_model=None, micro_batch_size=64, seq_len=32,
                         gpu_memory_gib=1.0)  # fmt: skip
    with pytest.raises(ValueError, match=r"needs about \d+\.\d GiB per GPU .* `pretrain plan` lists the layouts"):
        check_fits(config, 32000)
    assert check_fits(config.updated(**{"gpu_memory_gib": 80.0}), 32000).peak < 80 * 2**30


def test_pretrain_plan_prints_the_layouts_that_fit_or_what_would(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", "760m", "--gpus", "8", "--global-batch", "64", "--top", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "pp x dp x cp x tp" in lines[1] and "strategy" in lines[1]
    assert len(lines) == 2 + 2 * 5 + 1  # title, header, 5 rows each with its --set line, "... more"
    assert lines[2].split()[-1] == "1.00"  # fastest first
    assert lines[3].strip().startswith("--set train.model.preset=760m")
    assert "--set train.parallelism.strategy=" in lines[3]
    assert main(["plan", "--model", "2b-deep", "--gpus", "2", "--gpu-memory-gib", "8"]) == 1
    out = capsys.readouterr().out
    assert "no layout fits: the least hungry" in out
    more = int(out.split("--gpus ")[1].split()[0])
    preset = out.split("--model ")[1].split()[0]
    workload = Workload(*MODEL_PRESETS["2b-deep"], 32000, 2048, 256)
    hardware = Hardware(gpu_memory_gib=8)
    assert plan(workload, more, hardware) and not plan(workload, more // 2, hardware)  # the fewest that fit
    bigger = [name for name, shape in MODEL_PRESETS.items() if Workload(*shape, 32000, 1, 1).params() >
              Workload(*MODEL_PRESETS[preset], 32000, 1, 1).params()]  # fmt: skip
    assert plan(Workload(*MODEL_PRESETS[preset], 32000, 2048, 256), 2, hardware)
    assert not any(plan(Workload(*MODEL_PRESETS[name], 32000, 2048, 256), 2, hardware) for name in bigger)
    assert main(["plan", "--model", "tiny", "--gpus", "1"]) == 0
    assert "1 GPU of 80 GiB" in capsys.readouterr().out

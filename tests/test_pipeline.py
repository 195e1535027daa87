from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from pretrain_core import storage
from pretrain_core.config import ConfigError, load_config
from pretrain_core.cores import usable_cores
from pretrain_core.ingest.listing import sources_bytes
from pretrain_core.pipeline import ArtifactChanged, CorpusPipeline, resolve_processes, training_config
from tests.fault_proxy import FAULTS, FaultProxy


def test_stages_run_against_a_real_s3_api_and_rerun_does_nothing(small_config_file: Path, s3_endpoint: str) -> None:
    cfg = load_config(
        small_config_file, ["storage.root=s3://pretrain-test/pipe", f"storage.endpoint_url={s3_endpoint}"]
    )
    pipeline = CorpusPipeline(cfg)
    try:
        ingest = pipeline.run_stage("ingest")
        clean = pipeline.run_stage("clean")
        assert clean.docs_in == ingest.docs_out > 0
        assert storage.exists("s3://pretrain-test/pipe/corpus/clean/manifest.json")
        shards = storage.list_files("s3://pretrain-test/pipe/corpus/clean/data", ".parquet")
        assert len(shards) == len(clean.shards) and all(u.startswith("s3://pretrain-test/") for u in shards)
        assert sum(storage.read_parquet(u).num_rows for u in shards) == clean.docs_out

        again = CorpusPipeline(cfg).run_stage("clean")
        assert again == clean  # read back from the manifest, not recomputed
    finally:
        storage.set_storage_options("s3")


def test_transient_s3_faults_are_retried_and_change_nothing(small_config_file: Path, s3_endpoint: str) -> None:
    """Every third request through the proxy fails (503 SlowDown, 500, a dropped connection): the stages still
    finish, with the very bytes of a run that saw no fault, and no temporary object is left behind."""
    calm_root, stormy_root = "s3://pretrain-test/calm", "s3://pretrain-test/stormy"
    try:
        CorpusPipeline(
            load_config(small_config_file, [f"storage.root={calm_root}", f"storage.endpoint_url={s3_endpoint}"])
        ).run_stage("ingest")
        with FaultProxy(s3_endpoint, every=3) as proxy:
            stormy = [f"storage.root={stormy_root}", f"storage.endpoint_url={proxy.url}"]
            CorpusPipeline(load_config(small_config_file, stormy)).run_stage("ingest")
        assert min(proxy.injected[fault] for fault in FAULTS) > 0
        storage.set_storage_options("s3", client_kwargs={"endpoint_url": s3_endpoint})
        calm = storage.list_files(f"{calm_root}/corpus/ingest")
        assert [u.replace(calm_root, "") for u in calm] == [
            u.replace(stormy_root, "") for u in storage.list_files(f"{stormy_root}/corpus/ingest")
        ]
        for url in calm:
            if url.endswith(".parquet"):
                assert storage.read_bytes(url) == storage.read_bytes(url.replace(calm_root, stormy_root)), url
        fs, _ = storage.filesystem(stormy_root)
        assert [p for p in fs.find("pretrain-test/stormy") if "/.tmp-" in p] == []
    finally:
        storage.set_storage_options("s3")


def test_an_artifact_replaced_after_its_fit_is_refused_not_loaded(small_config_file: Path) -> None:
    """A pickle planted in place of a fitted model (or any change to its bytes) is caught by the digest the fit's
    marker recorded, before any stage reads it."""
    pipeline = CorpusPipeline(load_config(small_config_file))
    for name in ("ingest", "clean", "dedup"):
        pipeline.run_stage(name)
    artifacts = pipeline.fit("dedup")
    assert pipeline.fit("dedup") == artifacts  # unchanged: reused
    target = next(iter(artifacts.values()))
    storage.write_bytes(target, pickle.dumps({"os.system": "echo planted"}))
    with pytest.raises(ArtifactChanged, match=rf"{re.escape(target)} changed since its fit recorded it .* delete "):
        pipeline.fit("dedup")


def test_changing_an_early_stage_invalidates_every_later_one(small_config_file: Path) -> None:
    base = CorpusPipeline(load_config(small_config_file))
    changed = CorpusPipeline(load_config(small_config_file, ["clean.langid.prefix_chars=500"]))
    assert base.config_hash("ingest") == changed.config_hash("ingest")
    for name in ("clean", "dedup", "pii", "quality", "mixture", "tokenize"):
        assert base.config_hash(name) != changed.config_hash(name), name
    assert base.config_hash("tokenize") != CorpusPipeline(
        load_config(small_config_file, ["pack.seq_len=128"])
    ).config_hash("tokenize")


@pytest.mark.parametrize(
    ("override", "rerun"),
    [
        # decontamination checks the training split against the held-out one; the tokenizer reads what it keeps
        ("pack.split_seed=1", {"splits", "decontaminate", "tokenizer", "mixture", "tokenize"}),
        ("pack.min_heldout_docs=3", {"splits", "decontaminate", "tokenizer", "mixture", "tokenize"}),
        ("pack.add_eos=false", {"mixture", "tokenize"}),  # the plan counts the frame tokens packing adds
        ("pack.seq_len=128", {"tokenize"}),
        ("mixture.seed=1", {"mixture", "tokenize"}),
    ],
)
def test_split_and_frame_settings_rerun_the_mixture(small_config_file: Path, override: str, rerun: set[str]) -> None:
    """Splits are assigned before the mixture, so the mixture's hash covers them; packing alone does not rerun it."""
    base = CorpusPipeline(load_config(small_config_file))
    changed = CorpusPipeline(load_config(small_config_file, [override]))
    names = ("quality", "splits", "decontaminate", "tokenizer", "mixture", "tokenize")
    assert {n for n in names if base.config_hash(n) != changed.config_hash(n)} == rerun


def test_a_stage_without_input_says_which_stage_to_run(tmp_path: Path, small_config_file: Path) -> None:
    pipeline = CorpusPipeline(load_config(small_config_file, [f"storage.root={tmp_path / 'empty'}"]))
    with pytest.raises(RuntimeError, match="run 'pii' first"):
        pipeline.run_stage("quality")


def test_training_reads_this_runs_shards_and_tokenizer(small_config_file: Path) -> None:
    cfg = load_config(small_config_file)
    train = training_config(cfg)
    assert train.data.tokens_url == f"{cfg.storage.root}/corpus/tokenize"
    assert train.data.tokenizer_url.endswith("corpus/tokenizer/tokenizer.model")
    assert train.data.seq_len == cfg.pack.seq_len
    rebuilt = training_config(load_config(small_config_file, ["pack.seq_len=128"]))
    assert rebuilt.output_url != train.output_url  # a new corpus trains a new run instead of resuming the old one
    assert training_config(load_config(small_config_file, ["train.max_steps=99"])).output_url == train.output_url


def test_a_missing_bucket_is_refused_before_anything_runs_unless_asked_to_create_it(
    small_config_file: Path, s3_endpoint: str
) -> None:
    mistyped = ["storage.root=s3://pretrain-tset/run", f"storage.endpoint_url={s3_endpoint}"]
    try:
        with pytest.raises(ConfigError, match="bucket 'pretrain-tset' of s3://pretrain-tset/run does not exist"):
            CorpusPipeline(load_config(small_config_file, mistyped))
        assert not storage.exists("s3://pretrain-tset")  # nothing was created
        CorpusPipeline(load_config(small_config_file, [*mistyped, "storage.create_bucket=true"]))
        assert storage.exists("s3://pretrain-tset")
    finally:
        storage.set_storage_options("s3")


def test_manifest_seconds_count_the_fits_the_stage_needed(small_config_file: Path) -> None:
    """Quality's reference models and dedup's clusters are most of their stages' time; the manifest says so."""
    pipeline = CorpusPipeline(load_config(small_config_file))
    for name in ("ingest", "clean", "dedup"):
        manifest = pipeline.run_stage(name)
    marker = storage.read_json(storage.join(pipeline.root("dedup"), "artifacts", "_fit.json"))
    assert marker["seconds"] > 0 and manifest.fit_seconds == marker["seconds"]
    assert manifest.seconds >= manifest.fit_seconds > 0
    assert pipeline.run_stage("clean").fit_seconds == 0.0  # a map-only stage fits nothing


def test_by_config_layout_keys_each_stage_by_its_hash_so_configs_share_their_common_upstream(
    small_config_file: Path,
) -> None:
    keyed = ["storage.layout=by_config"]
    base = CorpusPipeline(load_config(small_config_file, keyed))
    stricter = CorpusPipeline(load_config(small_config_file, [*keyed, "quality.score_cutoffs=[0.5, 0.9]"]))
    flat = CorpusPipeline(load_config(small_config_file))
    root = base.cfg.storage.root
    for name in ("ingest", "clean", "dedup", "pii"):
        assert base.root(name) == stricter.root(name) == f"{root}/corpus/{name}-{base.config_hash(name)[:16]}"
        assert flat.root(name) == f"{root}/corpus/{name}"
    for name in ("quality", "mixture", "tokenize"):
        assert base.root(name) != stricter.root(name)
    assert base._fit_dir("quality") == stricter._fit_dir("quality")  # the cut-offs need no refit: one fit serves both
    assert base._fit_dir("dedup") != base.root("dedup")
    train = training_config(stricter.cfg)
    assert train.data.tokens_url == stricter.root("tokenize")
    assert train.data.tokenizer_url == f"{stricter.root('tokenizer')}/tokenizer.model"
    for name in ("ingest", "clean"):
        base.run_stage(name)
    assert stricter.finished("clean") is not None  # the other config finds the shared stage done
    assert flat.finished("clean") is None


def test_quality_thresholds_rescore_the_shards_without_refitting(small_config_file: Path) -> None:
    """Bucket thresholds are config that needs no refit: the reference models are reused, the shards rerun."""
    base = CorpusPipeline(load_config(small_config_file))
    stricter = CorpusPipeline(load_config(small_config_file, ["quality.score_cutoffs=[0.5, 0.9]"]))
    assert base.config_hash("quality") != stricter.config_hash("quality")
    assert base.fit_hash("quality") == stricter.fit_hash("quality")
    assert base.fit_hash("quality") != CorpusPipeline(load_config(small_config_file, ["quality.order=4"])).fit_hash(
        "quality"
    )
    assert base.fit_hash("mixture") == base.config_hash("mixture")  # a stage that names no fit settings
    # How many parts dedup's reduce uses changes its fit, not its outputs (nor anything downstream).
    parts = CorpusPipeline(load_config(small_config_file, ["dedup.partitions=3"]))
    assert parts.config_hash("tokenize") == base.config_hash("tokenize")
    assert parts.fit_hash("dedup") != base.fit_hash("dedup")
    fan_in = CorpusPipeline(load_config(small_config_file, ["dedup.shuffle_fan_in=2"]))  # nor how it shuffles them
    assert fan_in.config_hash("tokenize") == base.config_hash("tokenize")
    assert fan_in.fit_hash("dedup") != base.fit_hash("dedup")
    for name in ("ingest", "clean", "dedup", "pii"):
        base.run_stage(name)
    fitted = base.fit("quality")
    marker = storage.join(base.root("quality"), "artifacts", "_fit.json")
    first = storage.read_json(marker)
    assert stricter.fit("quality") == fitted and storage.read_json(marker) == first  # not refitted


def test_shards_in_worker_processes_give_the_same_bytes_and_progress(small_config_file: Path, tmp_path: Path) -> None:
    """`execution.processes` runs the CLI path's shards in spawned processes: same files, same manifest counts."""
    here = load_config(small_config_file, [f"storage.root={tmp_path / 'here'}"])
    spread = load_config(small_config_file, [f"storage.root={tmp_path / 'spread'}", "execution.processes=2"])
    for cfg in (here, spread):
        CorpusPipeline(cfg).run_stage("ingest")
    ticks: list[tuple[int, int]] = []
    in_processes = CorpusPipeline(spread).run_stage("clean", lambda done, total: ticks.append((done, total)))
    in_order = CorpusPipeline(here).run_stage("clean")

    assert (in_processes.docs_in, in_processes.docs_out) == (in_order.docs_in, in_order.docs_out)
    shards = len(in_order.shards)
    assert shards > 1 and ticks == [(n, shards) for n in range(1, shards + 1)]
    mine = sorted((tmp_path / "spread" / "corpus" / "clean").rglob("*.parquet"))
    theirs = sorted((tmp_path / "here" / "corpus" / "clean").rglob("*.parquet"))
    assert [p.relative_to(tmp_path / "spread") for p in mine] == [p.relative_to(tmp_path / "here") for p in theirs]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(mine, theirs, strict=True))


def test_auto_processes_use_every_core_unless_the_sources_are_small(small_config_file: Path, tmp_path: Path) -> None:
    """`execution.processes: auto` (the default) is one worker per usable core for sources of at least
    `small_corpus_bytes`, threads below it or beside a Dask cluster; the flow resolves it before its runner."""
    small = load_config(small_config_file, [f"storage.root={tmp_path}"])
    assert small.execution.processes == "auto" and sources_bytes(small.sources) < small.execution.small_corpus_bytes
    assert CorpusPipeline(small).worker_processes == 0
    big = load_config(small_config_file, [f"storage.root={tmp_path}", "execution.small_corpus_bytes=0"])
    cores = usable_cores()
    assert CorpusPipeline(big).worker_processes == (cores if cores >= 2 else 0)
    assert resolve_processes(big).execution.processes == CorpusPipeline(big).worker_processes
    assert CorpusPipeline(resolve_processes(big)).fingerprint() == CorpusPipeline(big).fingerprint()
    on_dask = load_config(small_config_file, ["execution.small_corpus_bytes=0", "execution.dask_local_workers=2"])
    assert resolve_processes(on_dask).execution.processes == 0
    explicit = load_config(small_config_file, ["execution.processes=3"])
    assert CorpusPipeline(explicit).worker_processes == 3


def test_processes_beside_a_dask_cluster_are_refused(small_config_file: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be combined with a Dask cluster"):
        load_config(small_config_file, ["execution.processes=2", "execution.dask_local_workers=2"])


def test_a_fit_with_a_per_shard_part_resumes_shard_by_shard_and_counts_every_part(small_config_file: Path) -> None:
    """Dedup's fit sketches each input shard apart (`fit_map`) before clustering: parts already made are not made
    again, the fit's seconds include them, and a finished fit has none left to make."""
    pipeline = CorpusPipeline(load_config(small_config_file))
    for stage in ("ingest", "clean"):
        pipeline.run_stage(stage)
    jobs = pipeline.fit_map_jobs("dedup")
    assert len(jobs) == len(pipeline.inputs("dedup")) > 1
    pipeline.run_fit_map("dedup", jobs[0])  # a worker made one part, then the run was stopped
    assert pipeline.fit_map_jobs("dedup") == jobs[1:]
    made = storage.read_json(jobs[0].marker_url)["seconds"]

    ran: list[str] = []
    run_fit_map = pipeline.run_fit_map
    pipeline.run_fit_map = lambda name, job: ran.append(job.input_url) or run_fit_map(name, job)  # type: ignore[method-assign]
    manifest = pipeline.run_stage("dedup")
    assert ran == [job.input_url for job in jobs[1:]]  # the part already made was not made again
    assert pipeline.fit_map_jobs("dedup") == [] and manifest.fit_seconds >= made > 0
    assert manifest.docs_out <= manifest.docs_in


def test_a_recorded_dedup_fit_keeps_its_artifacts_and_drops_its_scratch(small_config_file: Path) -> None:
    """Once the fit is recorded, the partials and the reduce's shuffles go (they are several times the corpus);
    the clusters the stage reads, the texts a later build matches against and the job markers stay."""
    pipeline = CorpusPipeline(load_config(small_config_file))
    for stage in ("ingest", "clean"):
        pipeline.run_stage(stage)
    partials = [job.partial_url for job in pipeline.fit_map_jobs("dedup")]
    first = pipeline.run_stage("dedup")
    assert partials and not any(storage.exists(url) for url in partials)
    fit_dir = Path(pipeline.root("dedup"), "artifacts", "fits", pipeline.fit_hash("dedup"))
    assert sorted(p.name for p in (fit_dir / "reduce").iterdir()) == ["_jobs", "clusters", "texts"]
    index = storage.read_json(str(fit_dir / "index.json"))
    assert index["texts"] and all(storage.exists(url) for url in index["texts"])
    again = pipeline.run_stage("dedup")  # done: nothing to redo, nothing missing
    assert pipeline.fit_map_jobs("dedup") == [] and pipeline.fit_reduce_jobs("dedup") == []
    assert (again.docs_in, again.docs_out) == (first.docs_in, first.docs_out)

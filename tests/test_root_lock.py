"""One config at a time per output root: refused, joined, taken over when its holder died, kept alive while held."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pretrain_cli.main import main
from pretrain_core import storage
from pretrain_core.root_lock import LOCK_FILE, RootInUse, lock_url, root_lock


def test_a_run_of_another_config_is_refused_naming_the_holder(tmp_path: Path) -> None:
    refused = (
        r"in use by another run with a different config \(config aaaa, flow run brave-otter on .+\); this run's "
        r"config is bbbb: wait for it to finish, or use another storage.root"
    )
    with (
        root_lock(str(tmp_path), "aaaa", what="flow run brave-otter"),
        pytest.raises(RootInUse, match=refused),
        root_lock(str(tmp_path), "bbbb", what="flow run calm-heron"),
    ):
        pass
    assert not (tmp_path / LOCK_FILE).exists()  # released: the next run of any config may start
    with root_lock(str(tmp_path), "bbbb", what="flow run calm-heron"):
        pass


def test_runs_of_the_same_config_join_and_the_last_one_out_releases(tmp_path: Path) -> None:
    with root_lock(str(tmp_path), "aaaa", what="first"):
        with root_lock(str(tmp_path), "aaaa", what="second"):
            assert len(json.loads((tmp_path / LOCK_FILE).read_text())["holders"]) == 2
        assert len(json.loads((tmp_path / LOCK_FILE).read_text())["holders"]) == 1
        with pytest.raises(RootInUse), root_lock(str(tmp_path), "bbbb", what="other"):
            pass
    assert not (tmp_path / LOCK_FILE).exists()


def test_the_claim_of_a_run_killed_outright_lapses(tmp_path: Path) -> None:
    dead = {"host": "gone", "pid": 1, "what": "killed", "renewed": time.time() - 121}
    storage.write_json(lock_url(str(tmp_path)), {"fingerprint": "aaaa", "ttl_s": 120, "holders": {"t": dead}})
    with root_lock(str(tmp_path), "bbbb", what="next"):
        assert json.loads((tmp_path / LOCK_FILE).read_text())["fingerprint"] == "bbbb"


def test_a_held_lock_is_renewed_past_its_ttl(tmp_path: Path) -> None:
    with root_lock(str(tmp_path), "aaaa", what="long run", ttl_s=0.4):
        time.sleep(1.0)  # 2.5 TTLs: only the heartbeat keeps the claim fresh
        with pytest.raises(RootInUse), root_lock(str(tmp_path), "bbbb", what="other", ttl_s=0.4):
            pass


def test_a_standalone_stage_on_a_root_held_by_another_config_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in.jsonl").write_text(json.dumps({"text": "a document long enough to keep"}) + "\n")
    out = tmp_path / "out"
    with root_lock(str(out), "aaaa", what="pretrain stage clean"):
        code = main(["stage", "ingest", "--input", str(tmp_path / "in.jsonl"), "--output", str(out)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"pretrain: {out} is in use by another run with a different config (config aaaa")
    assert main(["stage", "ingest", "--input", str(tmp_path / "in.jsonl"), "--output", str(out)]) == 0

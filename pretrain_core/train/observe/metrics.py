"""Training metrics: progress lines in the log and TensorBoard scalars under `<output_url>/tensorboard`.

TensorBoard writes event files to a local directory; when the output lives elsewhere (s3://, memory://) the
writer logs into a temporary directory and `sync` copies the files up (at each checkpoint and at the end).
"""

from __future__ import annotations

import logging
import os
import tempfile

from pretrain_core import storage
from pretrain_core.train.observe.monitor import format_progress

log = logging.getLogger(__name__)


class MetricsLogger:
    """Rank 0's metrics sink; other ranks get `enabled=False` and every call is a no-op."""

    def __init__(self, output_url: str, enabled: bool, resumed_at: int | None = None) -> None:
        """``resumed_at``: the step a resumed run continues from; what an earlier attempt logged after it is
        purged (TensorBoard's `purge_step`), so no step is shown twice."""
        self.enabled = enabled
        self.remote_url = storage.join(output_url, "tensorboard")
        local = storage.local_path(self.remote_url)
        self._tmp = None if local or not enabled else tempfile.TemporaryDirectory(prefix="tensorboard-")
        self.local_dir = local or (self._tmp.name if self._tmp else "")
        self._writer = None
        if enabled:
            from torch.utils.tensorboard import SummaryWriter  # only rank 0 pays for importing TensorBoard

            purge_step = None if resumed_at is None else resumed_at + 1
            self._writer = SummaryWriter(self.local_dir, purge_step=purge_step)

    def scalars(self, step: int, values: dict[str, float]) -> None:
        if self._writer is None:
            return
        for name, value in values.items():
            self._writer.add_scalar(name, value, step)

    def progress(self, step: int, max_steps: int, values: dict[str, float]) -> None:
        if self.enabled:
            log.info("%s", format_progress(step, max_steps, values))

    def sync(self) -> None:
        """Flush, and upload the event files when the output is remote."""
        if self._writer is None:
            return
        self._writer.flush()
        if self._tmp is None:
            return
        for root, _, files in os.walk(self.local_dir):
            for name in files:
                path = os.path.join(root, name)
                relative = os.path.relpath(path, self.local_dir)
                with open(path, "rb") as handle:
                    storage.write_bytes(storage.join(self.remote_url, relative), handle.read())

    def close(self) -> None:
        self.sync()
        if self._writer is not None:
            self._writer.close()
        if self._tmp is not None:
            self._tmp.cleanup()

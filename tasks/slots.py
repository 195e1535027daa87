"""Accelerator slots: a Prefect global concurrency limit held under a short lease, so no slot can leak.

The slot is held as a lease the flow process renews in the background; a process killed outright (SIGKILL, the
OOM killer, a lost node) stops renewing, and the server's repossessor frees the slot once the lease runs out
(`SLOT_LEASE_S`, plus its 15 s scan). The stack keeps leases on disk (`PREFECT_SERVER_CONCURRENCY_LEASE_STORAGE`
set to the filesystem storage in infra/stack/up.sh), so a server restart does not forget who held a slot either.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from prefect import get_run_logger
from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectNotFound

SLOT_LEASE_S = 60.0  # the shortest lease the server grants: a killed run's slot is back within about 75 s


def _occupancy(limit: str) -> tuple[int, int] | None:
    """(slots in use, slots in all) of the limit, None when it does not exist."""
    with get_client(sync_client=True) as client:
        try:
            found = client.read_global_concurrency_limit_by_name(limit)
        except ObjectNotFound:
            return None
    return found.active_slots, found.limit


@contextmanager
def hold_slot(limit: str | None, strict: bool = False) -> Iterator[None]:
    """Hold one slot of ``limit`` for the block (nothing when None), saying in the run's log when it must wait."""
    if limit is None:
        yield
        return
    logger = get_run_logger()
    occupancy = _occupancy(limit)
    if occupancy is not None and occupancy[0] >= occupancy[1]:
        logger.info(
            "waiting for a slot of %r: %d of %d in use by other runs (a slot of a run killed outright is freed "
            "within %.0f s, when its lease runs out)",
            limit, occupancy[0], occupancy[1], SLOT_LEASE_S + 15,
        )  # fmt: skip
    with concurrency(limit, occupy=1, lease_duration=SLOT_LEASE_S, strict=strict):
        logger.info("holding a slot of %r", limit)
        yield

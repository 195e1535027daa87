"""One config at a time per output root: a lock file that names the config writing there, kept alive by a heartbeat.

Two runs with different configs on one root would overwrite each other's stage outputs and manifests, and each
would report what the other wrote. A run therefore holds `<root>/.pretrain-lock.json`: the config's fingerprint
and, per holder, when it last renewed. A second run with the same fingerprint joins (stage outputs are
idempotent: shards and fits commit atomically under their config hash); one with another fingerprint is refused
while any holder is fresh. A holder renews every `ttl_s / 4`; one killed outright stops renewing and its claim
lapses after `ttl_s`, so a dead run never blocks the root for long.

On object stores the read-then-write is not atomic: two runs starting within the same second can both think they
hold the root. The lock catches the common case (a second rebuild launched while one runs), not that race.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pretrain_core import storage
from pretrain_core.config import ConfigError

log = logging.getLogger(__name__)

LOCK_FILE = ".pretrain-lock.json"
DEFAULT_TTL_S = 120.0


class RootInUse(ConfigError):
    """Another config is writing under this root."""


def lock_url(root: str) -> str:
    return storage.join(root, LOCK_FILE)


def _read(url: str) -> dict[str, Any] | None:
    try:
        found = json.loads(storage.read_bytes(url))
    except FileNotFoundError:
        return None
    except ValueError:  # a half-written or foreign file: treat as no lock, the next write replaces it
        return None
    return found if isinstance(found, dict) else None


def _fresh_holders(lock: dict[str, Any] | None, now: float, ttl_s: float) -> dict[str, dict[str, Any]]:
    holders = (lock or {}).get("holders", {})
    return {token: h for token, h in holders.items() if now - float(h.get("renewed", 0)) < ttl_s}


class _Claim:
    def __init__(self, root: str, fingerprint: str, what: str, ttl_s: float, clock: Callable[[], float]) -> None:
        self.url = lock_url(root)
        self.root, self.fingerprint, self.what, self.ttl_s, self.clock = root, fingerprint, what, ttl_s, clock
        self.token = uuid.uuid4().hex
        self.me = {"host": socket.gethostname(), "pid": os.getpid(), "what": what}

    def take(self) -> None:
        """Claim the root or raise RootInUse; joins holders of the same fingerprint."""
        now = self.clock()
        lock = _read(self.url)
        holders = _fresh_holders(lock, now, self.ttl_s)
        if holders and lock is not None and lock.get("fingerprint") != self.fingerprint:
            other = next(iter(holders.values()))
            raise RootInUse(
                f"{self.root} is in use by another run with a different config (config {lock.get('fingerprint')}, "
                f"{other.get('what')} on {other.get('host')} pid {other.get('pid')}, alive {now - other['renewed']:.0f}"
                f" s ago); this run's config is {self.fingerprint}: wait for it to finish, or use another "
                f"storage.root (a run killed outright releases it after {self.ttl_s:.0f} s; {self.url})"
            )
        if holders:
            log.info("%s: joining %d run(s) of the same config", self.root, len(holders))
        self._write(holders, now)

    def renew(self) -> None:
        now = self.clock()
        lock = _read(self.url)
        holders = _fresh_holders(lock, now, self.ttl_s)
        if lock is not None and holders and lock.get("fingerprint") != self.fingerprint:
            log.error("%s: lock taken over by config %s while this run held it", self.root, lock.get("fingerprint"))
            return
        self._write(holders, now)

    def release(self) -> None:
        now = self.clock()
        lock = _read(self.url)
        if lock is None or lock.get("fingerprint") != self.fingerprint:
            return
        holders = _fresh_holders(lock, now, self.ttl_s)
        holders.pop(self.token, None)
        if holders:
            storage.write_json(self.url, {**lock, "holders": holders})
        else:
            storage.remove(self.url)

    def _write(self, holders: dict[str, dict[str, Any]], now: float) -> None:
        holders = {**holders, self.token: {**self.me, "renewed": now}}
        storage.write_json(self.url, {"fingerprint": self.fingerprint, "ttl_s": self.ttl_s, "holders": holders})


@contextmanager
def root_lock(
    root: str, fingerprint: str, what: str, ttl_s: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.time
) -> Iterator[None]:
    """Hold ``root`` for the config ``fingerprint`` while the block runs (``what``: who holds it, for the message
    a refused run prints). Raises RootInUse when another config's run holds it."""
    claim = _Claim(root, fingerprint, what, ttl_s, clock)
    claim.take()
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(ttl_s / 4):
            try:
                claim.renew()
            except Exception:  # a storage hiccup must not kill the run; the next beat tries again
                log.warning("%s: could not renew the lock", root, exc_info=True)

    beating = threading.Thread(target=heartbeat, name="root-lock", daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join()
        claim.release()

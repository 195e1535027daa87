"""The installed files a data builder reads, shipped as one archive so that the builder reruns from the repository
alone, whatever the machine running it has installed.

Recorded once (`--record-sources`) on a machine with the source packages installed: the builder runs on the host's
files while an audit hook notes every file it opens under the recorded roots, and every listing it asks for
(`listing`) is stored by name, and so is what every command it runs prints (`output`: a renderer, a package query).
The archive keeps exactly those files (with their modification times) and the listings and outputs. Every other run
extracts the archive into a temporary directory and serves the same reads, listings and outputs from it, so the
builder makes the same bytes it made when it was recorded, with no host program installed. A builder names host
files through `path()` and writes them into its outputs through `name()`, so the host path, not the temporary
directory, is what ends up in ids, ranks and notes.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

LISTINGS = "listings.json"  # archive member: {key: [host path, ...]} for every listing the builder asked for
OUTPUTS = "outputs"  # archive folder: one member per `output` key, named by the key's SHA-256


class SourceSnapshot:
    """Installed files under `roots` (paths relative to the file system's root), read from this machine while
    recording and from `archive` otherwise."""

    def __init__(self, archive: Path, roots: tuple[str, ...]) -> None:
        self.archive = archive
        self.roots = roots
        self.recording = False
        self.root = Path("/")
        self.opened: set[str] = set()
        self.listings: dict[str, list[str]] = {}
        self.outputs: dict[str, bytes] = {}
        self._extracted = Path("/")
        self._paused = False
        self._started = False

    def start(self, record: bool) -> None:
        """Record from the host, or extract the archive (once per process) and serve from it."""
        if self._started:
            return
        self._started = True
        self.recording = record
        if record:
            sys.addaudithook(self._note_open)
            return
        if not self.archive.is_file():
            raise SystemExit(f"{self.archive}: missing; record it with --record-sources on a machine with the sources")
        extracted = Path(tempfile.mkdtemp(prefix="pretrain-sources-"))
        atexit.register(shutil.rmtree, extracted, ignore_errors=True)
        with tarfile.open(self.archive, "r:xz") as archive:
            archive.extractall(extracted, filter="data")
        self._extracted = extracted
        self.root = extracted / "files"
        self.listings = json.loads((extracted / LISTINGS).read_text(encoding="utf-8"))

    def path(self, member: str) -> Path:
        """Where the file `member` (a path relative to the recording machine's root) is read from in this run."""
        return self.root / member

    def name(self, path: Path) -> str:
        """The host path of a file served by `path()`: what ids, ranks and notes use."""
        return "/" + path.relative_to(self.root).as_posix()

    def listing(self, key: str, compute: Callable[[], list[Path]]) -> list[Path]:
        """`compute()` on the host while recording (its own reads are not recorded: only what the builder then
        opens is); the stored result otherwise."""
        if self.recording:
            self._paused = True
            try:
                paths = compute()
            finally:
                self._paused = False
            self.listings[key] = [self.name(p) for p in paths]
            return paths
        if key not in self.listings:
            raise SystemExit(f"{self.archive}: no listing {key!r}; record the sources again with --record-sources")
        return [self.path(name.lstrip("/")) for name in self.listings[key]]  # stored as `name()` gives them

    def output(self, key: str, compute: Callable[[], bytes]) -> bytes:
        """`compute()` (a command run on the host) while recording; the bytes it gave for the same `key` otherwise.
        The key names everything the output depends on (the command line, a digest of its input)."""
        if self.recording:
            self.outputs[key] = compute()
            return self.outputs[key]
        member = self._extracted / OUTPUTS / _digest(key)
        if not member.is_file():
            raise SystemExit(f"{self.archive}: no output for {key!r}; record the sources again with --record-sources")
        return member.read_bytes()

    def save(self) -> None:
        """Write the archive of what was recorded: the opened files, the listings and the outputs, in a stable
        order."""
        if not self.recording:
            return
        self._paused = True
        self.archive.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(self.archive, "w:xz", format=tarfile.PAX_FORMAT) as archive:
            _add_bytes(archive, LISTINGS, json.dumps(self.listings, indent=0, sort_keys=True).encode())
            for key, data in sorted(self.outputs.items()):
                _add_bytes(archive, f"{OUTPUTS}/{_digest(key)}", data)
            for name in sorted(self.opened):
                _add_bytes(archive, "files" + name, Path(name).read_bytes(), int(Path(name).stat().st_mtime))

    def write_packages(self) -> None:
        """`packages.txt` beside the archive: `package version` of every Debian package a recorded file comes from
        (the provenance its README cites)."""
        if not self.recording:
            return
        found = subprocess.run(["dpkg", "-S", *sorted(self.opened)], capture_output=True, text=True, check=False)
        names = {owner.strip() for line in found.stdout.splitlines() for owner in line.split(":", 1)[0].split(",")}
        names = {name.split(":")[0] for name in names}  # libfoo:amd64 -> libfoo
        query = ["dpkg-query", "-W", "-f", "${Package} ${Version}\n", *sorted(names)]
        owners = sorted(subprocess.run(query, capture_output=True, text=True, check=True).stdout.splitlines())
        (self.archive.parent / "packages.txt").write_text("".join(f"{p}\n" for p in owners), encoding="utf-8")

    def _note_open(self, event: str, args: tuple[object, ...]) -> None:
        if event != "open" or self._paused or not isinstance(args[0], str | bytes | os.PathLike):
            return
        name = os.path.abspath(os.fsdecode(args[0]))
        if name.lstrip("/").startswith(self.roots) and os.path.isfile(name):
            self.opened.add(name)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes, mtime: int = 0) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = mtime
    archive.addfile(info, io.BytesIO(data))

"""Cell claims: two `hlm run` of one suite share the work instead of each computing it all.

Before computing a cell a run creates `_claims/<cell_id>` (exclusively) holding its owner:
host, process id, the process's start time and when it claimed. It removes the claim once the
cell's file is written. Claims are read, taken over and written under one lock
(`_claims/.lock`), so no run sees a claim half written. A claim is taken over when its owner is
gone: on this host, when no process has that id, or one does but started at another time (the
id was reused by an unrelated process); from another host (a shared folder), when its lease
(`HLM_CLAIM_LEASE` seconds, default 24 hours) has run out. A live owner means another run is
computing that cell, so this run leaves it to that one.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from zoo.errors import UserError
from zoo.reader import read_text
from zoo.train.atomic import pid_alive

CLAIMS = "_claims"
LOCK = ".lock"  # in CLAIMS: held while a claim is read, taken over or written
LEASE_ENV = "HLM_CLAIM_LEASE"
DEFAULT_LEASE = 24 * 3600.0


def process_start(pid: int) -> str | None:
    """The start time of process `pid` in clock ticks since boot (/proc), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22 of `man 5 proc`, after the name


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    started: str | None
    claimed_at: float

    @staticmethod
    def me() -> Owner:
        pid = os.getpid()
        return Owner(socket.gethostname(), pid, process_start(pid), time.time())

    def is_me(self) -> bool:
        return self.host == socket.gethostname() and self.pid == os.getpid()

    def alive(self) -> bool:
        """Whether the owning process still runs (see the module docstring)."""
        if self.host != socket.gethostname():
            lease = float(os.environ[LEASE_ENV]) if LEASE_ENV in os.environ else DEFAULT_LEASE
            return time.time() - self.claimed_at < lease
        if not pid_alive(self.pid):
            return False
        return self.started is None or process_start(self.pid) == self.started


def _owner(path: Path) -> Owner | None:
    """The claim's owner; None for a missing or unreadable claim (taken over). A claim
    written by an older version holds the bare pid."""
    try:
        text = read_text(path, "a claim", max_bytes=4096).strip()
    except UserError:  # missing, not a regular file, too large or not text: taken over
        return None
    if text.isdigit():
        return Owner(socket.gethostname(), int(text), None, path.stat().st_mtime)
    try:
        d = json.loads(text)
        return Owner(str(d["host"]), int(d["pid"]), d["started"], float(d["claimed_at"]))
    except (ValueError, KeyError, TypeError):
        return None


def try_claim(directory: Path, cell_id: str) -> bool:
    """Claim a cell for this process; False when a live process holds it. Claims are read,
    taken over and written under one lock (`_claims/.lock`, an OS lock released however the
    process ends): without it a run could read a claim another had created but not yet
    written, take it for a dead one's and compute the cell a second time."""
    folder = directory / CLAIMS
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(folder / LOCK):
        return _claim(folder / cell_id)


def _claim(path: Path) -> bool:
    for _ in range(2):  # a dead owner's claim is removed once, then claimed anew
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            owner = _owner(path)
            if owner is not None and owner.is_me():
                return True
            if owner is not None and owner.alive():
                return False
            path.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as f:
            me = Owner.me()
            f.write(json.dumps(me.__dict__))
        return True
    return False


@contextmanager
def claimed(directory: Path, cell_id: str) -> Iterator[bool]:
    """Whether this process holds the cell's claim; released on exit (even on error)."""
    mine = try_claim(directory, cell_id)
    try:
        yield mine
    finally:
        if mine:
            (directory / CLAIMS / cell_id).unlink(missing_ok=True)

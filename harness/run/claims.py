"""Cell claims: two `hlm run` of one suite share the work instead of each computing it all.

Before computing a cell a run creates `_claims/<cell_id>` (exclusively) holding its process
id, and removes it once the cell's file is written. A claim whose process is gone (a killed
run) is taken over; a live one means another run is computing that cell, so this run leaves
it to that one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from zoo.train.checkpoint import pid_alive

CLAIMS = "_claims"


def _owner(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


def try_claim(directory: Path, cell_id: str) -> bool:
    """Claim a cell for this process; False when a live process holds it."""
    folder = directory / CLAIMS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / cell_id
    for _ in range(2):  # a dead owner's claim is removed once, then claimed anew
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            owner = _owner(path)
            if owner == os.getpid():
                return True
            if pid_alive(owner):
                return False
            path.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
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

"""A task's raw outputs beside the leaderboard: `leaderboards/<suite>/_artifacts/<result_id>/`.

A task may write files into `TaskContext.artifacts` (lm-eval's own results JSON and per-sample
logs, say). The folder is a temporary one while the point is evaluated (its name carries the
pid, so a later run removes it when the writer died) and is renamed into place once the
evaluation succeeded, before the point's rows are written (which mark it done); a point
evaluated again replaces its folder whole.

    with artifact_folder(leaderboard_dir, result_id) as folder:
        ...   # evaluate, writing raw outputs into `folder`
    write_cell(...)
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from zoo.train.atomic import pid_alive, temporary_pid

ARTIFACTS = "_artifacts"


@contextmanager
def artifact_folder(directory: Path, result_id: str) -> Iterator[Path]:
    """A fresh folder for the raw outputs of `result_id`, kept (replacing an older one) when
    the block ends without an error, removed when it fails; nothing is kept if it is empty."""
    root = directory / ARTIFACTS
    tmp = root / f".tmp-{result_id}-pid{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    final = root / result_id
    if not any(tmp.iterdir()):
        tmp.rmdir()
        return
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


def remove_dead_artifacts(directory: Path) -> list[Path]:
    """Temporary artifact folders whose writer is gone, removed."""
    removed = []
    for p in (directory / ARTIFACTS).glob(".tmp-*"):
        if p.is_dir() and not pid_alive(temporary_pid(p.name)):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed

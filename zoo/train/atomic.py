"""Atomic folder writes and the commit markers that make them checkable, without torch.

A folder is written under a temporary name that carries the writer's process id
(`.tmp-NAME-pidPID`) and renamed into place, so a killed writer never leaves a half-written
folder; what it leaves is a leftover that `remove_leftovers` deletes once that process is gone.
The commit marker (`hlm_commit.json`, written last) holds every file's size and sha256, and
`checkpoint_problem` says whether a folder still matches it. Leaderboard and cell files use the
same temporary names (`temporary_pid`, `pid_alive`), which is why this module imports nothing
heavy: reading a leaderboard needs it, and no model.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zoo.checksums import sha256_of
from zoo.errors import UserError
from zoo.reader import read_json
from zoo.writer import disk_full, full_disk_error

COMMIT = "hlm_commit.json"  # written last: every other file's size and checksum


def temporary_dir(path: Path) -> Path:
    """Where `atomic_dir_write` writes `path` before renaming it (this process's name)."""
    return path.parent / f".tmp-{path.name}-pid{os.getpid()}"


def atomic_dir_write(path: Path, write: Callable[[Path], None], tmp: Path | None = None) -> Path:
    """Call write(tmp), then move tmp to `path` (replacing any previous folder). `tmp`
    (default `temporary_dir(path)`) may hold files other processes wrote into it already."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if tmp is None:
        tmp = temporary_dir(path)
        if tmp.exists():
            shutil.rmtree(tmp)
    tmp.mkdir(exist_ok=True)
    try:
        write(tmp)
        readable_by_all(tmp)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if disk_full(exc):  # torch and safetensors wrap the OSError: said in one line here
            raise full_disk_error(path) from None
        raise
    old = path.parent / f".old-{path.name}-pid{os.getpid()}"
    if path.exists():
        os.rename(path, old)
    os.rename(tmp, path)
    if old.exists():
        shutil.rmtree(old)
    return path


def readable_by_all(folder: Path) -> None:
    """Every file under `folder` readable as its other files are (0644 under the usual umask):
    a writer may create its file 0600 (safetensors' weights were), so another user of a
    shared run folder could read the config but not the weights."""
    umask = os.umask(0)
    os.umask(umask)
    for f in folder.rglob("*"):
        if f.is_file() and not f.is_symlink():
            os.chmod(f, 0o666 & ~umask)


def temporary_pid(name: str) -> int | None:
    """The writer's process id in a temporary name (`.tmp-NAME-pidPID[-TAG][.ext]`), if any."""
    found = re.search(r"-pid(\d+)", name)
    return int(found.group(1)) if found else None


def pid_alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(folder: Path) -> list[Path]:
    """Delete the `.tmp-*` / `.old-*` folders of `atomic_dir_write` that a killed process left
    in `folder` (those of a process still alive are kept)."""
    removed = []
    for p in folder.glob(".*-*") if folder.is_dir() else []:
        if (
            p.name.startswith((".tmp-", ".old-"))
            and p.is_dir()
            and not pid_alive(temporary_pid(p.name))
        ):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


def write_commit(folder: Path) -> None:
    """The commit marker, written last: every other file's (sub-folders' too) size and sha256."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != COMMIT)
    marker = {
        p.relative_to(folder).as_posix(): {"bytes": p.stat().st_size, "sha256": sha256_of(p)}
        for p in files
    }
    (folder / COMMIT).write_text(json.dumps({"files": marker}, indent=1))


def marker_files(marker: Path) -> dict[str, dict[str, Any]] | None:
    """The commit marker's {file: {bytes, sha256}}, or None where it is not that (damaged,
    odd, or naming a path outside its folder)."""
    try:
        files = read_json(marker, "a commit marker")["files"]
    except (UserError, KeyError, TypeError):
        return None
    if not isinstance(files, dict):
        return None
    for name, entry in files.items():
        inside = not Path(name).is_absolute() and ".." not in Path(name).parts
        fields = (
            isinstance(entry, dict)
            and "bytes" in entry
            and isinstance(entry["bytes"], int)
            and "sha256" in entry
            and isinstance(entry["sha256"], str)
        )
        if not (inside and fields):
            return None
    return files


def checkpoint_problem(folder: Path) -> str | None:
    """Why a checkpoint folder cannot be trusted (no commit marker, a file missing, resized or
    changed since it was written), or None when every file matches its checksum."""
    marker = folder / COMMIT
    if not marker.is_file():
        return f"no {COMMIT} (written before checksums, or its save never finished)"
    files = marker_files(marker)
    if files is None:
        return f"{COMMIT} does not read as a list of files with sizes and checksums"
    for name, expected in files.items():
        p = folder / name
        if not p.is_file():
            return f"{name} is missing"
        if p.stat().st_size != expected["bytes"]:
            return f"{name} has {p.stat().st_size} bytes, not {expected['bytes']} (truncated?)"
        if sha256_of(p) != expected["sha256"]:
            return f"{name} does not match its checksum (damaged)"
    return None

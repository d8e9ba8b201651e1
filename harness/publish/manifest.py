"""What a publish copies: a manifest of the files it owns, read by the one reader.

    entries = checkpoint_manifest(ckpt)          # its commit marker's files, less training state
    entries = leaderboard_manifest(board, rows)  # row files, _suite.yaml, the plugins it names
    stage_folder(out, lambda d: copy_entries(entries, d))   # all or nothing

A folder handed to `hlm publish` may hold anything: a link to a private key, a device, a
FIFO, a file someone dropped in. A publish copies only what its manifest names:

- a checkpoint's manifest is its commit marker (`hlm_commit.json`, written last by the save:
  every file the save wrote, with its size and sha256), less the training state (scheduler,
  sharded optimizer state); each file must still match its size and checksum, and the
  published folder gets a commit marker of its own, of the files it holds;
- a leaderboard's is its current row files, its `_suite.yaml`, and the plugin files that
  `_suite.yaml` names under `_plugins/`.

Each entry is a regular file inside the folder: no link on its way (a link is refused, not
followed), no device or FIFO, at most `MAX_FILE_BYTES`; it is copied through the one reader
(`zoo.reader.open_regular`) into the one writer. Anything else in the folder is named in a
warning and left out. `stage_folder` writes a folder beside its target and renames it at the
end, so a killed publish leaves no half folder; the next one removes the leftover.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from zoo.errors import UserError
from zoo.reader import open_regular
from zoo.train.atomic import COMMIT, pid_alive, temporary_pid
from zoo.train.layout import LEGACY_STATE, STATE
from zoo.writer import inside, replacing

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 64 * 2**30  # one weights file of a 10B-parameter model in fp32 fits
PIECE = 1 << 20


@dataclass(frozen=True)
class Entry:
    """One file to publish: `source` on disk, `target` its path in the repo (posix)."""

    source: Path
    target: str


def owned_file(root: Path, relative: str, what: str) -> Path:
    """`root / relative`, refused unless each part on its way is a plain folder and the last
    a regular file: no link (not followed), no device, no FIFO, nothing leaving `root`."""
    parts = Path(relative).parts
    if not parts or Path(relative).is_absolute() or ".." in parts:
        raise UserError(f"{root}: {what} {relative!r} is not a path inside the folder")
    path = Path(root)
    for i, part in enumerate(parts):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            raise UserError(f"{path}: {what} is missing") from None
        last = i == len(parts) - 1
        if stat.S_ISLNK(mode):
            raise UserError(f"{path}: {what} is a link; a publish copies no link")
        if not (stat.S_ISREG(mode) if last else stat.S_ISDIR(mode)):
            raise UserError(f"{path}: {what} is not a regular file; a publish copies none")
    return path


def checkpoint_manifest(ckpt: Path) -> list[Entry]:
    """The files a checkpoint's save wrote (its commit marker), each still as written (size
    and sha256), less its training state (a published folder gets its own marker:
    `copy_checkpoint`)."""
    from zoo.train.atomic import checkpoint_problem, marker_files
    from zoo.train.sharded import SHARDED

    marker = owned_file(ckpt, COMMIT, "the commit marker")
    files = marker_files(marker)
    if files is None:
        raise UserError(f"{marker}: not a list of files with sizes and checksums")
    entries = [
        Entry(owned_file(ckpt, name, "a checkpoint file"), name)
        for name in sorted(files)
        if name not in (STATE, LEGACY_STATE) and Path(name).parts[0] != SHARDED
    ]
    problem = checkpoint_problem(ckpt)
    if problem is not None:
        raise UserError(f"{ckpt}: {problem}; a publish sends only files as their save wrote them")
    return entries


def copy_checkpoint(entries: list[Entry], dest: Path) -> None:
    """A checkpoint's entries into `dest`, then a commit marker of exactly those files (the
    folder verifies as the save's did, without the training state it leaves out)."""
    from zoo.train.atomic import write_commit

    copy_entries(entries, dest)
    write_commit(dest)


def leaderboard_manifest(board: Path, row_files: Iterable[Path], plugins: list[str]) -> list[Entry]:
    """A leaderboard's row files (final checkpoints' under data/final, others' under
    data/steps), its `_suite.yaml` (as suite.yaml) and the plugin files it names."""
    from harness.suite.record import PLUGINS, SUITE_FILE

    entries = []
    for f in row_files:
        part = "steps" if ".step-" in f.name else "final"
        entries.append(Entry(owned_file(board, f.name, "a result file"), f"data/{part}/{f.name}"))
    if os.path.lexists(board / SUITE_FILE):
        entries.append(Entry(owned_file(board, SUITE_FILE, "the suite record"), "suite.yaml"))
    for name in plugins:
        rel = Path(name)
        if rel.parent.as_posix() != PLUGINS:
            raise UserError(f"{board / SUITE_FILE}: plugins: {name!r} is not a file of {PLUGINS}/")
        entries.append(Entry(owned_file(board, rel.as_posix(), "a plugin file"), rel.as_posix()))
    return entries


def left_out(folder: Path, entries: list[Entry], ignore: Callable[[str], bool]) -> list[str]:
    """Names in `folder` (one level) that no entry copies and `ignore` does not expect."""
    owned = {e.source.relative_to(folder).parts[0] for e in entries}
    return sorted(n for n in os.listdir(folder) if n not in owned and not ignore(n))


def warn_left_out(folder: Path, names: list[str]) -> None:
    if names:
        log.warning(
            "%s: left out of the publish (not in its manifest): %s", folder, ", ".join(names)
        )


def copy_entries(entries: list[Entry], dest: Path) -> None:
    """Each entry's bytes through the one reader into `dest / target` through the writer."""
    for entry in entries:
        target = inside(dest, *entry.target.split("/"), what="a published file")
        target.parent.mkdir(parents=True, exist_ok=True)
        with (
            open_regular(entry.source, "a file to publish", MAX_FILE_BYTES, links=False) as src,
            replacing(target) as tmp,
            open(tmp, "xb") as out,
        ):
            shutil.copyfileobj(src, out, PIECE)


def stage_folder(out: Path, build: Callable[[Path], None]) -> Path:
    """`build` into a fresh folder beside `out`, renamed to `out` when it ends: a publish
    killed halfway leaves no `out` (its leftover is removed by the next publish)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".tmp-{out.name}-pid"
    for p in out.parent.glob(f"{prefix}*"):  # a killed publish's half folder
        if not pid_alive(temporary_pid(p.name)) and p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
    tmp = out.parent / f"{prefix}{os.getpid()}"
    tmp.mkdir()
    try:
        build(tmp)
        if os.path.lexists(out):
            if out.is_symlink() or not out.is_dir() or any(out.iterdir()):
                raise UserError(f"--output-dir {out}: filled while publishing; nothing moved")
            out.rmdir()
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out

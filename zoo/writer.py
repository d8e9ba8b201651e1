"""The one writer: every file the project writes goes through here.

    target = inside(board, "_plots", f"curves-{metric}.png")  # a name from data stays in board
    write_text(target, text)                                 # atomic, never through a link
    with replacing(target) as tmp:                           # for writers that want a path
        figure.savefig(tmp)

Three rules hold for every write:

1. **Inside its root.** A name built from data (a metric, a task, a model, a suite) is one
   path component: no separator, no `..`, no NUL. `inside` refuses one that is not, and a
   folder on the way that is a link out of the root.
2. **Never through a link, never over what is not a regular file.** A link placed where a
   file will be written is refused, not followed; so are a device, a FIFO and a folder.
3. **All or nothing.** Bytes go to a temporary file beside the target (`.tmp-NAME-pidPID`),
   which is renamed over it: a kill leaves the old file or none. A full disk is one line
   naming the file, and the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from zoo.errors import UserError

# errors of a device that has no room left: said as such, in one line
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
FILE_MODE = 0o644  # what a user's other tools write; never the 0600 of a temporary file


class WriteRefused(UserError):
    """A write the rules refuse (a name leaving its root, a link, a device), or one the
    disk could not hold; nothing was written."""


def component(name: str, what: str) -> str:
    """`name` if it is one safe path component (a file name made from data), else refused,
    naming `what` it is (`metric`, `task`)."""
    bad = (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or len(name.encode("utf-8", "surrogateescape")) > 255
    )
    if bad:
        raise WriteRefused(
            f"{what} {name!r} cannot name a file: a name made from data is one path component "
            "(no '/', no '..', at most 255 bytes)"
        )
    return name


def inside(root: Path, *names: str, what: str = "name") -> Path:
    """`root / names...`, each name one component (`component`); a folder on the way that
    is a link is refused (it would lead the write out of `root`)."""
    target = Path(root)
    for i, name in enumerate(names):
        target = target / component(name, what)
        if i < len(names) - 1 and target.is_symlink():
            raise WriteRefused(f"{target}: is a link; the project never writes through one")
    return target


def check_target(path: Path) -> None:
    """Refuse a target that is a link, or that exists and is not a regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WriteRefused(f"{path}: cannot be written ({exc.strerror or exc})") from None
    if stat.S_ISLNK(st.st_mode):
        raise WriteRefused(f"{path}: is a link; the project never writes through one")
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"{path}: exists and is not a regular file; not replaced")


def disk_full(exc: BaseException) -> bool:
    """Whether `exc`, or an error it came from, says the device is full (a writer in C,
    torch's or safetensors', may wrap the OSError in another type or only in its message)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in FULL:
            return True
        if "No space left on device" in str(cur) or "Disk quota exceeded" in str(cur):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def full_disk_error(path: Path) -> WriteRefused:
    return WriteRefused(f"{path}: no space left on the device; nothing half-written was kept")


@contextlib.contextmanager
def replacing(path: Path, mode: int = FILE_MODE) -> Iterator[Path]:
    """A temporary path beside `path` to write; renamed over `path` when the block ends
    without error, removed otherwise (`check_target` first; a full disk is one line)."""
    path = Path(path)
    check_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{path.name[:200]}-pid{os.getpid()}"
    try:
        yield tmp
        os.chmod(tmp, mode)
        check_target(path)  # placed while we wrote: still never through it
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if disk_full(exc):
            raise full_disk_error(path) from None
        raise


def write_bytes(path: Path, data: bytes, mode: int = FILE_MODE) -> Path:
    """`data` as the whole of `path`, all or nothing."""
    with replacing(path, mode) as tmp, open(tmp, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return Path(path)


def write_text(path: Path, text: str, mode: int = FILE_MODE) -> Path:
    """`text` (UTF-8) as the whole of `path`, all or nothing."""
    return write_bytes(path, text.encode("utf-8"), mode)


def refuse_among_inputs(out: Path, inputs: dict[str, Path], flag: str) -> None:
    """An output folder (`flag` names it) may neither lie inside an input nor hold one: a
    publish would copy itself, an evaluation would write into the checkpoint it reads, a
    page into the rows it is made from. `inputs`: what each is (named in the error) -> path."""
    target = Path(out).expanduser().resolve()
    for what, source in inputs.items():
        src = Path(source).expanduser().resolve()
        if target.is_relative_to(src) or src.is_relative_to(target):
            raise WriteRefused(
                f"{flag} {out}: lies inside, or holds, {what} {source}, which this command "
                "reads; choose a folder outside it"
            )


def refuse_linked_folders(folder: Path, *names: str) -> None:
    """`folder` and each folder `names` leads to below it, refused where one is a link (a
    page written there would land wherever the link points)."""
    path = Path(folder)
    for part in ("", *names):
        path = path / part if part else path
        if path.is_symlink():
            raise WriteRefused(f"{path}: is a link; the project never writes through one")

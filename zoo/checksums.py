"""Files' sha256, streamed a megabyte at a time so that a file of any size hashes in little memory.

`sha256_of` reads the file every time (a checkpoint's commit marker, checked for damage);
`file_sha256` reads it once a process while its size and modification time stay the same
(a corpus's fingerprint, the files a cell id hashes: one suite's cells name the same file
many times). `short_digest` is the first 16 hex digits, as cell ids and pins write them;
`contents_digest` is the same of what a reader makes of a file (WordNet's synsets, which a
trimmed copy keeps), remembered alike, and `text_digest` that of a string.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path

from zoo.reader import open_regular

SHORT = 16  # hex digits of a digest as cell ids, plugin keys and pins write it


def sha256_of(path: Path) -> str:
    """The sha256 of `path`'s bytes, in hex, read now."""
    h = hashlib.sha256()
    with open_regular(path, "a file to check", max_bytes=None) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=1024)
def _remembered(path: str, size: int, mtime_ns: int) -> str:
    return sha256_of(Path(path))


def file_sha256(path: Path) -> str:
    """The sha256 of `path`'s bytes, in hex, read once a process while the file's size and
    modification time stay the same."""
    st = path.stat()
    return _remembered(str(path.resolve()), st.st_size, st.st_mtime_ns)


def short_digest(path: Path) -> str:
    """The first 16 hex digits of `path`'s sha256 (`file_sha256`)."""
    return file_sha256(path)[:SHORT]


def short_digests(files: Mapping[str, Path]) -> dict[str, str | None]:
    """Each named file's `short_digest`; None for one that is not there."""
    return {name: short_digest(p) if p.is_file() else None for name, p in files.items()}


def text_digest(text: str) -> str:
    """The first 16 hex digits of the sha256 of `text` (UTF-8)."""
    return hashlib.sha256(text.encode()).hexdigest()[:SHORT]


@lru_cache(maxsize=64)
def _remembered_read(path: str, size: int, mtime_ns: int, read: Callable[[Path], str]) -> str:
    return text_digest(read(Path(path)))


def contents_digest(path: Path, read: Callable[[Path], str]) -> str:
    """`text_digest` of what `read` makes of `path`, read once a process (per reader) while
    the file's size and modification time stay the same."""
    st = path.stat()
    return _remembered_read(str(path.resolve()), st.st_size, st.st_mtime_ns, read)

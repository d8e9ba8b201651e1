"""The one reader: every file someone may have sent is opened here, bounded and strict.

    data = read_bytes(board / "x.parquet", "a result file", MAX_TABLE_BYTES)
    with open_regular(corpus_file, "a corpus file", max_bytes=None) as f: ...   # streams
    state = read_json(folder / "training_state.json", "the training state")
    config = read_model(folder / "config.json", CheckpointShape)   # pydantic, errors named

A checkpoint folder, a tokenizer, a leaderboard, a claims file or a results file may come
from anyone. What they hold is read here before anything acts on it:

- only a regular file, checked on the open file itself (`fstat` after a non-blocking open, so
  a FIFO never blocks and one swapped in after a check is still caught; a device never ends);
  a link loop is named, not a traceback; with `links=False` a link is refused, not followed;
- at most `max_bytes` (a 4 GB sparse file is refused by its size, never loaded), and JSON
  nested at most `MAX_DEPTH` deep (the parser recurses: 100,000 nested brackets were a
  RecursionError);
- no NaN or Infinity (JSON has none; Python's reader accepts them);
- into a typed model where one is given, each failure naming the file and the field.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from zoo.errors import UserError, format_validation_error

MAX_BYTES = 256 * 2**20  # a tokenizer.json of a 250k vocabulary is about 20 MB
MAX_DEPTH = 64  # a Hugging Face config or tokenizer nests under 10 deep
MAX_TEXT_BYTES = 16 * 2**20  # a README, a claims file, a suite, a metrics log
MAX_TABLE_BYTES = 512 * 2**20  # one Parquet result or samples file
MAX_IMAGE_BYTES = 64 * 2**20  # one PNG a report embeds

M = TypeVar("M", bound=BaseModel)


def check_regular(path: Path, what: str = "file") -> os.stat_result:
    """The file's status, or a UserError: missing, a link loop, or not a regular file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{path}: {what} not found") from None
    except OSError as exc:
        why = "a link loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise UserError(f"{path}: cannot be read ({why})") from None
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"{path}: is not a regular file (a {_kind(st.st_mode)}); not read")
    return st


@contextlib.contextmanager
def open_regular(
    path: Path, what: str = "file", max_bytes: int | None = MAX_BYTES, links: bool = True
) -> Iterator[BinaryIO]:
    """`path` opened for reading in binary, once it is known to be a regular file of at most
    `max_bytes` (None: any size, for streams read piece by piece); `links=False` refuses a
    link in its last component instead of following it. Every failure is one UserError."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not links:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UserError(f"{path}: {what} not found") from None
    except OSError as exc:
        link = exc.errno == errno.ELOOP and not links and os.path.islink(path)
        why = "a link" if link else "a link loop" if exc.errno == errno.ELOOP else exc.strerror
        raise UserError(f"{path}: cannot be read ({why or exc}); not read") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UserError(f"{path}: is not a regular file (a {_kind(st.st_mode)}); not read")
        if max_bytes is not None and st.st_size > max_bytes:
            raise UserError(
                f"{path}: {st.st_size} bytes, more than {max_bytes} for {what}; not read"
            )
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


def read_bytes(
    path: Path, what: str = "file", max_bytes: int = MAX_BYTES, links: bool = True
) -> bytes:
    """The whole of a regular file of at most `max_bytes` (`open_regular`); a file that grew
    past the bound while read is refused too."""
    with open_regular(path, what, max_bytes, links) as f:
        try:
            data = f.read(max_bytes + 1)
        except OSError as exc:
            raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise UserError(f"{path}: more than {max_bytes} bytes for {what}; not read")
    return data


def read_text(
    path: Path,
    what: str = "file",
    max_bytes: int = MAX_TEXT_BYTES,
    encoding: str = "utf-8",
    links: bool = True,
) -> str:
    """`read_bytes` decoded (`encoding`); text that does not decode is named, not a
    traceback."""
    raw = read_bytes(path, what, max_bytes, links)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{path}: not {encoding.upper()} text ({exc.reason} at byte {exc.start})"
        ) from None


def _kind(mode: int) -> str:
    kinds = {stat.S_ISDIR: "folder", stat.S_ISFIFO: "FIFO", stat.S_ISCHR: "device"}
    return next((name for test, name in kinds.items() if test(mode)), "special file")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 reads as inf
        raise ValueError(f"{text} is beyond a float's range")
    return value


def parse_json(text: str, source: str) -> Any:
    """`text` as JSON (named `source` in errors): no NaN or Infinity, at most `MAX_DEPTH`
    deep."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise UserError(f"{source}: nested deeper than {MAX_DEPTH}; not read") from None
    except ValueError as exc:
        raise UserError(f"{source}: not valid JSON ({exc})") from None
    if _depth(data) > MAX_DEPTH:
        raise UserError(f"{source}: nested deeper than {MAX_DEPTH}; not read")
    return data


def _depth(data: Any) -> int:
    """How deep `data` nests (a scalar 0), without recursion."""
    deepest, todo = 0, [(data, 1)]
    while todo:
        value, level = todo.pop()
        children = (
            value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        )
        for child in children:
            if isinstance(child, dict | list):
                if level + 1 > MAX_DEPTH:
                    return level + 1
                todo.append((child, level + 1))
        deepest = max(deepest, level if isinstance(value, dict | list) else 0)
    return deepest


def read_json(path: Path, what: str = "file", max_bytes: int = MAX_BYTES) -> Any:
    """A JSON file someone may have sent, bounded and strict (see the module's docstring)."""
    return parse_json(read_text(path, what, max_bytes), str(path))


def read_mapping(path: Path, what: str = "file") -> dict[str, Any]:
    """`read_json` of a file that must hold a JSON object."""
    data = read_json(path, what)
    if not isinstance(data, dict):
        raise UserError(f"{path}: {what} should be a JSON object, not {type(data).__name__}")
    return data


def read_model(path: Path, model: type[M], what: str = "file") -> M:
    """`read_json` into the typed `model`; a failure names the file and the field."""
    data = read_mapping(path, what)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, str(path), model=model)) from None

"""The one reader of JSON someone may have sent: bounded in size and depth, typed, strict.

    state = read_json(folder / "training_state.json", "the training state")
    config = read_model(folder / "config.json", CheckpointShape)   # pydantic, errors named
    check_model_config(folder)   # before transformers builds a model from a config.json

A checkpoint folder, a tokenizer, a leaderboard or a results file may come from anyone. What
they hold is read here before anything acts on it:

- only a regular file (a FIFO would block the reader forever, a device never end); a link
  loop is named, not a traceback;
- at most `MAX_BYTES`, and nested at most `MAX_DEPTH` deep (the parser recurses: 100,000
  nested brackets were a RecursionError);
- no NaN or Infinity (JSON has none; Python's reader accepts them);
- into a typed model where one is given, each failure naming the file and the field.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from zoo.errors import UserError, format_validation_error

MAX_BYTES = 256 * 2**20  # a tokenizer.json of a 250k vocabulary is about 20 MB
MAX_DEPTH = 64  # a Hugging Face config or tokenizer nests under 10 deep

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
    st = check_regular(path, what)
    if st.st_size > max_bytes:
        raise UserError(f"{path}: {st.st_size} bytes, more than {max_bytes} for {what}; not read")
    try:
        with open(path, "rb") as f:
            raw = f.read(max_bytes + 1)
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return parse_json(text, str(path))


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

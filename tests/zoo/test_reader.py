"""The one reader: a file someone sent is read bounded (size, depth), strict (no NaN or
Infinity, a regular file only) and typed, each failure naming the file and the field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from zoo.errors import UserError
from zoo.reader import MAX_DEPTH, read_json, read_model


def test_nesting_past_the_bound_is_named_not_a_recursion_error(tmp_path: Path) -> None:
    for depth in (MAX_DEPTH + 1, 100_000):
        f = tmp_path / f"deep{depth}.json"
        f.write_text("[" * depth + "]" * depth)
        with pytest.raises(UserError, match=rf"deep{depth}.json: nested deeper than {MAX_DEPTH}"):
            read_json(f)
    ok = tmp_path / "ok.json"
    ok.write_text("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert read_json(ok) is not None


@pytest.mark.parametrize("text", ['{"tokens_seen": NaN}', '{"flops": Infinity}', '{"x": 1e400}'])
def test_no_non_finite_number_is_read(tmp_path: Path, text: str) -> None:
    f = tmp_path / "state.json"
    f.write_text(text)
    with pytest.raises(UserError, match=r"state.json: not valid JSON"):
        read_json(f)


def test_only_a_regular_file_of_bounded_size_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "metrics.jsonl"
    os.mkfifo(fifo)  # read, it would block forever
    with pytest.raises(UserError, match=r"metrics.jsonl: is not a regular file \(a FIFO\)"):
        read_json(fifo)
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(UserError, match=r"loop.json: cannot be read \(a link loop\)"):
        read_json(loop)
    big = tmp_path / "big.json"
    big.write_text(json.dumps(list(range(100))))
    with pytest.raises(UserError, match=r"big.json: \d+ bytes, more than 10"):
        read_json(big, max_bytes=10)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(UserError, match=r"bad.json: not UTF-8"):
        read_json(bad)


class Counters(BaseModel):
    step: int
    tokens_seen: int


def test_a_typed_read_names_the_file_and_field(tmp_path: Path) -> None:
    f = tmp_path / "training_state.json"
    f.write_text('{"step": 3, "tokens_seen": "many"}')
    with pytest.raises(UserError, match=r"training_state.json: tokens_seen: "):
        read_model(f, Counters)

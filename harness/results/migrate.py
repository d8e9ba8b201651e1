"""Leaderboard schema versions, and `hlm leaderboard --migrate`, which rewrites a folder of an
older version in today's schema once and losslessly.

Version 2 (today's): every result file holds every column of `harness.results.schema.Row`,
each of its Arrow type, so pandas, duckdb and `datasets.load_dataset("parquet", ...)` read a
folder with one schema; the folder's `_schema.json` says so. Version 1 files lack columns
added later (`final_checkpoint`, `hardware`): readers here fill them, but a reader that takes
the first file's columns (pandas) drops them, and `datasets` refuses the folder.

Migration reads each file, adds the missing columns (`final_checkpoint` from the file's name,
as the readers do; `hardware` null: not recorded), checks that every value of every column the
file held reads back equal, then replaces the file atomically. A file it cannot carry over
losslessly (a column the schema does not know, a float step with a fraction) is an error naming
the file and column, and nothing in the folder is changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.leaderboard import (
    FINAL,
    SUPERSEDED,
    cell_of,
    read_cell_file,
    result_files,
)
from harness.results.schema import SCHEMA, SCHEMA_VERSION, declare_schema
from zoo.errors import UserError
from zoo.reader import MAX_TABLE_BYTES, open_regular, read_bytes
from zoo.writer import replacing


def is_current(path: Path) -> bool:
    """Whether a result file's columns and types are today's (its footer only)."""
    with open_regular(path, "a result file", MAX_TABLE_BYTES) as f:
        return pq.read_schema(f).remove_metadata().equals(SCHEMA)


@dataclass
class Migration:
    """What `migrate_folder` did to one folder."""

    folder: Path
    rewritten: list[Path] = field(default_factory=list)
    current: int = 0
    values_checked: int = 0

    def summary(self) -> str:
        return (
            f"{self.folder}: {len(self.rewritten)} file(s) rewritten in schema "
            f"{SCHEMA_VERSION} ({self.values_checked} values checked equal), "
            f"{self.current} already current"
        )


def migrate_folder(directory: Path, dry_run: bool = False) -> Migration:
    """Rewrite every result file of `directory` (and of its `_superseded/`) in today's
    schema, then declare the folder's version. Every file is converted and checked before
    any is written, so a file that does not carry over leaves the folder as it was."""
    done = Migration(directory)
    files = [*result_files(directory), *result_files(directory / SUPERSEDED)]
    converted: list[tuple[Path, pa.Table]] = []
    for path in files:
        if is_current(path):
            done.current += 1
            continue
        table, checked = _converted(path)
        converted.append((path, table))
        done.values_checked += checked
    if dry_run:
        done.rewritten = [p for p, _ in converted]
        return done
    for path, table in converted:
        with replacing(path) as tmp:
            pq.write_table(table, tmp)
        if not is_current(path):  # pragma: no cover - a writer that drops the schema
            raise UserError(f"{path}: rewritten, but its schema is still not today's")
        done.rewritten.append(path)
    declare_schema(directory)
    return done


def _converted(path: Path) -> tuple[pa.Table, int]:
    """`path`'s rows in today's schema, and how many of its values were checked equal."""
    old = pq.read_table(pa.BufferReader(read_bytes(path, "a result file", MAX_TABLE_BYTES)))
    unknown = [c for c in old.column_names if c not in SCHEMA.names]
    if unknown:
        raise UserError(
            f"{path}: column(s) {', '.join(unknown)} are not in the leaderboard schema; "
            "migrating would drop them"
        )
    try:
        new = read_cell_file(path)
    except pa.ArrowInvalid as exc:
        raise UserError(f"{path}: does not convert to the schema losslessly: {exc}") from None
    final = path.stem == cell_of(path)
    new = new.set_column(new.schema.get_field_index(FINAL), FINAL, pa.array([final] * len(new)))
    checked = 0
    for name in old.column_names:
        before, after = old[name].to_pylist(), new[name].to_pylist()
        unequal = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if not _same(a, b)]
        if unequal:
            at = unequal[0]
            raise UserError(
                f"{path}: column {name}, row {at}: {before[at]!r} would read back as "
                f"{after[at]!r}; not migrated"
            )
        checked += len(before)
    return new, checked


def _same(a: object, b: object) -> bool:
    """Equal values, a NaN equal to a NaN (an `stderr` a task could not estimate)."""
    nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return nan or (a == b and type(a) is type(b)) or (isinstance(a, float) and a == b)

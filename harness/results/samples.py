"""Per-example scores beside a leaderboard: `leaderboards/<suite>/_samples/<result_id>.parquet`.

A task that scores examples one by one (a synonym pair's cosine, an lm-eval item's accuracy)
returns them in `Result.samples`; they are kept so that a single-seed comparison can be
tested on paired examples (two-sided) and plotted as a distribution. The folder is
underscore-prefixed, so Parquet readers of the leaderboard skip it.

The files are committed beside the rows, one per evaluated point, and they are most of a
leaderboard's bytes: they are written with zstd, and dictionary-encoded only in the columns
that repeat (each example's `key` is distinct, and a dictionary of it only adds its size
again), about half the bytes of Parquet's defaults. Values stay float64, as computed.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from zoo.errors import UserError, ZooWarning
from zoo.reader import MAX_TABLE_BYTES, read_bytes
from zoo.writer import inside, replacing

SAMPLES = "_samples"
SAMPLE_SCHEMA = pa.schema(
    [
        ("cell_id", pa.string()),
        ("model", pa.string()),
        ("sweep", pa.string()),
        ("seed", pa.int64()),
        ("step", pa.int64()),
        ("task", pa.string()),
        ("metric", pa.string()),
        ("key", pa.string()),
        ("value", pa.float64()),
    ]
)
# every column but the per-example ones: one cell's file repeats these on each line
REPEATED = ["cell_id", "model", "sweep", "seed", "step", "task", "metric"]


def write_table(table: pa.Table, path: Path) -> None:
    """`table` (SAMPLE_SCHEMA) as a samples file at `path`, compressed as the module says."""
    pq.write_table(table, path, compression="zstd", compression_level=9, use_dictionary=REPEATED)


def write_samples(directory: Path, result_id: str, rows: list[dict[str, Any]]) -> Path | None:
    """Atomically write one evaluated point's samples (SAMPLE_SCHEMA columns); none: no file."""
    if not rows:
        return None
    table = pa.Table.from_pylist(
        [{c: r[c] for c in SAMPLE_SCHEMA.names} for r in rows], SAMPLE_SCHEMA
    )
    final = inside(directory, SAMPLES, f"{result_id}.parquet", what="result id")
    with replacing(final) as tmp:
        write_table(table, tmp)
    return final


def read_samples(directory: Path, cell_ids: set[str] | None = None) -> pd.DataFrame:
    """Every kept sample (of the given cells only, when given)."""
    folder = directory / SAMPLES
    files = sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))
    if cell_ids is not None:
        files = [p for p in files if p.stem.split(".", 1)[0] in cell_ids]
    tables = [t for t in (_read(f) for f in files) if t is not None]
    if not tables:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in SAMPLE_SCHEMA.names})
    return pa.concat_tables(tables).to_pandas()


def _read(path: Path) -> pa.Table | None:
    """One samples file, or None with a warning naming it when it does not read (its cell's
    rows stand; only the per-example tests lose it until `hlm run --force` remakes it)."""
    try:
        data = read_bytes(path, "a samples file", MAX_TABLE_BYTES)
        return pq.read_table(pa.BufferReader(data), schema=SAMPLE_SCHEMA)
    except (OSError, pa.ArrowException, UserError) as exc:
        warnings.warn(
            f"{path}: skipped: not a readable samples file ({type(exc).__name__}: "
            f"{str(exc)[:120]}); `hlm run --force --task TASK` makes it again",
            ZooWarning,
            stacklevel=3,
        )
        return None

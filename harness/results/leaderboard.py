"""Parquet leaderboards: one file per finished cell (rows typed by `harness.results.schema`),
reading them back, and aggregation over seeds.

`leaderboards/<suite>/<cell_id>.parquet` holds the rows of one cell. Files are written under a
dot-prefixed temporary name and renamed, so a crash never leaves a half file and two runs at
once never lose rows; readers (pandas, pyarrow, duckdb) skip dot- and underscore-prefixed
names, which is where temporaries, `_plots/`, `_cells.json` and `_schema.json` (the folder's
schema version, `harness.results.migrate`) live. `_cells.json` lists the
cells of the suite as last run; the result files of other cells (an edited suite's old
configurations) move to `_superseded/`, so the folder read by any Parquet reader holds the
rows `hlm leaderboard` shows (`read_leaderboard(include_stale=True)` reads both).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from functools import cache
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.fields import cell_config
from harness.results.metrics import direction
from harness.results.schema import (
    COLUMNS,
    SCHEMA,
    checked_rows,
    declare_schema,
    folder_version,
    table_problem,
)
from zoo.errors import UserError, ZooWarning, did_you_mean
from zoo.reader import MAX_TABLE_BYTES, open_regular, read_bytes, read_json
from zoo.registry import unknown_name_message
from zoo.train.atomic import pid_alive, temporary_pid
from zoo.writer import inside, replacing, write_text


def write_cell(directory: Path, cell_id: str, rows: list[dict[str, Any]]) -> Path:
    """Atomically write one cell's rows, each validated against `harness.results.schema.Row`
    first (a ValueError naming the row and column; nothing is written). `cell_id` names the
    file: `<cell_id>` for the cell's final checkpoint, `<cell_id>.step-N` for one along
    pretraining, which each row's `final_checkpoint` says too."""
    final_point = "." not in cell_id
    stamped = [{**r, FINAL: final_point} for r in rows]
    checked = checked_rows(stamped, f"{directory / cell_id}.parquet")
    table = pa.Table.from_pylist(checked, schema=SCHEMA)
    final = inside(directory, f"{cell_id}.parquet", what="cell id")
    with replacing(final) as tmp:
        pq.write_table(table, tmp)
    if not any(f != final for f in result_files(directory)):
        declare_schema(directory)  # a new folder starts at today's schema version
    return final


CURRENT = "_cells.json"
# the row is of its cell's final checkpoint, not of one along pretraining (an `every:` / `at:`
# point): stored by `write_cell`, and set from the file's name by `read_leaderboard` (older
# files lack it)
FINAL = "final_checkpoint"
# what one value of a leaderboard stands for: a model (at a sweep point) and seed, on a metric
GROUP = ["model", "sweep", "seed", "task", "metric"]


# the columns a file must have to be a result file at all (later columns read as null)
ESSENTIAL = ("cell_id", "model", "task", "metric", "value", "step")


def result_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.parquet") if not p.name.startswith((".", "_")))


def file_problem(path: Path) -> str | None:
    """Why a result file does not read (truncated, empty, not Parquet, a foreign schema), or
    None. Reads only the footer, of a regular file within its bound (a FIFO never blocks)."""
    try:
        with open_regular(path, "a result file", MAX_TABLE_BYTES) as f:
            names = pq.read_schema(f).names
    except UserError as exc:
        return str(exc).removeprefix(f"{path}: ")
    except (OSError, pa.ArrowException) as exc:
        return f"not a readable Parquet file ({type(exc).__name__}: {str(exc)[:120]})"
    missing = [c for c in ESSENTIAL if c not in names]
    return f"not a leaderboard file (no {', '.join(missing)} column)" if missing else None


def done_cells(directory: Path) -> set[str]:
    """Result ids whose file reads: an unreadable one is computed again."""
    return {p.stem for p in result_files(directory) if file_problem(p) is None}


def write_current_cells(directory: Path, cell_ids: list[str]) -> list[Path]:
    """Record the suite's current cells (atomically), and file the result files of the
    others away (`file_superseded`); the files filed away."""
    write_text(directory / CURRENT, json.dumps(sorted(set(cell_ids))))
    return file_superseded(directory, set(cell_ids))


SUPERSEDED = "_superseded"  # result files of cells the suite as last run no longer has


def cell_of(path: Path) -> str:
    return path.stem.split(".", 1)[0]  # <cell_id>.parquet or <cell_id>.step-N.parquet


def file_superseded(directory: Path, current: set[str]) -> list[Path]:
    """Move the result files of cells not in `current` into `_superseded/` (and back those
    that are current again), so that any Parquet reader of the folder (pandas, pyarrow,
    duckdb, polars: they skip `_`-prefixed names) sees the rows `hlm leaderboard` shows;
    the files moved away."""
    old = directory / SUPERSEDED
    gone = [f for f in result_files(directory) if cell_of(f) not in current]
    for f in gone:
        old.mkdir(exist_ok=True)
        os.replace(f, old / f.name)
    if old.is_dir():
        for f in result_files(old):
            if cell_of(f) in current and not (directory / f.name).exists():
                os.replace(f, directory / f.name)
    return [old / f.name for f in gone]


def current_cells(directory: Path) -> set[str] | None:
    """The suite's current cell ids, or None for a folder no run has recorded them in."""
    f = directory / CURRENT
    if not f.exists() and not f.is_symlink():
        return None
    try:
        cells = read_json(f, "the current cells")
    except UserError as exc:
        raise UserError(f"{exc}; `hlm run` of the suite writes it anew") from None
    if not isinstance(cells, list) or not all(isinstance(c, str) for c in cells):
        raise UserError(f"{f}: expected a list of cell ids; `hlm run` of the suite writes it anew")
    return set(cells)


def remove_temporaries(directory: Path) -> list[Path]:
    """Delete `.tmp-*` files a killed writer left here and in `_samples/` (those of a
    process still alive are kept)."""
    removed = []
    for p in [*directory.glob(".tmp-*"), *(directory / "_samples").glob(".tmp-*")]:
        if p.is_file() and not pid_alive(temporary_pid(p.name)):
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def stale_cells(directory: Path) -> set[str]:
    """Result files on disk (`<cell_id>` or `<cell_id>.step-N`) of cells that the suite, as
    last run, no longer has."""
    current = current_cells(directory)
    if current is None:
        return set()
    return {f for f in done_cells(directory) if f.split(".", 1)[0] not in current}


def _read_result_files(files: list[Path]) -> tuple[list[pa.Table], list[tuple[Path, str]]]:
    """The tables of the `files` that read, each with its `final_checkpoint` column, and
    (file, why) for each that does not."""
    tables, unread = [], []
    for f in files:
        problem = file_problem(f)
        try:
            table = read_cell_file(f) if problem is None else None
        except (OSError, pa.ArrowException, UserError) as exc:
            table, problem = None, f"unreadable ({type(exc).__name__}: {str(exc)[:120]})"
        if table is not None and (problem := table_problem(table)) is not None:
            table = None
        if table is None:
            unread.append((f, str(problem)))
        else:
            final = pa.array([f.stem == cell_of(f)] * len(table), pa.bool_())
            names = table.column_names  # the file's name decides, as before the column
            at = names.index(FINAL) if FINAL in names else None
            table = (
                table.set_column(at, FINAL, final)
                if at is not None
                else table.append_column(FINAL, final)
            )
            tables.append(table)
    return tables, unread


def current_files(directory: Path) -> list[Path]:
    """The result files of the suite's current cells: those of cells it no longer has (not
    yet filed away) left out."""
    stale = stale_cells(directory)
    return [f for f in result_files(directory) if f.stem not in stale]


def unread_files(directory: Path) -> list[tuple[Path, str]]:
    """(file, why) for each result file of the suite's current cells whose footer does not
    read (`file_problem`): what `read_leaderboard` skips."""
    return [(f, p) for f in current_files(directory) if (p := file_problem(f)) is not None]


def damaged_error(unread: list[tuple[Path, str]]) -> UserError:
    """The error that refuses to publish or commit rows from a folder whose result files
    `unread` (file, why) do not read."""
    return UserError(
        f"{len(unread)} result file(s) do not read: "
        + "; ".join(f"{f}: {why}" for f, why in unread)
        + ". `hlm run` of the suite computes their cells again; or move a file aside "
        "(a name starting with _)"
    )


def read_leaderboard(
    directory: str | Path, include_stale: bool = False, damaged: Literal["skip", "refuse"] = "skip"
) -> pd.DataFrame:
    """Every row of the suite's current cells (and of superseded ones, in `_superseded/` or
    not yet moved there, with `include_stale`), with the read-time column `final_checkpoint`:
    whether the row is of its cell's final checkpoint (`<cell_id>.parquet`) or of one along
    pretraining (`<cell_id>.step-N.parquet`).

    A file that does not read is skipped with a warning naming it (`hlm run` computes its
    cell again), or with `damaged="refuse"` is an error naming every such file: what is
    published or committed from the rows would hold fewer of them than the folder does."""
    directory = Path(directory)
    folder_version(directory)  # a folder of a newer schema is refused, not misread
    files = (
        [*result_files(directory), *result_files(directory / SUPERSEDED)]
        if include_stale
        else current_files(directory)
    )
    tables, unread = _read_result_files(files)
    if unread and damaged == "refuse":
        raise damaged_error(unread)
    for f, why in unread:
        warnings.warn(f"{f}: skipped, {why}", ZooWarning, stacklevel=2)
    if not tables:
        empty = {c: pd.Series(dtype=object) for c in COLUMNS}
        return pd.DataFrame({**empty, FINAL: pd.Series(dtype=bool)})
    df = pa.concat_tables(tables).to_pandas()
    if not include_stale:  # a superseded cell may hold the rows its successor holds now
        mixed = mixed_cells(df)
        if mixed:
            raise UserError(f"{directory}: {mixed[0]}")
    return df


def task_entry(config_json: Any) -> str:
    """The suite's task entry a row's cell ran (its `name`, else its type), from the row's
    `config`; '?' where the row does not say."""
    try:
        task = cell_config(config_json).task
    except (UserError, TypeError):
        return "?"
    return "?" if task is None else task.entry


def mixed_cells(df: pd.DataFrame) -> list[str]:
    """What is wrong where two cells write a row of the same model, sweep point, seed, task,
    metric and step (two task entries of a suite reporting the same sub-task, with other
    params, say): every reader would take the two for one value (`final_rows` keeps the
    newest, hiding the other). One line per such row key, naming both task entries; [] where
    every key has one cell."""
    keys = [*GROUP, "step"]
    cells = df.groupby(keys, dropna=False, sort=False)["cell_id"].unique()
    problems = []
    for key, ids in cells[cells.map(len) > 1].items():
        row_key: tuple[Any, ...] = key  # type: ignore[assignment]  # groupby over several keys
        at = dict(zip(keys, row_key, strict=True))
        entries = [task_entry(df.loc[df["cell_id"] == i, "config"].iloc[0]) for i in ids[:2]]
        problems.append(
            f"task entries {entries[0]!r} and {entries[1]!r} (cells {ids[0]}, {ids[1]}) both "
            f"write {at['task']} {at['metric']} of {at['model']}, seed {at['seed']}, step "
            f"{at['step']}: one would hide the other in every table; sweep the param that "
            "differs in one entry (`sweep: {tasks.LABEL.PARAM: [...]}`), or run the two in "
            "separate suites"
        )
    return problems


def no_results(directory: Path, suite: str) -> UserError:
    """The error of a command given a leaderboard folder with no rows: how to fill it, and
    the folder's neighbours that hold rows when the name looks like a typo of one of them."""
    known = sorted(d.name for d in directory.parent.glob("*") if d.is_dir() and result_files(d))
    hint = did_you_mean(directory.name, known)
    return UserError(f"no results in {directory} (run `hlm run {suite}` first){hint}")


def known_model(df: pd.DataFrame, name: str | None, flag: str = "--baseline") -> str | None:
    """`name` if it is a model of the rows (or None), else a close-match error: a baseline
    that names no model would drop every mark without a word."""
    if name is not None and name not in set(df["model"]):
        known = sorted(str(m) for m in df["model"].unique())
        raise UserError(f"{flag}: {unknown_name_message('model', name, known)}")
    return name


def read_cell_file(path: Path) -> pa.Table:
    """One result file in today's schema: a column that an older file lacks reads as null.
    Read through the one reader (a regular file within its bound), then parsed in memory."""
    table = pq.read_table(pa.BufferReader(read_bytes(path, "a result file", MAX_TABLE_BYTES)))
    for field in SCHEMA:
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(len(table), field.type))
    return table.select(SCHEMA.names).cast(SCHEMA)


def _final_mask(df: pd.DataFrame) -> pd.Series:
    """Rows of a final checkpoint; a null (a frame built by hand) counts as one."""
    return df[FINAL].map(lambda v: True if pd.isna(v) else bool(v)).astype(bool)


def final_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Per model / sweep point / seed / task / metric, the row of the run's final checkpoint
    (the newest one among rows of the same step: a stable sort on step, then timestamp).

    Rows of checkpoints along pretraining (`final_checkpoint` false) are left out, so a task
    whose final checkpoint is not evaluated yet (a cell cut off mid-way) has no row here
    rather than an earlier checkpoint's standing in for it: a comparison never sets one
    arm's step 776 beside the other's 1550. A frame without the column (built by hand, not
    read by `read_leaderboard`) keeps each group's latest step."""
    if df.empty:
        return df
    if FINAL in df.columns:
        df = df[_final_mask(df)]
    d = df.assign(_step=df["step"].fillna(-1))
    d = d.sort_values(["_step", "timestamp"], kind="mergesort")
    return d.groupby(GROUP, dropna=False).tail(1).drop(columns="_step")


def unfinished(df: pd.DataFrame) -> dict[tuple[Any, ...], list[int]]:
    """The (model, sweep, seed, task, metric) groups with rows along pretraining but none of
    the final checkpoint yet, each with the steps it has (sorted)."""
    if df.empty or FINAL not in df.columns:
        return {}
    final = _final_mask(df)
    done = set(df[final].set_index(GROUP).index)
    return {
        keys: sorted(int(x) for x in g["step"])
        for keys, g in df[~final].groupby(GROUP, dropna=False)
        if keys not in done
    }


def aggregate(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and n over seeds, per model / sweep point / task / metric (final checkpoint),
    with the value of each seed (`by_seed`: one per pretraining seed, the mean of its rows),
    the objective and the model kind (for `Metric.comparable`)."""
    cols = [
        "model",
        "sweep",
        "task",
        "metric",
        "mean",
        "std",
        "n",
        "higher_is_better",
        "values",
        "by_seed",
        "objective",
        "kind",
    ]
    if df.empty:
        return pd.DataFrame(columns=cols)
    d = final_rows(df)
    keys = ["model", "sweep", "task", "metric"]
    per_seed = d.groupby([*keys, "seed"], dropna=False, sort=False)["value"].mean().reset_index()
    g = per_seed.groupby(keys, dropna=False, sort=False)
    out = g["value"].agg(mean="mean", std="std", n="count").reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["values"] = g["value"].agg(list).to_numpy()
    by_seed: list[dict[Any, float]] = [dict(zip(s["seed"], s["value"], strict=True)) for _, s in g]
    out["by_seed"] = pd.Series(by_seed, index=out.index, dtype=object)
    first = d.groupby(keys, dropna=False, sort=False)[["objective", "preset"]].first()
    out["objective"] = first["objective"].to_numpy()
    out["kind"] = [preset_kind(p) for p in first["preset"]]
    g = d.groupby(keys, dropna=False, sort=False)
    stored = g["higher_is_better"].first().to_numpy()
    out["higher_is_better"] = [_direction(m, s) for m, s in zip(out["metric"], stored, strict=True)]
    return out[cols]


@cache
def preset_kind(preset: Any) -> str | None:
    """encoder / decoder of a zoo preset; None for a name the zoo does not know (a
    checkpoint's label, a plugin's preset not loaded)."""
    from zoo.models import PRESETS, get_spec  # deferred: transformers is heavy to import

    return get_spec(preset).kind if isinstance(preset, str) and preset in PRESETS else None


def _direction(metric: str, stored: Any = None) -> bool | None:
    """From the registry; for metrics it does not know, the direction stored in the rows."""
    fallback = (
        None
        if stored is None or (isinstance(stored, float) and math.isnan(stored))
        else bool(stored)
    )
    return direction(metric, fallback)

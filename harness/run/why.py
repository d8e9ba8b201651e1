"""Why a cell of `hlm run --dry-run`'s plan is to compute: forced, its result file does not
read, no row of its model, seed, sweep point and task yet, or an earlier cell of the same
ones holds rows under another key, and then what changed (a plugin file, a task setting,
the pretraining's settings).

The earlier cells are read from the `config` column of the folder's result files (and of
`_superseded/`), one row a file: what each earlier cell was keyed on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.leaderboard import SUPERSEDED, cell_of, file_problem, result_files
from harness.run.cells import Cell
from zoo.errors import UserError
from zoo.reader import MAX_TABLE_BYTES, parse_json, read_bytes

NOT_KEYED = {"pretrain", "objective_source"}  # in a row's config, not in its cell's key
Slot = tuple[str, str, int, str]  # model label, sweep point (JSON), seed, task entry


def reasons(todo: list[Cell], folder: Path, force: bool) -> dict[str, str]:
    """cell id -> why it is to compute, in words, for each cell of `todo`."""
    if force:
        return {c.cell_id: "--force" for c in todo}
    earlier = _earlier_cells(folder)
    out = {}
    for cell in todo:
        path = folder / f"{cell.cell_id}.parquet"
        if path.exists() and (problem := file_problem(path)) is not None:
            out[cell.cell_id] = f"its result file does not read ({problem})"
        elif (before := earlier.get(_slot_of(cell.config))) is not None:
            now = cell.config
            if cell.pretrain is not None:
                now = {**now, "pretrain": cell.pretrain.key_fields()}
            out[cell.cell_id] = "key changed: " + changed(before, now)
        else:
            out[cell.cell_id] = "new: no row of this model, seed, point and task yet"
    return out


def changed(before: dict[str, Any], now: dict[str, Any]) -> str:
    """What differs between an earlier cell's keyed configuration and this one's, in words:
    the plugin or task files by name, else the settings by their dotted keys."""
    words = []
    for key in sorted(set(before) | set(now) - NOT_KEYED):
        if key in NOT_KEYED or before.get(key) == now.get(key):
            continue
        old, new = before.get(key), now.get(key)
        if key in ("plugins", "task_files") and isinstance(old, dict) and isinstance(new, dict):
            files = sorted(n for n in set(old) | set(new) if old.get(n) != new.get(n))
            words.append(f"{key} ({', '.join(files)} edited, added or removed)")
        elif key == "pretrain_key":
            words.append("the pretraining's settings (" + _settings(before, now) + ")")
        elif isinstance(old, dict) and isinstance(new, dict):
            words.extend(f"{key}.{k}" for k in _dotted(old, new))
        else:
            words.append(key)
    return ", ".join(words) or "a setting this version keys differently"


def _settings(before: dict[str, Any], now: dict[str, Any]) -> str:
    """The pretraining settings that differ (the earlier rows' `pretrain` record against
    the cell's run config); 'a plugin it reads, or a default' where those read alike."""
    old, new = before.get("pretrain"), now.get("pretrain")
    if isinstance(old, dict) and isinstance(new, dict):
        keys = _dotted(old, new)
        if keys:
            return ", ".join(keys)
    return "a plugin it reads, or a default"


def _dotted(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(_dotted(a, b, f"{prefix}{k}."))
        else:
            out.append(f"{prefix}{k}")
    return out


def _slot_of(config: dict[str, Any]) -> Slot:
    task = config.get("task") or {}
    entry = str(task.get("name") or task.get("type"))
    sweep = json.dumps(config.get("sweep") or {}, sort_keys=True)
    return (str(config.get("model")), sweep, int(config.get("seed") or 0), entry)


def _earlier_cells(folder: Path) -> dict[Slot, dict[str, Any]]:
    """The keyed configuration of each earlier final-checkpoint cell of the folder, by slot
    (the newest file's where two earlier cells share one)."""
    files = [*result_files(folder), *result_files(folder / SUPERSEDED)]
    files = [f for f in files if f.stem == cell_of(f) and file_problem(f) is None]
    out: dict[Slot, dict[str, Any]] = {}
    for f in sorted(files, key=lambda p: p.stat().st_mtime):
        config = _first_config(f)
        if config is not None:
            out[_slot_of(config)] = config
    return out


def _first_config(path: Path) -> dict[str, Any] | None:
    try:
        data = read_bytes(path, "a result file", MAX_TABLE_BYTES)
        column = pq.read_table(pa.BufferReader(data), columns=["config"])["config"]
        config = parse_json(column[0].as_py(), str(path)) if len(column) else None
    except (UserError, OSError, pa.ArrowException, KeyError):
        return None
    return config if isinstance(config, dict) else None

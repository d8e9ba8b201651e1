"""Re-keying a leaderboard: rows computed under an older id scheme, filed under the ids the
current code gives the same cells.

A cell's id hashes its configuration (`harness.run.cells`). When what the hash reads changes
shape (a field found not to define the weights leaves the pretraining key), every committed
row keeps its old id, and `hlm run` no longer finds it: it would compute the cell again and
file the committed rows away as superseded. Re-keying ends that, and changes no result:

- `pair` proves each old cell and a current one are the same computation: the same cell
  configuration (model, seed, task, sweep point, fine-tuning), and the same pretraining
  settings on every field the current key reads. The old key's other fields must be ones
  the current code declares `runtime` (where checkpoints are saved, the device): they never
  changed the weights. A setting that joined the key later (`JOINED`: `loss.score_dtype`)
  says, for each old cell that lacks it, whether the old code computed what the current
  cell does (the rows move) or not (the old cell is filed away, as an edited one).
- `apply` renames each old cell's files (results, per-example samples, artifacts) and
  rewrites the id in its rows, nothing else: values, steps, commits, versions and
  timestamps stay as computed. It can be run again after an interruption.

The old cells come from the old code itself (`tools/rekey_leaderboards.py` exports them
from a git worktree of the commit that wrote the rows), as JSON lines read by `read_old_cells`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.leaderboard import result_files
from harness.results.samples import SAMPLES
from harness.run.artifacts import ARTIFACTS
from harness.run.cells import Cell
from zoo.errors import UserError
from zoo.train.config import PretrainConfig
from zoo.train.roles import names_with_role


@dataclass(frozen=True)
class OldCell:
    """A cell as the old code expanded it: its id, the configuration the id hashes, and the
    pretraining settings its pretraining key hashed (None: a checkpoint, no pretraining)."""

    cell_id: str
    config: dict[str, Any]
    keyed: dict[str, Any] | None


@dataclass(frozen=True)
class Move:
    """One cell's new id, and the pretraining key its rows' `config` now names."""

    old: str
    new: str
    old_key: str | None
    new_key: str | None


def read_old_cells(path: Path) -> list[OldCell]:
    """The old cells exported one JSON object a line (`cell_id`, `config`, `keyed`)."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            d = json.loads(line)
            out.append(OldCell(str(d["cell_id"]), dict(d["config"]), d["keyed"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}:{n}: not an exported cell ({exc})") from None
    return out


def _normal(obj: Any) -> Any:
    """JSON values, as the key hashes see them."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def identity(config: dict[str, Any]) -> str:
    """A cell configuration without its pretraining key: what both schemes must agree on."""
    return json.dumps(_normal({k: v for k, v in config.items() if k != "pretrain_key"}))


def pretraining_difference(keyed: dict[str, Any] | None, now: PretrainConfig | None) -> str:
    """Where the old key's pretraining settings and the current config differ on a field the
    current key reads ('' where none does); the old key's runtime fields are left out."""
    if keyed is None or now is None:
        return "" if keyed is None and now is None else "one pretrains and the other does not"
    runtime = set(names_with_role(PretrainConfig, "runtime"))
    was = {k: v for k, v in _normal(keyed).items() if k not in runtime}
    current = _normal(now.key_fields())
    diffs = [
        f"{k}: {was[k] if k in was else '(absent)'} -> {current[k] if k in current else '(absent)'}"
        for k in sorted(set(was) | set(current))
        if (k in was) != (k in current) or was[k] != current[k]
    ]
    return "; ".join(diffs)


# Whether an old cell's pretraining (its keyed settings) is the current one's, where the two
# differ on a setting that joined the key after the old rows: True (the same computation: the
# rows move), False (computed differently now: the old cell is left to be filed away), None
# (not a difference it knows: the difference is an error).
SameComputation = Callable[[dict[str, Any], PretrainConfig], bool | None]


def pair(
    old: list[OldCell], new: list[Cell], same: SameComputation | None = None
) -> tuple[list[Move], list[OldCell]]:
    """The moves of the old cells with a current counterpart, and the old cells without one
    (the suite changed since: they are superseded at the next run, as any edited cell is).
    A counterpart whose pretraining differs is an error: the rows are not its rows, unless
    `same` says what the difference is (a setting that joined the key)."""
    current = {identity(c.config): c for c in new}
    moves, unpaired = [], []
    for o in old:
        ident = identity(o.config)
        if ident not in current:
            unpaired.append(o)
            continue
        c = current[ident]
        diff = pretraining_difference(o.keyed, c.pretrain)
        known = same(o.keyed, c.pretrain) if diff and same and o.keyed and c.pretrain else None
        if known is False:
            unpaired.append(o)
            continue
        if diff and known is None:
            raise UserError(
                f"cell {o.cell_id} ({c.label}, seed {c.seed}, task {c.task.label()}): its "
                f"pretraining differs from the current cell {c.cell_id}'s ({diff})"
            )
        moves.append(Move(o.cell_id, c.cell_id, o.config["pretrain_key"], c.pretrain_key))
    return moves, unpaired


def _renamed(name: str, moves: dict[str, Move]) -> tuple[str, Move] | None:
    """A result id (`<cell>` or `<cell>.step-N`) under its cell's new id, with the move;
    None for a cell that does not move."""
    cell, dot, rest = name.partition(".")
    return (moves[cell].new + dot + rest, moves[cell]) if cell in moves else None


def _rewrite(path: Path, target: Path, move: Move) -> None:
    """`path`'s table with the new cell id (and pretraining key in `config`), written
    atomically to `target`; the old file goes once the new one is in place."""
    table = pq.read_table(path)
    n = table.num_rows
    i = table.schema.get_field_index("cell_id")
    table = table.set_column(i, table.schema.field(i), pa.array([move.new] * n, pa.string()))
    if "config" in table.schema.names and move.old_key != move.new_key:
        j = table.schema.get_field_index("config")
        old, new = json.dumps(move.old_key), json.dumps(move.new_key)
        configs = [
            c.replace(f'"pretrain_key": {old}', f'"pretrain_key": {new}') if c else c
            for c in table.column(j).to_pylist()
        ]
        if any(c and json.loads(c)["pretrain_key"] != move.new_key for c in configs):
            raise UserError(f"{path}: a row's `config` does not name pretraining key {old}")
        table = table.set_column(j, table.schema.field(j), pa.array(configs, pa.string()))
    tmp = target.with_name(f".tmp-{target.name}-pid{os.getpid()}")
    pq.write_table(table, tmp)
    os.replace(tmp, target)
    path.unlink()


def apply(directory: Path, moves: list[Move]) -> int:
    """Rename and rewrite the old cells' result files, samples and artifact folders under
    the new ids in leaderboard folder `directory` (each folder listed once); returns how
    many were moved."""
    by_old = {m.old: m for m in moves}
    moved = 0
    for folder in (directory, directory / SAMPLES):
        for f in result_files(folder) if folder.is_dir() else []:
            if (found := _renamed(f.stem, by_old)) is not None:
                _rewrite(f, folder / f"{found[0]}.parquet", found[1])
                moved += 1
    arts = directory / ARTIFACTS
    for d in sorted(arts.iterdir()) if arts.is_dir() else []:
        if d.is_dir() and (found := _renamed(d.name, by_old)) is not None:
            os.replace(d, arts / found[0])
            moved += 1
    return moved


def score_dtype_same(keyed: dict[str, Any], now: PretrainConfig) -> bool | None:
    """A bf16 pretraining keyed before `loss.score_dtype`: the same computation as `now` where
    `now` multiplies in bf16 (the default) with the plain vocabulary loss, whose line the
    change left as it was (`head.logits(hidden).float()` under autocast), and differs from the
    old one on nothing else; every other objective or kernel multiplied in fp32 then (the
    contrastive scores, the chunked kernels) and in bf16 now: computed differently."""
    loss = keyed.get("loss")
    if not now.bf16 or not isinstance(loss, dict) or "score_dtype" in loss:
        return None  # not a row keyed without it under bf16
    completed = {**keyed, "loss": {**loss, "score_dtype": now.loss.score_dtype}}
    if pretraining_difference(completed, now):
        return None  # it differs on more than the setting: an error, as any difference
    return now.multiplies_as_before_score_dtype()


# the settings that joined the key after committed rows were keyed, by name
JOINED: dict[str, SameComputation] = {"score_dtype": score_dtype_same}

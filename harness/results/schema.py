"""One leaderboard row, typed once: the Parquet schema, the column list and the column docs
(the dataset card's table, leaderboards/README.md) all come from `Row`.

A column's Arrow type follows its Python type (`str` -> string, `int` -> int64, `float` ->
float64, `bool` -> bool, `datetime` -> timestamp in UTC); its doc is the field's description.
`write_cell` validates every row against `Row` before anything is written, so a row with a
missing column, a wrong type or a misspelt name is refused with the column named.

A folder's `_schema.json` names the schema version its files are in (`SCHEMA_VERSION`);
`hlm leaderboard --migrate` brings an older folder to today's (`harness.results.migrate`).

    add a column: one field here (with its description), then set it in `harness.run.rows`;
    bump SCHEMA_VERSION and teach `harness.results.migrate` the old files' value.
"""

from __future__ import annotations

import json
import math
import types
from datetime import datetime
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from zoo.errors import UserError, format_validation_error
from zoo.reader import parse_json, read_json
from zoo.text import has_control, visible
from zoo.writer import write_text

MAX_VALUE = 1e100  # past any metric: a value beyond it overflows the means and figures


class Row(BaseModel):
    """The columns of a leaderboard row, in file order."""

    model_config = ConfigDict(extra="forbid", strict=False)

    suite: str | None = Field(description="suite name")
    suite_version: int | None = Field(description="suite version")
    cell_id: str = Field(description="hash of the cell's resolved configuration")
    model: str = Field(description="model label in the suite")
    preset: str | None = Field(description="zoo preset")
    objective: str | None = Field(
        description="pretraining objective; `external` for a checkpoint not pretrained by hlm "
        "(no metadata: evaluated as a classical LM, but no objective of ours)"
    )
    scale: str | None = Field(description="preset size (tiny, small, base, 70m...)")
    vocab_size: int | None = Field(description="vocabulary size")
    batch_size: int | None = Field(
        description="pretraining batch size (all processes x accumulation)"
    )
    negatives: int | None = Field(
        description="contrastive negatives per forward pass (K; x world size for global negatives)"
    )
    seed: int | None = Field(description="seed")
    task: str = Field(description="task (or sub-task) label")
    metric: str = Field(description="metric name")
    value: float = Field(
        allow_inf_nan=False,
        ge=-MAX_VALUE,
        le=MAX_VALUE,
        description="metric value (always finite, within +-1e100)",
    )
    stderr: float | None = Field(
        description="standard error or spread reported by the task, if any"
    )
    higher_is_better: bool | None = Field(
        description="direction, from the metric registry (null: informational)"
    )
    step: int | None = Field(
        description="pretraining step of the evaluated checkpoint (for a fine-tuned one: of "
        "its start)"
    )
    final_checkpoint: bool | None = Field(
        description="the row is of its cell's final checkpoint (false: of one along "
        "pretraining, in a `<cell_id>.step-N.parquet` file); `hlm leaderboard` shows the final "
        "ones. Written from the file's name; files older than the column get it when read"
    )
    tokens_seen: int | None = Field(description="pretraining tokens seen")
    train_flops: float | None = Field(description="analytic training FLOPs so far")
    train_seconds: float | None = Field(description="training wall seconds so far")
    params: int | None = Field(description="parameters of the model as trained")
    sweep: str | None = Field(description="JSON of the sweep point ({} when none)")
    config: str | None = Field(
        description="JSON of the resolved cell configuration; `pretrain` holds the run config "
        "that made the weights (every pretraining-key field, loss options included)"
    )
    git_sha: str | None = Field(description="commit of headless-zoo that computed it")
    versions: str | None = Field(description="JSON of library versions")
    hardware: str | None = Field(
        description="where the checkpoint was trained (device x processes: processor), or for "
        "a cell without one (throughput) the machine that ran it; null: not recorded"
    )
    timestamp: datetime | None = Field(description="when the cell finished (UTC)")


_ARROW = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    datetime: pa.timestamp("us", tz="UTC"),
}


def _arrow_type(annotation: Any) -> pa.DataType:
    """The Arrow type of a field annotated `T` or `T | None`."""
    if get_origin(annotation) in (Union, types.UnionType):
        (annotation,) = [a for a in get_args(annotation) if a is not type(None)]
    return _ARROW[annotation]


SCHEMA = pa.schema([(name, _arrow_type(f.annotation)) for name, f in Row.model_fields.items()])
COLUMNS: list[str] = SCHEMA.names
COLUMN_DOCS: dict[str, str] = {name: f.description or "" for name, f in Row.model_fields.items()}


SCHEMA_VERSION = 2
SCHEMA_FILE = "_schema.json"


def schema_record() -> dict[str, object]:
    """What `_schema.json` holds: the version and each column's Arrow type."""
    return {
        "schema_version": SCHEMA_VERSION,
        "columns": {f.name: str(f.type) for f in SCHEMA},
    }


def folder_version(directory: Path) -> int:
    """The schema version a leaderboard folder declares; 1 for one without `_schema.json`.
    A newer version than this headless-zoo knows is an error naming the file."""
    path = directory / SCHEMA_FILE
    if not path.exists() and not path.is_symlink():
        return 1
    record = read_json(path, "the leaderboard's schema")
    version = record.get("schema_version") if isinstance(record, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UserError(f"{path}: schema_version: expected a positive integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise UserError(
            f"{path}: schema_version {version} is newer than this headless-zoo reads "
            f"({SCHEMA_VERSION}); upgrade headless-zoo"
        )
    return version


def declare_schema(directory: Path) -> None:
    """Write the folder's `_schema.json` (today's version)."""
    write_text(directory / SCHEMA_FILE, json.dumps(schema_record(), indent=1) + "\n")


def checked_rows(rows: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """`rows` validated against `Row` (every column present, each of its type); a ValueError
    naming `where`, the row and the column otherwise."""
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(Row.model_validate(row).model_dump())
        except ValidationError as exc:
            raise ValueError(format_validation_error(exc, f"{where}: row {i}")) from exc
    return out


def column_table() -> str:
    """The columns as a Markdown table (name, Arrow type, meaning)."""
    lines = ["| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{f.name}` | {f.type} | {COLUMN_DOCS[f.name]} |" for f in SCHEMA]
    return "\n".join(lines)


# the columns that name things: shown in tables, headings and cards
NAMES = ("suite", "model", "task", "metric", "sweep")


def table_problem(table: pa.Table) -> str | None:
    """What makes a result file's rows unreadable though its footer reads: a row with no
    model, a name holding a control character (a newline would break out of a table row),
    a value that is not finite or past `MAX_VALUE`, a `config` that is not a JSON object;
    None when every row reads."""
    columns = table.select(["model", "value", "config"]).to_pydict()
    rows = zip(columns["model"], columns["value"], columns["config"], strict=True)
    for name in NAMES:
        if name in table.column_names:
            bad = next((v for v in table[name].to_pylist() if v and has_control(v)), None)
            if bad is not None:
                return f"{name} {visible(bad)[:60]!r} holds a control character"
    for i, (model, value, config) in enumerate(rows):
        if not model:
            return f"row {i}: no model"
        if value is None or not math.isfinite(value) or abs(value) > MAX_VALUE:
            return f"row {i}: value {value} is not a finite number within +-{MAX_VALUE:g}"
        if config is not None and not _json_object(config):
            return f"row {i}: config is not a JSON object"
    return None


def _json_object(text: str) -> bool:
    try:
        return isinstance(parse_json(text, "config"), dict)
    except UserError:
        return False

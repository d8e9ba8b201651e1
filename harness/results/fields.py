"""Typed readers of a row's structured columns: `config`, `sweep` and `versions` are JSON text
in the Parquet files (one Arrow schema for every cell, whatever its configuration holds), and
every reader in the project reads them through here rather than parsing them itself.

    cell_config(row["config"]).task.type       # 'glue'
    SweepPoint.of(row["sweep"]).label()         # 'negatives=64 vocab_size=8192'
    versions(row["versions"])["torch"]          # '2.13.0+cpu'

Each reader parses one text once (cached: a folder holds one config per cell), names what it
read in its error, and reads only the parts a reader here needs, so a row written with
settings added later still reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from zoo.errors import UserError
from zoo.reader import parse_json

NO_POINT = ("", "{}", None)  # how a row without a sweep point writes its `sweep`


class CellTask(BaseModel):
    """The task of a row's cell: its suite entry's name (None: unnamed), type and params."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str | None = None
    type: str
    params: dict[str, Any] = Field(default_factory=dict)

    @property
    def entry(self) -> str:
        """The suite's task entry: its `name`, else its type."""
        return self.name or self.type


class CellFinetune(BaseModel):
    """The fine-tuning settings a row's cell ran with (those a reader here needs)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    steps: int | None = Field(None, gt=0)


class CellConfig(BaseModel):
    """The parts of a row's `config` (the resolved cell) that readers use; the whole is the
    JSON text itself (`hlm pretrain --config` reads its `pretrain` part)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    task: CellTask | None = None
    pretrain_key: str | None = None
    checkpoint: str | None = None  # an existing checkpoint evaluated (`hlm evaluate`'s)
    finetune_causal: bool = False
    finetune: CellFinetune = Field(default_factory=CellFinetune)
    pretrain: dict[str, Any] | None = None
    plugins: dict[str, str] = Field(default_factory=dict)


@lru_cache(maxsize=4096)
def cell_config(text: str, where: str = "a row's config") -> CellConfig:
    """The typed parts of a row's `config` JSON; a UserError naming `where` when it is not
    JSON or its parts are not of their types."""
    try:
        return CellConfig.model_validate(parse_json(text, where))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise UserError(f"{where}: {loc}: {err['msg']}") from None


@dataclass(frozen=True)
class SweepPoint:
    """A row's sweep point (its `sweep` column): the swept keys and their values, in order."""

    values: dict[str, Any]

    @staticmethod
    def of(text: str | None) -> SweepPoint:
        return _point(text if isinstance(text, str) else None)

    def value(self, key: str) -> Any:
        """The point's value of `key`, None where it does not sweep it."""
        return self.values.get(key)

    def label(self) -> str:
        """`key=value` pairs, as in a table's row label; '' for no point."""
        return " ".join(f"{k}={v}" for k, v in self.values.items())

    def words(self, short: bool = False) -> str:
        """`key value` pairs in words (with `short`: the key's last part, numbers as %g);
        '-' for no point."""
        if short:
            shown = {k.rsplit(".", 1)[-1]: _short(v) for k, v in self.values.items()}
            return " ".join(f"{k} {v}" for k, v in shown.items()) or "-"
        return ", ".join(f"{k} {v}" for k, v in self.values.items()) or "-"

    def order(self) -> tuple[tuple[int, float, str], ...]:
        """A sort key: values in order, numbers by value (batch 8 before 16) and before any
        text; no point first."""
        return tuple(
            (0, float(v), "") if isinstance(v, int | float) else (1, 0.0, str(v))
            for v in self.values.values()
        )


def _short(v: Any) -> Any:
    return f"{v:g}" if isinstance(v, int | float) and not isinstance(v, bool) else v


@lru_cache(maxsize=4096)
def _point(text: str | None) -> SweepPoint:
    if text in NO_POINT:
        return SweepPoint({})
    data = parse_json(str(text), "a row's sweep")
    if not isinstance(data, dict):
        raise UserError(f"a row's sweep: expected a JSON object, got {str(text)[:60]!r}")
    return SweepPoint(dict(data))


def point_order(text: str | None) -> tuple[tuple[int, float, str], ...]:
    """A row's sweep point as a sort key (`SweepPoint.order`)."""
    return SweepPoint.of(text).order()


def versions(text: str | None) -> dict[str, str]:
    """A row's library versions (`versions` column) as {library: version}; {} when the row
    records none."""
    return dict(_versions(text if isinstance(text, str) else None))


@lru_cache(maxsize=256)
def _versions(text: str | None) -> dict[str, str]:
    if text in NO_POINT:
        return {}
    data = parse_json(str(text), "a row's versions")
    if not isinstance(data, dict):
        raise UserError(f"a row's versions: expected a JSON object, got {str(text)[:60]!r}")
    return {str(k): str(v) for k, v in data.items()}

"""Reading a checkpoint runs no code from it.

A checkpoint folder can come from anyone (a shared `runs/`, a folder sent by a colleague),
and its commit marker is no defence: the sender writes it too. So nothing here unpickles
arbitrary objects:

- the training state (scheduler, counters) is JSON (`training_state.json`); a folder written
  before that holds `training_state.pt`, read with `torch.load(weights_only=True)` (tensors
  and plain containers only);
- the DCP `.metadata` of `sharded/` is a pickle by torch's design; `SafeReader` reads it with
  an unpickler that builds only DCP's own metadata types (and the few torch and pathlib values
  they hold), and refuses anything else with an error naming the file and the type;
- the weights are safetensors, and DCP reads its byte entries with `weights_only=True`.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Annotated, Any

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from torch.distributed.checkpoint import FileSystemReader
from torch.distributed.checkpoint.metadata import Metadata, StorageMeta

from zoo.errors import UserError, format_validation_error
from zoo.reader import open_regular, read_json
from zoo.train.layout import LEGACY_STATE, STATE
from zoo.writer import write_text

# the globals a DCP `.metadata` pickle may name: DCP's own types and the torch values in them
_ALLOWED_MODULES = ("torch.distributed.checkpoint.metadata",)
_ALLOWED = {
    ("torch.distributed.checkpoint.filesystem", "_StorageInfo"),
    ("torch", "Size"),
    ("torch.serialization", "_get_layout"),
    ("pathlib", "PosixPath"),
    ("pathlib", "PurePosixPath"),
    ("pathlib", "WindowsPath"),
    ("pathlib", "PureWindowsPath"),
    ("collections", "OrderedDict"),
}


class UnsafeCheckpoint(UserError):
    """A checkpoint file that would run code (or build objects outside its format) if read."""


class _MetadataUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, source: Path) -> None:
        super().__init__(file)
        self.source = source

    def find_class(self, module: str, name: str) -> Any:
        dtype = module == "torch" and isinstance(getattr(torch, name, None), torch.dtype)
        if module in _ALLOWED_MODULES or (module, name) in _ALLOWED or dtype:
            return super().find_class(module, name)
        raise UnsafeCheckpoint(
            f"{self.source}: refused to read: it names {module}.{name}, which is not part of a "
            "checkpoint's metadata (a crafted file would run code here)"
        )


def _unpickle_metadata(path: Path) -> Metadata:
    """The allow-listed unpickling; a missing file raises FileNotFoundError as DCP expects
    (it tries a rank's own metadata file first)."""
    if not path.exists():
        raise FileNotFoundError(path)
    with open_regular(path, "a checkpoint's metadata") as f:
        try:
            metadata = _MetadataUnpickler(f, path).load()
        except (pickle.UnpicklingError, EOFError, AttributeError, ValueError) as exc:
            raise UserError(f"{path}: not a readable checkpoint metadata file ({exc})") from None
    if not isinstance(metadata, Metadata):
        raise UnsafeCheckpoint(f"{path}: holds a {type(metadata).__name__}, not DCP metadata")
    return metadata


def read_dcp_metadata(path: Path) -> Metadata:
    """A DCP `.metadata` file, unpickled with the allow-list above; a clear error otherwise."""
    try:
        return _unpickle_metadata(path)
    except OSError as exc:
        raise UserError(f"{path}: does not read ({exc.strerror or exc})") from None


class SafeReader(FileSystemReader):
    """DCP's file-system reader with `read_metadata` through the allow-listed unpickler."""

    def read_metadata(self, *args: Any, **kwargs: Any) -> Metadata:
        rank = kwargs["rank"] if "rank" in kwargs else None
        metadata = _unpickle_metadata(Path(self._get_metadata_path(rank)))
        storage = getattr(metadata, "storage_meta", None) or StorageMeta()
        storage.load_id = self.load_id
        metadata.storage_meta = storage
        return metadata


def write_state(folder: Path, state: dict[str, Any]) -> None:
    """The training state (plain numbers and lists) as JSON: floats round-trip exactly."""
    write_text(folder / STATE, json.dumps(state, indent=1, allow_nan=False))


def read_state(checkpoint: Path) -> dict[str, Any]:
    """A checkpoint's training state: JSON, or the older `.pt` read with weights_only."""
    if (checkpoint / STATE).exists():
        state = read_json(checkpoint / STATE, "the training state")
    elif (checkpoint / LEGACY_STATE).is_file():
        try:
            with open_regular(checkpoint / LEGACY_STATE, "the training state") as f:
                state = torch.load(f, weights_only=True)
        except (OSError, RuntimeError, pickle.UnpicklingError, EOFError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UnsafeCheckpoint(
                f"{checkpoint / LEGACY_STATE}: refused to read ({first[:200]})"
            ) from None
    else:
        raise UserError(f"{checkpoint}: no {STATE} (not a checkpoint with training state)")
    where = checkpoint / (STATE if (checkpoint / STATE).exists() else LEGACY_STATE)
    if not isinstance(state, dict):
        raise UserError(f"{where}: the training state is not a mapping")
    try:
        TrainingState.model_validate(state)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, str(where), model=TrainingState)) from None
    return state


FiniteRate = Annotated[float, Field(ge=0, le=1e3, allow_inf_nan=False)]


class SchedulerState(BaseModel):
    """A `LambdaLR`'s state as `state_dict()` writes it (its lambdas are code, saved as None):
    each field typed and bounded, so a garbled one is named here, not a KeyError in torch."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    base_lrs: list[FiniteRate] = Field(min_length=1, max_length=4096)
    last_epoch: int = Field(ge=-1, le=10**12)
    step_count: int = Field(alias="_step_count", ge=0, le=10**12)
    is_initial: bool = Field(False, alias="_is_initial")
    get_lr_called_within_step: bool = Field(False, alias="_get_lr_called_within_step")
    last_lr: list[FiniteRate] = Field(alias="_last_lr", min_length=1, max_length=4096)
    lr_lambdas: list[None] = Field(min_length=1, max_length=4096)

    @model_validator(mode="after")
    def _one_entry_per_group(self) -> SchedulerState:
        if not len(self.base_lrs) == len(self.last_lr) == len(self.lr_lambdas):
            raise ValueError("base_lrs, _last_lr and lr_lambdas hold one entry per group each")
        return self


class TrainingState(BaseModel):
    """What a resume reads of a checkpoint's training state, typed: a scheduler's state and
    finite, non-negative counters (a sender's NaN or missing key is named, not met later)."""

    model_config = ConfigDict(extra="allow", strict=True)

    scheduler: SchedulerState
    step: int = Field(ge=0)
    tokens_seen: int = Field(ge=0)
    flops: float = Field(ge=0, allow_inf_nan=False)
    wall_seconds: float = Field(ge=0, allow_inf_nan=False)
    skipped_steps: int = Field(0, ge=0)

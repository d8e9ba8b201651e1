"""Training state through `torch.distributed.checkpoint` (DCP): every rank writes its shards of
the model and optimizer state; any world size reads them back, resharded.

    save_sharded(run, folder)     # collective: every rank of the run calls it
    load_sharded(run, folder)     # the run's own layout: 1 process, DDP copies or FSDP shards

The state dicts are keyed by parameter name (`get_state_dict`), not by optimizer slot, so a
checkpoint written by 2 FSDP processes loads into 1 plain process, or the reverse, with every
number unchanged. Under DDP every rank holds the same copy and DCP writes it once. The
Hugging Face export beside it (`model.safetensors`) is built from `full_model_state`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)

from zoo.errors import UserError
from zoo.train.optim import optimizers_of
from zoo.train.run import Run
from zoo.train.safe_load import SafeReader, read_dcp_metadata
from zoo.writer import disk_full, full_disk_error

SHARDED = "sharded"  # the DCP folder inside a checkpoint


@contextmanager
def _quiet_single_process() -> Iterator[None]:
    """DCP warns that it assumes one process when there is no process group: so it is."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*assuming the intent is to")
        yield


def _state(run: Run) -> dict[str, Any]:
    model, optim = get_state_dict(run.model, optimizers_of(run.optimizer))
    return {"model": model, "optimizer": optim}


def save_sharded(run: Run, folder: Path) -> None:
    """The model and optimizer state, each rank writing its own shards into `folder`. A
    failed save is an Exception, never DCP's `CheckpointException` (a BaseException, which
    ended the process with a raw traceback): a full disk is one line (`full_disk_error`)."""
    with _quiet_single_process():
        try:
            dcp.save(_state(run), checkpoint_id=str(folder))
        except CheckpointException as exc:
            raise _save_failure(folder, exc) from None


def _save_failure(folder: Path, exc: CheckpointException) -> Exception:
    """What a failed DCP save was: a full disk (an ENOSPC in a rank's failure, or torch's
    zip writer's short write, "unexpected pos", on a device with no room left), or a bug."""
    import shutil

    causes = [e for e, _ in exc.failures.values()]
    short_write = any("unexpected pos" in str(e) for e in causes)
    try:
        room = shutil.disk_usage(folder if folder.exists() else folder.parent).free
    except OSError:
        room = None
    if any(disk_full(e) for e in causes) or (short_write and room is not None and room < 2**20):
        return full_disk_error(folder)
    first = str(causes[0]).strip().splitlines()[0][:300] if causes else str(exc)[:300]
    return RuntimeError(f"{folder}: saving the training state failed: {first}")


def load_sharded(run: Run, folder: Path) -> None:
    """Load `folder`'s model and optimizer state into the run, resharded to its layout."""
    read_dcp_metadata(folder / ".metadata")  # refuses a crafted file before DCP reads it
    state = _state(run)
    with _quiet_single_process():
        try:
            dcp.load(state, storage_reader=SafeReader(folder))
        except CheckpointException as exc:
            first = str(exc).strip().splitlines()[-1][:300]
            raise UserError(f"{folder}: the training state does not load ({first})") from None
    set_state_dict(
        run.model,
        optimizers_of(run.optimizer),
        model_state_dict=state["model"],
        optim_state_dict=state["optimizer"],
    )


def full_model_state(run: Run) -> dict[str, torch.Tensor] | None:
    """The whole model's parameters gathered on rank 0's CPU (collective; FSDP only: empty on
    other ranks), or None where `run.model` holds them whole already."""
    if not run.ctx.sharded:
        return None
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    full = cast(dict[str, torch.Tensor], get_model_state_dict(run.model, options=options))
    kept = {name for name, _ in run.model.named_parameters()}  # a tied weight once, as HF saves
    aliases = {n for n, _ in run.model.named_parameters(remove_duplicate=False)} - kept
    return {k: v for k, v in full.items() if k not in aliases}

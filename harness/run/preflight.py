"""What `hlm run` checks once, before any cell computes: each would otherwise fail every cell
on its own, after the pretraining the cell waits for.

    preflight(suite, todo)   # a UserError naming the suite file and its keys, or nothing

- CUDA asked for (a recipe's or a task's `device: cuda`) on a machine whose torch sees none;
  a pretraining already cached needs no GPU. torch is imported only where a cell asks.
- Local data the cells read that is not here (`Cell.data_not_here`).
- What only a task's own library can tell (`TaskType.preflight`: lm-eval's task names,
  which `hlm validate` cannot list without importing lm-eval); run once per task entry.
"""

from __future__ import annotations

from pathlib import Path

from harness.run.cells import Cell, missing_data, pretraining_folder
from harness.suite import Suite, overrides
from harness.tasks import TASKS
from zoo.data.corpus import DATA_ROOT_ENV, data_root
from zoo.errors import UserError
from zoo.train.atomic import COMMIT


def _none_started(todo: list[Cell]) -> str:
    return f"{len(todo)} cell{'s' * (len(todo) != 1)} to compute, none started"


def preflight(suite: Suite, todo: list[Cell]) -> None:
    """Refuse, before any of `todo` computes, a run that could not finish it."""
    check_cuda(suite, todo)
    if missing := missing_data(todo):
        gone = "; ".join(f"task {t}: {', '.join(names)} not found" for t, names in missing.items())
        raise UserError(
            f"{suite.path}: {gone} (a name is under the task's data_dir, else "
            f"{DATA_ROOT_ENV}={data_root()}); {_none_started(todo)}"
        )
    if problems := library_problems(suite, todo):
        raise UserError("\n".join([*problems, _none_started(todo)]))


def pretraining_cached(pretrain_key: str) -> bool:
    """Whether that pretraining's final checkpoint is in the runs cache."""
    return (pretraining_folder(pretrain_key) / "final" / COMMIT).is_file()


def _recipe_key(suite: Suite, cell: Cell, key: str) -> str:
    """Which section of the suite sets pretraining `key` for `cell`: its sweep point, its
    model's recipe, or the suite's recipe."""
    if key in cell.sweep:
        return f"sweep.{key}"
    if key in overrides(cell.model.recipe):
        return f"models[{suite.models.index(cell.model)}].recipe.{key}"
    return f"recipe.{key}"


def _cuda_keys(suite: Suite, cell: Cell) -> list[str]:
    """The keys of the suite that make `cell` need a CUDA GPU: the recipe's `device: cuda`
    (unless its pretraining is already cached) and the task's `device: cuda`."""
    keys = []
    pretrain, key = cell.pretrain, cell.pretrain_key
    if pretrain is not None and pretrain.device == "cuda" and key and not pretraining_cached(key):
        keys.append(_recipe_key(suite, cell, "device"))
    params = TASKS.get(cell.task.type).params.model_validate(cell.task.params)
    if getattr(params, "device", None) == "cuda":
        keys.append(f"tasks[{suite.tasks.index(cell.task)}].params.device")
    return keys


def check_cuda(suite: Suite, todo: list[Cell]) -> None:
    """Refuse a run whose cells ask for CUDA on a machine without it."""
    keys = sorted({k for c in todo for k in _cuda_keys(suite, c)})
    if not keys:
        return
    import torch

    if not torch.cuda.is_available():
        raise UserError(
            f"{suite.path}: {', '.join(keys)}: 'cuda' asked for, but torch sees no CUDA device "
            f"here; {len(todo)} cells to compute need a GPU machine"
        )


def library_problems(suite: Suite, todo: list[Cell]) -> list[str]:
    """`FILE: tasks[i].params.KEY: message` for what the task types' own libraries find in the
    task entries of `todo` (`TaskType.preflight`), each entry asked once."""
    problems: list[str] = []
    for t, task in enumerate(suite.tasks):
        spec = TASKS.get(task.type)
        if not any(c.task == task for c in todo):
            continue
        params = spec.params.model_validate(task.params)
        found = spec.preflight(params, Path(suite.path).parent)
        problems += [f"{suite.path}: tasks[{t}].params.{key}: {msg}" for key, msg in found]
    return problems

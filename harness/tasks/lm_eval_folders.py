"""The task folders an `lm_eval` cell reads: the shipped one and a suite's own (`include_path`).

- `SHIPPED`: `harness/lm_eval_tasks/`, the offline tasks over `$HLM_DATA_ROOT`'s files.
- `task_manager`: lm-eval's TaskManager over its own tasks, the shipped ones and a suite's
  folders, where a folder may add tasks but never replace one. lm-eval lets a later folder
  replace a task of the same name with a warning; the rows would then read as the task
  everyone knows, its gate included.
- `folder_problems`: the folders a suite names that do not exist, for `hlm validate`.
- `folder_files`: every file of a suite's folders (the YAMLs and the loaders their
  `!function` hooks import), whose contents join the cell id (`TaskType.definition_files`),
  as a plugin file's do: an edited task is computed anew, not read as done.

lm-eval is imported only when a cell runs (`task_manager`), so checking a suite loads none of
it; the names it already gives are read once a process.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from zoo.errors import UserError

SHIPPED = Path(__file__).resolve().parents[1] / "lm_eval_tasks"


def task_manager(folders: list[Path]) -> Any:
    """lm-eval's TaskManager over its own tasks, the shipped ones, then `folders`. A folder's
    task under a name that lm-eval, the shipped folder or another folder gives from another
    file is refused, naming both files."""
    from lm_eval.tasks import TaskManager

    if not folders:
        return TaskManager(include_path=[str(SHIPPED)])
    seen = dict(_known_tasks())
    for folder in folders:
        mine = TaskManager(include_path=[str(folder)], include_defaults=False)
        for name in mine.all_tasks:
            where = _where(mine, name)
            if name in seen and seen[name] != where:
                raise UserError(
                    f"{where}: the task name {name!r} is taken by {seen[name]}; "
                    "give your task a name of its own"
                )
            seen[name] = where
    return TaskManager(include_path=[str(SHIPPED), *map(str, folders)])


@cache
def _known_tasks() -> dict[str, str]:
    """Each task name lm-eval and the shipped folder give, and the file that gives it, read
    once a process: lm-eval indexes some 14,000 names, which takes seconds."""
    from lm_eval.tasks import TaskManager

    known = TaskManager(include_path=[str(SHIPPED)])
    return {name: _where(known, name) for name in known.all_tasks}


def _where(manager: Any, name: str) -> str:
    """The file that defines task `name` (the shipped folder named again is the same file);
    a tag, which several files join and whose rows name each task, has none."""
    path = manager.task_index[name].yaml_path
    return str(Path(path).resolve()) if path else "a tag"


def folder_problems(include_path: list[str], suite_dir: Path) -> list[tuple[str, str]]:
    """(key, message) for each folder of `include_path` that does not exist."""
    return [
        (f"include_path[{i}]", f"folder not found: {suite_dir / d}")
        for i, d in enumerate(include_path)
        if not (suite_dir / d).is_dir()
    ]


def folder_files(include_path: list[str], suite_dir: Path) -> dict[str, Path]:
    """Every file of the suite's task folders, named by folder index and relative path."""
    return {
        f"include_path[{i}]/{f.relative_to(suite_dir / d).as_posix()}": f
        for i, d in enumerate(include_path)
        for f in sorted((suite_dir / d).rglob("*"))
        if f.is_file() and "__pycache__" not in f.parts
    }

"""The task folders an `lm_eval` cell reads: the shipped one and a suite's own (`include_path`).

- `SHIPPED`: `harness/lm_eval_tasks/`, the offline tasks over `$HLM_DATA_ROOT`'s files.
- `task_manager`: lm-eval's TaskManager over its own tasks, the shipped ones and a suite's
  folders, where a folder may add tasks but never replace one. lm-eval lets a later folder
  replace a task of the same name with a warning; the rows would then read as the task
  everyone knows, its gate included.
- `unknown_shipped`: an `hlm_` task name (the shipped tasks' prefix) that no folder defines,
  for `hlm validate`, which needs no lm-eval to tell it.
- `unknown_tasks`: any task name lm-eval, the shipped folder and the suite's folders do not
  give, for `hlm run` before it pretrains anything (lm-eval imported).
- `folder_problems`: the folders a suite names that do not exist, or that would run code
  untrusted, for `hlm validate`. A task YAML runs code: its `!function` hooks import a
  Python file beside it (or any importable module) and call it. So a suite's task folder,
  and any YAML it includes (`include:`, which lm-eval follows), needs `--trust-plugins`, as
  a plugin does, unless it ships with the project (`zoo.registry.may_run_code`).
- `shipped_moved`: the shipped files that the tasks a cell names read and that differ from
  the contents first keyed (`harness.tasks.keyed_defaults.PINNED_SHIPPED`): they join the
  cell id, so an edited shipped task is computed anew while an unedited one keeps its ids.
- `shipped_data`: the data files under the data root that the shipped tasks a cell names
  read (`SHIPPED_DATA`, as their loaders in `hlm_utils.py` open them), which join the cell
  id by their contents where those differ from the pinned ones.
- `upstream_release`: lm-eval's release, for a cell naming any task lm-eval itself gives
  (neither shipped nor in the suite's folders): those task YAMLs come with the release, so
  it joins the cell id, and a new release computes such cells anew.
- `folder_files`: every file of a suite's folders, and the files outside them that their
  YAMLs include or import (`referenced_outside`), whose contents join the cell id
  (`TaskType.identity`), as a plugin file's do: an edited task is computed anew, not
  read as done.

lm-eval is imported only when a cell runs (`task_manager`), so checking a suite loads none of
it; the names it already gives are read once a process.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml

from harness.downstream.blimp_data import PARADIGMS, data_files
from harness.tasks.keyed_defaults import PINNED_SHIPPED
from zoo.checksums import short_digest
from zoo.errors import UserError, did_you_mean
from zoo.reader import read_text
from zoo.registry import may_run_code, unknown_name_message

SHIPPED = Path(__file__).resolve().parents[1] / "lm_eval_tasks"
# each shipped task -> the files under the data root its loader reads (`hlm_utils.py`, which
# imports nothing of the project, opens them by these names)
SHIPPED_DATA = {
    "hlm_lambada": ("lambada/lambada_test.jsonl",),
    "hlm_boolq": ("superglue/BoolQ/val.jsonl",),
    "hlm_crows_pairs_english": ("crows_pairs/crows_pairs_anonymized.csv",),
    "hlm_pubmedqa": ("pubmedqa/ori_pqal.json", "pubmedqa/test_ground_truth.json"),
    "hlm_blimp": tuple(data_files(list(PARADIGMS))[:-1]),
}


def task_manager(
    folders: list[Path], metadata: dict[str, Any] | None = None, tasks: Sequence[str] = ()
) -> Any:
    """lm-eval's TaskManager over its own tasks, the shipped ones, then `folders`, with the
    `metadata` lm_eval gives its tasks (its model args). A folder's task under a name that
    lm-eval, the shipped folder or another folder gives from another file is refused, naming
    both files. Where `tasks` are all shipped ones and no folder is given, lm-eval's own task
    names are not indexed (some 14,000: seconds): a shipped task's one file, which includes
    no other and names no group, defines it either way."""
    from lm_eval.tasks import TaskManager

    if not folders:
        shipped_only = bool(tasks) and set(tasks) <= set(SHIPPED_DATA)
        return TaskManager(
            include_path=[str(SHIPPED)], include_defaults=not shipped_only, metadata=metadata or {}
        )
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
    return TaskManager(include_path=[str(SHIPPED), *map(str, folders)], metadata=metadata or {})


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
    """(key, message) for each folder of `include_path` that does not exist, or whose tasks
    would run code untrusted (`may_run_code`)."""
    problems = []
    for i, d in enumerate(include_path):
        folder = suite_dir / d
        if not folder.is_dir():
            problems.append((f"include_path[{i}]", f"folder not found: {folder}"))
            continue
        refused = [p for p in code_hooks(folder) if not may_run_code(p)]
        if refused:
            problems.append(
                (
                    f"include_path[{i}]",
                    f"{refused[0]}: a task YAML lm-eval would read that runs code (a "
                    "`!function` hook, or a tag a safe YAML reader refuses): pass "
                    "--trust-plugins (or set HLM_TRUST_PLUGINS=1) if you trust it",
                )
            )
    return problems


SHIPPED_PREFIX = "hlm_"  # the shipped tasks' names, which no lm-eval task takes


def unknown_shipped(
    tasks: list[str], include_path: list[str], suite_dir: Path
) -> list[tuple[str, str]]:
    """(key, message) for each `hlm_` task name that neither the shipped folder nor the
    suite's folders define: a typo found here, not after the pretraining it would follow.
    Other names are lm-eval's, which only lm-eval itself can list (when the cell runs)."""
    known = sorted(set(shipped_tasks()) | _folder_names(include_path, suite_dir))
    return [
        (f"tasks[{i}]", unknown_name_message("hlm_ task", name, known))
        for i, name in enumerate(tasks)
        if name.startswith(SHIPPED_PREFIX) and name not in known
    ]


def unknown_tasks(
    tasks: list[str], include_path: list[str], suite_dir: Path
) -> list[tuple[str, str]]:
    """(key, message) for each name that neither lm-eval, the shipped folder nor the suite's
    folders give (task, group or tag), with the names close to it: `hlm run` asks before any
    pretraining. Imports lm-eval (its index takes seconds), once a process."""
    known = set(_known_tasks()) | _folder_names(include_path, suite_dir)
    return [
        (f"tasks[{i}]", f"lm-eval gives no task {name!r}{did_you_mean(name, sorted(known))}")
        for i, name in enumerate(tasks)
        if name not in known
    ]


def folder_files(include_path: list[str], suite_dir: Path) -> dict[str, Path]:
    """Every file of the suite's task folders, named by folder index and relative path, and
    the files outside a folder that its YAMLs include or import (`referenced_outside`)."""
    files = {}
    for i, d in enumerate(include_path):
        folder = suite_dir / d
        for f in sorted(folder.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                files[f"include_path[{i}]/{f.relative_to(folder).as_posix()}"] = f
        for f in referenced_outside(folder):
            rel = Path(os.path.relpath(f, folder.resolve())).as_posix()
            files[f"include_path[{i}]/{rel}"] = f
    return files


class _Function(str):
    """A `!function` tag's `module.function`, read without importing anything."""


class _TaskYaml(yaml.SafeLoader):
    """Reads a task YAML as lm-eval does, with its `!function` tags left as `_Function`."""


def _function_tag(loader: yaml.SafeLoader, node: yaml.Node) -> _Function:
    if not isinstance(node, yaml.ScalarNode):
        raise yaml.constructor.ConstructorError(
            None, None, "!function takes a name", node.start_mark
        )
    return _Function(loader.construct_scalar(node))


_TaskYaml.add_constructor("!function", _function_tag)


def referenced_outside(folder: Path) -> list[Path]:
    """The files outside `folder` its task YAMLs reach, followed as lm-eval follows them: the
    YAMLs they include (`include:`, relative to the including file) and the Python files
    beside a YAML that its `!function` hooks import."""
    home = folder.resolve()
    todo = sorted(f.resolve() for f in home.rglob("*.yaml"))
    seen = set(todo)
    while todo:
        for ref in _references(todo.pop()):
            if ref not in seen:
                seen.add(ref)
                todo += [ref] if ref.suffix != ".py" else []
    return sorted(f for f in seen if not f.is_relative_to(home))


def code_hooks(folder: Path) -> list[Path]:
    """The task YAMLs lm-eval would read for `folder` (its own, and those they include,
    wherever they lie) that run code: a `!function` hook, or a tag a safe reader refuses
    (lm-eval's own reader takes tags such as `!!python/name`, which import a module)."""
    home = folder.resolve()
    todo = sorted(f.resolve() for f in home.rglob("*.yaml"))
    seen, hooks = set(todo), []
    while todo:
        f = todo.pop()
        cfg = _task_yaml(f)
        if (cfg is not None and _functions(cfg)) or (cfg is None and _refused_tag(f)):
            hooks.append(f)
        new = [r for r in _references(f) if r not in seen]
        seen.update(new)
        todo += [r for r in new if r.suffix != ".py"]
    return sorted(hooks)


def _refused_tag(path: Path) -> bool:
    """Whether `path` holds a tag the safe reader refuses (`!!python/name:os.system`): lm-eval's
    reader may take it, and import a module. A file that is not YAML at all runs nothing."""
    try:
        yaml.load(read_text(path, "an lm-eval task file"), Loader=_TaskYaml)
    except (yaml.constructor.ConstructorError, UserError):  # a FIFO or device: lm-eval would hang
        return True
    except yaml.YAMLError:
        return False
    return False


def _task_yaml(path: Path) -> dict[str, Any] | None:
    """One task YAML's mapping, `!function` tags unresolved; None for a file that does not
    read as one (lm-eval reports it when it indexes the folder). Read once a process while
    the file stays as it is: each cell of a suite asks again."""
    try:
        st = path.stat()
    except OSError:
        return None
    return _read_task_yaml(path, st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=1024)
def _read_task_yaml(path: Path, size: int, mtime_ns: int) -> dict[str, Any] | None:
    try:
        cfg = yaml.load(read_text(path, "an lm-eval task file"), Loader=_TaskYaml)
    except (UserError, yaml.YAMLError):
        return None
    return cfg if isinstance(cfg, dict) else None


def _references(path: Path) -> list[Path]:
    """The existing files one task YAML includes or imports from beside it; none for a file
    that does not read."""
    cfg = _task_yaml(path)
    if cfg is None:
        return []
    includes = cfg["include"] if "include" in cfg else []
    named = [
        path.parent / inc
        for inc in (includes if isinstance(includes, list) else [includes])
        if isinstance(inc, str)
    ]
    named += [path.parent / f"{f.rpartition('.')[0].replace('.', '/')}.py" for f in _functions(cfg)]
    return [p.resolve() for p in named if p.is_file()]


def _functions(value: Any) -> list[_Function]:
    """Every `!function` tag in a YAML value, however deep."""
    if isinstance(value, _Function):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _functions(v)]
    if isinstance(value, list):
        return [f for v in value for f in _functions(v)]
    return []


def shipped_moved(tasks: list[str]) -> dict[str, Path]:
    """The shipped files that `tasks` read (a shipped task's YAML and the loader its
    `!function` hooks import) whose contents differ from `PINNED_SHIPPED`, named
    `shipped/FILE`; a file not pinned counts as moved."""
    moved = {}
    shipped = shipped_tasks()
    for name in tasks:
        if name not in shipped:
            continue
        for f in [shipped[name], *_references(shipped[name])]:
            digest = short_digest(f)
            if f.name not in PINNED_SHIPPED or PINNED_SHIPPED[f.name] != digest:
                moved[f"shipped/{f.name}"] = f
    return moved


def shipped_data(tasks: list[str], root: Path) -> dict[str, Path]:
    """The data files under `root` that the shipped ones of `tasks` read, by name."""
    return {
        name: root / name for task in tasks if task in SHIPPED_DATA for name in SHIPPED_DATA[task]
    }


@cache
def shipped_tasks() -> dict[str, Path]:
    """Each task the shipped folder defines and its YAML file, read without lm-eval."""
    out = {}
    for f in sorted(SHIPPED.glob("*.yaml")):
        cfg = _task_yaml(f)
        if cfg is None or "task" not in cfg:
            raise UserError(f"{f}: a shipped task file that names no task")
        out[str(cfg["task"])] = f
    return out


def upstream_release(tasks: list[str], include_path: list[str], suite_dir: Path) -> dict[str, str]:
    """{"lm_eval": its installed version} where `tasks` name one that lm-eval itself gives
    (neither shipped nor defined in the suite's folders); {} otherwise."""
    ours = set(shipped_tasks()) | _folder_names(include_path, suite_dir)
    if all(name in ours for name in tasks):
        return {}
    return {"lm_eval": importlib.metadata.version("lm_eval")}


def _folder_names(include_path: list[str], suite_dir: Path) -> set[str]:
    """The task, group and tag names the suite's folders' YAMLs define."""
    names: set[str] = set()
    for d in include_path:
        for f in sorted((suite_dir / d).rglob("*.yaml")):
            cfg = _task_yaml(f)
            if cfg is None:
                continue  # lm-eval reports it when it indexes the folder
            for key in ("task", "group", "tag"):
                value = cfg[key] if key in cfg else []
                names |= {
                    v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)
                }
    return names

"""The defaults each built-in task type's params had when cells were first keyed by them.

A cell's id hashes its task params as the suite wrote them (`harness.run.cells`), not the
defaults filled in for the ones it leaves out. A default changed in code would then leave
the ids of the cells that rely on it as they were: their committed rows would count as done,
and stand beside new seeds' rows computed under the new default, one arm mixing two
protocols. So the defaults are pinned here, once, and never updated: `moved_defaults` gives,
for one task entry, each param it leaves unset whose default now differs from its pinned
one. Those join the cell's id (`task_defaults`), so exactly the cells that relied on the old
default are computed anew, and a default changed back finds its old rows again.

A benchmark's default sub-tasks (`TaskType.default_subtasks`, run where an entry names none)
are pinned the same way (`PINNED_SUBTASKS`): a changed set would move what the entry's
`average` row averages.

The shipped lm-eval task files are pinned by their contents (`PINNED_SHIPPED`): a cell names
its task, not the YAML and loader that define it, so an edited shipped task would otherwise
keep the ids of the cells that ran the old one.

A new param is pinned at its first default, the behaviour before it existed
(`tests/harness/tasks/test_keyed_defaults.py` checks every param of every built-in task type
is pinned). A plugin's task types are not pinned: a plugin file's contents key every cell of
the suite that loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.tasks.base import TASKS

_FINETUNE: dict[str, Any] = {
    "tasks": [],
    "source": "hub",
    "revision": None,
    "data_dir": None,
    "train_files": {},
    "eval_files": {},
    "max_examples": None,
    "max_eval_examples": None,
    "epochs": 10,
    "batch_size": 32,
    "lr": None,
    "weight_decay": None,
    "loss": "balanced",
    "warmup_ratio": 0.1,
    "max_length": 128,
    "finetune_seeds": 1,
    "device": "auto",
}
# task type -> param -> its default as JSON, as pinned; a param with no default is absent
PINNED: dict[str, dict[str, Any]] = {
    "glue": _FINETUNE,
    "superglue": _FINETUNE,
    "synthetic": _FINETUNE,
    "xnli": {
        **_FINETUNE,
        "epochs": 3,
        "batch_size": 128,
        "lr": 2e-05,
        "weight_decay": 0.0,
        "loss": "ce",
        "mode": "translate-train",
        "languages": ["ar", "de", "en", "es", "fr", "hi", "zh"],
    },
    "lm_eval": {
        "include_path": [],
        "num_fewshot": 0,
        "limit": None,
        "batch_size": 8,
        "output_path": None,
        "data_dir": None,
        "device": "auto",
        "dtype": "auto",
        "log_samples": False,
        "progress": False,
    },
    "synonyms": {"wordnet": None, "pos": ["noun", "verb", "adj", "adv"]},
    "throughput": {
        "steps": 5,
        "warmup": 2,
        "baseline": "ce",
        "hf_baseline": True,
        "memory": True,
        "max_batch": False,
        "device": "auto",
        "batch_size": None,
        "seq_len": None,
    },
    "validation": {"corpus": None, "batches": 8, "batch_size": None},
}


# task type -> the sub-tasks it runs when an entry names none (`tasks: []`), as pinned: a
# changed default set moves the meaning of the entry's `average` row
PINNED_SUBTASKS: dict[str, list[str]] = {
    "glue": ["cola", "sst2", "mrpc", "stsb", "qnli", "qqp", "mnli"],
    "superglue": ["boolq", "cb", "copa", "wic"],
    "synthetic": ["agreement"],
}


# each file of the shipped lm-eval task folder (`harness/lm_eval_tasks/`) -> the first 16 hex
# digits of its sha256 as first keyed: an edited shipped task re-keys the cells that run it
# (`harness.tasks.lm_eval_folders.shipped_moved`), as an edited task folder of a suite does
PINNED_SHIPPED: dict[str, str] = {
    "hlm_boolq.yaml": "f86dd38003440b9d",
    "hlm_crows_pairs_english.yaml": "f0c1bfbe3b4b7b30",
    "hlm_lambada.yaml": "cad73360190b8d0f",
    "hlm_pubmedqa.yaml": "01e4792fff0bfb06",
    "hlm_utils.py": "5c5921281589daf8",
}


def defaults_now(task_type: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Every param of `task_type` as `params` (a task entry's, as written) resolve, as JSON."""
    spec = TASKS.get(task_type)
    resolved: dict[str, Any] = spec.params.model_validate(dict(params)).model_dump(mode="json")
    return resolved


def moved_defaults(task_type: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The params `params` leave unset whose default now differs from the pinned one, with
    their default now, and `default_tasks` where they name no sub-tasks and the default set
    differs from the pinned one; {} for a task type not pinned here (a plugin's)."""
    if task_type not in PINNED:
        return {}
    pinned = PINNED[task_type]
    now = defaults_now(task_type, params)
    moved = {
        name: value
        for name, value in sorted(now.items())
        if name not in params and name in pinned and value != pinned[name]
    }
    subtasks = list(TASKS.get(task_type).default_subtasks)
    names_none = "tasks" not in params or params["tasks"] == []
    if names_none and task_type in PINNED_SUBTASKS and subtasks != PINNED_SUBTASKS[task_type]:
        moved["default_tasks"] = subtasks
    return moved

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

The local data a cell reads (`TaskType.identity`: GLUE's TSVs, WordNet, LAMBADA...) is
pinned by its contents as read (`PINNED_DATA`): a suite names its data files by path, so an
edited file would otherwise keep the ids of the cells that read the old one. Only what
differs from its pin joins the id (`moved_data`), so the shipped data's cells keep theirs.

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
    "pooling": "cls-pooler",
    "schedule": "constant",
    "lr_grid": None,
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
        "seeds": None,
    },
    "synonyms": {"wordnet": None, "pos": ["noun", "verb", "adj", "adv"]},
    "probe": {
        "tasks": ["sst2", "mrpc", "stsb"],
        "features": ["mean", "static"],
        "max_examples": None,
        "max_length": 128,
        "batch_size": 64,
    },
    "blimp": {"paradigms": [], "max_pairs": None, "scorer": "auto", "batch_tokens": 8192},
    "throughput": {
        "steps": 5,
        "warmup": 2,
        "baseline": "ce",
        "hf_baseline": True,
        "memory": True,
        "mfu": True,
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
    "hlm_blimp.yaml": "b8469eb1508dd52e",
    "hlm_blimp_utils.py": "e88aab3c966b4b56",
    "hlm_boolq.yaml": "f86dd38003440b9d",
    "hlm_crows_pairs_english.yaml": "f0c1bfbe3b4b7b30",
    "hlm_lambada.yaml": "cad73360190b8d0f",
    "hlm_pubmedqa.yaml": "01e4792fff0bfb06",
    "hlm_utils.py": "5c5921281589daf8",
}


# each local data file a built-in task type reads, by its name under the data root -> the
# first 16 hex digits of the sha256 of its contents as read (`TaskType.identity`: the
# file's bytes; WordNet's: the synsets the synonyms task reads, which a trimmed copy keeps), as
# first keyed: an edited file re-keys the cells that read it
PINNED_DATA: dict[str, str] = {
    "crows_pairs/crows_pairs_anonymized.csv": "dfb36986ce0502ab",
    "glue/CoLA/dev.tsv": "8c013e21dc39957c",
    "glue/CoLA/train.tsv": "cb368ebeb9f27d7a",
    "glue/MRPC/dev.tsv": "9e8f284788040f7c",
    "glue/MRPC/train.tsv": "f178bcc72ab4c2c1",
    "glue/QNLI/dev.tsv": "ac19409dcb04631e",
    "glue/RTE/dev.tsv": "80230dfa1347282e",
    "glue/RTE/train.tsv": "41e3a9b063433392",
    "glue/SST-2/dev.tsv": "54a9c12c77e402fc",
    "glue/SST-2/train.tsv": "48eac26399f84569",
    "glue/STS-B/dev.tsv": "fe7dc0632a503356",
    "glue/STS-B/train.tsv": "41c4d978b6162abd",
    "lambada/lambada_test.jsonl": "4aa8d02cd17c7191",
    "pubmedqa/ori_pqal.json": "8b3276be8942ebbd",
    "pubmedqa/test_ground_truth.json": "939fe566f09017d1",
    "superglue/BoolQ/train_fewglue32.jsonl": "317245ba08421292",
    "superglue/BoolQ/val.jsonl": "21acbfbd1e7908fd",
    "superglue/CB/train_fewglue32.jsonl": "e6f446e5f117cbfb",
    "superglue/CB/val.jsonl": "c6125587e9601560",
    "superglue/COPA/train_fewglue32.jsonl": "9955ae6e0ee109c9",
    "superglue/COPA/val.jsonl": "fa61467cc2510101",
    "superglue/WiC/train_fewglue32.jsonl": "b82c0c3f79d2f19b",
    "superglue/WiC/val.jsonl": "7a954e2f2ffbe3df",
    "wordnet/data.adj": "febf31a723598872",
    "wordnet/data.adv": "5be7b225ae1d474a",
    "wordnet/data.noun": "5e3ffc375af6f009",
    "wordnet/data.verb": "bd213e53b67e5556",
    "xnli/dev-ar.tsv": "234237be8250fbdf",
    "xnli/dev-bg.tsv": "1137999816dc8c7f",
    "xnli/dev-de.tsv": "cc72840e5daa08a8",
    "xnli/dev-el.tsv": "ad9730e84ef2943d",
    "xnli/dev-en.tsv": "7e7ac6fe0b84ce13",
    "xnli/dev-es.tsv": "eadee2bff6f31f9b",
    "xnli/dev-fr.tsv": "58db1c233ec28335",
    "xnli/dev-hi.tsv": "911c4dc546d50642",
    "xnli/dev-ru.tsv": "fcc3ac697104165a",
    "xnli/dev-sw.tsv": "f81755c66d97564c",
    "xnli/dev-th.tsv": "8632d6380c0a440a",
    "xnli/dev-tr.tsv": "f94f63d8ef4fcf78",
    "xnli/dev-ur.tsv": "ebd30b594a2c5e33",
    "xnli/dev-vi.tsv": "8cb3648cacceb056",
    "xnli/dev-zh.tsv": "9a1e2df22ad00831",
}


def moved_data(digests: Mapping[str, str | None]) -> dict[str, str]:
    """The data of `digests` (a cell's, `TaskType.identity`) whose digest differs from
    its pin (`PINNED_DATA`), or that has none (a user's own files), with its digest. Data not
    there (None) adds nothing: `hlm run` refuses to start a cell that would read it."""
    return {
        name: digest
        for name, digest in sorted(digests.items())
        if digest is not None and (name not in PINNED_DATA or PINNED_DATA[name] != digest)
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

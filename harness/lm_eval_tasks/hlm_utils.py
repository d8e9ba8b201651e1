"""Helpers the shipped lm-eval task YAMLs name (`!function hlm_utils.X`): dataset loaders over
the local data root, prompts and scoring.

Plain lm-eval reads these tasks with no project code:

    HLM_DATA_ROOT=/path/to/data lm_eval --model hf --model_args pretrained=CKPT \
        --include_path harness/lm_eval_tasks --tasks hlm_lambada

Each loader is a task's `custom_dataset` (lm-eval 0.4 calls it with the task's metadata and
`dataset_kwargs` as keywords) and reads `$HLM_DATA_ROOT` (default `../shared/data`, from the
working directory), so no path is written into a YAML. This file imports nothing of the
project.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import datasets


def data_root() -> Path:
    return Path(os.environ.get("HLM_DATA_ROOT", "../shared/data")).expanduser().resolve()


def _data_file(*parts: str) -> Path:
    path = data_root().joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: set HLM_DATA_ROOT to the data root holding {'/'.join(parts)}"
        )
    return path


def _split(split: str, path: Path, kind: str) -> datasets.DatasetDict:
    return datasets.load_dataset(kind, data_files={split: str(path)})


def lambada(**_: Any) -> datasets.DatasetDict:
    """LAMBADA (OpenAI's lambada_test.jsonl) as the `test` split."""
    return _split("test", _data_file("lambada", "lambada_test.jsonl"), "json")


def boolq(**_: Any) -> datasets.DatasetDict:
    """SuperGLUE BoolQ's validation set as the `validation` split."""
    return _split("validation", _data_file("superglue", "BoolQ", "val.jsonl"), "json")


def boolq_target(doc: dict[str, Any]) -> int:
    """BoolQ's answer as the index of `doc_to_choice` (0 "no", 1 "yes"). The local jsonl
    spells labels as the strings "true"/"false" (the hub's copy as booleans); a Jinja
    truth test would read both strings as yes."""
    label = doc["label"]
    if isinstance(label, bool | int) and label in (0, 1):
        return int(label)
    if isinstance(label, str) and label.strip().lower() in ("true", "false"):
        return int(label.strip().lower() == "true")
    raise ValueError(f"BoolQ label {label!r}: expected true/false")


def crows_pairs(**_: Any) -> datasets.DatasetDict:
    """CrowS-Pairs (anonymized csv) as the `test` split."""
    return _split("test", _data_file("crows_pairs", "crows_pairs_anonymized.csv"), "csv")


def pubmedqa(**_: Any) -> datasets.DatasetDict:
    """PubMedQA PQA-L's labelled test split (500 PMIDs), in the bigbio/lm-eval shape."""
    items = json.loads(_data_file("pubmedqa", "ori_pqal.json").read_text())
    truth = json.loads(_data_file("pubmedqa", "test_ground_truth.json").read_text())
    rows = [
        {
            "pubid": pmid,
            "question": items[pmid]["QUESTION"],
            "contexts": items[pmid]["CONTEXTS"],
            "final_decision": label,
        }
        for pmid, label in truth.items()
    ]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def crows_choices(doc: dict[str, Any]) -> list[str]:
    """The more- and the less-stereotyping sentence, in that order."""
    return [doc["sent_more"], doc["sent_less"]]


def crows_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, float]:
    ll_more, ll_less = (r[0] for r in results)
    return {
        "likelihood_diff": abs(ll_more - ll_less),
        "pct_stereotype": 1.0 if ll_more > ll_less else 0.0,
    }


def pubmedqa_text(doc: dict[str, Any]) -> str:
    contexts = doc["contexts"] if isinstance(doc["contexts"], list) else [doc["contexts"]]
    return "Abstract: {}\nQuestion: {}\nAnswer:".format("\n".join(contexts), doc["question"])

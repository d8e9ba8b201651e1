"""Whether an arm answers every question the same way: a constant answer is not comparable.

A yes/no or multiple-choice task scored by accuracy lets a model that always answers one
class score that class's share: BoolQ's vanilla seeds at 0.3783 are the share of "false".
Such an arm cannot be compared, whatever its accuracy, and no bar on accuracy alone sees it.

The kept per-example scores (0/1 per question, `harness.results.samples`) and the questions'
gold answers say it: a model that always answers class c is right exactly on the questions
whose answer is c. `constant_answer` finds such a c for any seed of an arm. The gold answers
are read from the data the shipped tasks read (`GOLD`), by the same document order lm-eval
gives its `doc_id`s; where that data is missing the check fails closed.

    constant_answer(samples, "pythia-tiny-ce", "lm_eval/hlm_boolq")  # 'no (seed 0, 1, 2)'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pandas as pd

from zoo.data.corpus import data_root
from zoo.errors import UserError
from zoo.reader import read_json, read_text


def _boolq(root: Path) -> list[str]:
    """BoolQ's validation answers in file order ("yes"/"no", as the task's choices)."""
    lines = read_text(root / "superglue" / "BoolQ" / "val.jsonl", "BoolQ's answers").splitlines()
    labels = [json.loads(line)["label"] for line in lines if line.strip()]
    return ["yes" if str(label).strip().lower() == "true" else "no" for label in labels]


def _pubmedqa(root: Path) -> list[str]:
    """PubMedQA PQA-L's test answers in the ground-truth file's order."""
    truth = read_json(root / "pubmedqa" / "test_ground_truth.json")
    if not isinstance(truth, dict):
        raise ValueError("pubmedqa/test_ground_truth.json: not a mapping of PMID to answer")
    return [str(v) for v in truth.values()]


# task label in the rows -> the gold answers by doc_id, from the data root
GOLD: dict[str, Callable[[Path], list[str]]] = {
    "lm_eval/hlm_boolq": _boolq,
    "lm_eval/hlm_pubmedqa": _pubmedqa,
}


@cache
def _gold(task: str, root: Path) -> tuple[str, ...]:
    """`task`'s gold answers by doc_id, read once per data root."""
    return tuple(GOLD[task](root))


def _one_class(correct: pd.Series, gold: list[str]) -> str | None:
    """The class c such that `correct` (0/1 by doc_id) is 1 exactly where the answer is c."""
    keys = [int(k) for k in correct.index]
    if not keys or max(keys) >= len(gold):
        return None
    right = {gold[k] for k, v in zip(keys, correct, strict=True) if v >= 0.5}
    wrong = {gold[k] for k, v in zip(keys, correct, strict=True) if v < 0.5}
    return right.pop() if len(right) == 1 and not right & wrong else None


def constant_answer(samples: pd.DataFrame, model: str, task: str, root: Path | None = None) -> str:
    """'' where `model` does not answer `task` with one class at any seed's last kept
    checkpoint; else that class and the seeds, in words. A task not in `GOLD` is not checked
    (''); one whose data is missing fails closed (the reason)."""
    if task not in GOLD or samples.empty:
        return ""
    s = samples[(samples["model"] == model) & (samples["task"] == task)]
    s = s[s["metric"] == "acc"]
    if s.empty:
        return ""
    try:
        gold = list(_gold(task, data_root() if root is None else root))
    except (OSError, ValueError, KeyError, UserError) as exc:
        return f"its answers could not be checked against {task}'s gold answers ({exc})"
    constant: dict[str, list[str]] = {}
    for seed, rows in s.groupby("seed"):
        last = rows[rows["step"] == rows["step"].max()]
        c = _one_class(last.set_index("key")["value"].astype(float), gold)
        if c is not None:
            constant.setdefault(c, []).append(str(seed))
    return "; ".join(
        f"answers '{c}' to every question (seed {', '.join(v)})" for c, v in constant.items()
    )

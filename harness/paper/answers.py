"""Whether an arm's answers are mostly one class: then its accuracy measures an answer bias.

A yes/no or multiple-choice task scored by accuracy (or F1) lets a model that answers one
class score that class's share: BoolQ's vanilla CPU seeds at 0.3783 are the share of "false".
An arm that gives one answer to `ONE_CLASS` (90 %) of the questions or more is not compared
on such a metric (`Metric.answer_biased`), whatever its value; no bar on accuracy alone sees
it, since a model can be biased and still clear the best constant answer by a little.

The share comes from the rows where they have it: each classification or multiple-choice
task reports `answer_share`, the share of the most frequent answer. Older rows without it
fall back on the kept per-example scores (0/1 per question, `harness.results.samples`) and
the gold answers: on a yes/no task a right answer is the gold class and a wrong one the
other, so the answers are known exactly; on a task of more classes only a constant answer is
(a model that always answers c is right exactly where the answer is c). The gold answers are
read from the data the shipped tasks read (`GOLD`), in lm-eval's `doc_id` order; where that
data is missing the check fails closed.

    one_class(rows, samples, "pythia-tiny-ce", "lm_eval/hlm_boolq")
    # "gives 'no' to 100.0 % of questions (seed 0, 2); gives 'no' to 99.7 % ... (seed 1)"
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


ONE_CLASS = 0.9  # the share of one answer past which accuracy measures the bias


def _shares(correct: pd.Series, gold: list[str]) -> dict[str, float] | None:
    """The share of each answer given, from `correct` (0/1 by doc_id) and the gold answers:
    exact on a two-class task; on more classes only a constant answer is known (its share
    1.0); None where the answers cannot be told."""
    keys = [int(k) for k in correct.index]
    if not keys or max(keys) >= len(gold):
        return None
    classes = sorted(set(gold))
    right = [gold[k] for k, v in zip(keys, correct, strict=True) if v >= 0.5]
    wrong = [gold[k] for k, v in zip(keys, correct, strict=True) if v < 0.5]
    if len(classes) == 2:
        flipped = {classes[0]: classes[1], classes[1]: classes[0]}
        given = right + [flipped[c] for c in wrong]
        return {c: given.count(c) / len(given) for c in classes}
    if len(set(right)) == 1 and not set(right) & set(wrong):
        return {right[0]: 1.0}
    return None


def _final(frame: pd.DataFrame) -> dict[int, pd.DataFrame]:
    """Each seed's rows at its last step (the checkpoint an arm is compared at)."""
    out = {}
    for seed in sorted(frame["seed"].unique()):
        rows = frame[frame["seed"] == seed]
        out[int(seed)] = rows[rows["step"] == rows["step"].max()]
    return out


def _from_rows(rows: pd.DataFrame, model: str, task: str) -> dict[int, tuple[str, float]]:
    """seed -> ('', share) from the `answer_share` rows of `model` on `task`."""
    mine = rows[(rows["model"] == model) & (rows["task"] == task)]
    mine = mine[mine["metric"] == "answer_share"]
    return {s: ("", float(r["value"].mean())) for s, r in _final(mine).items()}


def _from_samples(
    samples: pd.DataFrame, model: str, task: str, root: Path | None
) -> dict[int, tuple[str, float]] | str:
    """seed -> (class, share) of the most frequent answer, from the kept 0/1 scores and the
    gold answers (the reason where the gold answers cannot be read)."""
    if task not in GOLD or samples.empty:
        return {}
    s = samples[(samples["model"] == model) & (samples["task"] == task)]
    s = s[s["metric"] == "acc"]
    if s.empty:
        return {}
    try:
        gold = list(_gold(task, data_root() if root is None else root))
    except (OSError, ValueError, KeyError, UserError) as exc:
        return f"its answers could not be checked against {task}'s gold answers ({exc})"
    out = {}
    for seed, last in _final(s).items():
        shares = _shares(last.set_index("key")["value"].astype(float), gold)
        if shares:
            top = max(shares, key=lambda c: shares[c])
            out[seed] = (top, shares[top])
    return out


def one_class(
    rows: pd.DataFrame, samples: pd.DataFrame, model: str, task: str, root: Path | None = None
) -> str:
    """'' where no seed of `model` gives one answer to `ONE_CLASS` of `task`'s questions at
    its last checkpoint; else the answer, its share and the seeds, in words. The rows'
    `answer_share` is read first, the kept scores where the rows lack it; a task with
    neither is not checked (''), one whose gold answers are missing fails closed."""
    found = _from_rows(rows, model, task) or _from_samples(samples, model, task, root)
    if isinstance(found, str):
        return found
    biased: dict[str, list[str]] = {}
    for seed, (answer, share) in sorted(found.items()):
        if share >= ONE_CLASS:
            said = f"'{answer}'" if answer else "one answer"
            words = f"gives {said} to {100 * share:.1f} % of questions"
            biased.setdefault(words, []).append(str(seed))
    return "; ".join(f"{words} (seed {', '.join(seeds)})" for words, seeds in biased.items())

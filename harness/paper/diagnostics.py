"""The diagnostics of `hlm report --paper`: suites that ask why a scale's gates fail, not
whether the paper's claims hold.

A `Diagnostic` names its suite (committed under `leaderboards/`, like the `paper-*` ones), the
question in words, the pretrained model whose gates it probes and the task type whose gates
it reads. Its section holds, per sweep point of the suite, each sub-task's gate metric for
the model and for its untrained twin (the suite's `steps: 0` model of the same preset), the
difference, and whether the model's gate passed (`harness.paper.sources.Check`: chance plus
the margin, then the twin plus the margin); a closing sentence counts the points where every
gate passed. Values are means over the seeds run, which the table counts; there is no test
and no verdict: a diagnostic says where to look, the `paper-*` suites decide.

    diagnostic_sections(Path("leaderboards"))   # the page's lines, one section per diagnostic
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from harness.paper.labels import machine_counts, run_on
from harness.paper.sources import Check, final_values, untrained_twin
from harness.paper.tables import num, table
from harness.results.fields import SweepPoint, point_order
from harness.results.leaderboard import read_leaderboard
from harness.tasks import TASKS

COLUMNS = ["point", "task", "metric", "model", "untrained twin", "Δ", "seeds", "gate"]


@dataclass(frozen=True)
class Diagnostic:
    """`suite`'s rows as the answer to `question`: `model`'s gates of task type `task_type`
    at each of the suite's sweep points, beside its untrained twin's score."""

    suite: str
    title: str
    question: str
    model: str
    task_type: str


DIAGNOSTICS = (
    Diagnostic(
        "gpu-finetune-lr",
        "Diagnostic: the GLUE fine-tuning learning rate at GPU scale",
        "Is it the GLUE fine-tuning recipe, rather than the pretraining, that keeps bert-small "
        "under its gates at GPU scale? `suites/gpu-finetune-lr.yaml` fine-tunes bert-small-ce "
        "(the pretraining of paper-gpu-encoder's version 2: 101.6M tokens over the first 40 "
        "files of enwiki/AA/, where version 3 reads all 100) and "
        "its untrained twin at three learning rates around paper-gpu-encoder's 1e-4 (a "
        "`tasks.glue.lr` sweep; everything else as paper-gpu-encoder fine-tunes). Where a "
        "learning rate lets the model clear its gates, the paper-gpu suites should fine-tune "
        "at it; where none does, the learning rate is not what keeps it under them.",
        "bert-small-ce",
        "glue",
    ),
    Diagnostic(
        "check-known-encoder",
        "Diagnostic: a published encoder through our GLUE recipe",
        "Can our GLUE recipe show a well pretrained encoder at all? "
        "`suites/check-known-encoder.yaml` fine-tunes sentence-transformers/all-MiniLM-L6-v2 "
        "(BERT L6 H384, distilled from a large pretrained model, then trained contrastively on "
        "about a billion sentence pairs, SNLI, MultiNLI and QQP among them: an upper reference, "
        "not a masked-LM twin; it has no untrained twin here) exactly as the paper suites "
        "fine-tune theirs. Where it clears the gates by far, the recipe can show pretraining, "
        "and what keeps our models under their gates is their pretraining.",
        "all-minilm-l6-v2",
        "glue",
    ),
    Diagnostic(
        "paper-cpu-glue-low-resource",
        "Diagnostic: a small GLUE fine-tuning set at CPU scale",
        "Does bert-tiny's pretraining show on GLUE when the fine-tuning set is small? "
        "`suites/paper-cpu-glue-low-resource.yaml` fine-tunes paper-cpu-encoder's bert-tiny-ce "
        "(its seed 0 pretraining) and its untrained twin on 500 examples of SST-2, MRPC and "
        "STS-B, 10 epochs, three fine-tuning runs each (their mean), where paper-cpu-encoder "
        "fine-tunes on 4000 for 3 epochs. Where the model clears its gates here, the larger "
        "fine-tuning set was teaching the twin the tasks' surface cues.",
        "bert-tiny-ce",
        "glue",
    ),
)


def _point_label(sweep_json: str) -> str:
    return SweepPoint.of(sweep_json).words(short=True)


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if not values.empty else math.nan


def _point_rows(
    diag: Diagnostic, at: pd.DataFrame, twin: str | None
) -> tuple[list[list[str]], bool]:
    """The table's lines of one sweep point (its rows `at`), and whether every gate passed."""
    label = _point_label(str(at["sweep"].iloc[0]))
    lines, all_passed = [], True
    for sub, gate in TASKS.get(diag.task_type).gates.items():
        task = f"{diag.task_type}/{sub}" if sub else diag.task_type
        mine = final_values(at, diag.model, task, gate.metric)
        if mine.empty:
            continue
        value = _mean(mine)
        check = Check(task, gate).outcome(at, diag.model, value)
        theirs = _mean(final_values(at, twin, task, gate.metric)) if twin else math.nan
        side = "≤" if check.at_most else "≥"
        state = "passed" if check.passed else f"failed (needs {side} {num(check.bar)})"
        all_passed &= check.passed
        cells = [label, task, gate.metric, num(value), num(theirs), num(value - theirs)]
        lines.append([*cells, str(len(mine)), state])
    return lines, all_passed


def _section(diag: Diagnostic, rows: pd.DataFrame) -> list[str]:
    head = ["", f"## {diag.title}", "", diag.question]
    run = f"`hlm run {diag.suite}`"
    if rows.empty or diag.model not in set(rows["model"]):
        return [*head, "", f"No rows of {diag.model} committed yet: run {run} and regenerate."]
    twin = untrained_twin(rows, diag.model)
    machines = run_on(machine_counts(rows))
    at_point = dict(list(rows.groupby(rows["sweep"].astype(str))))
    points = sorted(at_point, key=point_order)
    lines: list[list[str]] = []
    passing: list[str] = []
    for point in points:
        mine, passed = _point_rows(diag, at_point[point], twin)
        lines += mine
        passing += [_point_label(point)] if passed and mine else []
    who = f"{diag.model} against its untrained twin {twin}" if twin else diag.model
    delta = "; Δ: the model minus the twin" if twin else ""
    lead = (
        f"Our rows: `{diag.suite}` ({run}); {machines}. {who}, at each point's "
        f"final checkpoint{delta}; means over the seeds counted, no test."
    )
    return [*head, "", lead, "", table(COLUMNS, lines), "", _answer(diag.model, points, passing)]


def _answer(model: str, points: list[str], passing: list[str]) -> str:
    """The closing sentence: at how many of the points `model` passes every gate."""
    if len(points) == 1:
        return f"{model} {'passes every gate' if passing else 'fails at least one gate'}."
    where = f" ({', '.join(passing)})" if passing else ""
    return f"{model} passes every gate at {len(passing)} of {len(points)} points{where}."


def diagnostic_sections(root: Path) -> list[str]:
    """The page's lines of every diagnostic, from the leaderboards under `root`."""
    parts: list[str] = []
    for diag in DIAGNOSTICS:
        parts += _section(diag, read_leaderboard(root / diag.suite, damaged="refuse"))
    return parts

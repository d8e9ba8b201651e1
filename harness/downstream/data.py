"""Downstream task data: what each task is, and how to read it from the Hub or local files.

The source is chosen by configuration (`source: hub | local`), never guessed. Hub ids are the
ones the field uses (nyu-mll/glue, aps/super_glue, facebook/xnli). Local files follow the
formats of ../shared/data (see its MANIFEST.md): GLUE TSVs (CoLA without header, MRPC with a
UTF-8 BOM, QNLI/RTE string labels, unbalanced quotes: split on tabs, never csv-quote), SuperGLUE
jsonl, XNLI per-language TSVs with CRLF (split on "\\n", strip "\\r", never splitlines()).
Label ids follow the hub datasets, so both sources train the same head.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.results.gates import Gate
from zoo.data.corpus import data_root
from zoo.errors import UserError
from zoo.reader import MAX_BYTES, read_text

Kind = Literal["classification", "regression", "multiple_choice"]


@dataclass(frozen=True)
class Example:
    text_a: str
    text_b: str | None
    label: float  # class id, or a score for regression
    choices: tuple[str, ...] = ()  # multiple choice: text_a is paired with each choice


@dataclass(frozen=True)
class LocalSplit:
    files: tuple[str, ...]  # relative to the data dir; several are concatenated (MNLI m+mm)
    reader: Callable[[Path, TaskData], list[Example]]


@dataclass(frozen=True)
class TaskData:
    name: str
    benchmark: str
    kind: Kind
    labels: tuple[str, ...]  # class names, index = id (empty for regression)
    metrics: tuple[str, ...]
    hub: tuple[str, str]  # dataset id, config
    hub_train: str
    hub_eval: tuple[str, ...]
    to_example: Callable[[dict[str, Any], TaskData], Example]
    local_train: LocalSplit | None = None
    local_eval: LocalSplit | None = None
    notes: str = ""
    generate: Callable[[str], list[Example]] | None = None  # built-in data (split -> examples)
    extra: dict[str, Any] = field(default_factory=dict)
    gate: Gate | None = None  # the sanity gate on its own metric (`harness.results.gates`)

    @property
    def primary(self) -> str:
        return self.metrics[0]

    @property
    def scored(self) -> tuple[str, ...]:
        """The metrics a fine-tuned model is scored on: the task's own, and for a task with
        classes the share of its most frequent answer (`answer_share`), which says whether
        an accuracy measures the task or an answer bias."""
        return (*self.metrics, "answer_share") if self.labels else self.metrics

    @property
    def num_labels(self) -> int:
        """Outputs of its head per input (a multiple-choice head scores each choice)."""
        return KIND_LABELS[self.kind].num_labels(self)

    def label(self, raw: Any) -> float:
        """A raw label as an `Example` keeps it: a class id, or a score for regression."""
        return KIND_LABELS[self.kind].parse(self, raw)


@dataclass(frozen=True)
class KindLabels:
    """What a kind of task means for its labels (its training and prediction:
    `harness.downstream.classifier.HEADS`)."""

    num_labels: Callable[[TaskData], int]
    parse: Callable[[TaskData, Any], float]


def label_id(task: TaskData, raw: Any) -> int:
    """A raw label (int, bool, '0', 'entailment', 'true') as the hub's class id."""
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, int):
        return raw
    s = str(raw).strip()
    if s.lstrip("-").isdigit():
        return int(s)
    if s in task.labels:
        return task.labels.index(s)
    low = s.lower()
    if low in ("true", "false") and set(task.labels) >= {"false", "true"}:
        return task.labels.index(low)
    raise UserError(
        f"{task.benchmark}/{task.name}: unknown label {raw!r} (labels: {', '.join(task.labels)})"
    )


KIND_LABELS: dict[Kind, KindLabels] = {
    "classification": KindLabels(lambda task: len(task.labels), label_id),
    "regression": KindLabels(lambda task: 1, lambda task, raw: float(raw)),
    "multiple_choice": KindLabels(lambda task: 2, label_id),  # the choice's index
}


# --- local readers ------------------------------------------------------------------------
def read_tsv(path: Path, header: bool) -> list[list[str]]:
    text = read_text(path, "a benchmark file", MAX_BYTES, encoding="utf-8-sig")
    rows = [line.rstrip("\r").split("\t") for line in text.split("\n") if line.strip()]
    return rows[1:] if header else rows


def tsv_reader(
    text_a: str | int, text_b: str | int | None, label: str | int, header: bool = True
) -> Callable[[Path, TaskData], list[Example]]:
    def read(path: Path, task: TaskData) -> list[Example]:
        rows = read_tsv(path, header)
        head = read_tsv(path, False)[0] if header else []

        def col(row: list[str], c: str | int | None) -> str | None:
            if c is None:
                return None
            i = c if isinstance(c, int) else head.index(c)
            return row[i] if i < len(row) else None

        out = []
        for n, row in enumerate(rows):
            a, b, y = col(row, text_a), col(row, text_b), col(row, label)
            if a is None or y is None or (text_b is not None and b is None):
                raise UserError(
                    f"{path}:{n + 1 + int(header)}: expected columns {text_a}, {text_b}, {label}"
                )
            out.append(Example(a, b, task.label(y)))
        return out

    return read


def jsonl_reader(path: Path, task: TaskData) -> list[Example]:
    out = []
    for n, line in enumerate(read_text(path, "a benchmark file", MAX_BYTES).split("\n")):
        if line.strip():
            try:
                out.append(task.to_example(json.loads(line), task))
            except (KeyError, json.JSONDecodeError) as exc:
                raise UserError(
                    f"{path}:{n + 1}: cannot read a {task.name} example ({exc})"
                ) from None
    return out


def xnli_reader(part: str) -> Callable[[Path, TaskData], list[Example]]:
    """XNLI per-language TSV. The local (XTREME) test files carry no labels, so the labelled
    dev file is split by premise: each premise comes with three hypotheses (one per label) on
    consecutive rows, and every fifth premise (group index % 5 == 0) with its three rows is
    `eval`, the rest `train`. A split by row would put a premise in both halves with different
    labels, and a model that learns the premise scores below chance. The languages' files are
    parallel, so the split holds the same sentences in every language."""

    def read(path: Path, task: TaskData) -> list[Example]:
        rows = read_tsv(path, header=False)
        if any(len(r) < 3 for r in rows):
            raise UserError(
                f"{path}: rows without a label column (the XTREME test files are unlabelled)"
            )
        premises = itertools.groupby(rows, key=lambda r: r[0])  # consecutive rows, one premise
        keep = [
            r
            for g, (_, block) in enumerate(premises)
            if (g % 5 == 0) == (part == "eval")
            for r in block
        ]
        return [Example(r[0], r[1], label_id(task, r[2])) for r in keep]

    return read


# --- hub rows -> examples -----------------------------------------------------------------
def pair(
    a: str, b: str | None, label: str = "label"
) -> Callable[[dict[str, Any], TaskData], Example]:
    def conv(row: dict[str, Any], task: TaskData) -> Example:
        y = row[label]
        return Example(
            str(row[a]),
            None if b is None else str(row[b]),
            task.label(y),
        )

    return conv


def copa_example(row: dict[str, Any], task: TaskData) -> Example:
    connective = {"cause": "What was the cause?", "effect": "What happened as a result?"}[
        row["question"]
    ]
    return Example(
        f"{row['premise']} {connective}",
        None,
        label_id(task, row["label"]),
        (row["choice1"], row["choice2"]),
    )


def wic_example(row: dict[str, Any], task: TaskData) -> Example:
    return Example(
        f"{row['word']}: {row['sentence1']}", row["sentence2"], label_id(task, row["label"])
    )


def local_names(task: TaskData, split: str, source: str, files: list[str] | None) -> list[str]:
    """The local files `load_examples` reads for `split` ("train" or "eval"), by name: the
    ones the user gives (`files`, read whatever the source), else with `source: local` the
    task's known files (under the data root); [] where it reads none (data the task
    generates, the hub, or none known)."""
    if task.generate is not None or (source != "local" and not files):
        return []
    local = task.local_train if split == "train" else task.local_eval
    return list(files or (local.files if local else []))


def local_path(root: Path, name: str) -> Path:
    """Where a local file named `name` (absolute, or under the data root `root`) is read."""
    return Path(name) if Path(name).is_absolute() else root / name


def load_examples(
    task: TaskData,
    split: str,
    source: str,
    data_dir: Path | None,
    files: list[str] | None = None,
    user_reader: Callable[[Path, TaskData], list[Example]] | None = None,
    revision: str | None = None,
) -> list[Example]:
    """Examples of `split` ("train" or "eval") from the hub (at `revision`: a commit, branch
    or tag of the dataset; None: its main branch when it is read), the known local files, or
    `files` the user points at (read with the task's local reader, else `user_reader`, else
    jsonl). Tasks with built-in data (`generate`) ignore the source."""
    if task.generate is not None:
        return task.generate(split)
    if source == "local" or files:
        root = data_dir or data_root()
        local = task.local_train if split == "train" else task.local_eval
        names = local_names(task, split, source, files)
        if not names:
            raise UserError(
                f"{task.benchmark}/{task.name}: no local {split} files are known "
                f"({task.notes or 'none staged'}); "
                f"use source: hub or give {split}_files"
            )
        reader = local.reader if local else (user_reader or jsonl_reader)
        out: list[Example] = []
        for name in names:
            path = local_path(root, name)
            if not path.is_file():
                raise UserError(
                    f"{task.benchmark}/{task.name}: local {split} file not found: {path}"
                )
            out.extend(reader(path, task))
        return out
    from datasets import load_dataset

    dataset, config = task.hub
    splits = [task.hub_train] if split == "train" else list(task.hub_eval)
    at = f" at revision {revision}" if revision else ""
    out = []
    for s in splits:
        try:
            ds = load_dataset(dataset, config, split=s, revision=revision)
        except Exception as exc:  # offline, unknown id, unknown revision, no access
            raise UserError(
                f"{task.benchmark}/{task.name}: cannot load {dataset}/{config} split {s}{at} "
                f"from the Hub ({type(exc).__name__}: {exc}); use source: local with local files"
            ) from None
        out.extend(task.to_example(dict(row), task) for row in ds)
    return out

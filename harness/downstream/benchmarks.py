"""The GLUE, SuperGLUE and XNLI tasks: labels, metrics, hub ids and local files."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.downstream.data import (
    Example,
    Kind,
    LocalSplit,
    TaskData,
    copa_example,
    jsonl_reader,
    pair,
    tsv_reader,
    wic_example,
    xnli_reader,
)
from harness.results.gates import Gate

NLI3 = ("entailment", "neutral", "contradiction")  # nyu-mll/glue mnli, facebook/xnli ids
ENTAIL2 = ("entailment", "not_entailment")  # qnli, rte


# each task's sanity gate on its own metric, a bar the paper's BERT passes
GLUE_GATES: dict[str, Gate] = {
    "cola": Gate("mcc", 0.0, 0.05, paper="MCC 54.66 (Table 1)"),
    "sst2": Gate(
        "accuracy",
        "majority",
        0.05,
        paper="92.45 % (Table 1); the majority class is 50.9 %",
    ),
    "mrpc": Gate(
        "f1",
        "majority",
        0.02,
        majority_f1=True,
        paper="BERT-base: F1 88.9 on MRPC (Devlin et al., 2019); answering the majority "
        "(paraphrase) class always gives 0.81",
    ),
    "stsb": Gate("pearson", 0.0, 0.1, paper="Spearman 83.7 (Table 1)"),
    "qnli": Gate("accuracy", "majority", 0.02, paper="88.38 % (Table 1); balanced classes"),
    "qqp": Gate(
        "accuracy", "majority", 0.02, paper="89.57 % (Table 1); the majority class is 63 %"
    ),
    "mnli": Gate("accuracy", "majority", 0.02, paper="82.4 % (Table 1); three balanced classes"),
    "rte": Gate(
        "accuracy",
        "majority",
        0.02,
        paper="BERT-base: 66.4 % on RTE (Devlin et al., 2019); the majority class is 52.7 %",
    ),
}


def _glue(
    name: str,
    kind: Kind,
    labels: tuple[str, ...],
    metrics: tuple[str, ...],
    a: str,
    b: str | None,
    train: LocalSplit | None,
    dev: LocalSplit | None,
    hub_eval: tuple[str, ...] = ("validation",),
    notes: str = "",
) -> TaskData:
    return TaskData(
        name=name,
        benchmark="glue",
        kind=kind,
        labels=labels,
        metrics=metrics,
        hub=("nyu-mll/glue", name),
        hub_train="train",
        hub_eval=hub_eval,
        to_example=pair(a, b),
        local_train=train,
        local_eval=dev,
        notes=notes,
        gate=GLUE_GATES[name],
    )


GLUE: dict[str, TaskData] = {
    t.name: t
    for t in (
        _glue(
            "cola",
            "classification",
            ("unacceptable", "acceptable"),
            ("mcc",),
            "sentence",
            None,
            LocalSplit(("glue/CoLA/train.tsv",), tsv_reader(3, None, 1, header=False)),
            LocalSplit(("glue/CoLA/dev.tsv",), tsv_reader(3, None, 1, header=False)),
        ),
        _glue(
            "sst2",
            "classification",
            ("negative", "positive"),
            ("accuracy",),
            "sentence",
            None,
            LocalSplit(("glue/SST-2/train.tsv",), tsv_reader("sentence", None, "label")),
            LocalSplit(("glue/SST-2/dev.tsv",), tsv_reader("sentence", None, "label")),
        ),
        _glue(
            "mrpc",
            "classification",
            ("not_equivalent", "equivalent"),
            ("accuracy", "f1"),
            "sentence1",
            "sentence2",
            LocalSplit(("glue/MRPC/train.tsv",), tsv_reader("#1 String", "#2 String", "Quality")),
            LocalSplit(("glue/MRPC/dev.tsv",), tsv_reader("#1 String", "#2 String", "Quality")),
        ),
        _glue(
            "stsb",
            "regression",
            (),
            ("spearman", "pearson"),
            "sentence1",
            "sentence2",
            LocalSplit(("glue/STS-B/train.tsv",), tsv_reader("sentence1", "sentence2", "score")),
            LocalSplit(("glue/STS-B/dev.tsv",), tsv_reader("sentence1", "sentence2", "score")),
        ),
        _glue(
            "qnli",
            "classification",
            ENTAIL2,
            ("accuracy",),
            "question",
            "sentence",
            None,
            LocalSplit(("glue/QNLI/dev.tsv",), tsv_reader("question", "sentence", "label")),
            notes="no local train split: use source: hub or train_files",
        ),
        _glue(
            "qqp",
            "classification",
            ("not_duplicate", "duplicate"),
            ("accuracy", "f1"),
            "question1",
            "question2",
            None,
            None,
            notes="no local files: use source: hub or train_files / eval_files",
        ),
        _glue(
            "mnli",
            "classification",
            NLI3,
            ("accuracy",),
            "premise",
            "hypothesis",
            None,
            None,
            hub_eval=("validation_matched", "validation_mismatched"),
            notes="evaluated on matched + mismatched concatenated; no local files: use source: "
            "hub or train_files / eval_files (GLUE TSVs: sentence1, sentence2, gold_label)",
        ),
        _glue(
            "rte",
            "classification",
            ENTAIL2,
            ("accuracy",),
            "sentence1",
            "sentence2",
            LocalSplit(("glue/RTE/train.tsv",), tsv_reader("sentence1", "sentence2", "label")),
            LocalSplit(("glue/RTE/dev.tsv",), tsv_reader("sentence1", "sentence2", "label")),
        ),
    )
}
# User-provided MNLI / QQP files in the GLUE TSV format
USER_TSV = {
    "mnli": tsv_reader("sentence1", "sentence2", "gold_label"),
    "qqp": tsv_reader("question1", "question2", "is_duplicate"),
    "qnli": tsv_reader("question", "sentence", "label"),
}


def _sg(
    name: str,
    kind: Kind,
    labels: tuple[str, ...],
    conv: Callable[[dict[str, Any], TaskData], Example],
    folder: str,
) -> TaskData:
    return TaskData(
        name=name,
        benchmark="superglue",
        kind=kind,
        labels=labels,
        metrics=("accuracy",),
        hub=("aps/super_glue", name),
        hub_train="train",
        hub_eval=("validation",),
        to_example=conv,
        local_train=LocalSplit((f"superglue/{folder}/train_fewglue32.jsonl",), jsonl_reader),
        local_eval=LocalSplit((f"superglue/{folder}/val.jsonl",), jsonl_reader),
        notes="local train files are the FewGLUE 32-example subsets",
    )


SUPERGLUE: dict[str, TaskData] = {
    t.name: t
    for t in (
        _sg("boolq", "classification", ("false", "true"), pair("question", "passage"), "BoolQ"),
        _sg(
            "cb",
            "classification",
            ("entailment", "contradiction", "neutral"),
            pair("premise", "hypothesis"),
            "CB",
        ),
        _sg("copa", "multiple_choice", ("choice1", "choice2"), copa_example, "COPA"),
        _sg("wic", "classification", ("false", "true"), wic_example, "WiC"),
    )
}

XNLI_LANGUAGES = (
    "ar",
    "bg",
    "de",
    "el",
    "en",
    "es",
    "fr",
    "hi",
    "ru",
    "sw",
    "th",
    "tr",
    "ur",
    "vi",
    "zh",
)
PAPER_XNLI_LANGUAGES = ("ar", "de", "en", "es", "fr", "hi", "zh")
# three balanced classes; the paper's weakest language, Hindi zero-shot, scores 43.16 %
XNLI_GATE = Gate("accuracy", 1 / 3, 0.02, paper="43.16 % to 74.03 % per language (Table 5)")


def xnli(lang: str) -> TaskData:
    """Locally only the dev files are labelled: train on 80% of the premises, evaluate on the
    rest."""
    return TaskData(
        name=lang,
        benchmark="xnli",
        kind="classification",
        labels=NLI3,
        metrics=("accuracy",),
        hub=("facebook/xnli", lang),
        hub_train="train",
        hub_eval=("validation",),
        to_example=pair("premise", "hypothesis"),
        local_train=LocalSplit((f"xnli/dev-{lang}.tsv",), xnli_reader("train")),
        local_eval=LocalSplit((f"xnli/dev-{lang}.tsv",), xnli_reader("eval")),
        notes="local: the labelled dev file split 80/20 by row index",
        gate=XNLI_GATE,
    )


def _agreement(split: str) -> list[Example]:
    from zoo.data.synthetic import agreement_examples

    n, seed = (2000, 1) if split == "train" else (500, 2)
    return [Example(text, None, label) for text, label in agreement_examples(n, seed)]


SYNTHETIC: dict[str, TaskData] = {
    "agreement": TaskData(
        name="agreement",
        benchmark="synthetic",
        kind="classification",
        labels=("violated", "acceptable"),
        metrics=("mcc", "accuracy"),
        hub=("", ""),
        hub_train="",
        hub_eval=(),
        to_example=pair("text", None),
        generate=_agreement,
        notes="built in: sentences of the synthetic language, half with broken agreement",
    )
}

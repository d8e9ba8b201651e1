"""Where our side of each paper figure comes from: one `Source` per figure of `PAPER`.

A `Source` names the suite whose committed leaderboard (`leaderboards/<suite>/`) holds our
rows, the task and metric, the model playing each role, the checkpoint compared (`at`), the
unit of replication (`unit`, from the metric's `replicate`: the pretraining seed, or for speed
and memory the side-by-side measurement), where our protocol differs from the paper's
(`differs`), and the sanity `Check`s the vanilla model must pass for the comparison to say
anything. Each check applies the gate its task type declares (`TaskType.gates`: the task's
own metric against chance, a bar the paper's own model passes). The suites are the
`paper-cpu-*` parts under `suites/`; `harness.paper.scales` maps them to other sizes.
`harness.paper.findings` computes the findings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import pandas as pd

from harness.paper.figures import PaperFigure, Role
from harness.results.gates import Gate, GateCheck
from harness.results.leaderboard import final_rows, unfinished
from harness.results.metrics import metric_info
from harness.tasks import TASKS

At = Literal["final", "equal-time", "along", "sweep"]
Unit = Literal["seed", "measurement"]


def _measured(metric: str) -> bool:
    """Whether `metric` is a measurement of a cell that pretrains nothing (speed, memory)."""
    return metric_info(metric).replicate == "measurements"


def rows_of(rows: pd.DataFrame, model: str, task: str, metric: str) -> pd.DataFrame:
    """`model`'s rows of `task` and `metric`, every checkpoint."""
    return rows[(rows["model"] == model) & (rows["task"] == task) & (rows["metric"] == metric)]


def final_values(rows: pd.DataFrame, model: str, task: str, metric: str) -> pd.Series:
    """`metric` of `model` on `task` at each seed's final checkpoint, one value per seed (a
    seed whose final checkpoint is not evaluated yet has none: `waiting`)."""
    return final_rows(rows_of(rows, model, task, metric)).groupby("seed")["value"].mean()


def waiting(rows: pd.DataFrame, model: str, task: str, metric: str) -> str:
    """The seeds of `model` with `task` rows along pretraining but none of the final
    checkpoint yet (a cell cut off mid-way), in words; empty where there are none."""
    return "; ".join(
        f"seed {int(key[2])}: {model}'s {task} has steps {', '.join(map(str, steps))} only, "
        "not its final checkpoint yet"
        for key, steps in unfinished(rows_of(rows, model, task, metric)).items()
    )


def gate(task_type: str, sub: str = "") -> Gate:
    """The sanity gate task type `task_type` declares for its sub-task `sub`."""
    return TASKS.get(task_type).gates[sub]


@dataclass(frozen=True)
class Check:
    """The gate of `task` (its label in the rows) applied to a model's final rows."""

    task: str
    gate: Gate

    def run(self, rows: pd.DataFrame, model: str) -> GateCheck:
        """The gate's outcome for `model`'s final rows, its text led by the task's label."""
        mine = final_values(rows, model, self.task, self.gate.metric)
        if mine.empty:
            nan = float("nan")
            later = waiting(rows, model, self.task, self.gate.metric)
            why = f" of the final checkpoint ({later})" if later else ""
            text = f"{self.task}: no `{self.gate.metric}` row{why}"
            return GateCheck(False, nan, nan, text, name=self.name)
        found = self.outcome(rows, model, float(mine.mean()))
        return replace(found, text=f"{self.task} {found.text}", name=self.name)

    @property
    def name(self) -> str:
        """What the gate reads, in words: the task's label and the metric."""
        return f"{self.task} {self.gate.metric}"

    def outcome(self, rows: pd.DataFrame, model: str, value: float) -> GateCheck:
        """The gate's outcome for `model`'s mean final `value`: against chance (or the bar its
        baseline metric sets) and, where it passes that, against its untrained twin in
        `rows`; the text does not name the task."""

        def baseline(metric: str) -> float | None:
            values = final_values(rows, model, self.task, metric)
            return None if values.empty else float(values.mean())

        found = self.gate.check(value, baseline)
        twin = untrained_twin(rows, model)
        if found.passed and twin is not None:
            theirs = final_values(rows, twin, self.task, self.gate.metric)
            if not theirs.empty:
                beaten = self.gate.check_untrained(found.value, float(theirs.mean()), twin)
                found = found if beaten is None else beaten
        return found


def untrained_twin(rows: pd.DataFrame, model: str) -> str | None:
    """The model of `rows` with `model`'s preset whose every row saw no training token (a
    `steps: 0` run: the initial weights), or None."""
    preset = rows.loc[rows["model"] == model, "preset"]
    if preset.empty:
        return None
    same = rows[(rows["preset"] == preset.iloc[0]) & (rows["model"] != model)]
    untrained = same.groupby("model")["tokens_seen"].max()
    return next(iter(sorted(untrained.index[untrained == 0])), None)


@dataclass(frozen=True)
class Parts:
    """The parts an average is made of, each fine-tuned and scored on its own (XNLI's
    languages): the tasks named `prefix` + part and their `metric`; `name` says what a part
    is. At one seed without kept samples, they pair up for a test."""

    prefix: str
    metric: str
    name: str


@dataclass(frozen=True)
class Source:
    """Our figure: suite, task, metric, the model per role, the checkpoint, the unit, the
    sanity checks; `unavailable` says why no rows can exist here (no local data); `parts`:
    what an average is made of (its per-part gaps are shown); `speed`: for `equal-time`, the
    (suite, model) whose side-by-side `speedup_vs_baseline` sets the equal-time step;
    `differs`: where our protocol differs from the paper's; `machine`: for a speed measured
    again on a second machine (`harness.paper.scales`), the kind of machine each of its rows
    must record (part of their `hardware`); its rows lie in that machine's `folder`."""

    suite: str
    task: str
    metric: str
    roles: dict[Role, str]
    at: At = "final"
    checks: tuple[Check, ...] = ()
    unavailable: str = ""
    parts: Parts | None = None
    speed: tuple[str, str] | None = None
    differs: str = ""
    machine: str = ""

    @property
    def folder(self) -> str:
        """The subfolder of the leaderboards holding a second machine's rows (its name in
        lower case, dashed: `amd-epyc`); '' for the suite's own folder."""
        return self.machine.lower().replace(" ", "-")

    @property
    def board(self) -> str:
        """The rows' folder under the leaderboards: `<suite>`, or `<folder>/<suite>`."""
        return f"{self.folder}/{self.suite}" if self.folder else self.suite

    @property
    def command(self) -> str:
        """The command that computes the rows into `board` (in a second machine's folder,
        the measured task's cells alone: nothing there is pretrained)."""
        if not self.folder:
            return f"hlm run {self.suite}"
        return f"hlm run {self.suite} --task {self.task} --leaderboards leaderboards/{self.folder}"

    @property
    def unit(self) -> Unit:
        """ "measurement" where the metric's cell pretrains nothing (`Metric.replicate`: speed
        and memory, measured side by side), else "seed"."""
        return "measurement" if _measured(self.metric) else "seed"


ENCODER = "paper-cpu-encoder"
DECODER = "paper-cpu-decoder"
ENC: dict[Role, str] = {"vanilla": "bert-tiny-ce", "headless": "bert-tiny-cwt"}
DEC: dict[Role, str] = {
    "vanilla": "pythia-tiny-ce",
    "headless": "pythia-tiny-cwt",
    "headless+ft": "pythia-tiny-cwt-ft",
}
ENCODER_SANE = (Check("glue/sst2", gate("glue", "sst2")), Check("glue/stsb", gate("glue", "stsb")))
DECODER_SANE = (Check("validation", gate("validation")),)
LAMBADA = "lm_eval/hlm_lambada"
LAMBADA_SANE = (*DECODER_SANE, Check(LAMBADA, gate("lm_eval", "hlm_lambada")))
# a perplexity is compared only where the model also predicts the target: with 0 % accuracy,
# a perplexity far under the unigram one still says the model cannot answer
LAMBADA_PPL_SANE = (*LAMBADA_SANE, Check(LAMBADA, gate("lm_eval", "hlm_lambada/perplexity")))
# the paper's side of a protocol; ours is read from the rows (`harness.paper.labels.protocol`)
GLUE_PROTOCOL = "the paper: full training sets (Appendix E)"
AVERAGE_PROTOCOL = (
    "the paper's average: seven tasks without RTE (ours averages those with a local train "
    "set: QNLI, QQP, MNLI need the Hub). " + GLUE_PROTOCOL
)
FINETUNE_PROTOCOL = (
    "headless+ft: the paper's after 10,000 causal fine-tuning steps at a quarter of the "
    "pretraining batch (under 2 % of its tokens); ours as the run says"
)
# Table 1's columns by the paper's name: our task and the metric the paper reports there
# (Matthews correlation for CoLA, Spearman for STS-B, accuracy elsewhere); no task where the
# data has no local train set
GLUE_TASKS: dict[str, tuple[str, str]] = {
    "MRPC": ("mrpc", "accuracy"),
    "CoLA": ("cola", "mcc"),
    "STS-B": ("stsb", "spearman"),
    "SST-2": ("sst2", "accuracy"),
    "QNLI": ("", ""),
    "QQP": ("", ""),
    "MNLI": ("", ""),
    "average": ("average", "average"),
}
NO_LOCAL_TRAIN = "no local train set (QNLI, QQP, MNLI need `source: hub`)"


def _glue(fig_task: str, at: At, roles: dict[Role, str], suite: str = ENCODER) -> Source:
    """Table 1's figure for one task (by the paper's name)."""
    task, metric = GLUE_TASKS[fig_task]
    if not task:
        return Source(suite, f"glue/{fig_task.lower()}", "", roles, unavailable=NO_LOCAL_TRAIN)
    own: tuple[Check, ...] = ()
    if task != "average" and f"glue/{task}" not in {c.task for c in ENCODER_SANE}:
        own = (Check(f"glue/{task}", gate("glue", task)),)
    differs = AVERAGE_PROTOCOL if task == "average" else GLUE_PROTOCOL
    speed = ("paper-cpu-ablation", roles["headless"]) if at == "equal-time" else None
    return Source(
        suite, f"glue/{task}", metric, roles, at, ENCODER_SANE + own, speed=speed, differs=differs
    )


def _zero_shot(task: str, metric: str) -> Source:
    own = TASKS.get("lm_eval").gates
    checks = DECODER_SANE + ((Check(f"lm_eval/{task}", own[task]),) if task in own else ())
    roles: dict[Role, str] = {"vanilla": DEC["vanilla"], "headless+ft": DEC["headless+ft"]}
    return Source(
        DECODER, f"lm_eval/{task}", metric, roles, checks=checks, differs=FINETUNE_PROTOCOL
    )


def _ablation(variant: str, task: str, metric: str, base: str = "ce") -> Source:
    roles: dict[Role, str] = {"vanilla": f"bert-tiny-{base}", "headless": f"bert-tiny-{variant}"}
    if _measured(metric):  # measured side by side in one process: no pretraining, no gate
        return Source("paper-cpu-ablation", task, metric, roles)
    return Source(
        "paper-cpu-ablation", task, metric, roles, checks=ENCODER_SANE, differs=AVERAGE_PROTOCOL
    )


def _figure2(metric: str) -> Source:
    """Figure 2: bert-small's speed or memory per batch size, relative to vanilla's, as the
    throughput task measures it side by side (vanilla and headless alternating)."""
    roles: dict[Role, str] = {"vanilla": "bert-small-ce", "headless": "bert-small-cwt"}
    return Source(
        "paper-cpu-throughput",
        "throughput",
        metric,
        roles,
        "sweep",
        differs="ours: bert-small, 128 tokens, on the CPU the rows line names; the paper's: "
        "BERT-base, 512 tokens, one RTX 8000 GPU",
    )


def _xnli(mode: str) -> Source:
    """Table 5 in one set-up; the vanilla model must be clearly above chance in that set-up."""
    task = f"xnli-{mode}/average"
    languages = Parts(f"xnli-{mode}/", "accuracy", "languages")
    checks = (Check(task, gate("xnli", "average")),)
    return Source("paper-cpu-xnli", task, "average", ENC, checks=checks, parts=languages)


SYNONYMS = "appendix-a: cosine of WordNet synonyms' input embeddings"
MARGIN = "appendix-a: synonyms' cosine above random pairs of the same words"
DUPLICATES = "duplicates: CWT duplicate targets {} vs kept (the paper's choice): GLUE average"
OTHER: dict[str, Source] = {
    "figure3: GLUE average along pretraining": Source(
        ENCODER, "glue/average", "average", ENC, "along", ENCODER_SANE, differs=AVERAGE_PROTOCOL
    ),
    "table3: validation loss (the paper's 'Ppl.' column holds log-perplexities)": Source(
        DECODER, "validation", "val_ce", DEC, checks=DECODER_SANE, differs=FINETUNE_PROTOCOL
    ),
    "table3: LAMBADA perplexity": Source(
        DECODER, LAMBADA, "perplexity", DEC, checks=LAMBADA_PPL_SANE, differs=FINETUNE_PROTOCOL
    ),
    "table3: LAMBADA accuracy": Source(
        DECODER, LAMBADA, "acc", DEC, checks=LAMBADA_SANE, differs=FINETUNE_PROTOCOL
    ),
    "table4: BoolQ zero-shot accuracy": _zero_shot("hlm_boolq", "acc"),
    "table4: CrowS-Pairs stereotype share": _zero_shot("hlm_crows_pairs_english", "pct_stereotype"),
    "table4: PubMedQA zero-shot accuracy": _zero_shot("hlm_pubmedqa", "acc"),
    "table5: XNLI average, fine-tuned on English only": _xnli("zero-shot"),
    "table5: XNLI average, fine-tuned on the target language": _xnli("translate-train"),
    "table6: GLUE average, ce + cwt": _ablation("ce-cwt", "glue/average", "average"),
    "table6: GLUE average, nce (untied targets)": _ablation("nce", "glue/average", "average"),
    "table6: throughput relative to ce, cwt": _ablation("cwt", "throughput", "speedup_vs_baseline"),
    "table6: throughput relative to ce, ce + cwt": _ablation(
        "ce-cwt", "throughput", "speedup_vs_baseline"
    ),
    "table6: throughput relative to ce, nce": _ablation("nce", "throughput", "speedup_vs_baseline"),
    "figure2: training speed relative to vanilla, per batch size": _figure2("speedup_vs_baseline"),
    "figure2: peak training memory relative to vanilla, per batch size": _figure2(
        "memory_vs_baseline"
    ),
    "figure6: vocabulary sweep: GLUE average": Source(
        "paper-cpu-vocab",
        "glue/average",
        "average",
        ENC,
        "sweep",
        ENCODER_SANE,
        differs=AVERAGE_PROTOCOL,
    ),
    "figure6: vocabulary sweep: training speed relative to vanilla": Source(
        "paper-cpu-vocab", "throughput", "speedup_vs_baseline", ENC, "sweep"
    ),
    "figure7: batch sweep: LAMBADA accuracy": Source(
        "paper-cpu-batch", LAMBADA, "acc", DEC, "sweep", LAMBADA_SANE
    ),
    "figure7: batch sweep: validation loss": Source(
        "paper-cpu-batch",
        "validation",
        "val_ce",
        {"vanilla": DEC["vanilla"], "headless+ft": DEC["headless+ft"]},
        "sweep",
        DECODER_SANE,
    ),
    f"{SYNONYMS}, encoder": Source(ENCODER, "synonyms", "synonym_cosine", ENC),
    f"{SYNONYMS}, decoder": Source(DECODER, "synonyms", "synonym_cosine", DEC),
    f"{MARGIN}, encoder": Source(ENCODER, "synonyms", "synonym_margin", ENC),
    f"{MARGIN}, decoder": Source(DECODER, "synonyms", "synonym_margin", DEC),
    DUPLICATES.format("masked"): _ablation("cwt-mask", "glue/average", "average", base="cwt"),
    DUPLICATES.format("unique"): _ablation("cwt-unique", "glue/average", "average", base="cwt"),
}


def source_of(fig: PaperFigure) -> Source:
    """Our source of one paper figure at CPU scale."""
    if fig.claim in ("table1-tokens", "table1-time"):
        task = fig.quantity.split(" ")[1]  # "GLUE MRPC dev, equal tokens"
        return _glue(task, "final" if fig.claim == "table1-tokens" else "equal-time", ENC)
    return OTHER[fig.key]


# the paper's results no suite here compares, and why (the report lists them)
NOT_ATTEMPTED: tuple[tuple[str, str, str], ...] = (
    (
        "Table 2",
        "SuperGLUE dev accuracy of the encoders",
        "not run: $HLM_DATA_ROOT holds SuperGLUE's dev sets but only the FewGLUE 32-example "
        "subsets of its train sets (the paper fine-tunes on the full ones), and the Hub is "
        "unreachable here; the `superglue` task type reads either (`source: hub`)",
    ),
    (
        "Table 4",
        "RACE, SciQ and QASPER zero-shot",
        "no local data: $HLM_DATA_ROOT holds none of them and the Hub is unreachable here",
    ),
    (
        "Figure 4",
        "LAMBADA accuracy and perplexity along pretraining",
        "not run: the decoders are evaluated on LAMBADA at their last checkpoint only",
    ),
    (
        "Figure 5",
        "XNLI average along pretraining",
        "not run: XNLI is evaluated at the last checkpoint only",
    ),
    (
        "Table 13",
        "GLUE after fine-tuning with plain cross-entropy",
        "not run: our GLUE fine-tuning uses balanced cross-entropy (the protocol of Table 14)",
    ),
)

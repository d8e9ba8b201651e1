"""Where our side of each paper figure comes from: one `Source` per figure of `PAPER`.

A `Source` names the suite whose committed leaderboard (`leaderboards/<suite>/`) holds our
rows, the task and metric, the model playing each role, the checkpoint compared (`at`), and
the sanity `Gate`s the vanilla model must clear for the comparison to say anything: a GLUE
task above its majority baseline, a decoder clearly below the unigram perplexity of the same
tokens, a zero-shot accuracy above the majority answer's share. The suites are the
`paper-cpu-*` parts under `suites/`; a `Scale` maps them to another size (`GPU`: the
`paper-gpu-*` parts, bert-small and gpt2-11m). `harness.paper.findings` computes the findings.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

import pandas as pd

from harness.paper.figures import PaperFigure, Role
from harness.results.leaderboard import latest_step

At = Literal["final", "equal-time", "along", "sweep"]


def final_values(rows: pd.DataFrame, model: str, task: str, metric: str) -> pd.Series:
    """`metric` of `model` on `task` at each seed's last checkpoint (indexed by seed)."""
    d = rows[(rows["model"] == model) & (rows["task"] == task) & (rows["metric"] == metric)]
    return latest_step(d).set_index("seed")["value"]


@dataclass(frozen=True)
class Gate:
    """The vanilla model's `metric` on `task` must beat `bar` (a baseline metric of the same
    rows, or a number computed from the data) by `margin`, or, with `factor`, be at most
    `factor` times it (lower-is-better metrics such as perplexity)."""

    task: str
    metric: str
    bar: str | Callable[[], float]
    margin: float = 0.0
    factor: float | None = None
    what: str = ""

    def check(self, rows: pd.DataFrame, model: str) -> tuple[bool, str]:
        """(cleared, what was compared)."""
        mine = final_values(rows, model, self.task, self.metric)
        if mine.empty:
            return False, f"no `{self.metric}` row for {model} on {self.task}"
        value = float(mine.mean())
        name = self.bar if isinstance(self.bar, str) else self.what
        bar = (
            float(final_values(rows, model, self.task, self.bar).mean())
            if isinstance(self.bar, str)
            else self.bar()
        )
        if self.factor is not None:
            text = f"{self.task} {self.metric} {value:.4g} vs {name} {bar:.4g} (needs <= x{self.factor})"
            return value <= bar * self.factor, text
        need = f"needs +{self.margin}" if self.margin else "needs at least as much"
        text = f"{self.task} {self.metric} {value:.3f} vs {name} {bar:.3f} ({need})"
        return value >= bar + self.margin, text


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
    """Our figure: suite, task, metric, the model per role, the checkpoint, the sanity bars;
    `unavailable` says why no rows can exist here (no local data); `relative`: gains as a
    share of vanilla's value (a latency cut, where points differ in scale); `parts`: what the
    average is made of, for a paired test at one seed."""

    suite: str
    task: str
    metric: str
    roles: dict[Role, str]
    at: At = "final"
    gates: tuple[Gate, ...] = ()
    unavailable: str = ""
    relative: bool = False
    parts: Parts | None = None


@cache
def majority_share(loader: str, label: str) -> float:
    """Share of the most frequent `label` in the evaluated split of a local lm-eval task."""
    from harness.lm_eval_tasks import hlm_utils

    data = getattr(hlm_utils, loader)()
    split = next(iter(data.values()))
    counts = Counter(json.dumps(v) for v in split[label])
    return max(counts.values()) / sum(counts.values())


ENCODER = "paper-cpu-encoder"
DECODER = "paper-cpu-decoder"
ENC: dict[Role, str] = {"vanilla": "bert-tiny-ce", "headless": "bert-tiny-cwt"}
DEC: dict[Role, str] = {
    "vanilla": "pythia-tiny-ce",
    "headless": "pythia-tiny-cwt",
    "headless+ft": "pythia-tiny-cwt-ft",
}
ENCODER_SANE = (
    Gate("glue/sst2", "accuracy", "majority", margin=0.05),
    Gate("glue/stsb", "spearman", "majority", margin=0.05),
)
DECODER_SANE = (Gate("validation", "val_ppl", "unigram_ppl", factor=0.5),)
LAMBADA_SANE = (
    *DECODER_SANE,
    Gate("lm_eval/hlm_lambada", "acc", lambda: 0.0, margin=0.01, what="zero"),
)
GLUE_TASKS = {
    "MRPC": "mrpc",
    "CoLA": "cola",
    "STS-B": "stsb",
    "SST-2": "sst2",
    "QNLI": "",
    "QQP": "",
    "MNLI": "",
    "average": "average",
}
NO_LOCAL_TRAIN = "no local train set (QNLI, QQP, MNLI need `source: hub`)"


def _glue(fig_task: str, at: At, roles: dict[Role, str], suite: str = ENCODER) -> Source:
    """Table 1's figure for one task (by the paper's name)."""
    task = GLUE_TASKS[fig_task]
    if not task:
        return Source(suite, f"glue/{fig_task.lower()}", "", roles, unavailable=NO_LOCAL_TRAIN)
    metric = {"cola": "mcc", "stsb": "spearman", "average": "average"}.get(task, "accuracy")
    own = () if task == "average" else (Gate(f"glue/{task}", metric, "majority", margin=0.02),)
    return Source(suite, f"glue/{task}", metric, roles, at, ENCODER_SANE + own)


def _zero_shot(task: str, metric: str, majority: tuple[str, str] | None) -> Source:
    gates: tuple[Gate, ...] = DECODER_SANE
    if majority is not None:
        loader, label = majority
        bar = Gate(
            f"lm_eval/{task}", metric, lambda: majority_share(loader, label), what="majority"
        )
        gates += (bar,)
    roles: dict[Role, str] = {"vanilla": DEC["vanilla"], "headless+ft": DEC["headless+ft"]}
    return Source(DECODER, f"lm_eval/{task}", metric, roles, gates=gates)


def _ablation(variant: str, task: str, metric: str, base: str = "ce") -> Source:
    roles: dict[Role, str] = {"vanilla": f"bert-tiny-{base}", "headless": f"bert-tiny-{variant}"}
    gates = ENCODER_SANE if task.startswith("glue") else ()
    return Source("paper-cpu-ablation", task, metric, roles, gates=gates)


def _figure2(metric: str) -> Source:
    """Figure 2: bert-small's `metric` per batch size, as a share of vanilla's."""
    roles: dict[Role, str] = {"vanilla": "bert-small-ce", "headless": "bert-small-cwt"}
    return Source("paper-cpu-throughput", "throughput", metric, roles, "sweep", relative=True)


def _xnli(mode: str) -> Source:
    """Table 5 in one set-up; the vanilla model must be clearly above chance in that set-up."""
    task = f"xnli-{mode}/average"
    chance = Gate(task, "average", lambda: 1 / 3, 0.02, what="chance (1/3)")
    languages = Parts(f"xnli-{mode}/", "accuracy", "languages")
    return Source("paper-cpu-xnli", task, "average", ENC, gates=(chance,), parts=languages)


SYNONYMS = "appendix-a: cosine of WordNet synonyms' input embeddings"
MARGIN = "appendix-a: synonyms' cosine above random pairs of the same words"
DUPLICATES = "duplicates: CWT duplicate targets {} vs kept (the paper's choice): GLUE average"
OTHER: dict[str, Source] = {
    "figure3: GLUE average along pretraining": Source(
        ENCODER, "glue/average", "average", ENC, "along", ENCODER_SANE
    ),
    "table3: validation loss (the paper's 'Ppl.' column holds log-perplexities)": Source(
        DECODER, "validation", "val_ce", DEC, gates=DECODER_SANE
    ),
    "table3: LAMBADA perplexity": Source(
        DECODER, "lm_eval/hlm_lambada", "perplexity", DEC, gates=LAMBADA_SANE
    ),
    "table3: LAMBADA accuracy": Source(
        DECODER, "lm_eval/hlm_lambada", "acc", DEC, gates=LAMBADA_SANE
    ),
    "table4: BoolQ zero-shot accuracy": _zero_shot("hlm_boolq", "acc", ("boolq", "label")),
    "table4: CrowS-Pairs stereotype share": _zero_shot(
        "hlm_crows_pairs_english", "pct_stereotype", None
    ),
    "table4: PubMedQA zero-shot accuracy": _zero_shot(
        "hlm_pubmedqa", "acc", ("pubmedqa", "final_decision")
    ),
    "table5: XNLI average, fine-tuned on English only": _xnli("zero-shot"),
    "table5: XNLI average, fine-tuned on the target language": _xnli("translate-train"),
    "table6: GLUE average, ce (vanilla) vs cwt": _ablation("cwt", "glue/average", "average"),
    "table6: GLUE average, ce + cwt": _ablation("ce-cwt", "glue/average", "average"),
    "table6: GLUE average, nce (untied targets)": _ablation("nce", "glue/average", "average"),
    "table6: throughput relative to ce, cwt": _ablation("cwt", "throughput", "speedup_vs_baseline"),
    "table6: throughput relative to ce, ce + cwt": _ablation(
        "ce-cwt", "throughput", "speedup_vs_baseline"
    ),
    "table6: throughput relative to ce, nce": _ablation("nce", "throughput", "speedup_vs_baseline"),
    "figure2: training step latency, BERT-base, 512 tokens": _figure2("step_ms"),
    "figure2: peak training memory, BERT-base, 512 tokens": _figure2("peak_rss_mb"),
    "figure6: vocabulary sweep: GLUE average": Source(
        "paper-cpu-vocab", "glue/average", "average", ENC, "sweep", ENCODER_SANE
    ),
    "figure6: vocabulary sweep: training speed relative to vanilla": Source(
        "paper-cpu-vocab", "throughput", "speedup_vs_baseline", ENC, "sweep"
    ),
    "figure7: batch sweep: LAMBADA accuracy": Source(
        "paper-cpu-batch", "lm_eval/hlm_lambada", "acc", DEC, "sweep", LAMBADA_SANE
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
        task = fig.quantity.split(" ")[1]  # "GLUE MRPC dev, equal tokens (4.1B)"
        return _glue(task, "final" if fig.claim == "table1-tokens" else "equal-time", ENC)
    return OTHER[fig.key]


@dataclass(frozen=True)
class Scale:
    """A size at which the paper's figures are compared: `suites` maps each CPU part to this
    scale's (a part it lacks: those figures are not compared at this scale), `models` each
    CPU preset to this scale's; tasks, metrics and sanity bars stay the CPU part's. `pending`:
    what the report says while none of its suites has rows."""

    name: str
    suites: dict[str, str]
    models: dict[str, str]
    pending: str = ""

    def source(self, fig: PaperFigure) -> Source | None:
        """Our source of `fig` at this scale, or None where this scale does not compare it."""
        cpu = source_of(fig)
        if not self.suites:
            return cpu
        if cpu.suite not in self.suites:
            return None
        roles = {r: self._model(m) for r, m in cpu.roles.items()}
        return replace(cpu, suite=self.suites[cpu.suite], roles=roles)

    def _model(self, label: str) -> str:
        preset = next(p for p in self.models if label.startswith(f"{p}-"))
        return self.models[preset] + label.removeprefix(preset)


CPU = Scale("CPU", {}, {})
# the encoder and decoder comparisons a size up, on a CUDA GPU (suites/paper-gpu-*.yaml)
GPU = Scale(
    "GPU",
    {ENCODER: "paper-gpu-encoder", DECODER: "paper-gpu-decoder"},
    {"bert-tiny": "bert-small", "pythia-tiny": "gpt2-11m"},
    pending="No rows committed yet. These suites repeat the encoder comparisons (Table 1, "
    "Figure 3, Appendix A) with bert-small and the decoder ones (Tables 3-4, Appendix A) with "
    "gpt2-11m, at 2.7 to 4 times the CPU parts' tokens; they need a CUDA GPU (`device: "
    "cuda`). Run them on one and regenerate this page: their rows say which GPU trained them.",
)
SCALES = (CPU, GPU)

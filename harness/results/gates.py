"""Sanity gates: is a model good enough at a task for a comparison on it to mean anything?

A task type declares a gate per sub-task in its metadata (`TaskType.gates`; GLUE's and XNLI's
come from their `TaskData`): the task's own metric (MCC for CoLA, F1 for MRPC, Pearson for
STS-B, accuracy for the balanced sets) against what chance scores on that metric, with a
margin; a sub-task whose metrics need different bars has one per metric (LAMBADA: accuracy
against chance, perplexity against the unigram model's). Every bar is one the paper's own
model passes; each gate says so (`paper`), and a test checks it against the paper's
published numbers.

Chance is a number (0 for a correlation, 1/3 for three balanced classes) or a baseline metric
the task reports in the same rows (`majority`: the majority class's share; `unigram_ppl`: the
unigram model's perplexity on the same tokens); `majority_f1` turns the majority share into
the F1 of always answering the majority (positive) class.

Where the rows hold the model's untrained twin (the same preset run for `steps: 0`: its
initial weights, fine-tuned and scored like it), the model must also beat the twin by the
margin: a fine-tuning set large enough teaches a task from scratch, and a score that
pretraining did not raise compares nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class GateCheck:
    """A gate applied to a value: passed or not, the value, the bar, and the sentence;
    `at_most`: the value must stay at or under the bar (perplexity), else reach it; `name`:
    what it reads (a task's label and metric), where a caller sets it; `interval`: the 95 %
    interval of the value where it is a mean over seeds (`within`)."""

    passed: bool
    value: float
    bar: float
    text: str
    at_most: bool = False
    name: str = ""
    interval: tuple[float, float] | None = None

    def within(self, low: float, high: float) -> GateCheck:
        """This check decided on the seed mean with its interval: a mean that clears the bar
        passes only where the interval's far end clears it too, so a baseline whose seeds
        straddle the bar does not pass on a lucky seed. A nan interval (one seed, no spread)
        leaves the check as it was."""
        if math.isnan(low) or math.isnan(high):
            return self
        held = replace(self, interval=(low, high))
        end = high if self.at_most else low
        if not self.passed or (end <= self.bar if self.at_most else end >= self.bar):
            return held
        said = f"its seeds' 95 % interval [{low:.4g}, {high:.4g}] reaches past the bar"
        return replace(held, passed=False, text=f"{self.text}; {said}")

    @property
    def far_end(self) -> float:
        """The interval's end on the failing side of the bar (the value without one)."""
        if self.interval is None:
            return self.value
        return self.interval[1] if self.at_most else self.interval[0]

    @property
    def margin(self) -> float:
        """How far the value clears the bar (negative: short of it): the difference in the
        metric's unit, or for an `at_most` bar log10(bar / value), in orders of magnitude."""
        if self.at_most:
            return math.log10(self.bar / self.value) if self.value > 0 < self.bar else math.nan
        return self.value - self.bar


@dataclass(frozen=True)
class Gate:
    """`metric` must reach chance + `margin` (or, with `factor`, be at most `factor` x chance:
    lower-is-better metrics such as perplexity)."""

    metric: str
    chance: float | str
    margin: float = 0.0
    factor: float | None = None
    majority_f1: bool = False
    paper: str = ""  # the paper's own model's value on this metric, which passes
    trivial: str = "chance"  # what scores a numeric `chance` ("always answering 'yes'")
    # whether the model must also beat its untrained twin by the margin: not where random
    # features already score what pretrained ones do (STS-B cosine), so a comparison only
    twin: bool = True

    def chance_name(self) -> str:
        if isinstance(self.chance, str):
            return "F1 of the majority answer" if self.majority_f1 else self.chance
        return f"{self.trivial} ({self.chance:.3g})"

    def bar(self, baseline: Callable[[str], float | None]) -> float | None:
        """The threshold, given a lookup of the rows' baseline metrics; None without it."""
        if isinstance(self.chance, str):
            share = baseline(self.chance)
            if share is None:
                return None
            chance = 2 * share / (1 + share) if self.majority_f1 else share
        else:
            chance = self.chance
        return chance * self.factor if self.factor is not None else chance + self.margin

    def check(self, value: float, baseline: Callable[[str], float | None]) -> GateCheck:
        """Whether `value` of `metric` clears the bar."""
        bar = self.bar(baseline)
        if bar is None:
            return GateCheck(False, value, float("nan"), f"{self.metric}: no `{self.chance}` row")
        at_most = self.factor is not None
        if at_most:
            passed = value <= bar
            rule = f"at most {self.factor:g} x {self.chance_name()} = {bar:.4g}"
        else:
            passed = value >= bar
            plus = f" + {self.margin:g}" if self.margin else ""
            rule = f"at least {self.chance_name()}{plus} = {bar:.3f}"
        text = f"{self.metric} {value:.4g} (needs {rule})"
        return GateCheck(passed, value, bar, text, at_most)

    def check_untrained(self, value: float, untrained: float, twin: str) -> GateCheck | None:
        """Whether `value` clears the same metric of the model's untrained twin (its initial
        weights fine-tuned the same way) by the gate's margin: pretraining must show in the
        score. Perplexity-like gates (`factor`) and gates without a twin bar (`twin` False)
        have none: None, and the check against chance stands."""
        if self.factor is not None or not self.twin:
            return None
        bar = untrained + self.margin
        plus = f" + {self.margin:g}" if self.margin else ""
        rule = f"at least its untrained twin {twin}'s {untrained:.3f}{plus} = {bar:.3f}"
        return GateCheck(value >= bar, value, bar, f"{self.metric} {value:.4g} (needs {rule})")


# the gates the shipped task types declare, by what they guard
VALIDATION = Gate(
    "val_ppl",
    "unigram_ppl",
    factor=0.5,
    paper="a trained LM's perplexity is a small fraction of the unigram one (Table 3: 23 vs ~1000)",
)

"""A paper's figure, typed, and the rule that turns a comparison into a verdict.

The figures themselves are data: a claims file (`harness.paper.claims_file`) declares them;
the paper's (Godey, de la Clergerie, Sagot, ICLR 2024) is `suites/claims/paper.yaml`, and
no code types a paper number.

A `PaperFigure` is one compared quantity: the paper's value per model role (vanilla,
headless, headless + causal fine-tuning), in the paper's unit (`percent`: our fractions are
shown x100 beside it), and the metric of our registry it corresponds to (its direction says
which side is better). Figures the paper only draws (Figures 3, 6, 7, 8) carry the sentence
the paper states about them (`stated`) and the numbers it gives in the text, if any.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from harness.results.metrics import direction, metric_info
from harness.results.stats import ALPHA

Role = Literal["vanilla", "headless", "headless+ft"]
Verdict = Literal["reproduced", "contradicted", "inconclusive", "not comparable"]
VERDICTS: tuple[Verdict, ...] = ("reproduced", "contradicted", "inconclusive", "not comparable")


@dataclass(frozen=True)
class PaperFigure:
    """One of the paper's compared quantities and its values per model role."""

    claim: str  # the claim it belongs to (a section of the report)
    source: str  # "Table 1", "Figure 3", "Appendix A"
    quantity: str  # what is compared, in words (no set-up: ours and the paper's differ)
    metric: str  # our metric (registry name): its direction decides "better"
    values: dict[Role, float] = field(default_factory=dict)
    percent: bool = False  # the paper's unit is percent; ours is a fraction
    stated: str = ""  # the paper's own words, for figures without a typed number
    # the paper's Δ per role where it states the difference alone (positive: better), in the
    # unit of `values`: Appendix A's "1.4 points higher" cosine is 0.014, with no values
    gains: dict[Role, float] = field(default_factory=dict)
    compared: bool = True  # False: the paper makes no claim (our measurement only)
    setting: str = ""  # the paper's set-up for this figure (model, tokens, hours)
    # the direction the paper states where it gives no number ("better": the role beats
    # vanilla); never assumed: a claim with neither numbers nor a direction is not tested
    direction: Literal["better", "worse"] | None = None
    # the one condition a claim is stated at (a sweep variable and its value): compared there
    # only, and not comparable where our sweep does not reach it
    condition: tuple[str, int] | None = None
    # how a sweep's claim is stated: "pooled" (one gap over the points, each seed's mean),
    # "every" (at each point: tested per point, and holds only where every point does), or
    # "trend" (the gap grows with the sweep variable: a slope on its log2)
    design: Literal["pooled", "every", "trend"] = "pooled"
    ident: str = ""  # its id in the claims file that declares it

    @property
    def key(self) -> str:
        """Unique name of the figure: its claim and quantity."""
        return f"{self.claim}: {self.quantity}"

    @property
    def higher_is_better(self) -> bool:
        hib = direction(self.metric, None)
        if hib is None:
            raise ValueError(
                f"{self.source} {self.quantity}: metric {self.metric} has no direction"
            )
        return hib

    @property
    def log_scale(self) -> bool:
        """Compared as log values (a perplexity): a ratio, not a difference across orders."""
        return metric_info(self.metric).log_scale

    def paper_gain(self, role: Role = "headless") -> float | None:
        """How much better `role` is than vanilla in the paper (positive: better; for a
        log-scale metric, in natural log units), or None where it gives no number."""
        if role in self.gains:
            return self.gains[role]
        if role not in self.values or "vanilla" not in self.values:
            return None
        sign = 1.0 if self.higher_is_better else -1.0
        mine, base = self.values[role], self.values["vanilla"]
        if self.log_scale:
            return sign * (math.log(mine) - math.log(base))
        return sign * (mine - base)

    def paper_direction(self, role: Role = "headless") -> Literal["better", "worse"] | None:
        """The direction the paper gives `role` against vanilla: its numbers' sign, else the
        direction it states; None where it gives neither."""
        gain = self.paper_gain(role)
        if gain is not None and gain != 0:
            return "better" if gain > 0 else "worse"
        return self.direction


def verdict(
    paper_better: bool, gain: float, p_adjusted: float, comparable: bool, alpha: float = ALPHA
) -> Verdict:
    """The verdict on one claim, symmetric: *reproduced* (our gain in the paper's direction,
    significant after the correction for many claims), *contradicted* (the opposite
    direction, significant after correction), *inconclusive* (neither: not significant, or
    no test possible), *not comparable* (a gate failed or there are no rows). `gain`: how
    much better the role is than vanilla (positive: better); `paper_better`: whether the
    paper has it better; `p_adjusted`: two-sided, adjusted over the scale's claims."""
    if not comparable or math.isnan(gain):
        return "not comparable"
    if math.isnan(p_adjusted) or p_adjusted >= alpha:
        return "inconclusive"
    return "reproduced" if (gain > 0) == paper_better else "contradicted"

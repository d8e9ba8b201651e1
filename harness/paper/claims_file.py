"""Any paper's claims as data: a typed YAML file, judged from leaderboards like the paper's.

    hlm report --claims my-claims.yaml            # -> leaderboards/<name>-claims.md

A claims file declares, before any row exists, what a paper claims and where our rows are:

    name: quickstart
    paper: "My objective beats CE at tiny scale"
    scales:
      - name: tiny
        claims:
          - id: val-loss
            quantity: validation loss, decoders
            suite: quickstart                  # leaderboards/<suite>/
            task: validation
            metric: val_ce                     # its registered direction decides "better"
            arms: {vanilla: pythia-tiny-ce, headless: pythia-tiny-cwt}
            direction: better                  # or numbers: paper: {vanilla: 3.1, headless: 3.0}
            gates: [{task: validation, type: validation}]

Each claim is one row per arm other than `vanilla`. Its `design` says how a sweep's claim
is stated (`pooled`, `every` point, or a `trend`); `condition` names the one sweep point a
claim is stated at; `confirmatory: false` makes it exploratory (raw p, no verdict). The family
corrected together is the confirmatory claims of one scale of the file; `gates` name the
gates task types declare (`TaskType.gates`), applied to the `vanilla` arm. Everything else is
judged by `harness.paper.findings.judge`, as the paper's own page is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from harness.paper.figures import PaperFigure, Role
from harness.paper.findings import Declared, Finding, judge
from harness.paper.sources import At, Check, Source
from harness.results.metrics import METRICS, direction
from harness.suite.schema import SAFE_NAME
from harness.tasks import TASKS
from zoo.errors import UserError, format_validation_error
from zoo.registry import unknown_name_message
from zoo.settings import Settings
from zoo.yaml_files import read_yaml_mapping


class GateSpec(Settings):
    """A gate a task type declares (`type`, its sub-task `gate`: '' for the task's own),
    applied to the rows labelled `task`."""

    task: str = Field(min_length=1)
    type: str
    gate: str = ""

    @model_validator(mode="after")
    def _declared(self) -> GateSpec:
        if self.type not in TASKS:
            raise ValueError(unknown_name_message("task type", self.type, TASKS.names()))
        gates = TASKS.get(self.type).gates
        if self.gate not in gates:
            known = ", ".join(repr(g) for g in sorted(gates)) or "none"
            raise ValueError(f"task type {self.type} declares no gate {self.gate!r} ({known})")
        return self


class ClaimSpec(Settings):
    """One claim: where our rows are, what the paper states, and how it is tested."""

    id: str = Field(pattern=SAFE_NAME)
    quantity: str = Field(min_length=1)
    source: str = ""  # "Table 1"
    suite: str = Field(pattern=SAFE_NAME)
    task: str = Field(min_length=1)
    metric: str
    arms: dict[Role, str]
    at: At = "final"
    design: Literal["pooled", "every", "trend"] = "pooled"
    condition: dict[str, int] | None = None
    direction: Literal["better", "worse"] | None = None
    paper: dict[Role, float] = Field(default_factory=dict)
    percent: bool = False
    confirmatory: bool = True
    gates: list[GateSpec] = Field(default_factory=list)

    @field_validator("metric")
    @classmethod
    def _directed(cls, metric: str) -> str:
        if metric not in METRICS:
            raise ValueError(unknown_name_message("metric", metric, METRICS.names()))
        if direction(metric, None) is None:
            raise ValueError(f"metric {metric} has no direction: nothing is better on it")
        return metric

    @model_validator(mode="after")
    def _arms(self) -> ClaimSpec:
        if "vanilla" not in self.arms or len(self.arms) < 2:
            raise ValueError("arms: name the `vanilla` arm and at least one other")
        if self.condition is not None and len(self.condition) != 1:
            raise ValueError("condition: one sweep variable and its value")
        if (self.design != "pooled" or self.condition is not None) and self.at != "sweep":
            raise ValueError("design and condition describe a sweep: they need `at: sweep`")
        if self.confirmatory and self.direction is None and len(self.paper) < 2:
            raise ValueError(
                "a confirmatory claim states a direction (`direction:`) or the paper's "
                "numbers for vanilla and an arm (`paper:`): none is assumed"
            )
        return self

    def declared(self, scale: str) -> Declared:
        condition = next(iter(self.condition.items())) if self.condition else None
        figure = PaperFigure(
            self.id,
            self.source or self.id,
            self.quantity,
            self.metric,
            dict(self.paper),
            percent=self.percent,
            compared=self.confirmatory,
            direction=self.direction,
            condition=condition,
            design=self.design,
            stated=self.quantity,
        )
        checks = tuple(Check(g.task, TASKS.get(g.type).gates[g.gate]) for g in self.gates)
        source = Source(self.suite, self.task, self.metric, dict(self.arms), self.at, checks)
        return scale, figure, source


class ScaleSpec(Settings):
    """A scale: its claims, corrected together."""

    name: str = Field(min_length=1)
    claims: list[ClaimSpec] = Field(min_length=1)


class ClaimsFile(Settings):
    """A paper's claims, per scale."""

    name: str = Field(pattern=SAFE_NAME)
    paper: str = ""
    scales: list[ScaleSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> ClaimsFile:
        for scale in self.scales:
            ids = [c.id for c in scale.claims]
            if len(set(ids)) != len(ids):
                raise ValueError(f"scale {scale.name}: each claim id once")
        return self

    def declared(self) -> list[Declared]:
        return [c.declared(s.name) for s in self.scales for c in s.claims]


def load_claims(path: Path) -> ClaimsFile:
    """The claims file at `path`, validated (an error names the file and the key)."""
    data = read_yaml_mapping(path, "claims")
    try:
        return ClaimsFile.model_validate(data)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, str(path), ClaimsFile)) from None


def judge_claims(path: Path, root: Path) -> tuple[ClaimsFile, list[Finding]]:
    """The file's claims judged from the leaderboards under `root`."""
    claims = load_claims(path)
    return claims, judge(claims.declared(), root)

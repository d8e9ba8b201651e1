"""Any paper's claims as data: a typed YAML file, judged from leaderboards like the paper's.

    hlm report --claims my-claims.yaml            # -> leaderboards/<name>-claims.md
    hlm report --paper                            # suites/claims/paper.yaml -> docs/REPRODUCTION.md

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
claim is stated at; `confirmatory: false` makes it exploratory (raw p, no verdict), as does
a declaration git does not show committed before the claim's rows
(`harness.paper.preregistration`). The family
corrected together is the confirmatory claims of one scale of the file; `gates` name the
gates task types declare (`TaskType.gates`), applied to the `vanilla` arm. A later scale may
list no claims and be `like` an earlier one, mapping its suites and presets
(`harness.paper.scales`). `sections`, `main` and `not_attempted` shape the paper's own page
(`harness.paper.document`). Everything is judged by `harness.paper.findings.judge`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from harness.paper.claims_checks import direction_problem, suite_problems
from harness.paper.claims_limits import (
    MAX_CLAIMS_PER_SCALE,
    MAX_DECLARED,
    MAX_MAPPED,
    MAX_SCALES,
    check_raw,
    one_paragraph,
)
from harness.paper.figures import PaperFigure, Role
from harness.paper.findings import Declared, Finding, family_sizes, judge
from harness.paper.preregistration import demoted, mark, register
from harness.paper.scales import Scale
from harness.paper.sources import At, Check, Parts, Source, gate
from harness.results.metrics import METRICS, direction
from harness.suite.schema import SAFE_NAME
from harness.tasks import TASKS
from zoo.errors import UserError, format_validation_error
from zoo.registry import unknown_name_message
from zoo.settings import Settings
from zoo.yaml_files import read_yaml_mapping

SCALE_NAME = r"^[A-Za-z0-9][A-Za-z0-9 ,.()+_-]*$"  # a scale's name, as pages show it

# the paper's claims (Godey et al., ICLR 2024), judged by `hlm report --paper`
PAPER_CLAIMS = Path(__file__).resolve().parents[2] / "suites" / "claims" / "paper.yaml"


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


class PartsSpec(Settings):
    """The parts an average is made of (`harness.paper.sources.Parts`)."""

    prefix: str = Field(min_length=1)
    metric: str = Field(min_length=1)
    name: str = Field(min_length=1)


class SpeedSpec(Settings):
    """Where the side-by-side speed ratio that sets the step of equal time is measured."""

    suite: str = Field(pattern=SAFE_NAME)
    model: str = Field(min_length=1)


class ClaimSpec(Settings):
    """One claim: where our rows are, what the paper states, and how it is tested."""

    id: str = Field(pattern=SAFE_NAME)
    section: str = ""  # the group it is shown in (default: its id)
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
    gains: dict[Role, float] = Field(default_factory=dict)  # the paper's Δ alone, no values
    percent: bool = False
    confirmatory: bool = True
    stated: str = ""  # the paper's own words
    setting: str = ""  # the paper's set-up (default: its section's)
    gates: list[GateSpec] = Field(default_factory=list)
    differs: str = ""  # where our protocol differs from the paper's
    parts: PartsSpec | None = None
    speed: SpeedSpec | None = None
    unavailable: str = ""  # why no rows can exist here

    @field_validator("stated", "setting", "differs", "unavailable")
    @classmethod
    def _prose(cls, text: str) -> str:
        return one_paragraph(text)

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
        if (self.at == "equal-time") != (self.speed is not None) and not self.unavailable:
            raise ValueError("`at: equal-time` and `speed:` (where its speed ratio is) go together")
        twice = [r for r, m in self.arms.items() if r != "vanilla" and m == self.arms["vanilla"]]
        if twice:
            raise ValueError(f"arms: {twice[0]} is its baseline {self.arms['vanilla']}: no test")
        wrong = direction_problem(self.direction, dict(self.paper.items()), self.metric)
        if wrong:
            raise ValueError(wrong)
        stated = self.direction is not None or len(self.paper) >= 2 or self.gains
        if self.confirmatory and not stated:
            raise ValueError(
                "a confirmatory claim states a direction (`direction:`), the paper's numbers "
                "for vanilla and an arm (`paper:`) or its gains (`gains:`): none is assumed"
            )
        return self

    def figure(self, setting: str) -> PaperFigure:
        """The paper's side of the claim (`setting`: its section's, where it names none)."""
        return PaperFigure(
            self.section or self.id,
            self.source or self.id,
            self.quantity,
            self.metric,
            dict(self.paper),
            percent=self.percent,
            stated=self.stated,
            gains=dict(self.gains),
            compared=self.confirmatory,
            setting=self.setting or setting,
            direction=self.direction,
            condition=next(iter(self.condition.items())) if self.condition else None,
            design=self.design,
            ident=self.id,
        )

    def rows(self) -> Source:
        """Our side of the claim: where its rows are and the gates its baseline passes."""
        checks = tuple(Check(g.task, gate(g.type, g.gate)) for g in self.gates)
        parts = Parts(**self.parts.model_dump()) if self.parts is not None else None
        speed = (self.speed.suite, self.speed.model) if self.speed is not None else None
        return Source(
            self.suite,
            self.task,
            self.metric,
            dict(self.arms),
            self.at,
            checks,
            unavailable=self.unavailable,
            parts=parts,
            speed=speed,
            differs=self.differs,
        )


class ScaleSpec(Settings):
    """A scale: its claims (corrected together), or an earlier scale's claims with its suites
    and presets mapped (`like`, `suites`, `models`; `harness.paper.scales.Scale`)."""

    # shown in headings and sentences of the pages: words, digits and plain punctuation only,
    # so that no name from a file can open a link, a heading or a table cell there
    name: str = Field(pattern=SCALE_NAME, max_length=200)
    claims: list[ClaimSpec] = Field(default_factory=list, max_length=MAX_CLAIMS_PER_SCALE)
    like: str = ""
    suites: dict[str, str] = Field(default_factory=dict, max_length=MAX_MAPPED)
    models: dict[str, str] = Field(default_factory=dict, max_length=MAX_MAPPED)
    speed_suite: str = ""
    machine: str = ""
    pending: str = ""  # what the page says while no claim has rows for both arms

    @field_validator("pending")
    @classmethod
    def _prose(cls, text: str) -> str:
        return one_paragraph(text)

    @model_validator(mode="after")
    def _claims_or_like(self) -> ScaleSpec:
        if not self.claims and not self.like:
            raise ValueError(
                "claims: empty; a scale lists its claims, or is `like` an earlier scale"
            )
        if self.claims and self.like:
            raise ValueError("a scale lists `claims` or is `like` an earlier scale, one of them")
        if self.claims and not any(c.confirmatory for c in self.claims):
            raise ValueError(
                "claims: every one is exploratory (`confirmatory: false`): a family of 0 tests "
                "nothing; declare the claims the scale tests as confirmatory"
            )
        if self.like and not (self.suites and self.models):
            raise ValueError("a scale `like` another maps its `suites` and its `models`")
        return self

    def mapping(self) -> Scale:
        return Scale(
            self.name, dict(self.suites), dict(self.models), self.pending,
            self.speed_suite, self.machine,
        )  # fmt: skip


class SectionSpec(Settings):
    """A group of claims on the page: its heading and the paper's set-up behind it."""

    title: str = Field(min_length=1)
    setting: str = ""

    @field_validator("setting")
    @classmethod
    def _prose(cls, text: str) -> str:
        return one_paragraph(text)


class MainClaim(Settings):
    """A claim of the page's first table, with the arm it is about."""

    claim: str = Field(min_length=1)
    arm: Role


class NotAttempted(Settings):
    """A result of the paper no suite compares, and why."""

    source: str = Field(min_length=1)
    what: str = Field(min_length=1)
    why: str = Field(min_length=1)

    @field_validator("what", "why")
    @classmethod
    def _prose(cls, text: str) -> str:
        return one_paragraph(text)


class ClaimsFile(Settings):
    """A paper's claims, per scale."""

    name: str = Field(pattern=SAFE_NAME)
    paper: str = ""

    @field_validator("paper")
    @classmethod
    def _prose(cls, text: str) -> str:
        return one_paragraph(text)

    sections: dict[str, SectionSpec] = Field(default_factory=dict)
    main: list[MainClaim] = Field(default_factory=list)
    not_attempted: list[NotAttempted] = Field(default_factory=list)
    scales: list[ScaleSpec] = Field(min_length=1, max_length=MAX_SCALES)

    @model_validator(mode="after")
    def _consistent(self) -> ClaimsFile:
        listed: dict[str, list[ClaimSpec]] = {}
        sizes = {s.name: len(s.claims) for s in self.scales if s.claims}
        declared = sum(sizes.get(s.like, 0) if s.like else len(s.claims) for s in self.scales)
        if declared > MAX_DECLARED:
            raise ValueError(
                f"{declared} claims across its scales, more than {MAX_DECLARED}: split the file"
            )
        for scale in self.scales:
            ids = [c.id for c in scale.claims]
            if len(set(ids)) != len(ids):
                raise ValueError(f"scale {scale.name}: each claim id once")
            if scale.like and scale.like not in listed:
                raise ValueError(f"scale {scale.name}: `like` names no earlier scale with claims")
            _check_mapped(scale, listed.get(scale.like, []))
            listed[scale.name] = scale.claims
        claims = {c.id: c for c in self.scales[0].claims}
        for main in self.main:
            if main.claim not in claims or main.arm not in claims[main.claim].arms:
                raise ValueError(f"main: {main.claim} ({main.arm}) is no claim and arm of the file")
        unknown = {c.section for c in claims.values()} - set(self.sections) - {""}
        if self.sections and unknown:
            raise ValueError(f"sections: no heading for {', '.join(sorted(unknown))}")
        return self

    def _claims_of(self, scale: ScaleSpec) -> list[ClaimSpec]:
        return scale.claims or next(s.claims for s in self.scales if s.name == scale.like)

    def declared(self) -> list[Declared]:
        """Every claim at every scale that compares it, in the file's order."""
        out: list[Declared] = []
        for scale in self.scales:
            mapped = scale.mapping() if scale.like else None
            for claim in self._claims_of(scale):
                # a file without `sections:` groups claims under their section's name alone
                heading = self.sections.get(claim.section)
                setting = heading.setting if heading is not None else ""
                source = claim.rows() if mapped is None else mapped.source(claim.rows())
                out += [(scale.name, claim.figure(setting), source)] if source else []
        return out

    def main_claims(self) -> list[tuple[str, Role]]:
        """The page's main claims: (the figure's key, the arm)."""
        claims = {c.id: c for c in self.scales[0].claims}
        return [(claims[m.claim].figure("").key, m.arm) for m in self.main]

    def mappings(self) -> list[Scale]:
        """The scales that map another's suites, as `Scale`s."""
        return [s.mapping() for s in self.scales if s.like]


def _check_mapped(scale: ScaleSpec, claims: list[ClaimSpec]) -> None:
    """Every model a mapped scale compares has a preset its `models` maps."""
    for claim in claims:
        if claim.suite not in scale.suites:
            continue
        for model in claim.arms.values():
            if not any(model.startswith(f"{p}-") for p in scale.models):
                raise ValueError(f"scale {scale.name}: `models` maps no preset of {model}")


def load_claims(path: Path) -> ClaimsFile:
    """The claims file at `path`, validated (an error names the file and the key)."""
    data = read_yaml_mapping(path, "claims")
    check_raw(data, path)
    try:
        claims = ClaimsFile.model_validate(data)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, str(path), ClaimsFile)) from None
    problems = suite_problems(claims, path)
    if problems:
        raise UserError("\n".join(problems))
    return claims


@cache
def paper_claims() -> ClaimsFile:
    """The paper's claims file (`PAPER_CLAIMS`), read once."""
    return load_claims(PAPER_CLAIMS)


def declared_family(scale: str) -> int:
    """The claims the paper's file makes at `scale`: the family each of its tests is
    corrected over, fixed before any row."""
    return family_sizes(paper_claims().declared()).get(scale, 0)


def findings(root: Path, suite: str | None = None) -> list[Finding]:
    """One finding per paper claim, role and scale, from the leaderboards under `root` (of
    `suite` alone, when given). A claim git shows declared after its first row is judged
    exploratory, its reason says when (`harness.paper.preregistration`); each confirmatory
    p is adjusted over its scale's confirmatory claims, whatever `suite` is."""
    declared = paper_claims().declared()
    registered = register(PAPER_CLAIMS, declared, root)
    judged = demoted(declared, registered)
    mine = [d for d in judged if suite is None or d[2].board == suite]
    found = judge(mine, root, family_sizes(judged))
    mark(found, registered)
    return found

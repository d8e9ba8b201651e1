"""A claims file judged as strictly as a leaderboard: each claim's suite, arms and metric
checked against the suite it names, before any row is read.

    problems = suite_problems(claims, path)   # one line each, naming the claim

A claim whose suite has no suite file, whose arm is no model of that suite, or whose metric
the leaderboard itself would not compare between its arms (a CWT loss beside a CE loss:
`Metric.comparable`; an MLM perplexity beside a causal one) is refused with the reason and
close matches, never judged "untestable: not run" or given a confident verdict. The suite is
found in the project's `suites/` folder or beside the claims file. Sub-task names
(`glue/sst2`, `xnli-translate-train/average`) come from the task types as they run, so a
claim's task is checked against its rows. A scale `like` another maps suites that may not
exist yet: only the claims' own suites are checked here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.results.metrics import METRICS
from zoo.registry import unknown_name_message
from zoo.shipped import SHIPPED_SUITES

if TYPE_CHECKING:
    from harness.suite.schema import Suite


def _suite_file(name: str, claims_path: Path) -> Path | None:
    """The project's suite `name`, else one beside the claims file (never the file itself)."""
    for folder in (SHIPPED_SUITES, claims_path.parent):
        for suffix in (".yaml", ".yml"):
            found = folder / f"{name}{suffix}"
            if found.is_file() and found.resolve() != claims_path.resolve():
                return found
    return None


def _known_suites(claims_path: Path) -> list[str]:
    return sorted({p.stem for d in (claims_path.parent, SHIPPED_SUITES) for p in d.glob("*.yaml")})


def _load(name: str, claims_path: Path) -> Suite | str:
    """The suite `name`, or why it cannot be read."""
    from harness.suite import SuiteError, load_suite

    found = _suite_file(name, claims_path)
    if found is None:
        return unknown_name_message("suite", name, _known_suites(claims_path))
    try:
        return load_suite(found)
    except SuiteError as exc:
        return f"suite {name} ({found}) does not load: {exc.problems[0]}"


def _claim_problems(claim: Any, suite: Suite) -> list[str]:
    """Its arms, task and metric against the suite."""
    labels = {m.label(): m for m in suite.models}
    out = [
        f"arms.{role}: {unknown_name_message('model of suite ' + suite.name, model, list(labels))}"
        for role, model in claim.arms.items()
        if model not in labels
    ]
    models = [labels[m] for m in claim.arms.values() if m in labels]
    comparable = METRICS.get(claim.metric).comparable
    if comparable == "objective" and len({m.objective for m in models}) > 1:
        out.append(
            f"metric: {claim.metric} compares only within one objective (a CWT loss is not a CE "
            "loss); the leaderboard refuses to compare it across its arms' objectives: use val_ce"
        )
    kinds = {_kind(m) for m in models} - {None}
    if comparable in ("objective", "kind") and len(kinds) > 1:
        out.append(f"metric: {claim.metric} compares only within one model kind (MLM vs causal)")
    return out


def _kind(model: object) -> str | None:
    from zoo.models import PRESETS

    preset = getattr(model, "preset", None)
    return PRESETS.get(preset)().kind if isinstance(preset, str) and preset in PRESETS else None


def direction_problem(direction: str | None, paper: Mapping[str, float], metric: str) -> str | None:
    """Why a stated direction contradicts the paper's own numbers (it was silently overridden
    by them), or None."""
    from harness.results.metrics import direction as better_of

    better = better_of(metric, None)
    if direction is None or "vanilla" not in paper or better is None:
        return None
    for role, value in paper.items():
        gain = (value - paper["vanilla"]) * (1 if better else -1)
        if role != "vanilla" and gain and (gain > 0) != (direction == "better"):
            return (
                f"direction: {direction}, but the paper's numbers give {role} {value} against "
                f"vanilla's {paper['vanilla']} on {metric}: state the direction they give"
            )
    return None


def suite_problems(claims: Any, path: Path) -> list[str]:
    """Every claim's problems against its own suite, one line each, naming file and claim
    (`claims`: a `ClaimsFile`, which imports this module to check itself)."""
    loaded: dict[str, Suite | str] = {}
    problems = []
    for i, scale in enumerate(claims.scales):
        for j, claim in enumerate(scale.claims):
            if claim.suite not in loaded:
                loaded[claim.suite] = _load(claim.suite, path)
            suite = loaded[claim.suite]
            where = f"{path}: scales[{i}].claims[{j}] ({claim.id})"
            if isinstance(suite, str):
                problems.append(f"{where}.suite: {suite}")
            else:
                problems += [f"{where}.{p}" for p in _claim_problems(claim, suite)]
    return problems

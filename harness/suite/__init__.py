"""Suites: the schema (`schema`), semantic checks (`checks`), finding one by name (`finding`),
reading (`loading`) and the record kept beside a leaderboard (`record`).

from harness.suite import load_suite
suite = load_suite("suites/quickstart.yaml")
"""

from harness.suite.finding import resolve_suite_path
from harness.suite.loading import (
    SuiteError,
    expand_suite_refs,
    last_suite,
    load_suite,
    suite_name,
)
from harness.suite.schema import (
    MODEL_KEYS,
    RECIPE_KEYS,
    ModelEntry,
    RecipeOverrides,
    Suite,
    TaskEntry,
    loss_keys,
    overrides,
    sweep_keys,
)

__all__ = [
    "MODEL_KEYS",
    "RECIPE_KEYS",
    "ModelEntry",
    "RecipeOverrides",
    "Suite",
    "SuiteError",
    "TaskEntry",
    "expand_suite_refs",
    "last_suite",
    "load_suite",
    "loss_keys",
    "overrides",
    "resolve_suite_path",
    "suite_name",
    "sweep_keys",
]

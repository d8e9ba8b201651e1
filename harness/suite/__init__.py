"""Suites: the schema (`schema`), semantic checks (`checks`), reading (`loading`) and the
record kept beside a leaderboard (`record`).

from harness.suite import load_suite
suite = load_suite("suites/quickstart.yaml")
"""

from harness.suite.loading import (
    SuiteError,
    expand_suite_refs,
    last_suite,
    load_suite,
    resolve_suite_path,
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

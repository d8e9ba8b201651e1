"""Suites: the schema (`schema`), semantic checks (`checks`) and reading (`loading`).

from harness.suite import load_suite
suite = load_suite("suites/quickstart.yaml")
"""

from harness.suite.loading import (
    SuiteError,
    expand_suite_refs,
    last_suite,
    load_suite,
    pydantic_problems,
    resolve_suite_path,
    suite_name,
)
from harness.suite.schema import (
    LOSS_KEYS,
    MODEL_KEYS,
    RECIPE_KEYS,
    SWEEP_KEYS,
    ModelEntry,
    RecipeOverrides,
    Suite,
    TaskEntry,
    overrides,
)

__all__ = [
    "LOSS_KEYS",
    "MODEL_KEYS",
    "RECIPE_KEYS",
    "SWEEP_KEYS",
    "ModelEntry",
    "RecipeOverrides",
    "Suite",
    "SuiteError",
    "TaskEntry",
    "expand_suite_refs",
    "last_suite",
    "load_suite",
    "overrides",
    "pydantic_problems",
    "resolve_suite_path",
    "suite_name",
]

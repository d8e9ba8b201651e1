"""`hlm run` refuses, before any cell computes, what would fail every cell after its
pretraining: here, a task name that only lm-eval can tell is none (CUDA and missing data are
tested in test_runner.py and test_data_keys.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run.cells import expand
from harness.run.preflight import library_problems
from harness.run.runner import run_suite
from harness.suite import load_suite
from zoo.errors import UserError

SUITE = """
name: lm
recipe: {corpus: [synthetic:2000], vocab_size: 500, steps: 2}
models: [{preset: pythia-tiny, objective: ce}]
tasks:
  - {type: validation}
  - {type: lm_eval, params: {tasks: [hlm_boolq, TASKS]}}
"""


def _suite(folder: Path, name: str) -> Path:
    path = folder / "s.yaml"
    path.write_text(SUITE.replace("TASKS", name))
    return path


def test_an_lm_eval_task_name_lm_eval_lacks_is_refused_before_any_pretraining(
    isolated: Path,
) -> None:
    """`hlm validate` checks only the `hlm_` names (without lm-eval); `hlm run` asks lm-eval
    for the others once, before it pretrains anything."""
    path = _suite(isolated, "lambada_opena")
    assert load_suite(path)  # valid as far as `hlm validate` can tell
    with pytest.raises(UserError) as err:
        run_suite(path, root=isolated / "lb", progress=False)
    assert str(err.value).splitlines() == [
        f"{path}: tasks[1].params.tasks[1]: lm-eval gives no task 'lambada_opena'; did you mean "
        "'lambada_openai', 'lambada_openai_mt_it', 'lambada_openai_mt_fr'?",
        "2 cells to compute, none started",
    ]
    assert not (isolated / "runs").exists()
    assert not list((isolated / "lb").rglob("*.parquet"))


def test_names_lm_eval_gives_pass_and_done_entries_are_not_asked(isolated: Path) -> None:
    good = load_suite(_suite(isolated, "lambada_openai"))
    assert library_problems(good, expand(good)) == []
    bad = load_suite(_suite(isolated, "lambada_opena"))
    cells = expand(bad)
    assert library_problems(bad, [c for c in cells if c.task.type == "validation"]) == []
    assert len(library_problems(bad, cells)) == 1

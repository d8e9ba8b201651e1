"""Task defaults pinned (`harness.tasks.keyed_defaults`): every param of every built-in task
type, and every default sub-task set, is pinned, and a default changed in code gives a new id
to exactly the cells that rely on it, so that their old rows never stand for the new
default."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tasks import TASKS
from harness.tasks.keyed_defaults import PINNED, PINNED_SUBTASKS, defaults_now, moved_defaults
from tests.harness.tasks.keyed_suite import cells_by_label, one_model_suite

ROOT = Path(__file__).resolve().parents[3]
BUILT_IN = sorted(
    name for name in TASKS.names() if type(TASKS.get(name)).__module__.startswith("harness.tasks.")
)


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_param_of_a_built_in_task_type_is_pinned(name: str) -> None:
    """A param added later is pinned with it; a pinned name that is no param is a typo."""
    params = TASKS.get(name).params
    optional = {k for k, f in params.model_fields.items() if not f.is_required()}
    assert name in PINNED, f"{name}: pin its params' defaults in harness/tasks/keyed_defaults.py"
    assert set(PINNED[name]) == optional, (
        f"{name}: pin {sorted(optional - set(PINNED[name]))} at their first default; "
        f"no such param: {sorted(set(PINNED[name]) - optional)}"
    )


# (task type, param) whose default was changed on purpose since it was pinned: its cells
# re-key by design; list it here, and never edit PINNED to match the new default
# (("glue", "default_tasks") for a changed default sub-task set, never PINNED_SUBTASKS)
MOVED_ON_PURPOSE: set[tuple[str, str]] = set()


def test_no_default_has_moved_since_it_was_pinned() -> None:
    """Today the code's defaults are the pinned ones (so no committed cell changes its id),
    but for those listed as moved on purpose."""
    for name in BUILT_IN:
        required = {"tasks": ["hlm_boolq"]} if name == "lm_eval" else {}
        now = defaults_now(name, required)
        kept = [k for k in PINNED[name] if (name, k) not in MOVED_ON_PURPOSE]
        assert {k: now[k] for k in kept} == {k: PINNED[name][k] for k in kept}, (
            f"{name}: a default differs from its pin. If you changed it on purpose, add it to "
            "MOVED_ON_PURPOSE (its cells re-key) and leave PINNED as it is"
        )


def test_every_default_subtask_set_is_pinned_and_as_pinned() -> None:
    with_subtasks = [n for n in BUILT_IN if TASKS.get(n).default_subtasks]
    assert sorted(PINNED_SUBTASKS) == with_subtasks, "pin each default sub-task set once"
    for name in with_subtasks:
        if (name, "default_tasks") not in MOVED_ON_PURPOSE:
            assert list(TASKS.get(name).default_subtasks) == PINNED_SUBTASKS[name], (
                f"{name}: its default sub-tasks differ from their pin. If you changed them on "
                "purpose, add (name, 'default_tasks') to MOVED_ON_PURPOSE; leave the pin"
            )


def test_a_moved_default_subtask_set_rekeys_the_entries_that_name_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite_file = one_model_suite(
        tmp_path,
        "  - {type: synthetic, name: default-set}\n"
        "  - {type: synthetic, name: empty-set, params: {tasks: []}}\n"
        "  - {type: synthetic, name: own-set, params: {tasks: [agreement]}}\n",
    )
    before = cells_by_label(suite_file)
    assert all("task_defaults" not in c.config for c in before.values())
    # as if the set had been pinned with a sub-task since dropped from the default
    monkeypatch.setitem(PINNED_SUBTASKS, "synthetic", ["agreement", "dropped"])
    after = cells_by_label(suite_file)
    for label in ("default-set", "empty-set"):
        assert after[label].config["task_defaults"] == {"default_tasks": ["agreement"]}
        assert after[label].cell_id != before[label].cell_id
    assert after["own-set"].cell_id == before["own-set"].cell_id


def test_a_moved_default_rekeys_only_the_cells_that_rely_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite_file = one_model_suite(
        tmp_path,
        "  - {type: glue, name: default-epochs, params: {tasks: [sst2], source: local}}\n"
        "  - {type: glue, name: own-epochs, params: {tasks: [sst2], source: local, epochs: 3}}\n",
    )
    before = cells_by_label(suite_file)
    assert all("task_defaults" not in c.config for c in before.values())
    # as if `epochs` had been pinned at 4 and the code's default were now 10
    monkeypatch.setitem(PINNED, "glue", {**PINNED["glue"], "epochs": 4})
    assert moved_defaults("glue", {"tasks": ["sst2"]}) == {"epochs": 10}
    after = cells_by_label(suite_file)
    assert after["default-epochs"].config["task_defaults"] == {"epochs": 10}
    assert after["default-epochs"].cell_id != before["default-epochs"].cell_id
    assert after["own-epochs"].cell_id == before["own-epochs"].cell_id
    assert after["own-epochs"].pretrain_key == before["own-epochs"].pretrain_key


def test_a_task_type_not_pinned_moves_nothing() -> None:
    """A plugin's task type: its file's contents key its cells instead."""
    assert moved_defaults("a-plugin-task", {}) == {}

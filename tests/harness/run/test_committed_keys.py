"""Every committed leaderboard is found by the code as it keys its suite, and stays found when
a new pretraining setting or task param joins at its default (`zoo.train.identity`)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from pydantic import Field, create_model

import harness.run.cells as cells_module
from harness.run.cells import expand
from harness.suite import load_suite
from harness.tasks import TASKS
from zoo.train.config import PretrainConfig
from zoo.train.roles import role

ROOT = Path(__file__).parents[3]
BOARDS = ROOT / "leaderboards"
# a suite's own board, or one under a second machine's folder (`amd-epyc/<suite>`)
COMMITTED = sorted(str(p.parent.relative_to(BOARDS)) for p in BOARDS.glob("**/_cells.json"))


@pytest.mark.parametrize("board", COMMITTED)
def test_every_committed_leaderboard_is_keyed_as_the_code_keys_its_suite(board: str) -> None:
    """`hlm run` resumes the committed rows only while the code gives the suite's cells the
    ids they were filed under: a change to what a cell id or a pretraining key hashes must
    keep them (`zoo.train.identity`: a new setting keys only where it differs from its
    baseline), or it orphans the report's rows."""
    recorded = json.loads((BOARDS / board / "_cells.json").read_text())
    name = Path(board).name
    ids = {c.cell_id for c in expand(load_suite(ROOT / "suites" / f"{name}.yaml"))}
    assert ids == set(recorded), (
        f"leaderboards/{board}/_cells.json: {len(ids - set(recorded))} cells of "
        f"suites/{name}.yaml not recorded, {len(set(recorded) - ids)} recorded cells not in it: "
        f"an edited suite is run (`hlm run {name}` records its cells first); a change to what "
        "the keys hash must follow the rule of zoo.train.identity"
    )


def _recorded(board: str) -> set[str]:
    return set(json.loads((BOARDS / board / "_cells.json").read_text()))


def _ids(board: str) -> set[str]:
    return {c.cell_id for c in expand(load_suite(ROOT / "suites" / f"{Path(board).name}.yaml"))}


def test_a_new_setting_and_task_param_at_their_defaults_rename_no_committed_cell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The identity rule's promise: a weights setting, a resume setting and a param of every
    built-in task type, each added at a default that changes nothing, leave every committed
    cell id and pretraining key as they were."""
    wider = create_model(
        "WiderConfig",
        __base__=PretrainConfig,
        new_weights_knob=(int, Field(0, json_schema_extra=role("weights"))),
        new_resume_knob=(float, Field(1.0, json_schema_extra=role("resume"))),
    )
    monkeypatch.setattr(cells_module, "PretrainConfig", wider)
    for name, spec in TASKS.items():
        params = create_model(
            f"Wider{spec.params.__name__}", __base__=spec.params, new_param=(bool, False)
        )
        wider_task = copy.copy(spec)
        wider_task.params = params
        monkeypatch.setitem(TASKS._entries, name, wider_task)
    cells = expand(load_suite(ROOT / "suites" / "paper-cpu-encoder.yaml"))
    assert all(type(c.pretrain) is wider for c in cells if c.pretrain is not None)
    assert all("new_param" in TASKS.get(c.task.type).params.model_fields for c in cells)
    for board in COMMITTED:
        assert _ids(board) == _recorded(board), board
    # the rule keys a value that differs from the baseline: the same cell, renamed
    c = next(c for c in cells if c.pretrain is not None)
    moved = c.pretrain.model_copy(update={"new_weights_knob": 3})
    assert moved.key_fields()["new_weights_knob"] == 3
    assert "new_weights_knob" not in c.pretrain.key_fields()

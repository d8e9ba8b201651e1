"""A task type is one class in one file: a plugin's, registered by its file, runs in a suite
as the built-in ones do, and each default method adds nothing to a cell's identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.results.leaderboard import read_leaderboard
from harness.run.runner import run_suite
from harness.tasks import TASKS, Identity, TaskType
from zoo.models import get_spec

PRESETS = [("bert-tiny", "ce"), ("bert-mini", "cwt")]

PLUGIN = """
from harness.tasks import TASKS, Result, TaskContext, TaskType


class WordCount(TaskType):
    name, description = "word_count_test", "the preset's layers, as a word count would be"
    metrics = ()
    needs_checkpoint = False

    def run(self, ctx: TaskContext) -> list[Result]:
        return [Result("layers", float(ctx.spec.num_layers), higher_is_better=True)]


TASKS.add(WordCount.name, WordCount())
"""


def test_the_defaults_add_nothing() -> None:
    class Bare(TaskType):
        name, description = "bare", "nothing"

    bare = Bare()
    assert bare.check(None, Path(".")) == [] and bare.preflight(None, Path(".")) == []
    assert bare.identity(None, Path(".")) == Identity() and bare.describe(None) == ""
    with pytest.raises(NotImplementedError, match="'bare' defines no run"):
        bare.run(None)  # type: ignore[arg-type]


@pytest.mark.usefixtures("trust_plugins")
def test_a_plugin_task_type_is_one_file(isolated: Path) -> None:
    (isolated / "word_count.py").write_text(PLUGIN)
    suite = isolated / "s.yaml"
    suite.write_text(
        "name: counted\nplugins: [word_count.py]\n"
        "models: [" + ", ".join(f"{{preset: {p}, objective: {o}}}" for p, o in PRESETS) + "]\n"
        "tasks: [{type: word_count_test}]\n"
    )
    try:
        assert run_suite(suite, root=isolated / "lb", progress=False).failed == []
        rows = read_leaderboard(isolated / "lb" / "counted")
        layers = dict(rows.set_index("model")["value"])
        want = {f"{p}-{o}": float(get_spec(p).num_layers) for p, o in PRESETS}
        assert layers == want
        assert set(rows["task"]) == {"word_count_test"}
    finally:
        TASKS._entries.pop("word_count_test", None)

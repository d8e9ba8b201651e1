"""A suite's lm-eval task folders: which files they reach outside themselves, when those may
run, and that every file they read keys their cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run.cells import expand
from harness.suite import SuiteError, load_suite
from harness.tasks.lm_eval_folders import folder_files, folder_problems, referenced_outside
from zoo.registry import TRUST_ENV

TASK = "task: mine\ndataset_path: text\noutput_type: loglikelihood_rolling\n"


@pytest.fixture
def layout(tmp_path: Path, monkeypatch) -> Path:
    """suites/tasks/ (the suite's own folder of tasks), whose template includes a YAML in
    shared/, beside which is the loader its `!function` hook imports."""
    monkeypatch.setenv(TRUST_ENV, "0")
    suites, shared = tmp_path / "suites", tmp_path / "shared"
    (suites / "tasks").mkdir(parents=True)
    shared.mkdir()
    (suites / "tasks" / "mine.yaml").write_text("include: _template_yaml\n" + TASK)
    (suites / "tasks" / "_template_yaml").write_text("include: ../../shared/base.yaml\n")
    (suites / "tasks" / "broken.yaml").write_text("task: [unclosed\n")
    (shared / "base.yaml").write_text(
        "process_docs: !function helpers.prepare\nmetric_list: [{metric: !function helpers.m}]\n"
    )
    (shared / "helpers.py").write_text("def prepare(d):\n    return d\n")
    (shared / "unused.py").write_text("")
    return suites


def test_the_files_a_folder_reaches_outside_itself(layout: Path) -> None:
    shared = layout.parent / "shared"
    # followed through the in-folder template; the broken YAML is lm-eval's to report
    assert referenced_outside(layout / "tasks") == [shared / "base.yaml", shared / "helpers.py"]
    assert referenced_outside(layout.parent / "shared") == []


def test_a_folder_reaching_outside_the_suites_folder_needs_trust(layout: Path, monkeypatch) -> None:
    (problem,) = folder_problems(["tasks"], layout)
    assert problem[0] == "include_path[0]"
    assert "shared/base.yaml is outside the suite's folder" in problem[1]
    assert "--trust-plugins" in problem[1]
    (problem,) = folder_problems(["../shared", "tasks", "nowhere"], layout)[:1]
    assert problem[0] == "include_path[0]" and "shared is outside" in problem[1]
    assert folder_problems(["nowhere"], layout) == [
        ("include_path[0]", f"folder not found: {layout / 'nowhere'}")
    ]
    monkeypatch.setenv(TRUST_ENV, "1")
    assert folder_problems(["tasks", "../shared"], layout) == []


def test_the_files_outside_join_the_cell_id(layout: Path, monkeypatch) -> None:
    assert sorted(folder_files(["tasks"], layout)) == [
        "include_path[0]/../../shared/base.yaml",
        "include_path[0]/../../shared/helpers.py",
        "include_path[0]/_template_yaml",
        "include_path[0]/broken.yaml",
        "include_path[0]/mine.yaml",
    ]
    suite = layout / "s.yaml"
    suite.write_text(
        "name: s\nmodels: [{preset: pythia-tiny, objective: ce}]\n"
        "tasks: [{type: lm_eval, params: {tasks: [mine], include_path: [tasks]}}]\n"
    )
    with pytest.raises(SuiteError, match=r"tasks\[0\]\.params\.include_path\[0\]: .*outside"):
        load_suite(suite)
    monkeypatch.setenv(TRUST_ENV, "1")
    (before,) = expand(load_suite(suite))
    helpers = layout.parent / "shared" / "helpers.py"
    helpers.write_text(helpers.read_text() + "# a change to what the task computes\n")
    (after,) = expand(load_suite(suite))
    assert after.cell_id != before.cell_id
    assert after.pretrain_key == before.pretrain_key

"""lm-eval task folders: which files a suite's folders reach outside themselves, when those
may run, and that every file they read keys their cells; the shipped tasks' files pinned, so
that an edited one re-keys the cells that run it."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from harness.run.cells import Cell, expand
from harness.suite import SuiteError, load_suite
from harness.tasks.keyed_defaults import PINNED_SHIPPED
from harness.tasks.lm_eval_folders import (
    SHIPPED,
    SHIPPED_DATA,
    folder_files,
    folder_problems,
    referenced_outside,
    task_manager,
)
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


def test_a_folder_whose_yamls_run_code_needs_trust(layout: Path, monkeypatch) -> None:
    """Code a task YAML runs, however reached (an include from outside, a tag that lm-eval's
    own reader might take), needs trust; a folder of plain tasks does not."""
    (problem,) = folder_problems(["tasks"], layout)
    assert problem[0] == "include_path[0]"
    assert problem[1].startswith(f"{(layout.parent / 'shared' / 'base.yaml').resolve()}: a task")
    assert "--trust-plugins" in problem[1]
    (problem,) = folder_problems(["../shared", "tasks", "nowhere"], layout)[:1]
    assert problem[0] == "include_path[0]" and "shared/base.yaml: a task YAML" in problem[1]
    (layout / "plain").mkdir()
    (layout / "plain" / "t.yaml").write_text(TASK)
    evil = layout / "plain" / "evil.yaml"
    evil.write_text("task: x\nf: !!python/name:os.system\n")
    assert "evil.yaml: a task YAML" in folder_problems(["plain"], layout)[0][1]
    evil.unlink()
    assert folder_problems(["plain"], layout) == []
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
    with pytest.raises(SuiteError, match=r"tasks\[0\]\.params\.include_path\[0\]: .*runs code"):
        load_suite(suite)
    monkeypatch.setenv(TRUST_ENV, "1")
    (before,) = expand(load_suite(suite))
    helpers = layout.parent / "shared" / "helpers.py"
    helpers.write_text(helpers.read_text() + "# a change to what the task computes\n")
    (after,) = expand(load_suite(suite))
    assert after.cell_id != before.cell_id
    assert after.pretrain_key == before.pretrain_key


# shipped task files whose contents changed on purpose since they were pinned: the cells that
# run them re-key by design; list the file here, and never edit PINNED_SHIPPED to match
SHIPPED_MOVED_ON_PURPOSE: set[str] = set()


def test_every_shipped_task_file_is_pinned_as_it_is() -> None:
    files = sorted(f.name for f in SHIPPED.iterdir() if f.suffix in (".yaml", ".py"))
    assert sorted(PINNED_SHIPPED) == files, "pin each shipped task file in keyed_defaults.py"
    for name in sorted(set(files) - SHIPPED_MOVED_ON_PURPOSE):
        digest = hashlib.sha256((SHIPPED / name).read_bytes()).hexdigest()[:16]
        assert digest == PINNED_SHIPPED[name], (
            f"{name} changed since its cells were keyed. If on purpose, add it to "
            "SHIPPED_MOVED_ON_PURPOSE (its cells re-key) and leave PINNED_SHIPPED as it is"
        )


def test_an_edited_shipped_task_rekeys_only_the_cells_that_run_it(
    tmp_path: Path, monkeypatch
) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\nmodels: [{preset: pythia-tiny, objective: ce}]\ntasks:\n"
        "  - {type: lm_eval, name: lambada, params: {tasks: [hlm_lambada]}}\n"
        "  - {type: lm_eval, name: boolq, params: {tasks: [hlm_boolq]}}\n"
        "  - {type: lm_eval, name: upstream, params: {tasks: [lambada_openai]}}\n"
    )

    def cells() -> dict[str, Cell]:
        return {c.task.label(): c for c in expand(load_suite(suite))}

    before = cells()
    assert all("task_files" not in c.config for c in before.values())
    monkeypatch.setitem(PINNED_SHIPPED, "hlm_lambada.yaml", "0" * 16)  # as if edited since
    after = cells()
    assert sorted(after["lambada"].config["task_files"]) == ["shipped/hlm_lambada.yaml"]
    assert after["lambada"].cell_id != before["lambada"].cell_id
    assert after["lambada"].pretrain_key == before["lambada"].pretrain_key
    assert after["boolq"].cell_id == before["boolq"].cell_id
    monkeypatch.setitem(PINNED_SHIPPED, "hlm_utils.py", "0" * 16)  # every shipped task's loader
    again = cells()
    assert again["boolq"].cell_id != before["boolq"].cell_id
    assert again["upstream"].cell_id == before["upstream"].cell_id  # lm-eval's own task


def test_a_cell_running_lm_evals_own_task_is_keyed_by_its_release(
    tmp_path: Path, monkeypatch
) -> None:
    """lm-eval's own task YAMLs come with its release: a new one computes such cells anew.
    Cells running only shipped tasks or the suite's own folder's keep their ids."""
    import importlib.metadata

    monkeypatch.setenv(TRUST_ENV, "1")  # a copy of the shipped folder, whose hooks run code
    shutil.copytree(SHIPPED.parents[1] / "suites" / "lm_eval_tasks", tmp_path / "tasks")
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\nmodels: [{preset: pythia-tiny, objective: ce}]\ntasks:\n"
        "  - {type: lm_eval, name: ours, params: {tasks: [hlm_lambada, flores_eng_ppl], "
        "include_path: [tasks]}}\n"
        "  - {type: lm_eval, name: upstream, params: {tasks: [hlm_lambada, lambada_openai]}}\n"
    )
    before = {c.task.label(): c for c in expand(load_suite(suite))}
    assert "task_versions" not in before["ours"].config
    installed = importlib.metadata.version("lm_eval")
    assert before["upstream"].config["task_versions"] == {"lm_eval": installed}
    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata, "version", lambda d: "9.9.9" if d == "lm_eval" else real(d)
    )
    after = {c.task.label(): c for c in expand(load_suite(suite))}
    assert after["upstream"].cell_id != before["upstream"].cell_id
    assert after["ours"].cell_id == before["ours"].cell_id


def test_a_misspelt_shipped_task_is_refused_by_validate(tmp_path: Path) -> None:
    """`hlm_lambda` is no task: found by `hlm validate`, without lm-eval, not when the cell
    runs after its pretraining. A suite folder's own `hlm_` task is known; lm-eval's names
    (no `hlm_` prefix) are left to lm-eval."""
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "mine.yaml").write_text(TASK.replace("task: mine", "task: hlm_mine"))
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\nmodels: [{preset: pythia-tiny, objective: ce}]\ntasks:\n"
        "  - {type: lm_eval, params: {tasks: [hlm_boolq, hlm_lambda, hlm_mine, lambada_openai], "
        "include_path: [tasks]}}\n"
    )
    with pytest.raises(SuiteError) as err:
        load_suite(suite)
    assert err.value.problems == [
        f"{suite}: tasks[0].params.tasks[1]: unknown hlm_ task 'hlm_lambda'; did you mean "
        "'hlm_lambada', 'hlm_pubmedqa', 'hlm_mine'? (known: hlm_blimp, hlm_boolq, "
        "hlm_crows_pairs_english, hlm_lambada, hlm_mine, hlm_pubmedqa)"
    ]
    suite.write_text(suite.read_text().replace("hlm_lambda", "hlm_lambada"))
    assert load_suite(suite).tasks[0].params["tasks"][1] == "hlm_lambada"


def test_shipped_tasks_alone_skip_lm_evals_own_index_and_load_the_same(data_root: Path) -> None:
    """A cell naming shipped tasks only indexes the shipped folder (lm-eval's own 14,000 names
    take seconds), and each task loads with the very config the full index gives it; a name
    of lm-eval's own keeps the full index. Every shipped task file is one of
    `SHIPPED_DATA`'s tasks, which the shortcut trusts to include no other file."""
    assert {p.stem for p in SHIPPED.glob("*.yaml")} == set(SHIPPED_DATA)
    for path in SHIPPED.glob("*.yaml"):
        assert "include:" not in path.read_text() and "group:" not in path.read_text()
    names = sorted(SHIPPED_DATA)
    quick = task_manager([], {}, names)
    assert sorted(quick.all_tasks) == names
    full = task_manager([], {}, ["lambada_openai", *names])
    assert len(full.all_tasks) > 1000  # one full index: it takes seconds
    for name in ("hlm_lambada", "hlm_boolq"):
        ours, theirs = (m.load([name])["tasks"][name].config.to_dict() for m in (quick, full))
        assert ours == theirs

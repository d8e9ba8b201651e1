"""The local data a cell reads keys it by its contents (`TaskType.identity`,
`keyed_defaults.PINNED_DATA`): every data file a built-in task type reads is pinned as it is
today, so no committed cell moves, and an edited file, a user's own file or another text to
score gives the cells that read it a new id, and no other cell one."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as hlm
from harness.downstream.benchmarks import GLUE, SUPERGLUE, XNLI_LANGUAGES
from harness.downstream.wordnet import POS, synset_words
from harness.run.cells import Selection, moved_shared_data
from harness.run.runner import plan_suite, run_suite
from harness.tasks import TASKS
from harness.tasks.keyed_defaults import PINNED_DATA, moved_data
from harness.tasks.lm_eval_folders import SHIPPED, SHIPPED_DATA, _task_yaml
from tests.conftest import load_tool
from tests.harness.tasks.keyed_suite import cells_by_label, one_model_suite
from zoo.errors import UserError

trim = load_tool("trim_wordnet").trim

# data files changed on purpose since they were pinned: the cells that read them re-key by
# design; list the name here, and never edit PINNED_DATA to match
DATA_MOVED_ON_PURPOSE: set[str] = set()


def _digests(task_type: str, params: dict[str, Any], suite_dir: Path = Path(".")) -> dict:
    spec = TASKS.get(task_type)
    return spec.identity(spec.params.model_validate(params), suite_dir).data


def _every_known_file() -> dict[str, str | None]:
    """What the built-in task types read of the data root, each of them all it can."""
    with_local = [name for name, task in GLUE.items() if task.local_train or task.local_eval]
    return {
        **_digests("glue", {"source": "local", "tasks": with_local}),
        **_digests("superglue", {"source": "local", "tasks": list(SUPERGLUE)}),
        **_digests("xnli", {"source": "local", "languages": list(XNLI_LANGUAGES)}),
        **_digests("synonyms", {}),
        **_digests("blimp", {}),
        **_digests("lm_eval", {"tasks": list(SHIPPED_DATA)}),
    }


def test_every_data_file_the_built_in_types_read_is_pinned_as_it_is() -> None:
    known = _every_known_file()
    assert None not in known.values(), "every known file is in the data root"
    assert sorted(known) == sorted(PINNED_DATA), "pin each data file in keyed_defaults.py"
    for name in sorted(set(known) - DATA_MOVED_ON_PURPOSE):
        assert known[name] == PINNED_DATA[name], (
            f"{name}: differs from its pin. If it changed on purpose, add it to "
            "DATA_MOVED_ON_PURPOSE (its cells re-key) and leave PINNED_DATA as it is"
        )


def test_only_data_that_differs_from_its_pin_or_has_none_moves() -> None:
    pinned = "glue/SST-2/train.tsv"
    assert moved_data({pinned: PINNED_DATA[pinned]}) == {}
    assert moved_data({pinned: "0" * 16}) == {pinned: "0" * 16}
    assert moved_data({"my/own.tsv": "1" * 16}) == {"my/own.tsv": "1" * 16}
    assert moved_data({pinned: None, "my/own.tsv": None}) == {}  # not there: hlm run refuses


def _copy_glue(real: Path, to: Path, *tasks: str) -> None:
    for task in tasks:
        shutil.copytree(real / "glue" / task, to / "glue" / task)


def test_an_edited_data_file_rekeys_only_the_cells_that_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_root: Path, capsys: pytest.CaptureFixture
) -> None:
    suite_file = one_model_suite(
        tmp_path,
        "  - {type: glue, name: sst2, params: {tasks: [sst2], source: local}}\n"
        "  - {type: glue, name: mrpc, params: {tasks: [mrpc], source: local}}\n"
        "  - {type: glue, name: hub, params: {tasks: [sst2]}}\n",
    )
    before = cells_by_label(suite_file)
    assert all("data_files" not in c.config for c in before.values())
    copy = tmp_path / "data"
    _copy_glue(data_root, copy, "SST-2", "MRPC")
    monkeypatch.setenv("HLM_DATA_ROOT", str(copy))
    assert {k: c.cell_id for k, c in cells_by_label(suite_file).items()} == {
        k: c.cell_id for k, c in before.items()
    }, "a copy of the same bytes keys as the original"
    edited = copy / "glue" / "SST-2" / "train.tsv"
    edited.write_text(edited.read_text().replace("\t1\n", "\t0\n", 1))
    after = cells_by_label(suite_file)
    assert list(after["sst2"].config["data_files"]) == ["glue/SST-2/train.tsv"]
    assert after["sst2"].cell_id != before["sst2"].cell_id
    assert after["sst2"].pretrain_key == before["sst2"].pretrain_key
    for label in ("mrpc", "hub"):  # another task's files; the hub's data: no local file read
        assert after[label].cell_id == before[label].cell_id
    moved = "glue/SST-2/train.tsv differs from the data first keyed: 1 cell read it, keyed anew"
    assert moved_shared_data(list(after.values())) == [moved]
    assert hlm(["validate", str(suite_file)]) == 0
    assert f"  {moved}\n" in capsys.readouterr().out


def test_hlm_run_and_its_plan_name_each_benchmark_file_that_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    suite_file = one_model_suite(
        tmp_path, "  - {type: glue, name: sst2, params: {tasks: [sst2], source: local}}\n"
    )
    monkeypatch.setitem(PINNED_DATA, "glue/SST-2/dev.tsv", "0" * 16)  # as if edited since
    skip_all = Selection(skip_tasks=("sst2",))  # nothing computed: the warning comes first
    moved = "glue/SST-2/dev.tsv differs from the data first keyed: 1 cell read it"
    assert moved in plan_suite(suite_file, tmp_path / "leaderboards").table()  # --dry-run
    run_suite(suite_file, root=tmp_path / "leaderboards", progress=False, select=skip_all)
    assert moved in caplog.text


def test_hlm_run_refuses_at_once_data_that_is_not_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before any pretraining, naming each task and file; a run with nothing of it to
    compute (here: every task skipped) needs no data. (WordNet is checked with the suite.)"""
    own = tmp_path / "mine.jsonl"
    suite_file = one_model_suite(
        tmp_path,
        "  - {type: glue, name: local, params: {tasks: [sst2], source: local}}\n"
        "  - {type: glue, name: own, params: {tasks: [sst2], "
        f"train_files: {{sst2: [{own}]}}}}}}\n"
        "  - {type: validation}\n",
    )
    empty = tmp_path / "empty-root"
    empty.mkdir()
    monkeypatch.setenv("HLM_DATA_ROOT", str(empty))
    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    root = tmp_path / "leaderboards"
    with pytest.raises(UserError) as refused:
        run_suite(
            suite_file, root=root, progress=False, select=Selection(skip_tasks=("validation",))
        )
    said = str(refused.value)
    assert "task local: glue/SST-2/dev.tsv, glue/SST-2/train.tsv not found" in said
    assert f"task own: {own} not found" in said
    assert f"HLM_DATA_ROOT={empty}" in said and "none started" in said
    assert not (tmp_path / "runs").exists()  # no pretraining begun
    skip_all = Selection(skip_tasks=("local", "own", "validation"))
    assert run_suite(suite_file, root=root, progress=False, select=skip_all).computed == 0


def test_data_dir_is_keyed_by_the_files_read_there(tmp_path: Path, data_root: Path) -> None:
    copy = tmp_path / "data"
    _copy_glue(data_root, copy, "SST-2")
    params = {"tasks": ["sst2"], "source": "local", "data_dir": str(copy)}
    assert moved_data(_digests("glue", params)) == {}
    (copy / "glue" / "SST-2" / "dev.tsv").write_text("sentence\tlabel\nfine\t1\n")
    assert list(moved_data(_digests("glue", params))) == ["glue/SST-2/dev.tsv"]


def test_a_users_own_files_key_their_cell_by_their_contents(tmp_path: Path) -> None:
    own = tmp_path / "own.jsonl"
    own.write_text('{"sentence": "good", "label": 1}\n')
    suite_file = one_model_suite(
        tmp_path,
        f"  - {{type: glue, params: {{tasks: [sst2], train_files: {{sst2: [{own}]}}}}}}\n",
    )
    (first,) = cells_by_label(suite_file).values()
    assert list(first.config["data_files"]) == [str(own)]  # eval from the hub: no file
    own.write_text('{"sentence": "bad", "label": 0}\n')
    (edited,) = cells_by_label(suite_file).values()
    assert edited.cell_id != first.cell_id
    own.unlink()  # not there: nothing to key by (hlm run refuses the cell)
    (gone,) = cells_by_label(suite_file).values()
    assert "data_files" not in gone.config


def test_xnli_zero_shot_reads_english_for_training() -> None:
    zero_shot = _digests("xnli", {"source": "local", "mode": "zero-shot", "languages": ["de"]})
    assert sorted(zero_shot) == ["xnli/dev-de.tsv", "xnli/dev-en.tsv"]
    assert sorted(_digests("xnli", {"source": "local", "languages": ["de"]})) == ["xnli/dev-de.tsv"]
    assert _digests("xnli", {"languages": ["de"]}) == {}  # from the hub


def test_a_trimmed_wordnet_keys_as_the_full_one_and_an_edited_one_does_not(
    tmp_path: Path, data_root: Path
) -> None:
    """The GPU machine reads a trimmed copy (tools/gpu-pack.sh): the same synsets, the same
    ids; a synset dropped is what the task reads changed."""
    trimmed = tmp_path / "wordnet"
    trim(data_root / "wordnet", trimmed)
    assert (trimmed / "data.noun").stat().st_size < (data_root / "wordnet/data.noun").stat().st_size
    assert moved_data(_digests("synonyms", {"wordnet": str(trimmed)})) == {}
    lines = (trimmed / "data.adv").read_text(encoding="latin-1").splitlines(keepends=True)
    synset = next(  # one the task reads: two single-word lemmas or more
        i for i, line in enumerate(lines) if line[0] != " " and len(synset_words(line)) > 1
    )
    (trimmed / "data.adv").write_text("".join(lines[:synset] + lines[synset + 1 :]), "latin-1")
    moved = moved_data(_digests("synonyms", {"wordnet": str(trimmed), "pos": list(POS)}))
    assert list(moved) == ["wordnet/data.adv"]


def _shipped_module(name: str) -> Any:
    """A shipped loader module, imported by path as lm-eval imports it."""
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", SHIPPED / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_tasks_data_is_what_their_loaders_open(
    monkeypatch: pytest.MonkeyPatch, data_root: Path
) -> None:
    """`SHIPPED_DATA` names, for each shipped task, the files its `custom_dataset` opens."""
    modules = {name: _shipped_module(name) for name in ("hlm_utils", "hlm_blimp_utils")}
    opened: list[str] = []

    def data_file(*parts: str) -> Path:
        opened.append("/".join(parts))
        return data_root.joinpath(*parts)

    for utils in modules.values():
        monkeypatch.setattr(utils, "_data_file", data_file)
        for builder in ("_split", "_dataset"):
            if hasattr(utils, builder):
                monkeypatch.setattr(utils, builder, lambda *args: None)
    for f in sorted(SHIPPED.glob("*.yaml")):
        cfg = _task_yaml(f)
        assert cfg is not None
        opened.clear()
        module, _, loader = str(cfg["custom_dataset"]).partition(".")
        getattr(modules[module], loader)()
        assert tuple(opened) == SHIPPED_DATA[cfg["task"]], f"{f.name}: update SHIPPED_DATA"
    assert len(SHIPPED_DATA) == len(list(SHIPPED.glob("*.yaml")))


def test_an_edited_text_to_score_rekeys_the_validation_cell(tmp_path: Path) -> None:
    text = tmp_path / "held_out.txt"
    text.write_text("one document\n")
    suite_file = one_model_suite(
        tmp_path,
        f"  - {{type: validation, name: own, params: {{corpus: [{text}]}}}}\n"
        "  - {type: validation, name: run}\n",
    )
    before = cells_by_label(suite_file)
    assert list(before["own"].config["data_files"]) == [str(text)]
    assert "data_files" not in before["run"].config  # the held-out text: the pretraining's
    text.write_text("another document\n")
    after = cells_by_label(suite_file)
    assert after["own"].cell_id != before["own"].cell_id
    assert after["run"].cell_id == before["run"].cell_id

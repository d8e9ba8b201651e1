"""The suite kept beside its leaderboard (`harness.suite.record`): its plugin files travel
with it, and the record runs again to the same cell ids, here and once published."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from harness.publish.hub import publish_leaderboard
from harness.results.leaderboard import write_cell
from harness.run.cells import expand
from harness.suite import SuiteError, load_suite
from harness.suite.record import write_suite_record
from tests.harness.results.test_leaderboard import row

ROOT = Path(__file__).parents[3]
PLUGIN = ROOT / "examples" / "cosine_cwt.py"


def plugin_suite(folder: Path, plugins: list[str]) -> Path:
    """A one-model suite of the cosine-cwt objective in `folder`, with `plugins`."""
    folder.mkdir(parents=True, exist_ok=True)
    suite = {
        "name": "mine",
        "plugins": plugins,
        "models": [{"preset": "bert-tiny", "objective": "cosine-cwt"}],
        "recipe": {"corpus": ["synthetic:100"], "vocab_size": 300, "steps": 2, "seq_len": 32},
        "tasks": [{"type": "validation"}],
    }
    f = folder / "mine.yaml"
    f.write_text(yaml.safe_dump(suite))
    return f


@pytest.mark.usefixtures("trust_plugins")
def test_the_record_keeps_the_plugins_and_runs_to_the_same_cells(tmp_path) -> None:
    shutil.copy(PLUGIN, tmp_path / "cosine_cwt.py")
    suite = load_suite(plugin_suite(tmp_path, ["cosine_cwt.py"]))
    out = tmp_path / "lb" / "mine"
    out.mkdir(parents=True)
    write_suite_record(out, suite)
    assert (out / "_plugins" / "cosine_cwt.py").read_bytes() == PLUGIN.read_bytes()
    recorded = yaml.safe_load((out / "_suite.yaml").read_text())
    assert recorded["plugins"] == ["_plugins/cosine_cwt.py"]
    again = load_suite(out / "_suite.yaml")  # the record is a suite, its plugins in its folder
    assert [c.cell_id for c in expand(again)] == [c.cell_id for c in expand(suite)]
    write_suite_record(out, again)  # run from the record: its copies are its sources
    assert (out / "_plugins" / "cosine_cwt.py").read_bytes() == PLUGIN.read_bytes()


@pytest.mark.usefixtures("trust_plugins")
def test_a_plugin_the_suite_no_longer_loads_leaves_the_record(tmp_path) -> None:
    shutil.copy(PLUGIN, tmp_path / "cosine_cwt.py")
    out = tmp_path / "lb"
    out.mkdir()
    write_suite_record(out, load_suite(plugin_suite(tmp_path, ["cosine_cwt.py"])))
    (tmp_path / "mine.yaml").write_text(
        (ROOT / "suites" / "quickstart.yaml").read_text().replace("name: quickstart", "name: mine")
    )
    write_suite_record(out, load_suite(tmp_path / "mine.yaml"))
    assert list((out / "_plugins").iterdir()) == []
    assert yaml.safe_load((out / "_suite.yaml").read_text())["plugins"] == []


@pytest.mark.usefixtures("trust_plugins")
def test_two_plugin_files_of_one_name_are_refused(tmp_path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(PLUGIN, tmp_path / sub / "cosine_cwt.py")
    with pytest.raises(SuiteError) as err:
        load_suite(plugin_suite(tmp_path, ["a/cosine_cwt.py", "b/cosine_cwt.py"]))
    assert err.value.problems == [
        f"{tmp_path / 'mine.yaml'}: plugins[1]: a second plugin file named 'cosine_cwt.py' (the "
        "first: plugins[0]); plugin files are told apart by their names: rename one"
    ]


@pytest.mark.usefixtures("trust_plugins")
def test_a_published_leaderboard_carries_its_plugins(tmp_path) -> None:
    shutil.copy(PLUGIN, tmp_path / "cosine_cwt.py")
    suite = load_suite(plugin_suite(tmp_path, ["cosine_cwt.py"]))
    out = tmp_path / "lb" / "mine"
    write_cell(out, expand(suite)[0].cell_id, [row("bert-tiny-cosine-cwt", "val_loss", 1.0)])
    write_suite_record(out, suite)
    staged = tmp_path / "staged"
    publish_leaderboard("mine", "me/mine", leaderboards=tmp_path / "lb", dry_run=staged)
    assert (staged / "_plugins" / "cosine_cwt.py").read_bytes() == PLUGIN.read_bytes()
    assert load_suite(staged / "suite.yaml").plugins == ["_plugins/cosine_cwt.py"]
    assert "code its rows depend on" in (staged / "README.md").read_text()

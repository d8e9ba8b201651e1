"""The data root is found from any working folder: `shared/data` beside the checkout unless
$HLM_DATA_ROOT says otherwise (it was `../shared/data` of wherever a command ran)."""

from __future__ import annotations

from pathlib import Path

from zoo.data.corpus import DATA_ROOT_ENV, DEFAULT_DATA_ROOT, data_root

ROOT = Path(__file__).resolve().parents[3]


def test_the_default_is_beside_the_checkout_from_any_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(DATA_ROOT_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert data_root() == DEFAULT_DATA_ROOT == ROOT.parent / "shared" / "data"
    monkeypatch.setenv(DATA_ROOT_ENV, str(tmp_path / "mine"))
    assert data_root() == tmp_path / "mine"


def test_hlm_gives_lm_evals_loaders_its_root(tmp_path, monkeypatch) -> None:
    """The shipped tasks' loader keeps its own default (its bytes key every cell that runs
    it): `hlm` hands it the root it reads, from any working folder."""
    from harness.tasks.lm_eval_task import data_root_env

    monkeypatch.delenv(DATA_ROOT_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    from harness.lm_eval_tasks import hlm_utils

    with data_root_env(data_root()):
        assert hlm_utils.data_root() == DEFAULT_DATA_ROOT.resolve()

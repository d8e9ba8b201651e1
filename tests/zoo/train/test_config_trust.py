"""A run config names code (`plugins:`), and a config may come from someone else (a model
card, a received run folder): its code runs only with --trust-plugins, only once the rest of
the config validates, read from the config file's folder; `--plugins` typed by the user is
their own choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.test_bad_input import hlm
from zoo.errors import UserError
from zoo.registry import TRUST_ENV
from zoo.train.config import load_config


@pytest.fixture
def sent(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A received folder: `c.yaml` naming `plugin.py` beside it by a relative path; the
    plugin leaves a marker file when its code runs (each test's bytes differ, so each is a
    fresh import)."""
    monkeypatch.delenv(TRUST_ENV, raising=False)
    monkeypatch.chdir(tmp_path)  # the working folder is not the config's
    folder = tmp_path / "received"
    folder.mkdir()
    marker = tmp_path / "ran"
    (folder / "plugin.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    cfg = folder / "c.yaml"
    cfg.write_text("plugins: [plugin.py]\nobjective: ce\npreset: bert-tiny\n")
    return cfg, marker


def test_a_configs_plugins_run_only_with_trust(sent: tuple[Path, Path], tmp_path: Path) -> None:
    cfg, marker = sent
    out = str(tmp_path / "r")
    rc, err = hlm("pretrain", "--config", str(cfg), "--output-dir", out)
    assert rc == 2 and not marker.exists()
    assert f"{cfg}: plugins[0]: {cfg.parent / 'plugin.py'} holds code" in err
    assert "--trust-plugins" in err
    # as a received run folder's config.yaml on --resume: the same rule
    rc, err = hlm("pretrain", "--config", str(cfg), "--output-dir", out, "--resume")
    assert rc == 2 and not marker.exists() and "holds code" in err


def test_help_and_a_refused_config_import_nothing(sent: tuple[Path, Path]) -> None:
    cfg, marker = sent
    rc, _ = hlm("pretrain", "--config", str(cfg), "--trust-plugins", "--help")
    assert rc == 0 and not marker.exists()
    bad = cfg.parent / "bad.yaml"
    bad.write_text(cfg.read_text() + "lr: -1\n")
    rc, err = hlm("pretrain", "--config", str(bad), "--trust-plugins", "--output-dir", "r")
    assert rc == 2 and f"{bad}: lr:" in err and not marker.exists()


def test_trusted_plugins_are_read_from_the_configs_folder(sent: tuple[Path, Path]) -> None:
    cfg, marker = sent
    config = load_config(str(cfg), {"output_dir": "r"}, trust_plugins=True)
    assert marker.exists()
    assert config.plugins == [str(cfg.parent / "plugin.py")]


def test_plugins_typed_on_the_command_line_are_the_users_choice(
    sent: tuple[Path, Path],
) -> None:
    cfg, marker = sent
    typed = {"output_dir": "r", "plugins": [str(cfg.parent / "plugin.py")]}
    config = load_config(None, {**typed, "objective": "ce", "preset": "bert-tiny"})
    assert marker.exists() and config.plugins == typed["plugins"]


def test_a_plugin_that_is_not_a_python_file_is_named(sent: tuple[Path, Path]) -> None:
    cfg, marker = sent
    cfg.write_text("plugins: [nowhere.py]\nobjective: ce\npreset: bert-tiny\n")
    with pytest.raises(UserError, match=r"c.yaml: plugins: .*nowhere.py: not a Python file"):
        load_config(str(cfg), {"output_dir": "r"}, trust_plugins=True)
    assert not marker.exists()

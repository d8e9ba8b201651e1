"""Loading a checkpoint by name: errors that say where it was looked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoo.errors import UserError
from zoo.train.checkpoint import hf_config


def test_a_name_found_nowhere_says_it_is_no_folder_nor_run_before_the_hubs_answer(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    monkeypatch.chdir(tmp_path)  # offline (conftest): the Hub's answer is its offline error
    with caplog.at_level("INFO", logger="zoo.train.checkpoint"), pytest.raises(UserError) as err:
        hf_config("someone/no-such-model")
    said = str(err.value)
    assert said.startswith("cannot load checkpoint 'someone/no-such-model': no such folder or")
    assert "run name (`hlm runs`), and the Hub: " in said
    # said before the Hub's retries (a wait where it is unreachable), naming where it looks
    assert caplog.messages == [
        "someone/no-such-model: no such folder or run name here; looking in the Hub's local cache"
    ]


def test_a_path_that_cannot_be_a_hub_id_is_not_found_without_asking_the_hub(
    tmp_path: Path,
) -> None:
    with pytest.raises(UserError, match=r"^checkpoint not found: "):
        hf_config(str(tmp_path / "absent"))


def test_a_folder_that_exists_gets_the_loaders_own_reason_alone(tmp_path: Path) -> None:
    with pytest.raises(UserError) as err:
        hf_config(str(tmp_path))  # a folder with no config.json
    assert "no such folder" not in str(err.value) and str(tmp_path) in str(err.value)


def test_a_name_in_a_folder_that_is_here_is_not_asked_of_the_hub_and_names_its_neighbours(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    """`runs/pythia-cwtt` where `runs/` is here: a typo of a local run, not OWNER/NAME on
    the Hub (whose retries take half a minute where it is unreachable)."""
    for name in ("pythia-cwt", "bert-cwt", "other"):
        (tmp_path / "runs" / name).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with (
        caplog.at_level("INFO", logger="zoo.train.checkpoint"),
        pytest.raises(
            UserError,
            match=r"^checkpoint not found: runs/pythia-cwtt; did you mean 'pythia-cwt', 'bert-cwt'",
        ),
    ):
        hf_config("runs/pythia-cwtt")
    assert not caplog.messages  # no "looking on the Hub"


def test_every_file_of_a_checkpoint_is_readable_as_its_others(tmp_path) -> None:
    """safetensors wrote model.safetensors 0600 beside 0644 configs: a shared run folder's
    weights were unreadable to the others who could read its config."""
    import os
    import stat

    from zoo.train.atomic import atomic_dir_write

    def write(folder):
        (folder / "config.json").write_text("{}")
        fd = os.open(folder / "model.safetensors", os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)

    umask = os.umask(0o022)
    try:
        out = atomic_dir_write(tmp_path / "final", write)
    finally:
        os.umask(umask)
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in out.iterdir()}
    assert modes == {"config.json": 0o644, "model.safetensors": 0o644}
